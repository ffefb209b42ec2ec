// GPU ceilings: register-only FMA kernels (fp32, fp16x2, bf16x2, tensor-core mma.sync), an
// arithmetic-intensity sweep (each element loaded, put through K dependent FMAs, stored), DRAM
// copy/read over a buffer far larger than L2, and repeated reads of a buffer that fits in L2.
// Timed with events after a warm-up launch; every launch is checked.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cuda/check.h"
#include "roofline/probes/cuda/probes.h"

namespace ridge::probe::gpu {

namespace {

constexpr int block_threads = 256;

__device__ __forceinline__ uint64_t global_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// ---- register-only peaks --------------------------------------------------------------------
// x <- x * 0.5 + 0.5 converges to 1: no overflow or denormals however long it runs. Eight
// independent chains per thread and 2048 threads per SM cover the FMA latency many times.

constexpr int peak_unroll = 16;

__global__ void peak_fp32(int iters, float* sink, unsigned long long* timing) {
    float a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = float(threadIdx.x + k) * 1e-3f;
    uint64_t c0 = clock64(), t0 = global_ns();
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < peak_unroll; ++u) {
#pragma unroll
            for (int k = 0; k < 8; ++k) a[k] = fmaf(a[k], 0.5f, 0.5f);
        }
    }
    uint64_t c1 = clock64(), t1 = global_ns();
    if (threadIdx.x == 0) {
        timing[2 * blockIdx.x] = c1 - c0;
        timing[2 * blockIdx.x + 1] = t1 - t0;
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += a[k];
    if (s == -1.0f) sink[0] = s;
}
constexpr double peak_fp32_flops_per_iter = peak_unroll * 8 * 2;

__global__ void peak_fp16x2(int iters, float* sink) {
    __half2 a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = __float2half2_rn(float(threadIdx.x + k) * 1e-3f);
    const __half2 m = __float2half2_rn(0.5f), c = __float2half2_rn(0.5f);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < peak_unroll; ++u) {
#pragma unroll
            for (int k = 0; k < 8; ++k) a[k] = __hfma2(a[k], m, c);
        }
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += __low2float(a[k]) + __high2float(a[k]);
    if (s == -1.0f) sink[0] = s;
}

__global__ void peak_bf16x2(int iters, float* sink) {
#if __CUDA_ARCH__ >= 800
    __nv_bfloat162 a[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) a[k] = __float2bfloat162_rn(float(threadIdx.x + k) * 1e-3f);
    const __nv_bfloat162 m = __float2bfloat162_rn(0.5f), c = __float2bfloat162_rn(0.5f);
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < peak_unroll; ++u) {
#pragma unroll
            for (int k = 0; k < 8; ++k) a[k] = __hfma2(a[k], m, c);
        }
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 8; ++k) s += __low2float(a[k]) + __high2float(a[k]);
    if (s == -1.0f) sink[0] = s;
#else
    (void)iters, (void)sink;
#endif
}
constexpr double peak_x2_flops_per_iter = peak_unroll * 8 * 4;  // two lanes, two FLOPs each

// One m16n8k16 fp16 x fp16 + fp32 tensor-core MMA per warp: 2*16*8*16 FLOP. Four independent
// accumulators per warp so consecutive MMAs do not wait on each other.
__device__ __forceinline__ void mma_16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
    (void)d, (void)a, (void)b;
#endif
}
constexpr double mma_flops = 2.0 * 16 * 8 * 16;

__global__ void peak_tensor(int iters, float* sink) {
    // Small fp16 values (0x3c00 = 1.0 in the upper half is avoided): 0x2000 pairs are ~2^-7.
    uint32_t a[4] = {0x20002000u, 0x20002000u, 0x20002000u, 0x20002000u}, b[2] = {0x20002000u, 0x20002000u};
    float d[4][4] = {};
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int u = 0; u < 4; ++u) {
#pragma unroll
            for (int k = 0; k < 4; ++k) mma_16816(d[k], a, b);
        }
    }
    float s = 0;
#pragma unroll
    for (int k = 0; k < 4; ++k) s += d[k][0] + d[k][1] + d[k][2] + d[k][3];
    if (s == -1.0f) sink[0] = s;
}
constexpr double peak_tensor_mmas_per_iter = 16;  // per warp

// ---- arithmetic-intensity sweep -----------------------------------------------------------------
// 16 bytes loaded and 16 stored per element; K dependent FMAs on each of its lanes.

