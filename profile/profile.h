#pragma once
// Measured counts beside the analytic model, per layer and phase, with the facts that explain each
// gap: `ridge profile`.
//
// run_profile() times every layer phase on an unfused executor (one step per analytic layer),
// then, where a counter source exists, runs the step once per counter pass with a range around
// every executor step. attribute() turns those ranges into rows (the part tests drive with
// scripted counts): each range is charged to the layer and phase its step is charged to, so a
// reorder a layer needs is counted in that layer's row, as its time already is.
#include <functional>
#include <optional>

#include "engine/analysis.h"
#include "engine/backend/executor.h"
#include "profile/counters.h"

namespace ridge::profile {

struct Measured {
    std::vector<int64_t> counts;  // raw, per counter of the source
    int64_t flops = 0;            // the weighted sum of the Measure::flops counters
    int64_t dram_read = -1, dram_write = -1, l2_bytes = -1;  // -1: no such counter
};

struct Row {
    int layer = -1;         // index into Analysis::layers; -1 for the loss
    std::string name, kind;
    StepPhase phase = StepPhase::fwd;
    bool with_wgrad = false;  // a dgrad row whose step also computes the weight gradients
    int64_t analytic_flops = 0;
    // What the implementation that ran is expected to compute (expected.h): the analytic count,
    // less the taps on zero padding where a direct convolution ran.
    int64_t expected_flops = 0;
    // The model's minimum traffic: forward on the fwd row; backward (data and weight gradients
    // together) on the dgrad row, or the wgrad row of a layer without dgrad; -1 elsewhere.
    int64_t analytic_bytes = -1;
    double seconds = 0;     // median over the timed steps
    int steps = 0;          // executor steps charged to this row
    std::string impl;       // the implementations that ran, e.g. "brg:avx512_core"
    std::vector<std::string> why;
    std::optional<Measured> measured;  // absent without a counter source
};

// Sums over rows: per layer type and for the whole net.
struct Total {
    std::string kind;  // the layer type, or "total"
    int rows = 0;
    int64_t analytic_flops = 0, expected_flops = 0, analytic_bytes = 0;
    double seconds = 0;
    std::optional<Measured> measured;
};

struct Profile {
    std::string model, device, backend;
    int64_t batch = 1;
    Mode mode = Mode::infer;
    int threads = 0, repeat = 0;
    bool cold_cache = false;
    bool winograd = true;  // false: the oneDNN executor ran every conv direct (--no-winograd)
    std::string source;  // the counter source's describe(), or why nothing was counted
    std::string scope;   // what its counters leave out
    std::vector<Counter> counters;
    bool measured = false;
    std::string unmeasured;  // why there are no counts (no source, or counting failed)
    std::vector<Row> rows;
    std::vector<Total> by_type;  // in order of first appearance
    Total total;
};

// Per layer, the median seconds of each phase; loss_seconds for the loss.
struct PhaseTimes {
    std::vector<LayerTime> layers;
    double loss = 0;
};

// The rows of a profile of graph g from what ran: `steps` in the order they ran (one range each),
// per range the counts of `counters` (empty without a source), and the timed medians.
void attribute(Profile& p, const Graph& g, const Analysis& a, const std::vector<StepInfo>& steps,
               const std::vector<Counter>& counters, const std::vector<std::vector<int64_t>>& counts,
               const PhaseTimes& times);

// A gap the why column explains: measured and reference differ by more than this fraction.
constexpr double notable_gap = 0.05;
// FLOPs one range may carry from the library's own bookkeeping around a step (up to 8 were seen
// on AMD Zen 5, in fp64): counts this small say nothing about a layer's arithmetic.
constexpr int64_t range_noise = 16;

// measured / reference, 0 when the reference is 0.
double ratio(int64_t measured, int64_t reference);

struct ProfileOptions {
    Mode mode = Mode::infer;
    int warmup = 2, repeat = 5;
    uint64_t seed = 1;
    // Called before each step (outside its counter range and its clock): --cold-cache evicts
    // the caches here.
    std::function<void()> before_step;
};

// Runs the profile of graph g on ex (made unfused, not yet prepared): warm-up, repeat timed
// steps, then one step per counter pass when src is not null. The Profile's descriptive fields
// (model, device, ...) are left for the caller.
Profile run_profile(Executor& ex, const Graph& g, CounterSource* src, const ProfileOptions& o);

// Evicts the CPU's caches: each call writes, then reads, a buffer of `bytes` (twice the last level
// is enough for an inclusive or a victim cache).
std::function<void()> cpu_cache_flush(int64_t bytes);

}  // namespace ridge::profile
