#pragma once
// Runs one body per thread, each pinned to its own logical CPU, all released together. The probes
// time regions between barriers on thread 0, so every thread is inside the same region.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <barrier>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace ridge::probe {

// A buffer for the bandwidth probes: 2 MiB-aligned and advised into transparent huge pages, since
// first-touching gigabytes of 4 KiB pages (arrays sized from a large last-level cache) costs
// seconds of page faults, more than the probes themselves. Released with std::free.
inline void* probe_alloc(size_t bytes) {
    const size_t huge = size_t(2) << 20;
    bytes = (bytes + huge - 1) / huge * huge;
    void* p = std::aligned_alloc(huge, bytes);
    if (p) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP the pages stay small
    return p;
}

inline void pin_to_cpu(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    // A failure (a restricted cpuset) leaves the thread unpinned; the probe still runs.
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

// body(tid, barrier) runs on threads.size() threads; thread i is pinned to cpus[i % cpus.size()].
inline void run_pinned(int threads, const std::vector<int>& cpus,
                       const std::function<void(int, std::barrier<>&)>& body) {
    std::barrier<> sync(threads);
    std::vector<std::thread> pool;
    pool.reserve(size_t(threads));
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            if (!cpus.empty()) pin_to_cpu(cpus[size_t(t) % cpus.size()]);
            body(t, sync);
        });
    for (std::thread& th : pool) th.join();
}

}  // namespace ridge::probe