template <int K>
__global__ void sweep_fp32(float4* x, int64_t n) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        float4 v = x[i];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            v.x = fmaf(v.x, 0.5f, 0.5f);
            v.y = fmaf(v.y, 0.5f, 0.5f);
            v.z = fmaf(v.z, 0.5f, 0.5f);
            v.w = fmaf(v.w, 0.5f, 0.5f);
        }
        x[i] = v;
    }
}

template <typename T2>
__device__ __forceinline__ T2 both_halves();
template <>
__device__ __forceinline__ __half2 both_halves<__half2>() { return __float2half2_rn(0.5f); }
template <>
__device__ __forceinline__ __nv_bfloat162 both_halves<__nv_bfloat162>() {
#if __CUDA_ARCH__ >= 800
    return __float2bfloat162_rn(0.5f);
#else
    return __nv_bfloat162();
#endif
}

template <typename T2, int K>
__global__ void sweep_x2(uint4* x, int64_t n) {
#if __CUDA_ARCH__ >= 800
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        uint4 raw = x[i];
        T2 v[4];
        static_assert(sizeof(T2) == 4);
        memcpy(v, &raw, sizeof raw);
        const T2 half = both_halves<T2>();
#pragma unroll
        for (int k = 0; k < K; ++k) {
#pragma unroll
            for (int j = 0; j < 4; ++j) v[j] = __hfma2(v[j], half, half);
        }
        memcpy(&raw, v, sizeof raw);
        x[i] = raw;
    }
#else
    (void)x, (void)n;
#endif
}

// Each warp loads an A fragment (512 B) and a B fragment (256 B), runs K MMAs into one
// accumulator and stores it (512 B).
template <int K>
__global__ void sweep_tensor(const uint4* a, const uint2* b, float4* d, int64_t warps) {
    const int lane = threadIdx.x % 32;
    for (int64_t w = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32; w < warps;
         w += int64_t(gridDim.x) * blockDim.x / 32) {
        uint4 av = a[w * 32 + lane];
        uint2 bv = b[w * 32 + lane];
        uint32_t af[4] = {av.x, av.y, av.z, av.w}, bf[2] = {bv.x, bv.y};
        float acc[4] = {};
#pragma unroll
        for (int k = 0; k < K; ++k) mma_16816(acc, af, bf);
        d[w * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
    }
}

// ---- bandwidth --------------------------------------------------------------------------------

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, int64_t n) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        dst[i] = src[i];
}

// Reads `reps` passes over src. The loads are ld.global.cg (cached in L2, not L1): each SM's
// share of an L2-sized buffer would otherwise fit in its L1 from the second pass on.
__global__ void read_kernel(const float4* __restrict__ src, int64_t n, int reps, float* sink) {
    float s = 0;
    for (int r = 0; r < reps; ++r)
        for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
            float4 v = __ldcg(src + i);
            s += v.x + v.y + v.z + v.w;
        }
    if (s == -1.0f) sink[0] = s;
}

// ---- host side --------------------------------------------------------------------------------

struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    Events() {
        RIDGE_CUDA_CHECK(cudaEventCreate(&start));
        RIDGE_CUDA_CHECK(cudaEventCreate(&stop));
    }
    ~Events() {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    // Best of `repeats` timings of launch(), in seconds, after one untimed warm-up launch.
    template <typename F>
    double best(int repeats, F launch) {
        launch();
        RIDGE_CUDA_CHECK_LAUNCH();
        RIDGE_CUDA_CHECK(cudaDeviceSynchronize());
        float best_ms = 1e30f;
        for (int r = 0; r < repeats; ++r) {
            RIDGE_CUDA_CHECK(cudaEventRecord(start));
            launch();
            RIDGE_CUDA_CHECK_LAUNCH();
            RIDGE_CUDA_CHECK(cudaEventRecord(stop));
            RIDGE_CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            RIDGE_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            best_ms = std::min(best_ms, ms);
        }
        return best_ms / 1e3;
    }
};

