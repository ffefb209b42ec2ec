// All CPU probes in one run: clock, FMA peak, STREAM beside memcpy, the working-set sweep.
#include <algorithm>
#include <fstream>

#include "roofline/probes/cpu/probes.h"

namespace ridge::probe {

double CpuCeilings::theoretical_gflops(double clock_ghz) const {
    return threads * clock_ghz * units.fp32_flops_per_cycle();
}

std::optional<double> load_average() {
    std::ifstream f("/proc/loadavg");
    double v = 0;
    if (f >> v) return v;
    return std::nullopt;
}

CpuCeilings measure_cpu(const MeasureSettings& s) {
    CpuCeilings r;
    r.cpu = cpu_info();
    r.units = fma_units(r.cpu);
    int cores = int(r.cpu.core_cpus.size());
    r.threads = s.threads > 0 ? std::min(s.threads, cores) : cores;
    // The clock first and again after the FMA run: the higher of the two is the clock the FMA
    // probe can have run at (a core that slows under vector load lowers the measured FMA rate,
    // not this clock), so the theoretical peak is never understated.
    // Many short runs, best of them: on a shared machine some run alone on its core.
    r.load_average = load_average();
    double seconds = s.quick ? 0.005 : 0.02;
    r.measured_clock_ghz = measure_clock_ghz(r.cpu, r.threads, seconds);
    r.fma = measure_fma(r.cpu, r.threads, s.quick ? 0.01 : 0.05, s.quick ? 15 : 30);
    r.measured_clock_ghz = std::max(r.measured_clock_ghz, measure_clock_ghz(r.cpu, r.threads, seconds));
    r.stream = measure_stream(r.cpu, r.threads, 0, s.quick ? 4 : 40);
    r.sweep = measure_sweep(r.cpu, r.threads, s.quick ? 1 : 4, s.quick ? 0.005 : 0.025);
    r.levels = plateaus(r.cpu, r.threads, r.sweep);
    return r;
}

}  // namespace ridge::probe
