#pragma once
// Timing one kernel call on the CPU: warm-up calls, then repeats each after a cache flush, timed
// with clock_gettime(CLOCK_MONOTONIC) for seconds and rdtsc for ticks. The TSC counts at a
// constant rate (about the nominal clock) whatever the cores' frequency, so ticks are a finer
// wall clock, not core cycles: a core running at a turbo or throttled clock does more or less
// work per tick.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench/stats.h"

namespace ridge::kbench {

struct TimingOptions {
    int warmup = 3;
    int repeats = 20;
    bool flush = true;  // write flush_bytes() between repeats: cold caches, as in a net where the
                        // previous layer's traffic has evicted this one's operands
    int threads = 1;    // the threads the flush writes from, so every core's private caches are evicted
};

struct Timing {
    bench::Stats seconds;  // median, min, quartiles
    double ticks_median = 0;
    int repeats = 0;
};

// The largest single cache of this host in bytes (the probes' cpu_info: sysfs, else glibc's), 0
// when unknown.
size_t last_level_cache_bytes();
// What the flush writes: twice the last-level cache (64 MiB when unknown) plus 2 MiB per thread for
// the private caches, which a non-inclusive last level does not evict.
size_t flush_bytes(int threads);

// Writes a buffer of flush_bytes(threads) from `threads` OpenMP threads, each its own share.
class CacheFlush {
public:
    explicit CacheFlush(int threads);
    void operator()();
    int threads() const { return threads_; }

private:
    std::vector<unsigned char> buffer_;
    int threads_;
    unsigned char round_ = 0;
};

Timing time_cpu(const std::function<void()>& call, const TimingOptions& o);

}  // namespace ridge::kbench
