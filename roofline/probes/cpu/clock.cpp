// The core clock, measured: a chain of dependent single-cycle integer adds retires one add per
// cycle whatever the reported frequency, so adds per second is cycles per second. In a VM
// /proc/cpuinfo usually reports the base clock while the cores run at their boost clock.
#include <algorithm>
#include <chrono>
#include <cstdint>

#include "roofline/probes/cpu/pinned_threads.h"
#include "roofline/probes/cpu/probes.h"

namespace ridge::probe {

namespace {

#define RIDGE_ADD1 "add $1, %0\n\t"
#define RIDGE_ADD10 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1 RIDGE_ADD1
#define RIDGE_ADD100 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10 RIDGE_ADD10
constexpr int adds_per_iteration = 100;

// The loop counter runs on another ALU beside the chain, so each iteration costs the chain's
// 100 cycles.
[[gnu::noinline]] uint64_t add_chain(uint64_t iterations) {
    uint64_t x = 0;
    for (uint64_t i = 0; i < iterations; ++i) {
#if defined(__x86_64__)
        asm volatile(RIDGE_ADD100 : "+r"(x));
#elif defined(__aarch64__)
        for (int k = 0; k < adds_per_iteration; ++k) asm volatile("add %0, %0, #1" : "+r"(x));
#else
        for (int k = 0; k < adds_per_iteration; ++k) asm volatile("" : "+r"(x)), ++x;
#endif
    }
    return x;
}

}  // namespace

double measure_clock_ghz(const CpuInfo& cpu, int threads, double seconds_per_run) {
    using clock = std::chrono::steady_clock;
    // Calibrate once: about 3e6 iterations is 0.1 s at 3 GHz.
    uint64_t iterations = 100000;
    {
        auto t0 = clock::now();
        add_chain(iterations);
        double s = std::chrono::duration<double>(clock::now() - t0).count();
        iterations = std::max<uint64_t>(10000, uint64_t(double(iterations) * seconds_per_run / std::max(s, 1e-6)));
    }
    std::vector<double> best(size_t(threads), 0.0);
    run_pinned(threads, cpu.core_cpus, [&](int t, std::barrier<>& sync) {
        for (int rep = 0; rep < 10; ++rep) {
            sync.arrive_and_wait();
            double t0 = thread_cpu_seconds();
            add_chain(iterations);
            double s = thread_cpu_seconds() - t0;
            best[size_t(t)] = std::max(best[size_t(t)], double(iterations) * adds_per_iteration / s / 1e9);
        }
    });
    std::sort(best.begin(), best.end());
    return best[best.size() / 2];
}

}  // namespace ridge::probe
