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
#include <cstdint>
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

// f(u) for each u in [0, units): on `threads` threads, each a contiguous share (OpenMP's static
// schedule), or here in order where there is one thread or one unit. A region of one thread is
// not free: libgomp builds a team for it whatever its size or `if` clause (a team of one is still
// a team: GOMP_parallel has no path without one), and inside another region, as in the oneDNN
// executor's held stretches (executor.cpp, run()), it allocates a fresh one each call.
// efficientnet_b0 at batch 16, `ridge bench`'s per-layer pass, 3 alternated pairs: its first
// twelve squeeze-excitation inner products (one thread, held) took 10-17 us each with a region
// and 4.4-7.5 without; the expansions after them 3.9-7.1 and 1.2-3.4.
template <bool together, class F>
void run_units(int64_t units, int threads, F&& f) {
    if (threads <= 1 || units <= 1) {
        for (int64_t u = 0; u < units; ++u) f(u);
        return;
    }
    FinishTogether end;
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static) nowait
        for (int64_t u = 0; u < units; ++u) f(u);
        if (together) end.arrive();
    }
}

template <class F>
void for_units(int64_t units, int threads, F&& f) {
    run_units<false>(units, threads, f);
}

// The same, the threads then finishing together (FinishTogether, above): for a kernel long enough
// that a thread ending early would fall asleep before the next step needs it.
template <class F>
void for_units_together(int64_t units, int threads, F&& f) {
    run_units<true>(units, threads, f);
}

}  // namespace ridge::simd
