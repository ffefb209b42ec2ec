#pragma once
// Each op's mapping onto oneDNN primitives: forward() plans a layer's forward steps and sets the
// value of its output; backward() plans its gradient steps after every layer that reads its output
// has planned its own. One file per op family of engine/ops/ (conv2d.cpp, linear.cpp, matmul.cpp,
// norm.cpp, activation.cpp, elementwise.cpp, embedding.cpp, ...).
#include <optional>

#include "engine/backend/onednn/check.h"
#include "engine/backend/onednn/fusion.h"
#include "engine/backend/onednn/plan.h"

namespace ridge::onednn {

// What one planner call sees: the layer and, when it leads a fused group, the group.
struct Layer {
    int node;
    const Node& n;
    const Group* group = nullptr;

    int x(size_t i = 0) const { return n.inputs[i]; }
    // The tensor the layer (or its group) writes.
    int y(const Graph& g) const { return group ? g.nodes()[size_t(group->last)].output : n.output; }
};

// Whether no layer reads tensor t (or a view of its storage) after l has run, so that l may
// overwrite it: a group runs, and reads, at its last member (fusion.h).
inline bool read_last_by(const Plan& p, const Layer& l, int t) {
    return p.last_read[size_t(p.g.tensor(t).storage)] <= (l.group ? l.group->last : l.node);
}

// Whether l may write its output over memory m, which holds tensor t, as far as the forward goes:
// m's buffer is the plan's own (not pinned) and nothing reads t after l.
inline bool free_after(const Plan& p, const Layer& l, int m, int t) {
    return !p.buffers[size_t(p.mems[size_t(m)].buffer)].pinned && read_last_by(p, l, t);
}

// The same in inference, where nothing is kept for a backward.
inline bool overwritable(const Plan& p, const Layer& l, int m, int t) { return !p.train && free_after(p, l, m, t); }

// Where l writes its output, in layout md: a new memory over m's bytes (m holds tensor t) where
// overwritable, else a fresh buffer. A new memory, not m: copies value_as made of t keep t's values.
inline int output_over(Plan& p, const Layer& l, int m, int t, const Md& md) {
    return overwritable(p, l, m, t) ? p.alias(m, md) : p.mem(md);
}

// An inner product of plain rows: x (M, C) or (N, C, 1, 1), y (M, K), weights
// (K, C) or (K, C, 1, 1) in the layout oneDNN picks (format any), bias (K). Linear layers, and 1x1
// convolutions of a 1x1 map (conv2d.cpp).
struct InnerProduct {
    Md x, w, y;
    bool bias;
};
void inner_product_forward(Plan& p, const Layer& l, const InnerProduct& ip);
// A batchnorm's inference form y = x * scale[c] + shift[c], from its tensors as loaded (gamma,
// beta, running mean and variance, C each), in double as fold.cpp folds one into a conv.
void batchnorm_affine(const float* gamma, const float* beta, const float* mean, const float* var, float* scale,
                      float* shift, int64_t C);
void inner_product_backward(Plan& p, const Layer& l, const InnerProduct& ip);
// A map of 1x1 (N, C, 1, 1) in channels-last, or in channel blocks that C fills, has the bytes of
// plain rows (N, C).
bool rows_in_place(const Md& md);
// Whether a linear in inference reads the rows of md in place though they lie apart (linear.cpp).
bool spaced_rows(const Plan& p, const Md& md);
// Whether tensor t, a map held in layout m, is read only by a flatten whose rows only linear
// layers read (directly or through dropouts), and these read the map as it lies (linear.cpp says
// when): then the flatten, and an identity pool that makes t, are views.
bool classifier_reads_map(const Plan& p, int t, const Md& m);

void plan_forward(Plan& p, const Layer& l);
void plan_backward(Plan& p, const Layer& l);

void forward(Plan& p, const Layer& l, const Conv2d& op);
void backward(Plan& p, const Layer& l, const Conv2d& op);
void forward(Plan& p, const Layer& l, const Linear& op);
void backward(Plan& p, const Layer& l, const Linear& op);
void forward(Plan& p, const Layer& l, const Matmul& op);
void backward(Plan& p, const Layer& l, const Matmul& op);
void forward(Plan& p, const Layer& l, const BatchNorm& op);
void backward(Plan& p, const Layer& l, const BatchNorm& op);
void forward(Plan& p, const Layer& l, const LayerNorm& op);
void backward(Plan& p, const Layer& l, const LayerNorm& op);
void forward(Plan& p, const Layer& l, const Activation& op);
void backward(Plan& p, const Layer& l, const Activation& op);
void forward(Plan& p, const Layer& l, const Scale& op);
void backward(Plan& p, const Layer& l, const Scale& op);
void forward(Plan& p, const Layer& l, const Pool2d& op);
void backward(Plan& p, const Layer& l, const Pool2d& op);
void forward(Plan& p, const Layer& l, const AdaptiveAvgPool2d& op);
void backward(Plan& p, const Layer& l, const AdaptiveAvgPool2d& op);
void forward(Plan& p, const Layer& l, const Add& op);
void backward(Plan& p, const Layer& l, const Add& op);
void forward(Plan& p, const Layer& l, const Mul& op);
void backward(Plan& p, const Layer& l, const Mul& op);
void forward(Plan& p, const Layer& l, const LayerScale& op);
void backward(Plan& p, const Layer& l, const LayerScale& op);
void forward(Plan& p, const Layer& l, const PosEmbedding& op);
void backward(Plan& p, const Layer& l, const PosEmbedding& op);
void forward(Plan& p, const Layer& l, const Softmax& op);
void backward(Plan& p, const Layer& l, const Softmax& op);
void forward(Plan& p, const Layer& l, const Concat& op);
void backward(Plan& p, const Layer& l, const Concat& op);
void forward(Plan& p, const Layer& l, const ChannelShuffle& op);
void backward(Plan& p, const Layer& l, const ChannelShuffle& op);
void forward(Plan& p, const Layer& l, const Permute& op);
void backward(Plan& p, const Layer& l, const Permute& op);
void forward(Plan& p, const Layer& l, const Flatten& op);
void backward(Plan& p, const Layer& l, const Flatten& op);
void forward(Plan& p, const Layer& l, const Reshape& op);
void backward(Plan& p, const Layer& l, const Reshape& op);
void forward(Plan& p, const Layer& l, const Slice& op);
void backward(Plan& p, const Layer& l, const Slice& op);
void forward(Plan& p, const Layer& l, const Select& op);
void backward(Plan& p, const Layer& l, const Select& op);
void forward(Plan& p, const Layer& l, const Dropout& op);
void backward(Plan& p, const Layer& l, const Dropout& op);
void forward(Plan& p, const Layer& l, const StochasticDepth& op);
void backward(Plan& p, const Layer& l, const StochasticDepth& op);
void forward(Plan& p, const Layer& l, const ClassToken& op);
void backward(Plan& p, const Layer& l, const ClassToken& op);

// Ops oneDNN lacks run the reference kernels (kernels/cpu) on plain copies of their inputs.
void forward_reference(Plan& p, const Layer& l);
void backward_reference(Plan& p, const Layer& l);

// A oneDNN eltwise algorithm (alg, alpha, beta); an activation is one or two of them.
struct Eltwise {
    dnnl::algorithm alg;
    float alpha = 0, beta = 0;
};
std::vector<Eltwise> eltwise_of(Activation::Fn fn);
// y = f(x) for one eltwise algorithm, in x's layout (activation.cpp): the activations and Scale.
void eltwise_forward(Plan& p, const Layer& l, Eltwise e);
// The post-ops of a group's activations and residual sum, in order.
dnnl::post_ops post_ops_of(const Graph& g, const Group& gr);
// Whether every post-op of l's group (none without a group) is the activation fn: ridge's own
// kernels that apply a ReLU or a SiLU themselves take such groups.
bool post_ops_all(const Plan& p, const Layer& l, Activation::Fn fn);
// l's group's post-ops (none without a group) as a residual sum and then a ReLU, each at most
// once, the chain ridge's winograd3x3 and linear_gemm fuse; null for any other.
struct SumRelu {
    bool sum = false, relu = false;
};
std::optional<SumRelu> sum_then_relu(const Plan& p, const Layer& l);

// A binary primitive (elementwise.cpp): Add, Mul, LayerScale, PosEmbedding.
dnnl::binary::primitive_desc binary_pd(const Plan& p, dnnl::algorithm alg, const Md& a, const Md& b, const Md& y);
// dst = reduce_sum(src) over the dimensions dst has as 1: a broadcast operand's gradient.
void reduce_into(Plan& p, int src, int dst);

// The destination of a group's primitive. With a residual sum it must hold the addend first: the
// addend's own memory when nothing reads it afterwards, the layouts agree and the primitive does
// not also read it (src), else a copy.
int group_destination(Plan& p, const Layer& l, const Md& dst, int src);

// A forward primitive descriptor kept in Plan::Saved, typed again as a backward pd's hint. The
// typed constructor clones the C descriptor it is given (dnnl.hpp: reset_with_clone), so it gets
// the saved one itself; cloning here first leaked a descriptor per backward layer (LeakSanitizer).
template <class PD>
PD hint(const dnnl::primitive_desc_base& pd) {
    return PD(pd.get());
}

}  // namespace ridge::onednn
