#pragma once
// GPU ceilings, measured (roofline/probes/cuda/probes.cu) beside the datasheet ceilings the device
// properties imply. Plain C++: callers need no CUDA headers, and a build without nvcc links
// probes_stub.cpp, whose unavailable_reason() says so.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::probe::gpu {

struct Device {
    std::string name;
    int cc_major = 0, cc_minor = 0, sms = 0;
    double clock_mhz = 0;      // the driver's peak SM clock
    double mem_clock_mhz = 0;  // the driver's peak memory clock
    int bus_bits = 0;
    int64_t l2_bytes = 0, mem_bytes = 0;
    int fp32_lanes_per_sm = 0;  // from the compute capability (roofline/README.md)
};

struct SweepPoint {
    std::string precision;  // "fp32", "fp16x2", "bf16x2", "tensor_fp16"
    int ops_per_element = 0;
    double flop_per_byte = 0, gflops = 0, gbs = 0;
};

struct GpuCeilings {
    Device dev;
    double measured_clock_mhz = 0;  // SM clock while the fp32 kernel ran (clock64 / globaltimer)
    double fp32_gflops = 0, fp16x2_gflops = 0, bf16x2_gflops = 0, tensor_fp16_gflops = 0;
    double dram_copy_gbs = 0, dram_read_gbs = 0, l2_read_gbs = 0;
    int64_t dram_buffer_bytes = 0, l2_buffer_bytes = 0;
    std::vector<SweepPoint> sweep;

    // SMs x FP32 lanes x 2 x clock.
    double fp32_theoretical_gflops(double clock_mhz) const { return dev.sms * dev.fp32_lanes_per_sm * 2.0 * clock_mhz / 1e3; }
    // Double data rate x bus width.
    double dram_datasheet_gbs() const { return 2.0 * dev.mem_clock_mhz * 1e6 * dev.bus_bits / 8 / 1e9; }
    // The peak a net's convolutions and matmuls can reach in a precision ("fp32", "tf32", "fp16",
    // "bf16"): cuDNN and cuBLAS run tf32, fp16 and bf16 on the tensor cores, fp32 on the CUDA cores.
    // The probe times fp16 mma only (sm_80 and later): bf16's mma rate equals it, and tf32's is half
    // of it, on Ampere and Hopper (NVIDIA's A100 and H100 datasheets). Without a tensor-core figure,
    // the fp32 peak.
    double peak_gflops(std::string_view precision) const {
        if (precision == "fp32" || tensor_fp16_gflops <= 0) return fp32_gflops;
        return precision == "tf32" ? tensor_fp16_gflops / 2 : tensor_fp16_gflops;
    }
};

bool built_with_cuda();
// Empty when device 0 can run the probes; otherwise one line saying why not.
std::string unavailable_reason();
// Throws std::runtime_error (a failed CUDA call, with file and line) if the device misbehaves.
GpuCeilings measure(bool quick);

// Device 0 as its properties describe it, the memory free on it now, and the versions of the
// driver and of the CUDA runtime ridge was linked with ("13.0"). Each throws without a device.
Device device_info();
int64_t free_memory_bytes();
std::string driver_version();
std::string runtime_version();

}  // namespace ridge::probe::gpu
