#pragma once
// How long OpenMP's idle threads spin before they sleep. oneDNN and kernels/simd run on libgomp,
// whose threads spin 300,000 iterations by default; libgomp reads GOMP_SPINCOUNT only when it
// loads, so a program that times OpenMP code sets it and runs itself again first thing in main,
// unless the user chose a spin or wait policy.
//
// On a shared machine a spinning thread holds a core that its descheduled team-mate needs to reach
// the barrier: mobilenet_v2 inference at batch 16 took 0.95 to 1.6 s on two threads at a load
// average of 11 with the default spin and 0.16 to 0.26 s with none; with three busy loops beside
// it, a spin of 2,000 made efficientnet_b0 at batch 1 1.6x and mobilenet_v3_large 2.0x slower than
// none. On an idle machine, though, a thread that sleeps at once must be woken by the next layer
// that uses it, tens of microseconds each time, and small nets have a layer every few: with 2,000
// spins (tens of microseconds) instead of none, four alternating rounds on the idle 2-core EPYC
// ran mobilenet_v3_large at batch 1 in 0.83x the time, efficientnet_b0 and googlenet in 0.92x,
// squeezenet1_1 0.95x, resnet50 0.98x, mobilenet_v2 at batch 16 1.00x; training at batch 8 was
// 0.86x to 1.02x. The default spin was slower than 2,000 even idle (mobilenet_v3_large 2.19
// against 1.76 ms), as a spinning thread takes issue slots from a layer running on one thread.
// So the spin is short, and only when no other task on the whole machine is running or waiting to
// run: procs_running counts every CPU's, not only the ones this process may use, so on a large
// shared host the spin is rarely chosen, the cautious side.
#include <sched.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace ridge::bench {

// Spins for an idle machine (see above); none when others wait to run.
inline const char* spin_count(int others_runnable) { return others_runnable > 0 ? "0" : "2000"; }

// The count most samples show: a task runnable for an instant does not count. With the largest of
// five samples instead, 2 of 6 runs of squeezenet1_1 at batch 1 on the idle 2-core VM saw one
// (the shell that started ridge, a kernel worker) and ran without spin: 5.8 ms against 3.3.
inline int typical(std::vector<int> samples) {
    if (samples.empty()) return -1;
    std::sort(samples.begin(), samples.end());
    return samples[samples.size() / 2];
}

// The runnable tasks besides this one in most of nine samples of /proc/stat's procs_running over
// about 4 ms (a count at an instant: the load average lags by a minute and still holds the peer a
// benchmark ran just before); -1 when it cannot be read.
inline int others_runnable() {
    std::vector<int> samples;
    for (int i = 0; i < 9; ++i) {
        if (i > 0) std::this_thread::sleep_for(std::chrono::microseconds(500));
        std::FILE* f = std::fopen("/proc/stat", "r");
        if (!f) return -1;
        char line[256];
        while (std::fgets(line, sizeof line, f))
            if (std::strncmp(line, "procs_running ", 14) == 0) samples.push_back(std::atoi(line + 14) - 1);
        std::fclose(f);
    }
    return typical(samples);
}

// The CPUs this process may run OpenMP's threads on: this thread's mask and the CPUs of OpenMP's
// places. With OMP_PROC_BIND set, libgomp binds the initial thread to the first place as it loads,
// before main, so that thread's own mask then names one place's CPUs; the places together are the
// CPUs OpenMP was given (by default all the process started with, or those OMP_PLACES names).
// False where the mask cannot be read.
inline bool openmp_cpus(cpu_set_t& set) {
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
#ifdef _OPENMP
    for (int p = 0; p < omp_get_num_places(); ++p) {
        std::vector<int> ids(size_t(std::max(omp_get_place_num_procs(p), 0)));
        omp_get_place_proc_ids(p, ids.data());
        for (int id : ids)
            if (id >= 0 && id < CPU_SETSIZE) CPU_SET(id, &set);
    }
#endif
    return true;
}

// The process image run again inherits this thread's mask: widened first to openmp_cpus, or under
// OMP_PROC_BIND the new image would see one place and run on one thread.
inline void set_thread_wait(char** argv) {
    if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
    int others = others_runnable();
    setenv("GOMP_SPINCOUNT", spin_count(others < 0 ? 1 : others), 1);
    cpu_set_t set;
    if (openmp_cpus(set)) sched_setaffinity(0, sizeof set, &set);  // on failure the new image runs on this mask
    execv("/proc/self/exe", argv);  // on failure, run on with the default spin
}

}  // namespace ridge::bench
