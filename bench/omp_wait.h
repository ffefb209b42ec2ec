#pragma once
// OpenMP threads with no work spin before they sleep (libgomp: 300,000 iterations by default),
// and oneDNN and kernels/simd run on libgomp. On a shared machine a spinning thread holds a core
// that its descheduled team-mate needs to reach the barrier: mobilenet_v2 inference at batch 16
// took 0.95 to 1.6 s on two threads at a load average of 11 and 0.16 to 0.26 s with no spinning
// (ONNX Runtime: 0.60 to 0.63 s). libgomp reads GOMP_SPINCOUNT only when it loads, so a program
// that times OpenMP code sets it and runs itself again first thing in main, unless the user chose
// a spin or wait policy.
#include <unistd.h>

#include <cstdlib>

namespace ridge::bench {

inline void sleep_waiting_threads(char** argv) {
    if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
    setenv("GOMP_SPINCOUNT", "0", 1);
    execv("/proc/self/exe", argv);  // on failure, run on with the default spin
}

}  // namespace ridge::bench
