// ShuffleNetV2 (Ma et al. 2018) as torchvision defines it. A unit splits the channels in two, passes
// one half through untouched and convolves the other, then shuffles the halves together so the
// next unit's split mixes information from both (the paper's guideline: equal widths, no groups).
#include <array>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

// Table 5 of the paper, 1.0x: units per stage (the first one downsamples) and output widths.
constexpr std::array<int, 3> stage_repeats = {4, 8, 4};
constexpr int64_t stem_channels = 24;
constexpr std::array<int64_t, 3> stage_channels = {116, 232, 464};
constexpr int64_t head_channels = 1024;

// The convolved path: 1x1 -> depthwise 3x3 -> 1x1; no ReLU after the depthwise conv.
// x (N,C,H,W)  y (N,K,P,Q)
Tensor branch2(Tensor x, int64_t K, int64_t stride) {
    Scope s(x, "branch2");
    return x | conv(K, 1) | bn() | relu()
             | conv(K, 3, {.stride = stride, .pad = 1, .groups = K}) | bn()
             | conv(K, 1) | bn() | relu();
}

// The downsampling unit's other path, in place of the identity: depthwise 3x3 -> 1x1.
// x (N,C,H,W)  y (N,K,P,Q)
Tensor branch1(Tensor x, int64_t K) {
    Scope s(x, "branch1");
    int64_t C = x.dim(1);
    return x | conv(C, 3, {.stride = 2, .pad = 1, .groups = C}) | bn() | conv(K, 1) | bn() | relu();
}

// Stride 1: half the channels pass through; the input already has the output width.
// x (N,C,H,W)  y (N,C,H,W)
Tensor basic_unit(Tensor x) {
    int64_t half = x.dim(1) / 2;
    Tensor kept = x | slice(1, 0, half);  // torch.chunk(2, dim=1): views, no copy
    Tensor convolved = branch2(x | slice(1, half, half), half, 1);
    return concat({kept, convolved}) | channel_shuffle(2);
}

// Stride 2: both branches see the whole input, so the width doubles as the resolution halves.
// x (N,C,H,W)  y (N,K,H/2,W/2)
Tensor downsampling_unit(Tensor x, int64_t K) {
    Tensor left = branch1(x, K / 2);
    Tensor right = branch2(x, K / 2, 2);
    return concat({left, right}) | channel_shuffle(2);
}

}  // namespace

Tensor shufflenet_v2_x1_0(Tensor x, int64_t classes) {
    {
        Scope s(x, "conv1");
        x = x | conv(stem_channels, 3, {.stride = 2, .pad = 1}) | bn() | relu();
    }
    x = x | named("maxpool", maxpool(3, {.stride = 2, .pad = 1}));
    for (int stage = 0; stage < 3; ++stage) {
        for (int i = 0; i < stage_repeats[stage]; ++i) {
            Scope s(x, cat("stage", stage + 2, ".", i));
            x = i == 0 ? downsampling_unit(x, stage_channels[stage]) : basic_unit(x);
        }
    }
    {
        Scope s(x, "conv5");
        x = x | conv(head_channels, 1) | bn() | relu();
    }
    // torchvision takes x.mean([2, 3]): the same as a 1x1 adaptive average pool, flattened.
    return x | adaptive_avgpool(1) | flatten() | named("fc", linear(classes));
}

}  // namespace ridge::nets
