#pragma once
// A roofline and benchmark study of several nets on this machine, gathered once by `ridge report`:
// the analytic counts, the chip database, this machine's measured ceilings and the measured
// times. Figures and report.md are written from it alone; nothing here is typed in by hand.
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "engine/analysis.h"
#include "profile/profile.h"
#include "roofline/chips.h"

namespace ridge::report {

using bench::LayerResult;
using bench::Stats;

// One device's roofs (fp32), measured by the probes and, where known, from its datasheet.
struct Ceilings {
    std::string device;  // "cpu" or "cuda"
    std::string name;    // the chip as the machine names it, e.g. "AMD EPYC (2 cores)"
    double peak_flops = 0;   // measured fp32 peak, FLOP/s
    double bytes_per_s = 0;  // measured DRAM bandwidth (STREAM triad), B/s
    // CPU: cores x datasheet clock x FMA FLOP per cycle; GPU: the chip database's row, else the
    // driver's clock. The bandwidth comes from the chip database when the chip is in it.
    std::optional<double> datasheet_peak_flops, datasheet_bytes_per_s;
    // What the datasheet peak was computed from ("max boost 3.5 GHz of AMD EPYC 7763"), and whether
    // it is only a lower bound (a CPU that hides its model: its reported nominal clock).
    std::string datasheet_basis;
    bool datasheet_lower_bound = false;
    std::optional<double> measured_clock_ghz;  // the clock the probes measured, beside the datasheet's
    // The instruction set the peak was measured with: the widest vector FMA the CPU has
    // ("avx512", "avx2"); hosts differ, so a peak means little without it.
    std::string isa;
};

// The analytic counts of one net at one batch, fp32.
struct NetCounts {
    std::string net;
    int64_t batch = 1;
    Analysis a;
};

// One measured configuration: a net at one batch on one device, whole step and, for the layer
// net, every layer.
struct Run {
    std::string device, backend, net;  // device "cpu" or "cuda"; backend "onednn", "cudnn", ...
    Mode mode = Mode::infer;
    int64_t batch = 1;
    Analysis a;            // the analysis of the graph that was timed (same batch)
    Stats step;            // seconds; infer: forward, train: forward + loss + backward
    Stats fwd, bwd;        // train only: the step's two halves
    std::vector<LayerResult> layers;  // indexed like a.layers; empty unless the layers were timed

    // Analytic FLOPs and minimum traffic of what `step` timed: forward, or forward and backward.
    int64_t flops() const;
    int64_t bytes() const;
    double images_per_s() const { return double(batch) / step.median; }
    double achieved_flops() const { return double(flops()) / step.median; }  // FLOP/s
};

// A whole training run from `ridge train`'s ledger (LOG_DIR/metrics.csv): fixed iterations with
// data loading and SGD, timed end to end, on whatever host wrote it.
struct TrainRun {
    std::string label, date, host, device, backend, net, data;
    int64_t batch = 0, height = 0, width = 0, workers = 0, iters = 0;
    double images_per_s = 0, step_median_s = 0, data_wait_share = 0;
    double achieved_flops = 0;  // FLOP/s: the analytic training FLOPs of the measured steps over their time
    int64_t flops_per_step = 0, bytes_per_step = 0;
    double roof_fraction = 0;   // against the roofline that run measured
    double first_loss = 0, last_loss = 0;
    double val_top1 = -1;       // -1: no validation
    double intensity() const { return bytes_per_step > 0 ? double(flops_per_step) / double(bytes_per_step) : 0; }
};

struct Study {
    std::string host;  // results/<host>/
    bench::Env env;
    std::vector<roofline::Chip> chips;
    roofline::Precision chips_precision = roofline::Precision::fp32;  // the chips figures' ceilings
    std::vector<Ceilings> ceilings;   // cpu first, then cuda when measured
    std::vector<std::string> nets;    // in the order asked for
    std::vector<int64_t> batches;     // inference batches measured
    int warmup = 0, repeat = 0;       // untimed and timed steps of each configuration
    int64_t train_batch = 0;          // the training step's batch (0: no training measured)
    int64_t large_batch = 256;        // the "large batch" of the analytic figures
    std::vector<NetCounts> counts;    // every net at batch 1 and at large_batch
    std::vector<Run> runs;
    std::string layer_net;            // the net whose layers were timed (training step)
    std::string train_log;            // the `ridge train` ledger read, and its runs
    std::vector<TrainRun> train_runs;
    // The layer net's counted FLOPs (and bytes where counted) per layer and phase, one profile per
    // device whose counters could be read; empty where none could, and then the report shows no trace
    // of them.
    std::vector<profile::Profile> profiles;
    // What was left out and why, one line each: "cuda: no CUDA device is available".
    std::vector<std::string> notes;

    const Ceilings* ceilings_of(std::string_view device) const;
    const NetCounts* counts_of(std::string_view net, int64_t batch) const;
    const Run* run_of(std::string_view device, std::string_view net, Mode mode, int64_t batch) const;
    std::vector<const Run*> runs_of(std::string_view device, Mode mode) const;
    const Run* layer_run() const;  // the layer net's timed run, or null
};

}  // namespace ridge::report