template <typename T>
struct DeviceBuffer {
    T* p = nullptr;
    explicit DeviceBuffer(size_t count) {
        RIDGE_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
        RIDGE_CUDA_CHECK(cudaMemset(p, 0, count * sizeof(T)));
    }
    ~DeviceBuffer() { cudaFree(p); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// FP32 lanes per SM by compute capability (CUDA C Programming Guide, arithmetic instruction
// throughput table): 64 on 6.0, 7.x and 8.0; 128 on 5.x, 6.1, 6.2, 8.6, 8.7, 8.9, 9.0 and later.
int fp32_lanes(int major, int minor) {
    if (major == 6 && minor == 0) return 64;
    if (major == 7) return 64;
    if (major == 8 && minor == 0) return 64;
    return 128;
}

Device query() {
    Device d;
    cudaDeviceProp prop{};
    RIDGE_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.sms = prop.multiProcessorCount;
    d.mem_bytes = int64_t(prop.totalGlobalMem);
    int v = 0;
    RIDGE_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0));
    d.clock_mhz = v / 1e3;
    RIDGE_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMemoryClockRate, 0));
    d.mem_clock_mhz = v / 1e3;
    RIDGE_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrGlobalMemoryBusWidth, 0));
    d.bus_bits = v;
    RIDGE_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, 0));
    d.l2_bytes = v;
    d.fp32_lanes_per_sm = fp32_lanes(d.cc_major, d.cc_minor);
    return d;
}

template <int K>
SweepPoint sweep_fp32_point(Events& ev, float4* x, int64_t n, int grid, int repeats) {
    double s = ev.best(repeats, [&] { sweep_fp32<K><<<grid, block_threads>>>(x, n); });
    double flops = double(n) * 4 * K * 2, bytes = double(n) * 32;
    return {"fp32", K, flops / bytes, flops / s / 1e9, bytes / s / 1e9};
}

template <typename T2, int K>
SweepPoint sweep_x2_point(const char* name, Events& ev, uint4* x, int64_t n, int grid, int repeats) {
    double s = ev.best(repeats, [&] { sweep_x2<T2, K><<<grid, block_threads>>>(x, n); });
    double flops = double(n) * 4 * K * 4, bytes = double(n) * 32;
    return {name, K, flops / bytes, flops / s / 1e9, bytes / s / 1e9};
}

template <int K>
SweepPoint sweep_tensor_point(Events& ev, const uint4* a, const uint2* b, float4* d, int64_t warps, int grid,
                              int repeats) {
    double s = ev.best(repeats, [&] { sweep_tensor<K><<<grid, block_threads>>>(a, b, d, warps); });
    double flops = double(warps) * K * mma_flops, bytes = double(warps) * (512 + 256 + 512);
    return {"tensor_fp16", K, flops / bytes, flops / s / 1e9, bytes / s / 1e9};
}

template <int... Ks>
void sweep_all(std::vector<SweepPoint>& out, Events& ev, int64_t bytes, int grid, int repeats,
               std::integer_sequence<int, Ks...>) {
    int64_t n = bytes / 16;
    {
        DeviceBuffer<float4> x{size_t(n)};
        (out.push_back(sweep_fp32_point<Ks>(ev, x.p, n, grid, repeats)), ...);
    }
    {
        DeviceBuffer<uint4> x{size_t(n)};
        (out.push_back(sweep_x2_point<__half2, Ks>("fp16x2", ev, x.p, n, grid, repeats)), ...);
        (out.push_back(sweep_x2_point<__nv_bfloat162, Ks>("bf16x2", ev, x.p, n, grid, repeats)), ...);
    }
    {
        int64_t warps = bytes / 1280;
        DeviceBuffer<uint4> a{size_t(warps) * 32};
        DeviceBuffer<uint2> b{size_t(warps) * 32};
        DeviceBuffer<float4> d{size_t(warps) * 32};
        (out.push_back(sweep_tensor_point<Ks>(ev, a.p, b.p, d.p, warps, grid, repeats)), ...);
    }
}

}  // namespace

bool built_with_cuda() { return true; }

std::string unavailable_reason() {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error
        return std::string("no CUDA device is available (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
    }
    if (n == 0) return "no CUDA device is available (cudaGetDeviceCount found 0 devices)";
    return "";
}

Device device_info() { return query(); }

int64_t free_memory_bytes() {
    size_t free = 0, total = 0;
    RIDGE_CUDA_CHECK(cudaSetDevice(0));
    RIDGE_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return int64_t(free);
}

namespace {
std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }
}  // namespace

std::string driver_version() {
    int v = 0;
    RIDGE_CUDA_CHECK(cudaDriverGetVersion(&v));
    return version_string(v);
}

std::string runtime_version() {
    int v = 0;
    RIDGE_CUDA_CHECK(cudaRuntimeGetVersion(&v));
    return version_string(v);
}

