#pragma once
// What the library backends share about a layer outside any library: which batchnorms inference
// folds into the conv before them, the folded weights, and how an error names a layer.
#include <string>
#include <vector>

#include "engine/backend/host_tensor.h"
#include "engine/graph.h"

namespace ridge {

// Per node: the conv a batchnorm folds into, or -1. A batchnorm folds when its input comes from a
// conv and nothing else reads that input, the graph's output included: the conv's own output is
// then never needed. The executors fold only in fused inference: training needs the batch
// statistics of the conv's real output.
std::vector<int> batchnorm_folds(const Graph& g);

// y = gamma (conv(x) + b - mean) / sqrt(var + eps) + beta as one conv: each output channel's
// weights scaled by gamma / sqrt(var + eps) and the bias shifted to match, computed in double and
// rounded once. conv: weight (K, ...) and its bias if it has one; bn: gamma, beta, running mean,
// running variance.
struct FoldedConv {
    HostTensor weight, bias;
};
FoldedConv fold_batchnorm(const std::vector<HostTensor>& conv, const std::vector<HostTensor>& bn);

// "layer NAME (KIND, input SHAPES)", or "the loss" for node -1: how an executor's error names it.
std::string describe(const Graph& g, int node);

}  // namespace ridge
