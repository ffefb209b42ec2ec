#pragma once
// The analytic cost of a built graph: per layer, per layer type and in total. Pure arithmetic on
// shapes; formulas live beside each op's shape rule (engine/ops/) and in engine/README.md.
#include <array>

#include "engine/graph.h"

namespace ridge {

struct Counts {
    int64_t params = 0, macs = 0, fwd_flops = 0, dgrad_flops = 0, wgrad_flops = 0;
    int64_t param_bytes = 0;
    int64_t activation_bytes = 0;  // outputs written (views write none)
    int64_t saved_bytes = 0;       // kept for backward
    int64_t fwd_traffic_bytes = 0, bwd_traffic_bytes = 0;
    void operator+=(const Counts& o);
    int64_t bwd_flops() const { return dgrad_flops + wgrad_flops; }
    double fwd_intensity() const;  // FLOPs per byte of minimum traffic; 0 when nothing moves
    double bwd_intensity() const;
};

struct LayerCost {
    std::string name, kind;
    Category category;
    Shape out;
    Counts c;
};

struct TypeTotals {
    Category category;
    int layers = 0;
    Counts c;
};

struct Totals : Counts {
    // Saved tensors are counted once however many layers keep them (a ReLU's output is also the
    // next convolution's input), so the total is below the sum over layers.
    int64_t train_memory_bytes = 0;       // weights + gradients + SGD momentum + saved activations
    int64_t train_memory_adam_bytes = 0;  // weights + gradients + Adam's two moments + saved
};

struct Analysis {
    std::string model;
    Shape input;
    DType dtype;
    std::vector<LayerCost> layers;
    std::vector<TypeTotals> by_type;  // only the types present, in Category order
    Totals totals;
};

Analysis analyze(const Graph& g, DType dtype);

// The formulas of one layer with its numbers substituted, exactly as the analysis evaluates them.
Work layer_work(const Graph& g, const Node& n, DType dtype);

}  // namespace ridge
