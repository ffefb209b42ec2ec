// FMA throughput on every core: the kernel for the widest instruction set the CPU reports
// (AVX-512, else AVX2+FMA, else scalar), one pinned thread per physical core, best of repeats.
#include <algorithm>
#include <chrono>

#include "roofline/probes/cpu/pinned_threads.h"
#include "roofline/probes/cpu/kernels.h"
#include "roofline/probes/cpu/probes.h"

namespace ridge::probe {

namespace kernels {

// Portable fallback: 16 independent scalar chains (the compiler may contract them into FMAs or
// not; this path only runs on CPUs without AVX2).
float fma_scalar(int64_t iterations) {
    float a[16];
    for (int k = 0; k < 16; ++k) a[k] = 0.1f * float(k + 1);
    for (int64_t i = 0; i < iterations; ++i)
        for (int k = 0; k < 16; ++k) a[k] = a[k] * 0.5f + 0.5f;
    float s = 0;
    for (float v : a) s += v;
    return s;
}

}  // namespace kernels

namespace {

struct Kernel {
    const char* isa;
    float (*run)(int64_t);
    int64_t flops_per_iteration;
};

Kernel pick(const CpuInfo& cpu) {
#if defined(__x86_64__)
    if (cpu.avx512f && fma_units(cpu).bits == 512)
        return {"avx512", kernels::fma_avx512, kernels::fma_avx512_flops_per_iteration};
    if (cpu.avx2 && cpu.fma) return {"avx2", kernels::fma_avx2, kernels::fma_avx2_flops_per_iteration};
#endif
    (void)cpu;
    return {"scalar", kernels::fma_scalar, kernels::fma_scalar_flops_per_iteration};
}

}  // namespace

FmaResult measure_fma(const CpuInfo& cpu, int threads, double seconds, int repeats) {
    using clock = std::chrono::steady_clock;
    Kernel k = pick(cpu);
    int64_t iterations = 10000;
    {
        auto t0 = clock::now();
        volatile float sink = k.run(iterations);
        (void)sink;
        double s = std::chrono::duration<double>(clock::now() - t0).count();
        iterations = std::max<int64_t>(1000, int64_t(double(iterations) * seconds / std::max(s, 1e-6)));
    }
    double best_wall = 0;
    std::vector<double> best_cpu(size_t(threads), 0.0);
    const double flops = double(iterations) * double(k.flops_per_iteration);
    run_pinned(threads, cpu.core_cpus, [&](int t, std::barrier<>& sync) {
        k.run(iterations / 10);  // warm up: wakes the vector units, settles the clock
        for (int rep = 0; rep < repeats; ++rep) {
            sync.arrive_and_wait();
            auto t0 = clock::now();
            double c0 = thread_cpu_seconds();
            volatile float sink = k.run(iterations);
            (void)sink;
            best_cpu[size_t(t)] = std::max(best_cpu[size_t(t)], flops / (thread_cpu_seconds() - c0) / 1e9);
            sync.arrive_and_wait();
            if (t == 0)
                best_wall = std::max(best_wall, flops * threads / std::chrono::duration<double>(clock::now() - t0).count() / 1e9);
        }
    });
    double sum = 0;
    for (double g : best_cpu) sum += g;
    return {k.isa, threads, sum, best_wall};
}

}  // namespace ridge::probe