GpuCeilings measure(bool quick) {
    GpuCeilings r;
    r.dev = query();
    RIDGE_CUDA_CHECK(cudaSetDevice(0));
    Events ev;
    const int repeats = quick ? 3 : 10;
    DeviceBuffer<float> sink(1);

    // Register-only peaks: 8 resident blocks of 256 threads per SM.
    const int peak_grid = r.dev.sms * 8;
    const int iters = quick ? 2000 : 20000;
    {
        DeviceBuffer<unsigned long long> timing{size_t(peak_grid) * 2};
        double s = ev.best(repeats, [&] { peak_fp32<<<peak_grid, block_threads>>>(iters, sink.p, timing.p); });
        r.fp32_gflops = double(peak_grid) * block_threads * iters * peak_fp32_flops_per_iter / s / 1e9;
        std::vector<unsigned long long> t(size_t(peak_grid) * 2);
        RIDGE_CUDA_CHECK(cudaMemcpy(t.data(), timing.p, t.size() * sizeof t[0], cudaMemcpyDeviceToHost));
        std::vector<double> mhz;
        for (int blk = 0; blk < peak_grid; ++blk)
            if (t[size_t(2 * blk + 1)] > 0) mhz.push_back(double(t[size_t(2 * blk)]) / double(t[size_t(2 * blk + 1)]) * 1e3);
        std::sort(mhz.begin(), mhz.end());
        r.measured_clock_mhz = mhz.empty() ? 0 : mhz[mhz.size() / 2];
    }
    {
        double s = ev.best(repeats, [&] { peak_fp16x2<<<peak_grid, block_threads>>>(iters, sink.p); });
        r.fp16x2_gflops = double(peak_grid) * block_threads * iters * peak_x2_flops_per_iter / s / 1e9;
        s = ev.best(repeats, [&] { peak_bf16x2<<<peak_grid, block_threads>>>(iters, sink.p); });
        r.bf16x2_gflops = double(peak_grid) * block_threads * iters * peak_x2_flops_per_iter / s / 1e9;
        s = ev.best(repeats, [&] { peak_tensor<<<peak_grid, block_threads>>>(iters, sink.p); });
        double warps = double(peak_grid) * block_threads / 32;
        r.tensor_fp16_gflops = warps * iters * peak_tensor_mmas_per_iter * mma_flops / s / 1e9;
    }

    // DRAM: a buffer far larger than L2 (1 GiB, 256 MiB when quick), at most a quarter of memory.
    const int mem_grid = r.dev.sms * 8;
    {
        int64_t bytes = std::max<int64_t>(int64_t(quick ? 256 : 1024) << 20, 16 * r.dev.l2_bytes);
        bytes = std::min<int64_t>(bytes, r.dev.mem_bytes / 4) / 16 * 16;
        r.dram_buffer_bytes = bytes;
        int64_t n = bytes / 16;
        DeviceBuffer<float4> a{size_t(n)}, b{size_t(n)};
        double s = ev.best(repeats, [&] { copy_kernel<<<mem_grid, block_threads>>>(a.p, b.p, n); });
        r.dram_copy_gbs = 2.0 * double(bytes) / s / 1e9;
        s = ev.best(repeats, [&] { read_kernel<<<mem_grid, block_threads>>>(a.p, n, 1, sink.p); });
        r.dram_read_gbs = double(bytes) / s / 1e9;
        // The sweep works on the same footprint, so every point streams from DRAM.
        sweep_all(r.sweep, ev, bytes, mem_grid, quick ? 2 : 5,
                  std::integer_sequence<int, 1, 2, 4, 8, 16, 32, 64, 128, 256>{});
    }
    // L2: a quarter of L2 (H100's L2 is two halves; a quarter fits either), read many times over.
    {
        int64_t bytes = std::max<int64_t>(r.dev.l2_bytes / 4, 1 << 20) / 16 * 16;
        r.l2_buffer_bytes = bytes;
        int64_t n = bytes / 16;
        int reps = quick ? 200 : 1000;  // milliseconds of reads, long enough for event timing
        DeviceBuffer<float4> a{size_t(n)};
        double s = ev.best(repeats, [&] { read_kernel<<<mem_grid, block_threads>>>(a.p, n, reps, sink.p); });
        r.l2_read_gbs = double(bytes) * reps / s / 1e9;
    }
    return r;
}

}  // namespace ridge::probe::gpu
