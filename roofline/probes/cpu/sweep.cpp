// Read bandwidth against working-set size, from 4 KiB to past the last-level cache: the
// bandwidth steps down at each cache capacity (the Empirical Roofline Toolkit's plateaus).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <new>

#include "roofline/probes/cpu/pinned_threads.h"
#include "roofline/probes/cpu/kernels.h"
#include "roofline/probes/cpu/probes.h"

namespace ridge::probe {

std::vector<SweepPoint> measure_sweep(const CpuInfo& cpu, int threads, int per_octave, double seconds_per_point) {
    using clock = std::chrono::steady_clock;
    const int64_t block = 256;  // bytes: the read kernel's unit
    int64_t top = std::min(std::max<int64_t>(8 * cpu.llc_bytes_total(), int64_t(64) << 20), probe_memory_cap());
    std::vector<int64_t> sizes;
    for (double w = 4096; w <= double(top) * 1.0001; w *= std::pow(2.0, 1.0 / per_octave)) {
        int64_t per = std::max<int64_t>(block, int64_t(w / threads) / block * block);
        if (sizes.empty() || per * threads != sizes.back()) sizes.push_back(per * threads);
    }
    // Only the largest point's share is touched: first-touching memory no point reads cost up to
    // twice the probe's page clearing (one point per octave reached 2 GiB of a 4 GiB top).
    const int64_t per_thread_max = sizes.back() / threads;
    std::vector<SweepPoint> points(sizes.size());
    std::vector<double> cpu_rate(size_t(threads), 0.0);
    const int repeats = 9;
    bool avx2 = false;
#if defined(__x86_64__)
    avx2 = cpu.avx2;
#endif
    run_pinned(threads, cpu.core_cpus, [&](int t, std::barrier<>& sync) {
        // Each thread allocates and first-touches its own buffer (local memory on NUMA machines).
        ProbeBuffer buffer{size_t(per_thread_max)};
        double* p = buffer.get();
        if (!p) std::abort();
        for (int64_t i = 0; i < per_thread_max / 8; ++i) p[i] = 1.0 / double(i + 1);
        for (size_t k = 0; k < sizes.size(); ++k) {
            int64_t n = sizes[k] / threads / 8;
            // Enough passes for about seconds_per_point at 50 GB/s per thread in all, at least two
            // per run (the first also warms the caches) and at most 1 GiB per thread.
            // Several short timed runs rather than one long one: on a shared machine the best of
            // them is the one no other process interrupted.
            int64_t passes = std::max<int64_t>(2, int64_t(seconds_per_point / repeats * 50e9 / double(n * 8)));
            passes = std::min<int64_t>(passes, std::max<int64_t>(2, (int64_t(1) << 30) / (n * 8)));
            double best = 1e30, best_cpu = 1e30;
            for (int rep = 0; rep < repeats; ++rep) {
                sync.arrive_and_wait();
                auto t0 = clock::now();
                double c0 = thread_cpu_seconds();
                volatile double sink = avx2 ? kernels::read_avx2(p, n, passes) : kernels::read_scalar(p, n, passes);
                (void)sink;
                best_cpu = std::min(best_cpu, thread_cpu_seconds() - c0);
                sync.arrive_and_wait();
                best = std::min(best, std::chrono::duration<double>(clock::now() - t0).count());
            }
            cpu_rate[size_t(t)] = double(n * 8) * double(passes) / best_cpu / 1e9;
            sync.arrive_and_wait();
            if (t == 0) {
                double wall = double(sizes[k]) * double(passes) / best / 1e9, summed = 0;
                for (double r : cpu_rate) summed += r;
                // Caches up to the last level have a path per core: each core's rate over its own
                // CPU time, summed, is what they deliver when the cores run. DRAM is one shared
                // resource: only the wall-clock rate of all threads together measures it.
                bool cached = double(sizes[k]) <= 0.5 * double(cpu.llc_bytes_total());
                points[k] = {sizes[k], cached ? summed : wall, wall};
            }
        }
        sync.arrive_and_wait();
    });
    return points;
}

namespace kernels {

double read_scalar(const double* p, int64_t n, int64_t passes) {
    double s[8] = {};
    for (int64_t r = 0; r < passes; ++r)
        for (int64_t i = 0; i < n; i += 8)
            for (int k = 0; k < 8; ++k) s[k] += p[i + k];
    return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

}  // namespace kernels

std::vector<Plateau> plateaus(const CpuInfo& cpu, int threads, const std::vector<SweepPoint>& points) {
    // Each level's range, in total working-set bytes: private caches hold one thread's share,
    // shared ones the threads sharing an instance.
    struct Range {
        std::string name;
        double lo, hi;
    };
    std::vector<Range> ranges;
    double prev_capacity = 0;  // total bytes the previous level holds for these threads
    for (const CacheLevel& c : cpu.caches) {
        int sharing = std::min(threads, c.shared_by);
        int instances_used = std::max(1, (threads + sharing - 1) / sharing);
        double capacity = double(c.bytes) * instances_used;
        ranges.push_back({"L" + std::to_string(c.level), prev_capacity * 2, capacity / 2});
        prev_capacity = capacity;
    }
    ranges.push_back({"DRAM", std::max(prev_capacity * 4, 1.0), 1e300});
    std::vector<Plateau> out;
    for (const Range& r : ranges) {
        std::vector<double> in;
        Plateau p;
        p.level = r.name;
        for (const SweepPoint& s : points) {
            if (double(s.bytes) < r.lo || double(s.bytes) > r.hi) continue;
            if (in.empty()) p.from_bytes = s.bytes;
            p.to_bytes = s.bytes;
            in.push_back(s.gbs);
        }
        if (in.empty()) continue;
        // The upper quartile: interference only ever lowers a point, and the first sizes past a
        // capacity can sit in a level's range while already slower.
        std::sort(in.begin(), in.end());
        p.points = int(in.size());
        double pos = 0.75 * double(in.size() - 1);
        size_t lo = size_t(pos), hi = std::min(lo + 1, in.size() - 1);
        p.gbs = in[lo] + (in[hi] - in[lo]) * (pos - double(lo));
        out.push_back(p);
    }
    return out;
}

}  // namespace ridge::probe
