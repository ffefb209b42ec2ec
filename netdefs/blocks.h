#pragma once
// Pieces shared by several netdefs, each the counterpart of a torchvision helper so the layers and
// channel counts come out identical.
#include <algorithm>

#include "netdefs/nets.h"

namespace ridge::nets {

// torchvision's _make_divisible (from the TF MobileNet code): the nearest multiple of divisor, at
// least divisor, bumped up one step when rounding lost more than 10% of v.
inline int64_t make_divisible(double v, int64_t divisor = 8) {
    int64_t rounded = std::max(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
    return rounded < 0.9 * v ? rounded + divisor : rounded;
}

// A residual block's skip path (ResNet, RegNet): identity when the shapes agree, else a strided
// 1x1 projection, under the scope torchvision names it ("downsample", "proj").
inline Tensor shortcut(Tensor x, int64_t K, int64_t stride, const char* scope) {
    if (stride == 1 && x.dim(1) == K) return x;
    Scope s(x, scope);
    return x | conv(K, 1, {.stride = stride}) | bn();
}

// torchvision's BasicConv2d (GoogLeNet, Inception v3): conv, batchnorm, relu under one name.
inline Tensor basic_conv(Tensor x, const std::string& name, int64_t K, Hw kernel, ConvOpts o = {}) {
    Scope s(x, name);
    return x | named("conv", conv(K, kernel, o)) | named("bn", bn()) | relu();
}

struct ConvBnOpts {
    Hw stride = 1;
    int64_t groups = 1;
};

// torchvision's Conv2dNormActivation without its activation (callers pipe their own):
// 'same' padding for the odd kernel, and no conv bias since batchnorm follows.
// x (N,C,H,W)  y (N,K,P,Q)
inline Tensor conv_bn(Tensor x, int64_t K, int64_t kernel, ConvBnOpts o = {}) {
    return x | conv(K, kernel, {.stride = o.stride, .pad = (kernel - 1) / 2, .groups = o.groups}) | bn();
}

// Squeeze-and-excitation (Hu et al. 2018) as torchvision.ops.SqueezeExcitation: a per-channel gate
// computed from the global average. fc1/fc2 are 1x1 convs *with* bias (no batchnorm there).
// x (N,C,H,W)  gate (N,C,1,1)  y (N,C,H,W)
inline Tensor squeeze_excitation(Tensor x, int64_t squeeze, Activation act, Activation gate_fn) {
    Scope s(x, "se");
    int64_t C = x.dim(1);
    Tensor gate = x | adaptive_avgpool(1) | named("fc1", conv(squeeze, 1, {.bias = true})) | act
                    | named("fc2", conv(C, 1, {.bias = true})) | gate_fn;
    return mul(gate, x);
}

}  // namespace ridge::nets
