// ridge-kernels: each hand-written kernel on its own (README.md).
#include <cstdio>
#include <iostream>
#include <string>

#include "bench/env.h"
#include "bench/format.h"
#include "bench/kernels/options.h"
#include "bench/omp_wait.h"
#include "bench/usage_error.h"

using namespace ridge;
using namespace ridge::kbench;

namespace {

std::string seconds(double s) {
    char b[32];
    if (s < 1e-3) std::snprintf(b, sizeof b, "%.3g us", s * 1e6);
    else if (s < 1) std::snprintf(b, sizeof b, "%.3g ms", s * 1e3);
    else std::snprintf(b, sizeof b, "%.3g s", s);
    return b;
}

std::string ratio(double r) {
    char b[32];
    std::snprintf(b, sizeof b, "%.3gx", r);
    return b;
}

struct Row {
    std::string kernel, variant, shape, check;
    bool ok = false;
    double max_error = 0;
    Timing fast, ref;
    bool timed = false, ref_timed = false;
    double flops = 0, bytes = 0;
    std::string ref_device;
};

void print_header(const Options& o) {
    bench::Env env = bench::capture_env(o.threads);
    std::printf("# ridge-kernels %s on %s, %d threads (%s), load average %.2f before the run\n", env.git.c_str(),
                env.cpu.c_str(), o.threads, env.omp_wait.c_str(), env.load_average);
    size_t llc = last_level_cache_bytes();
    std::printf("# last-level cache %s, %s between repeats; dispatch picks %s on this CPU\n",
                llc ? (bench::si(double(llc)) + "B").c_str() : "unknown",
                o.timing.flush ? ("flush writes " + bench::si(double(flush_bytes(o.threads))) + "B").c_str()
                               : "no flush (--no-flush: warm caches)",
                simd::dispatched_isa());
    std::printf("# time: clock_gettime(CLOCK_MONOTONIC); ticks: rdtsc, the TSC's constant rate, not core cycles; "
                "CUDA: cudaEvent, L2 written over between repeats\n");
    std::printf("# warm-up %d, repeats %d (reference %d); median and min; GFLOP/s and GB/s from the median\n",
                o.timing.warmup, o.timing.repeats, o.ref_repeats);
}

void print_row(const Row& r, bool csv) {
    const double med = r.fast.seconds.median;
    if (csv) {
        std::printf("%s,%s,%s,%s,%.3g,", r.kernel.c_str(), r.variant.c_str(), r.shape.c_str(), r.ok ? "ok" : "failed",
                    r.max_error);
        if (r.timed)
            std::printf("%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,", med, r.fast.seconds.min, r.fast.seconds.q1,
                        r.fast.seconds.q3, r.fast.ticks_median, r.flops / med * 1e-9, r.bytes / med * 1e-9);
        else
            std::printf(",,,,,,,");
        if (r.ref_timed)
            std::printf("%s,%.6g,%.6g,%.4g\n", r.ref_device.c_str(), r.ref.seconds.median, r.ref.seconds.min,
                        r.ref.seconds.median / med);
        else
            std::printf("%s,,,\n", r.ref_device.c_str());
        return;
    }
    std::printf("%-18s %-10s %-34s %s\n", r.kernel.c_str(), r.variant.c_str(), r.shape.c_str(), r.check.c_str());
    if (!r.timed) return;
    std::string line = "    fast " + seconds(med) + " median, " + seconds(r.fast.seconds.min) + " min";
    if (r.fast.ticks_median > 0) line += ", " + bench::si(r.fast.ticks_median) + " ticks";
    char perf[96];
    std::snprintf(perf, sizeof perf, "; %.3g GFLOP/s, %.3g GB/s", r.flops / med * 1e-9, r.bytes / med * 1e-9);
    line += perf;
    if (r.fast.seconds.noisy()) {
        char b[64];
        std::snprintf(b, sizeof b, " (noisy: IQR %.0f%% of the median)", 100 * r.fast.seconds.iqr() / med);
        line += b;
    }
    if (r.ref_timed)
        line += "\n    reference (" + r.ref_device + ") " + seconds(r.ref.seconds.median) + " median, " +
                seconds(r.ref.seconds.min) + " min: fast is " + ratio(r.ref.seconds.median / med) + " faster";
    std::printf("%s\n", line.c_str());
}

int run(const Options& o) {
    for (const Kernel* k : o.kernels)
        if (k->cuda) {
            std::string why = cuda_unavailable();
            if (!why.empty()) {
                std::fprintf(stderr, "ridge-kernels: %s cannot run: %s\n", k->name.c_str(), why.c_str());
                return 1;
            }
        }
    if (o.csv)
        std::printf("kernel,variant,shape,check,max_abs_error,median_s,min_s,q1_s,q3_s,ticks_median,gflops,gbs,"
                    "ref_device,ref_median_s,ref_min_s,speedup\n");
    else
        print_header(o);
    bool all_ok = true;
    TimingOptions ref_timing = o.timing;
    ref_timing.repeats = o.ref_repeats;
    ref_timing.warmup = o.ref_repeats > 0 ? 1 : 0;
    for (const Kernel* k : o.kernels) {
        Problem p = problem_for(*k, o);
        std::vector<std::unique_ptr<Case>> cases;
        if (k->cuda) cases.push_back(make_cuda_case(*k, p));
        else cases = make_cpu_cases(*k, p, selected_variants(o), o.threads);
        for (size_t i = 0; i < cases.size(); ++i) {
            Case& c = *cases[i];
            Row r;
            r.kernel = k->name, r.variant = c.variant(), r.shape = p.describe(k->filter);
            Check check = c.check();
            r.ok = check.ok, r.check = check.summary(), r.max_error = check.max_error;
            r.flops = c.flops(), r.bytes = c.bytes(), r.ref_device = c.reference_device();
            all_ok = all_ok && check.ok;
            if (check.ok) {
                r.fast = c.time_fast(o.timing);
                r.timed = true;
                // The reference is one for every variant: timed once, beside the first.
                if (i == 0 && o.ref_repeats > 0) {
                    r.ref = c.time_reference(ref_timing);
                    r.ref_timed = true;
                }
            }
            print_row(r, o.csv);
            std::fflush(stdout);
        }
    }
    return all_ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    bench::set_thread_wait(argv);
    try {
        Options o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
        if (o.help) {
            std::cout << usage();
            return 0;
        }
        if (o.list) {
            for (const Kernel& k : kernels())
                std::printf("%-18s %s\n%-18s   default %s: %s\n", k.name.c_str(), k.what.c_str(), "",
                            k.defaults.describe(k.filter).c_str(), k.origin.c_str());
            return 0;
        }
        return run(o);
    } catch (const bench::UsageError& e) {
        std::fprintf(stderr, "ridge-kernels: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ridge-kernels: %s\n", e.what());
        return 1;
    }
}
