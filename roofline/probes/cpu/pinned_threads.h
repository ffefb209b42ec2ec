#pragma once
// Runs one body per thread, each pinned to its own logical CPU, all released together. The probes
// time regions between barriers on thread 0, so every thread is inside the same region.
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <barrier>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace ridge::probe {

// A buffer for the bandwidth probes: 2 MiB-aligned and advised into transparent huge pages, since
// first-touching gigabytes of 4 KiB pages (arrays sized from a large last-level cache) costs
// seconds of page faults, more than the probes themselves. Mapped directly, not from malloc:
// under AddressSanitizer malloc poisons and unpoisons the shadow of every byte it hands out, an
// eighth of the buffer more to touch; `roofline measure --quick` with its 10 GB of buffers took
// 20 s sanitized on the Zen 5 (19 s of it in the kernel) against 8 s in Release.
class ProbeBuffer {
public:
    explicit ProbeBuffer(size_t bytes) {
        const size_t huge = size_t(2) << 20;
        bytes_ = (bytes + huge - 1) / huge * huge + huge;  // room to align the start
        void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            bytes_ = 0;
            return;
        }
        base_ = p;
        const uintptr_t at = (reinterpret_cast<uintptr_t>(p) + huge - 1) / huge * huge;
        data_ = reinterpret_cast<double*>(at);
        madvise(data_, bytes_ - huge, MADV_HUGEPAGE);  // advice only: without THP the pages stay small
    }
    ~ProbeBuffer() {
        if (base_) munmap(base_, bytes_);
    }
    ProbeBuffer(const ProbeBuffer&) = delete;
    ProbeBuffer& operator=(const ProbeBuffer&) = delete;
    double* get() const { return data_; }  // null when the mapping failed

private:
    void* base_ = nullptr;
    double* data_ = nullptr;
    size_t bytes_ = 0;
};

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
