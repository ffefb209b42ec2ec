// MobileNetV2 (Sandler et al. 2018) as torchvision defines it: inverted residuals whose 1x1
// projection is linear (no ReLU6), because a ReLU on the narrow bottleneck destroys information.
#include <array>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

struct Stage {
    int64_t expand;    // t: hidden width over input width
    int64_t channels;  // c, before the width multiplier
    int repeats;       // n
    int64_t stride;    // s, on the first block of the stage
};

// Table 2 of the paper.
constexpr std::array<Stage, 7> stages = {{
    {1, 16, 1, 1},
    {6, 24, 2, 2},
    {6, 32, 3, 2},
    {6, 64, 4, 2},
    {6, 96, 3, 1},
    {6, 160, 3, 2},
    {6, 320, 1, 1},
}};
constexpr int64_t stem_channels = 32, head_channels = 1280;
constexpr double width_mult = 1.0;

// x (N,C,H,W)  y (N,K,P,Q)
Tensor inverted_residual(Tensor x, int64_t K, int64_t stride, int64_t expand) {
    int64_t C = x.dim(1);
    int64_t hidden = C * expand;
    Tensor y = x;
    if (expand != 1) y = conv_bn(y, hidden, 1) | relu6();
    y = conv_bn(y, hidden, 3, {.stride = stride, .groups = hidden}) | relu6();
    y = conv_bn(y, K, 1);
    return (stride == 1 && C == K) ? add(x, y) : y;
}

}  // namespace

Tensor mobilenet_v2(Tensor x, int64_t classes) {
    int feature = 0;
    {
        Scope s(x, cat("features.", feature++));
        x = conv_bn(x, make_divisible(stem_channels * width_mult), 3, {.stride = 2}) | relu6();
    }
    for (const Stage& st : stages) {
        for (int i = 0; i < st.repeats; ++i) {
            Scope s(x, cat("features.", feature++));
            x = inverted_residual(x, make_divisible(st.channels * width_mult), i == 0 ? st.stride : 1, st.expand);
        }
    }
    {
        Scope s(x, cat("features.", feature++));
        // The head never narrows below 1280 channels, even for width multipliers under 1.
        x = conv_bn(x, make_divisible(head_channels * std::max(1.0, width_mult)), 1) | relu6();
    }
    x = x | adaptive_avgpool(1) | flatten();
    Scope s(x, "classifier");
    return x | dropout(0.2) | linear(classes);
}

}  // namespace ridge::nets
