#pragma once
// Hand-written probes that measure this machine's ceilings: the core clock (a chain of dependent
// single-cycle adds), FMA throughput on every core, STREAM copy/scale/add/triad beside glibc's
// memcpy on the same buffers, and a read-bandwidth sweep over working sets from L1 to DRAM (the
// Empirical Roofline Toolkit's method). Each probe pins one thread per physical core.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <time.h>

namespace ridge::probe {

// Seconds of CPU time the calling thread has used: a probe timed with it is not charged for the
// time other processes held its core.
inline double thread_cpu_seconds() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

struct CacheLevel {
    int level = 0;
    std::string type;    // "Data", "Unified", "Instruction"
    int64_t bytes = 0;   // one instance
    int shared_by = 1;   // logical CPUs sharing one instance
    int instances = 1;   // instances on this machine
};

// How many FMA results a core retires per cycle, and why we believe it.
struct FmaUnits {
    int units = 0;       // FMA pipes
    int bits = 0;        // width of each
    std::string rule;    // the table entry that matched (roofline/README.md lists them all)
    double fp32_flops_per_cycle() const { return units * (bits / 32.0) * 2.0; }
};

struct CpuInfo {
    std::string vendor, model_name;
    int family = 0, model = 0;
    int logical_cpus = 0;
    std::vector<int> core_cpus;  // one logical CPU per physical core (the probes pin to these)
    bool avx2 = false, fma = false, avx512f = false;
    std::optional<double> reported_mhz;  // /proc/cpuinfo "cpu MHz" (often the base clock in a VM)
    std::vector<CacheLevel> caches;      // data and unified levels, from sysfs or else glibc's sysconf
    std::string caches_from;             // which of the two, and what was assumed
    int64_t llc_bytes_total() const;     // last level, all instances together
    const CacheLevel* level(int n) const;
};

CpuInfo cpu_info();
// Half of /proc/meminfo's MemAvailable: the most the bandwidth probes allocate in all, since their
// arrays are sized from the last-level cache, which a guest may be told is the host's whole one.
// No limit where /proc/meminfo cannot be read.
int64_t probe_memory_cap();
FmaUnits fma_units(const CpuInfo& cpu);  // the per-model table

// The all-core clock: every core runs a dependent chain of single-cycle adds at once, ten times,
// each timed with the thread's own CPU time; the median of the cores' best rates, in GHz.
double measure_clock_ghz(const CpuInfo& cpu, int threads, double seconds_per_run);

struct FmaResult {
    std::string isa;  // "avx512", "avx2" or "scalar"
    int threads = 0;
    double gflops = 0;       // the cores' best rates over their own CPU time, summed
    double gflops_wall = 0;  // all threads together over wall-clock time, best run
};
// fp32 FMA throughput with independent accumulators in registers, one thread per core, best of
// `repeats` runs of about `seconds` each. Each thread times its runs with its own CPU time
// (CLOCK_THREAD_CPUTIME_ID), so time the scheduler gave to other processes is not charged to the
// core; the wall-clock rate of all threads together is reported beside it.
FmaResult measure_fma(const CpuInfo& cpu, int threads, double seconds, int repeats);

struct StreamResult {
    int threads = 0;
    int64_t array_bytes = 0;  // each of the three arrays
    bool nontemporal = false; // copy/scale/add/triad stores bypass the caches
    // GB/s (1e9 B/s) counted the STREAM way: copy and scale 2 arrays, add and triad 3; the
    // write-allocate read of a cached store is not counted.
    double copy = 0, scale = 0, add = 0, triad = 0;
    double triad_cached_stores = 0;  // the same triad with ordinary stores (pays write-allocate)
    double memcpy = 0;                // glibc memcpy a -> c, 2 arrays counted
};
// array_bytes 0 picks 2x the last-level cache (at least 64 MiB). Each timed run covers half of
// the arrays, consecutive runs the other half; best of `repeats` rounds of all six kernels.
StreamResult measure_stream(const CpuInfo& cpu, int threads, int64_t array_bytes, int repeats);

struct SweepPoint {
    int64_t bytes = 0;   // total working set, split evenly across the threads
    double gbs = 0;      // read bandwidth: up to half the last-level cache, each thread's rate over
                         // its own CPU time, summed; beyond it, gbs_wall
    double gbs_wall = 0; // all threads together over wall-clock time
};
struct Plateau {
    std::string level;  // "L1", "L2", "L3", "DRAM"
    int64_t from_bytes = 0, to_bytes = 0;
    int points = 0;
    double gbs = 0;     // upper quartile of the points in the range
};
// Working sets from 4 KiB to 8x the last-level cache, `per_octave` points per doubling.
std::vector<SweepPoint> measure_sweep(const CpuInfo& cpu, int threads, int per_octave, double seconds_per_point);
// Groups sweep points into the plateau each cache size predicts: a level's range starts at twice
// the previous level's capacity and ends at half its own (per thread for private caches, in
// total for shared ones); DRAM starts at 4x the last level. The plateau is the upper quartile.
std::vector<Plateau> plateaus(const CpuInfo& cpu, int threads, const std::vector<SweepPoint>& points);

// Everything `ridge roofline measure --device cpu` reports.
struct CpuCeilings {
    CpuInfo cpu;
    std::optional<double> load_average;  // 1-minute, before the probes: other work on these cores
    FmaUnits units;
    int threads = 0;
    double measured_clock_ghz = 0;
    FmaResult fma;
    double theoretical_gflops(double clock_ghz) const;  // cores x clock x FMA FLOP per cycle
    StreamResult stream;
    std::vector<SweepPoint> sweep;
    std::vector<Plateau> levels;
};
struct MeasureSettings {
    bool quick = false;  // short runs for tests and `place --chip this`
    int threads = 0;     // 0: one per physical core
};
CpuCeilings measure_cpu(const MeasureSettings& s);
std::optional<double> load_average();  // /proc/loadavg, 1 minute

}  // namespace ridge::probe
