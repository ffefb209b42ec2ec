#include "bench/kernels/measure.h"

#include <time.h>
#include <x86intrin.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "roofline/probes/cpu/probes.h"

namespace ridge::kbench {

namespace {

double now_seconds() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

size_t last_level_cache_bytes() {
    size_t best = 0;
    for (const probe::CacheLevel& c : probe::cpu_info().caches) best = std::max(best, size_t(c.bytes));
    return best;
}

size_t flush_bytes(int threads) {
    size_t llc = last_level_cache_bytes();
    return 2 * (llc ? llc : size_t(64) << 20) + size_t(threads) * (size_t(2) << 20);
}

CacheFlush::CacheFlush(int threads) : buffer_(flush_bytes(threads)), threads_(threads) {}

void CacheFlush::operator()() {
    ++round_;
    const int64_t n = int64_t(buffer_.size()), t = threads_;
    unsigned char* p = buffer_.data();
    const unsigned char v = round_;
#pragma omp parallel for num_threads(threads_) schedule(static, 1)
    for (int64_t i = 0; i < t; ++i) std::memset(p + n * i / t, v, size_t(n * (i + 1) / t - n * i / t));
    // The stores must happen: nothing reads the buffer, so tell the compiler memory is observed.
    asm volatile("" : : "r"(p) : "memory");
}

Timing time_cpu(const std::function<void()>& call, const TimingOptions& o) {
    // One buffer for the process: twice the last-level cache can be a gigabyte (this VM reports its
    // socket's 508 MiB L3), and allocating and faulting it in again took 4 s a timing. The old one
    // is freed before another thread count's is made, so two never coexist.
    static std::unique_ptr<CacheFlush> kept;
    if (o.flush && (!kept || kept->threads() != o.threads)) {
        kept.reset();
        kept = std::make_unique<CacheFlush>(o.threads);
    }
    CacheFlush* flush = o.flush ? kept.get() : nullptr;
    for (int i = 0; i < o.warmup; ++i) call();
    std::vector<double> seconds, ticks;
    for (int i = 0; i < o.repeats; ++i) {
        if (flush) (*flush)();
        double t0 = now_seconds();
        unsigned long long c0 = __rdtsc();
        call();
        unsigned long long c1 = __rdtsc();
        double t1 = now_seconds();
        seconds.push_back(t1 - t0);
        ticks.push_back(double(c1 - c0));
    }
    Timing t;
    t.seconds = bench::summarize(seconds);
    t.ticks_median = bench::summarize(ticks).median;
    t.repeats = o.repeats;
    return t;
}

}  // namespace ridge::kbench
