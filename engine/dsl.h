#pragma once
// The vocabulary netdefs are written in: `x | conv(64, 3, {.pad = 1}) | bn() | relu()`.
// Each builder returns an op's plain parameters; `|` adds the layer to x's graph.
#include "engine/graph.h"

namespace ridge {

struct ConvOpts {
    Hw stride = 1;
    Padding pad = 0;
    Hw dilation = 1;
    int64_t groups = 1;
    bool bias = false;
    int64_t C = 0;  // expected input channels, checked when given
};
inline Conv2d conv(int64_t K, Hw kernel, ConvOpts o = {}) {
    return {K, kernel, o.stride, o.pad, o.dilation, o.groups, o.bias, o.C};
}

struct PoolOpts {
    Hw stride = 0;  // 0: the kernel size, as PyTorch's default
    Padding pad = 0;
    bool ceil_mode = false;
    bool count_include_pad = true;
};
inline Pool2d pool(Pool2d::Kind kind, Hw kernel, PoolOpts o) {
    Hw stride = o.stride.h ? o.stride : kernel;
    return {kind, kernel, stride, o.pad, o.ceil_mode, o.count_include_pad};
}
inline Pool2d maxpool(Hw kernel, PoolOpts o = {}) { return pool(Pool2d::Kind::max, kernel, o); }
inline Pool2d avgpool(Hw kernel, PoolOpts o = {}) { return pool(Pool2d::Kind::avg, kernel, o); }
inline AdaptiveAvgPool2d adaptive_avgpool(Hw out) { return {out}; }

struct LinearOpts {
    bool bias = true;
    int64_t C = 0;  // expected input features, checked when given
};
inline Linear linear(int64_t K, bool bias = true) { return {K, bias, 0}; }
inline Linear linear(int64_t K, LinearOpts o) { return {K, o.bias, o.C}; }
inline BatchNorm bn() { return {}; }
inline LayerNorm ln(int dim = -1) { return {dim}; }

inline Activation relu() { return {Activation::Fn::relu}; }
inline Activation relu6() { return {Activation::Fn::relu6}; }
inline Activation sigmoid() { return {Activation::Fn::sigmoid}; }
inline Activation silu() { return {Activation::Fn::silu}; }
inline Activation gelu() { return {Activation::Fn::gelu}; }
inline Activation hardswish() { return {Activation::Fn::hardswish}; }
inline Activation hardsigmoid() { return {Activation::Fn::hardsigmoid}; }

inline Softmax softmax(int dim = -1) { return {dim}; }
inline Scale scale(double s) { return {s}; }
inline LayerScale layer_scale(int dim = 1) { return {dim}; }
inline Dropout dropout(double p) { return {p}; }
inline StochasticDepth stochastic_depth(double p) { return {p}; }
inline ClassToken class_token() { return {}; }
inline PosEmbedding pos_embedding() { return {}; }

inline ChannelShuffle channel_shuffle(int64_t G) { return {G}; }
inline Flatten flatten(int start = 1, int end = -1) { return {start, end}; }
inline Reshape reshape(Shape dims) { return {std::move(dims)}; }
inline Permute permute(std::vector<int> order) { return {std::move(order)}; }
inline Slice slice(int dim, int64_t start, int64_t length) { return {dim, start, length}; }
inline Select select(int dim, int64_t index) { return {dim, index}; }

// An op with an explicit layer name instead of the counted default: `x | named("fc", linear(1000))`.
struct Named {
    std::string name;
    Op op;
};
template <class P>
Named named(std::string name, P op) {
    return {std::move(name), Op{std::move(op)}};
}

template <class P>
    requires std::is_constructible_v<Op, P>
Tensor operator|(Tensor x, const P& op) {
    return x.graph().apply(Op{op}, {x});
}
inline Tensor operator|(Tensor x, const Named& n) { return x.graph().apply(n.op, {x}, n.name); }

inline Tensor add(Tensor a, Tensor b, std::string name = {}) { return a.graph().apply(Add{}, {a, b}, std::move(name)); }
inline Tensor mul(Tensor a, Tensor b, std::string name = {}) { return a.graph().apply(Mul{}, {a, b}, std::move(name)); }
inline Tensor matmul(Tensor a, Tensor b, bool transpose_b = false, std::string name = {}) {
    return a.graph().apply(Matmul{transpose_b}, {a, b}, std::move(name));
}
inline Tensor concat(const std::vector<Tensor>& in, int dim = 1, std::string name = {}) {
    if (in.empty()) throw BuildError("concat of no tensors");
    return in[0].graph().apply(Concat{dim}, in, std::move(name));
}

}  // namespace ridge
