#pragma once
// The engine's op parameters as the CUDA kernels take them (host code only: the .cu files are
// C++17 and do not see the engine's C++20 op headers).
#include "engine/op.h"
#include "kernels/cuda/kernels.h"

namespace ridge::gpu {

inline Act act_of(Activation::Fn fn) {
    switch (fn) {
        case Activation::Fn::relu: return Act::relu;
        case Activation::Fn::relu6: return Act::relu6;
        case Activation::Fn::sigmoid: return Act::sigmoid;
        case Activation::Fn::silu: return Act::silu;
        case Activation::Fn::gelu: return Act::gelu;
        case Activation::Fn::hardswish: return Act::hardswish;
        case Activation::Fn::hardsigmoid: return Act::hardsigmoid;
    }
    return Act::relu;
}

// x (N,C,H,W)  y (N,C,P,Q)
inline PoolShape pool_shape(const Pool2d& op, const Shape& x, const Shape& y) {
    PoolShape s;
    s.NC = x[0] * x[1], s.H = x[2], s.W = x[3], s.P = y[2], s.Q = y[3];
    s.kind = op.kind == Pool2d::Kind::max ? PoolShape::Kind::max : PoolShape::Kind::avg;
    s.R = op.kernel.h, s.S = op.kernel.w, s.sh = op.stride.h, s.sw = op.stride.w;
    s.pt = op.pad.top, s.pb = op.pad.bottom, s.pl = op.pad.left, s.pr = op.pad.right;
    s.count_include_pad = op.count_include_pad;
    return s;
}

inline PoolShape pool_shape(const AdaptiveAvgPool2d&, const Shape& x, const Shape& y) {
    PoolShape s;
    s.NC = x[0] * x[1], s.H = x[2], s.W = x[3], s.P = y[2], s.Q = y[3];
    s.kind = PoolShape::Kind::adaptive;
    return s;
}

}  // namespace ridge::gpu
