#pragma once
// The environment a measurement was taken in, recorded with every result: a time means little
// without the machine, the build and the code that produced it.
#include <cstdint>
#include <optional>
#include <string>

namespace ridge::bench {

struct Env {
    std::string cpu;       // model name from /proc/cpuinfo
    int cores = 0;         // logical CPUs this process may run on
    int threads = 0;       // threads the run used
    double clock_mhz = 0;  // as the OS reports it (0: unknown); in a VM often the base clock
    double load_average = -1;  // 1 minute, before the run (-1: unknown): other work on these cores
    std::string omp_wait;      // how idle OpenMP threads wait: "GOMP_SPINCOUNT=2000" or "=0" (ridge's), or the user's
    double clock_max_mhz = 0;  // cpufreq's maximum (0: not exposed, as in most VMs)
    std::string isa;       // the vector extensions the CPU has, e.g. "avx512f avx2 fma"
    std::string onednn_isa;  // the instruction set oneDNN dispatches to (ONEDNN_MAX_CPU_ISA caps it)
    std::string os, kernel;  // /etc/os-release PRETTY_NAME; uname's release and machine
    int64_t memory_bytes = 0;  // MemTotal
    // Environment variables that change how the libraries run (OpenMP's waiting and threads,
    // oneDNN's instruction set, the visible GPUs), as NAME=value, space-separated; empty: none set.
    std::string runtime_env;
    std::string compiler, onednn, git, date;  // date: UTC, ISO 8601
    // --device cuda: device 0 and the software stack that ran on it.
    bool gpu = false;
    std::string gpu_name, driver, cuda_runtime, cudnn, cublas;
    int gpu_sms = 0;
    double gpu_clock_mhz = 0, gpu_mem_clock_mhz = 0;  // the driver's peak clocks
    int64_t gpu_mem_bytes = 0;
};

Env capture_env(int threads, bool gpu = false);

// What this process may still allocate, and the limit that sets it: the smallest of the kernel's
// MemAvailable, every cgroup memory limit over this process (v2 memory.max, v1
// memory.limit_in_bytes, each less the group's current use not counting reclaimable page cache)
// and RLIMIT_AS (ulimit -v) less the address space already in use.
struct MemoryBudget {
    int64_t bytes = -1;   // -1: no limit could be read
    std::string limit;    // which one, in words: "MemAvailable", or the cgroup or RLIMIT_AS limit and its size
    int64_t mem_available = -1;  // MemAvailable itself, to quote beside a tighter limit
};

// Where the limits are read; tests point them at files of their own.
struct MemorySources {
    std::string meminfo = "/proc/meminfo";
    std::string self_cgroup = "/proc/self/cgroup";
    std::string cgroup_root = "/sys/fs/cgroup";
    std::string self_status = "/proc/self/status";  // VmSize: the address space already in use
    std::optional<int64_t> address_space_limit;     // RLIMIT_AS in bytes; nullopt: unlimited
    static MemorySources this_process();
};

MemoryBudget memory_budget(const MemorySources& from = MemorySources::this_process());
int64_t available_memory_bytes();  // memory_budget().bytes

// The revision this binary was built from ("unknown" outside a git checkout), "+dirty" when the
// tree had uncommitted changes then; recorded by the build, so nothing runs git at run time.
std::string build_revision();

// The CPUs this process may run OpenMP's threads on (omp_wait.h's openmp_cpus).
int hardware_threads();

// An argument as a POSIX shell would need it written to mean the same.
std::string shell_quoted(const std::string& s);

// The command as it was typed (argv[0] included, from /proc/self/cmdline), each argument quoted as
// a shell would need it; `fallback` where /proc is not mounted.
std::string command_line(const std::string& fallback);

// This machine's name (results/<host>/), "localhost" when it has none.
std::string host_name();

}  // namespace ridge::bench
