// The GPU probes on a real device: positive, and never above 1.1x the ceilings the device
// properties imply. Without a CUDA device (or without nvcc at build time) the binary prints why
// and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE), never as passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "roofline/probes/cuda/probes.h"

namespace gpu = ridge::probe::gpu;

TEST_CASE("GPU probes: positive and within 1.1x the device's theoretical ceilings") {
    gpu::GpuCeilings g = gpu::measure(true);
    CAPTURE(g.dev.name);
    CHECK(g.dev.sms > 0);
    CHECK(g.measured_clock_mhz > 100);
    CHECK(g.measured_clock_mhz <= 1.1 * g.dev.clock_mhz);
    CHECK(g.fp32_gflops > 0);
    CHECK(g.fp32_gflops <= 1.1 * g.fp32_theoretical_gflops(g.measured_clock_mhz));
    CHECK(g.fp16x2_gflops > 0);
    CHECK(g.tensor_fp16_gflops > g.fp32_gflops);
    double dram = std::max(g.dram_copy_gbs, g.dram_read_gbs);
    CHECK(dram > 0);
    CHECK(dram <= 1.1 * g.dram_datasheet_gbs());
    CHECK(g.l2_read_gbs > dram);
    REQUIRE(!g.sweep.empty());
    for (const auto& p : g.sweep) {
        CAPTURE(p.precision);
        CAPTURE(p.ops_per_element);
        CHECK(p.gflops > 0);
        CHECK(p.gbs <= 1.1 * g.dram_datasheet_gbs());
    }
}

int main(int argc, char** argv) {
    if (std::string why = gpu::unavailable_reason(); !why.empty()) {
        std::cout << "skipped: " << why << "\n";
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
