#pragma once
// The environment a measurement was taken in, recorded with every result: a time means little
// without the machine, the build and the code that produced it.
#include <cstdint>
#include <string>

namespace ridge::cli {

struct Env {
    std::string cpu;       // model name from /proc/cpuinfo
    int cores = 0;         // logical CPUs this process may run on
    int threads = 0;       // threads the run used
    double clock_mhz = 0;  // as the OS reports it (0: unknown); in a VM often the base clock
    double load_average = -1;  // 1 minute, before the run (-1: unknown): other work on these cores
    std::string omp_wait;      // how idle OpenMP threads wait: "GOMP_SPINCOUNT=0" (ridge's), or the user's
    std::string compiler, onednn, git, date;  // date: UTC, ISO 8601
    // --device cuda: device 0 and the software stack that ran on it.
    bool gpu = false;
    std::string gpu_name, driver, cuda_runtime, cudnn, cublas;
    int gpu_sms = 0;
    double gpu_clock_mhz = 0, gpu_mem_clock_mhz = 0;  // the driver's peak clocks
    int64_t gpu_mem_bytes = 0;
};

Env capture_env(int threads, bool gpu = false);

// Memory the kernel says can be allocated without swapping (MemAvailable), or -1 if unknown.
int64_t available_memory_bytes();

int hardware_threads();

// This machine's name (results/<host>/), "localhost" when it has none.
std::string host_name();

}  // namespace ridge::cli
