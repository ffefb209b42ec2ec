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

using cli::LayerResult;
using cli::Stats;

// One device's roofs (fp32), measured by the probes and, where known, from its datasheet.
struct Ceilings {
    std::string device;  // "cpu" or "cuda"
    std::string name;    // the chip as the machine names it, e.g. "AMD EPYC (2 cores)"
    double peak_flops = 0;   // measured fp32 peak, FLOP/s
    double bytes_per_s = 0;  // measured DRAM bandwidth (STREAM triad), B/s
    // CPU: cores x reported clock x FMA FLOP per cycle; GPU: the chip database's row. The
    // bandwidth comes from the chip database when the chip is in it.
    std::optional<double> datasheet_peak_flops, datasheet_bytes_per_s;
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

struct Study {
    std::string host;  // results/<host>/
    cli::Env env;
    std::vector<roofline::Chip> chips;
    std::vector<Ceilings> ceilings;   // cpu first, then cuda when measured
    std::vector<std::string> nets;    // in the order asked for
    std::vector<int64_t> batches;     // inference batches measured
    int64_t train_batch = 0;          // the training step's batch (0: no training measured)
    int64_t large_batch = 256;        // the "large batch" of the analytic figures
    std::vector<NetCounts> counts;    // every net at batch 1 and at large_batch
    std::vector<Run> runs;
    std::string layer_net;            // the net whose layers were timed (training step)
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
