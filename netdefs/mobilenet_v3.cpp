// MobileNetV3 (Howard et al. 2019) as torchvision defines it: MobileNetV2's inverted residuals plus
// squeeze-excitation gated by a hard sigmoid, and hardswish in the deeper, cheaper-per-pixel layers.
#include <span>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

enum class Act { RE, HS };  // the paper's NL column: ReLU or hardswish

struct Bneck {
    int64_t kernel;
    int64_t expanded;  // exp size, before the width multiplier
    int64_t out;       // #out, before the width multiplier
    bool se;
    Act act;
    int64_t stride;
};

// Tables 1 and 2 of the paper; each block's input width is the previous block's output, 16 first.
constexpr Bneck large[] = {
    {3, 16, 16, false, Act::RE, 1},
    {3, 64, 24, false, Act::RE, 2},
    {3, 72, 24, false, Act::RE, 1},
    {5, 72, 40, true, Act::RE, 2},
    {5, 120, 40, true, Act::RE, 1},
    {5, 120, 40, true, Act::RE, 1},
    {3, 240, 80, false, Act::HS, 2},
    {3, 200, 80, false, Act::HS, 1},
    {3, 184, 80, false, Act::HS, 1},
    {3, 184, 80, false, Act::HS, 1},
    {3, 480, 112, true, Act::HS, 1},
    {3, 672, 112, true, Act::HS, 1},
    {5, 672, 160, true, Act::HS, 2},
    {5, 960, 160, true, Act::HS, 1},
    {5, 960, 160, true, Act::HS, 1},
};
constexpr Bneck small[] = {
    {3, 16, 16, true, Act::RE, 2},
    {3, 72, 24, false, Act::RE, 2},
    {3, 88, 24, false, Act::RE, 1},
    {5, 96, 40, true, Act::HS, 2},
    {5, 240, 40, true, Act::HS, 1},
    {5, 240, 40, true, Act::HS, 1},
    {5, 120, 48, true, Act::HS, 1},
    {5, 144, 48, true, Act::HS, 1},
    {5, 288, 96, true, Act::HS, 2},
    {5, 576, 96, true, Act::HS, 1},
    {5, 576, 96, true, Act::HS, 1},
};
constexpr int64_t stem_channels = 16;
constexpr double width_mult = 1.0;

// torchvision's InvertedResidualConfig.adjust_channels.
int64_t adjust(int64_t channels) { return make_divisible(channels * width_mult); }

Activation activation(Act a) { return a == Act::HS ? hardswish() : relu(); }

// x (N,C,H,W)  y (N,K,P,Q)
Tensor bneck(Tensor x, const Bneck& b) {
    int64_t C = x.dim(1), E = adjust(b.expanded), K = adjust(b.out);
    Tensor y = x;
    if (E != C) y = conv_bn(y, E, 1) | activation(b.act);
    y = conv_bn(y, E, b.kernel, {.stride = b.stride, .groups = E}) | activation(b.act);
    if (b.se) y = squeeze_excitation(y, make_divisible(E / 4), relu(), hardsigmoid());
    y = conv_bn(y, K, 1);
    return (b.stride == 1 && C == K) ? add(y, x) : y;
}

// last_channel: width of the classifier's hidden layer (the paper's 1280 or 1024).
Tensor mobilenet_v3(Tensor x, std::span<const Bneck> blocks, int64_t last_channel, int64_t classes) {
    int feature = 0;
    {
        Scope s(x, cat("features.", feature++));
        x = conv_bn(x, adjust(stem_channels), 3, {.stride = 2}) | hardswish();
    }
    for (const Bneck& b : blocks) {
        Scope s(x, cat("features.", feature++));
        x = bneck(x, b);
    }
    {
        Scope s(x, cat("features.", feature++));
        x = conv_bn(x, 6 * x.dim(1), 1) | hardswish();
    }
    x = x | adaptive_avgpool(1) | flatten();
    Scope s(x, "classifier");
    return x | linear(adjust(last_channel)) | hardswish() | dropout(0.2) | linear(classes);
}

}  // namespace

Tensor mobilenet_v3_large(Tensor x, int64_t classes) { return mobilenet_v3(x, large, 1280, classes); }
Tensor mobilenet_v3_small(Tensor x, int64_t classes) { return mobilenet_v3(x, small, 1024, classes); }

}  // namespace ridge::nets
