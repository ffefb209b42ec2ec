#include "bench/kernels/measure.h"

#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <cstring>
#include <fstream>
#include <optional>

namespace ridge::kbench {

namespace {

double now_seconds() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

// "32768K" or "36 MiB"-style sysfs sizes: a number and an optional K/M suffix.
size_t parse_size(const std::string& s) {
    size_t end = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(s, &end);
    } catch (const std::exception&) {
        return 0;
    }
    while (end < s.size() && s[end] == ' ') ++end;
    char unit = end < s.size() ? s[end] : ' ';
    if (unit == 'K') return size_t(v) << 10;
    if (unit == 'M') return size_t(v) << 20;
    return size_t(v);
}

}  // namespace

size_t last_level_cache_bytes() {
    size_t best = 0;
    for (int i = 0; i < 8; ++i) {
        std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
        std::string s;
        if (f >> s) best = std::max(best, parse_size(s));
    }
    if (best == 0) {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (l3 > 0) best = size_t(l3);
    }
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
    std::optional<CacheFlush> flush;
    if (o.flush) flush.emplace(o.threads);
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
