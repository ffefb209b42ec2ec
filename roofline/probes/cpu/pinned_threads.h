#pragma once
// Runs one body per thread, each pinned to its own logical CPU, all released together. The probes
// time regions between barriers on thread 0, so every thread is inside the same region.
#include <barrier>
#include <functional>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sched.h>

namespace ridge::probe {

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
