#pragma once
// How the threads of a kernel's OpenMP region end it. libgomp's threads that reach the region's end
// barrier early spin GOMP_SPINCOUNT times (2,000 as ridge sets it: about 50 us on a 2-core Zen 5)
// and then sleep; the next region then waits for them to be woken, 5 to 64 us there. After a long
// step whose halves end further apart than that (efficientnet_b7's squeeze-excitation pools at
// batch 8: 0.4 to 2.3 ms over 2 threads), a small step after it paid the wake-up: its squeezes'
// inner products took 25 to 120 us against bounds of 1 to 6.
#include <omp.h>
#include <strings.h>

#include <atomic>
#include <chrono>
#include <cstdlib>

namespace ridge::simd {

// Whether OpenMP's idle threads spin before they sleep: libgomp's default, and bench/omp_wait.h's
// choice on an idle machine; not under OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT=0 (its choice
// when other tasks wait to run), where a spinning thread would hold a core another task needs.
// "infinite" reads as 0, the cautious side. Read at each call, as the executor's tests change them.
inline bool idle_threads_spin() {
    if (const char* p = std::getenv("OMP_WAIT_POLICY"); p && strcasecmp(p, "passive") == 0) return false;
    const char* n = std::getenv("GOMP_SPINCOUNT");
    return !n || std::strtoll(n, nullptr, 10) > 0;
}

// Whether a team of `threads` may spin while its threads wait for one another: idle threads spin
// anyway, and no two of them share a core (a spinning thread would take the core another runs on).
inline bool team_may_spin(int threads) { return threads <= omp_get_num_procs() && idle_threads_spin(); }

// A thread spinning on a flag: pause lets the core's other hardware thread and the memory
// system breathe between reads.
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// Called by every thread of a region once its share is done: where idle threads spin and each
// thread has a core of its own, the early ones spin here until the last arrives (2 ms at most, in
// case a thread was descheduled), so all reach the end barrier together and none sleeps there.
class FinishTogether {
public:
    explicit FinishTogether(std::chrono::microseconds most = std::chrono::milliseconds(2)) : most_(most) {}

    void arrive() {
        const int threads = omp_get_num_threads();
        if (finished_.fetch_add(1, std::memory_order_acq_rel) + 1 == threads) return;
        if (!team_may_spin(threads)) return;
        const auto give_up = std::chrono::steady_clock::now() + most_;
        for (int i = 1; finished_.load(std::memory_order_acquire) < threads; ++i) {
            relax();
            if (i % 64 == 0 && std::chrono::steady_clock::now() > give_up) return;
        }
    }

private:
    std::chrono::microseconds most_;
    std::atomic<int> finished_{0};
};

}  // namespace ridge::simd
