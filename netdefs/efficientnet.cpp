// EfficientNet (Tan & Le 2019) as torchvision defines it: MBConv blocks (inverted residuals with
// squeeze-excitation and SiLU), and one baseline scaled in width and depth together for B1-B7.
#include <array>
#include <cmath>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

struct Stage {
    int64_t expand;
    int64_t kernel;
    int64_t stride;    // on the first block of the stage
    int64_t channels;  // before the width multiplier
    int repeats;       // before the depth multiplier
};

// Table 1 of the paper: the B0 baseline (stages 2-8; the stem conv is stage 1, the head stage 9).
constexpr int64_t stem_channels = 32;
constexpr std::array<Stage, 7> stages = {{
    {1, 3, 1, 16, 1},
    {6, 3, 2, 24, 2},
    {6, 5, 2, 40, 2},
    {6, 3, 2, 80, 3},
    {6, 5, 1, 112, 3},
    {6, 5, 2, 192, 4},
    {6, 3, 1, 320, 1},
}};
constexpr double stochastic_depth_prob = 0.2;  // reached by the last block, linearly from 0

// Compound scaling coefficients of one family member, and its classifier dropout.
struct Scaling {
    double width;
    double depth;
    double dropout;
};

struct MBConv {
    int64_t K;
    int64_t expand;
    int64_t kernel;
    int64_t stride;
    double drop_path;  // stochastic depth on the residual branch
};

// x (N,C,H,W)  y (N,K,P,Q)
Tensor mbconv(Tensor x, const MBConv& b) {
    int64_t C = x.dim(1);
    int64_t E = make_divisible(double(C * b.expand));  // torchvision's adjust_channels(C, expand)
    Tensor y = x;
    if (E != C) y = conv_bn(y, E, 1) | silu();
    y = conv_bn(y, E, b.kernel, {.stride = b.stride, .groups = E}) | silu();
    // The squeeze width follows the block's input, not its expanded width (unlike MobileNetV3).
    y = squeeze_excitation(y, std::max<int64_t>(1, C / 4), silu(), sigmoid());
    y = conv_bn(y, b.K, 1);
    // Only blocks with an identity shortcut can be dropped: the others have no path to fall back on.
    if (b.stride != 1 || C != b.K) return y;
    return add(y | stochastic_depth(b.drop_path), x);
}

Tensor efficientnet(Tensor x, const Scaling& scale, int64_t classes) {
    auto width = [&](int64_t channels) { return make_divisible(channels * scale.width); };
    auto depth = [&](int repeats) { return int(std::ceil(repeats * scale.depth)); };

    int total_blocks = 0;
    for (const Stage& st : stages) total_blocks += depth(st.repeats);

    {
        Scope s(x, "features.0");
        x = conv_bn(x, width(stem_channels), 3, {.stride = 2}) | silu();
    }
    int block = 0;
    for (size_t st = 0; st < stages.size(); ++st) {
        const Stage& stage = stages[st];
        for (int i = 0; i < depth(stage.repeats); ++i, ++block) {
            Scope s(x, cat("features.", st + 1, ".", i));
            x = mbconv(x, {.K = width(stage.channels),
                           .expand = stage.expand,
                           .kernel = stage.kernel,
                           .stride = i == 0 ? stage.stride : 1,
                           .drop_path = stochastic_depth_prob * block / total_blocks});
        }
    }
    {
        Scope s(x, cat("features.", stages.size() + 1));
        x = conv_bn(x, 4 * x.dim(1), 1) | silu();
    }
    x = x | adaptive_avgpool(1) | flatten();
    Scope s(x, "classifier");
    return x | dropout(scale.dropout) | linear(classes);
}

}  // namespace

// B7's batchnorm eps (1e-3) differs from B0's; it changes no count.
Tensor efficientnet_b0(Tensor x, int64_t classes) {
    return efficientnet(x, {.width = 1.0, .depth = 1.0, .dropout = 0.2}, classes);
}
Tensor efficientnet_b7(Tensor x, int64_t classes) {
    return efficientnet(x, {.width = 2.0, .depth = 3.1, .dropout = 0.5}, classes);
}

}  // namespace ridge::nets
