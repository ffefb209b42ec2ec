#pragma once
// The op cases every executor is checked on, in one table (as ggml's test-backend-ops keeps one
// list for all its backends): each op alone and each fused group, a small graph built through the
// DSL on an input that needs a gradient. test_onednn and test_cudnn run every case against the
// reference executor; test_cudnn_plan plans every case for the cuDNN executor without a device;
// test_op_cases checks that the table names every op of the engine's Op variant, so an op added
// without a case fails a test.
//
// Tolerances (max_rel_diff: relative above 1, absolute below), per backend and precision:
// - oneDNN fp32 1e-4: fp32 with different summation orders (blocked convolutions, GEMMs,
//   reductions of another shape) agrees to a few ulps per term, outputs and gradients alike.
// - cuDNN fp32 1e-3: cudnnFind may pick Winograd or FFT convolutions, whose transforms lose about
//   two more digits than a direct sum of fp32 products (~1e-5 relative per layer); 1e-3 leaves a
//   factor of ten for chains of two or three layers and for sums of 1e3 terms.
// - cuDNN tf32 1e-2: inputs of convolutions and GEMMs are rounded to 10 mantissa bits (2^-11 =
//   4.9e-4 relative each); a dot product's error grows like sqrt(terms) times that, ~5e-3 at 100
//   terms.
// - cuDNN fp16 2e-2: inputs, weights and outputs each rounded to 11 bits (4.9e-4), gradients too,
//   and layers chained two or three deep; sums accumulate in fp32.
// - cuDNN bf16 8e-2: as fp16 with 8 bits (3.9e-3 per rounding), so eight times fp16's figure.
// Gradients get the same figure as outputs; the SGD update is checked as w - lr * dw of the
// executor's own dw (1e-6).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend/executor.h"
#include "engine/dsl.h"

namespace op_cases {

using namespace ridge;

struct Tolerance {
    double onednn = 1e-4;
    double cudnn_fp32 = 1e-3, cudnn_tf32 = 1e-2, cudnn_fp16 = 2e-2, cudnn_bf16 = 8e-2;

    double cudnn(Precision p) const;
};

// A backend that cannot run a case, and why: `why` is part of the message the backend's
// make_executor throws for it, and the tests check that it does throw that (a refusal is stated
// and verified, never a silent skip).
struct Refusal {
    std::string backend;  // as make_executor names it: "onednn", "cudnn"
    std::string why;
};

struct OpCase {
    std::string name;  // unique in the table; the graph's name, so a failure names its case
    std::string what;  // what the case exercises
    Shape x;           // the graph's input, which requires a gradient
    std::function<Tensor(Tensor)> body;
    bool train = true;  // false: inference only (fused groups that exist only in inference)
    Tolerance tol = {};
    std::vector<Refusal> refused = {};

    Graph graph() const;
    const Refusal* refusal(std::string_view backend) const;  // null when the backend runs it
};

// Every case, family by family: convolutions, GEMMs, normalizations, activations, pooling,
// elementwise, data movement, fused groups.
const std::vector<OpCase>& all();

}  // namespace op_cases
