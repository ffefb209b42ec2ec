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

// A constant scale folded into the linear layer whose outputs it reads (inference): ViT's
// q = select(permute(reshape(in_proj(x)))) * 1/sqrt(d) is then in_proj with its q rows' weights
// and bias scaled, and the scale a view of its input. The scale must read, through views alone,
// one contiguous range of the linear's outputs that nothing else reads: the linear's output only
// reshaped (its last dimension split), the reshape only permuted, the permutation read only by
// selects of one dimension, the first of the split ones, and this select's index by no other
// select, its output by the scale alone. Otherwise the scale runs as a layer.
struct ScaleFold {
    int scale, linear;     // nodes
    int64_t first, count;  // the linear's output features [first, first + count)
    double s;
};
std::vector<ScaleFold> scale_folds(const Graph& g);
// Whether a scale s may move into the layer beside it: finite and normal, within 1e-6 to 1e6 in
// magnitude. s (w x + b) and (s w) x + s b, or s (a b) and (s a) b, part ways at infinities and
// where the products would overflow or lose digits below the normal range.
bool foldable_scale(double s);
// The linear's weight (K, C) and bias (K) with rows [first, first + count) multiplied by s, in
// double and rounded once (exact where s is a power of two, as vit_b_16's 1/8).
std::vector<HostTensor> fold_scale(std::vector<HostTensor> linear, const ScaleFold& f);

// "layer NAME (KIND, input SHAPES)", or "the loss" for node -1: how an executor's error names it.
std::string describe(const Graph& g, int node);

}  // namespace ridge
