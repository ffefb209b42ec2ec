#pragma once
// Timing a net on an executor: whole steps on the fused executor, then each layer's phases on
// the unfused one (one primitive per analytic layer), both after warm-up, as medians of repeats.
#include <functional>
#include <memory>

#include "bench/stats.h"
#include "engine/analysis.h"
#include "engine/backend/executor.h"

namespace ridge::bench {

struct BenchPlan {
    std::string backend;
    Mode mode = Mode::infer;
    Precision precision = Precision::fp32;
    bool cuda_graph = false;  // the whole-step executor replays CUDA graphs (GPU)
    bool winograd = true;     // ExecOptions::winograd (CPU)
    int threads = 1;
    int warmup = 3, repeat = 20;
    bool layers = true;  // also time every layer on the unfused executor
    uint64_t seed = 1;
};

struct LayerResult {
    Stats fwd, dgrad, wgrad;  // seconds
};

struct BenchResult {
    const Graph* g = nullptr;
    Analysis analysis;
    int64_t planned_bytes = 0;   // the larger of the two executors' plans
    Stats step;                  // infer: forward; train: forward + loss + backward (seconds)
    Stats fwd, bwd, update;      // train: the step's two halves and the SGD update
    float loss = 0;              // the last step's
    std::vector<LayerResult> layers;  // per graph node; empty without the layer pass
    std::vector<std::string> algo;    // per graph node: the algorithm a library chose (cuDNN convs)
    Stats loss_time;
};

// Steps are timed by the executor's device clock (CUDA events) where it has one, else by the
// host's steady clock around each call.

// One batch's executors, planned but not allocated, so every batch of a run can be checked
// against the machine's memory before the first one is timed.
struct BenchJob {
    std::unique_ptr<Graph> g;  // executors keep a reference: its address must not move with the job
    std::unique_ptr<Executor> fused, unfused;  // unfused is null without the layer pass
    int64_t planned_bytes() const;
};

BenchJob plan_job(Graph g, const BenchPlan& p);

// Beside an executor's own plan: the seeded weights and input built on the host and the copy of
// the weights an executor keeps to hand back.
int64_t host_copy_bytes(const Graph& g);
// A tenth of what is available stays free for the OS and the allocator, so a run that only just
// fits does not end in swap. An unknown `available` (-1) never refuses.
inline bool fits_in(int64_t need, int64_t available) { return available < 0 || need <= available - available / 10; }

// progress(stage, done, total) is called as repeats complete.
using Progress = std::function<void(const std::string& stage, int done, int total)>;
BenchResult run_job(BenchJob& job, const BenchPlan& p, const Progress& progress);

}  // namespace ridge::bench
