// MnasNet-B1 (Tan et al. 2019) as torchvision defines it: the searched stack of MobileNetV2-style
// inverted residuals with 3x3 and 5x5 depthwise kernels, without squeeze-excitation.
#include <array>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

struct Stack {
    int64_t channels;  // before the depth multiplier
    int64_t kernel;
    int64_t stride;    // on the first block of the stack
    int64_t expand;
    int repeats;
};

// The B1 variant's stacks, after the stem's 32-wide conv and 16-wide separable conv.
constexpr int64_t stem_channels = 32, sepconv_channels = 16;
constexpr std::array<Stack, 6> stacks = {{
    {24, 3, 2, 3, 3},
    {40, 5, 2, 3, 3},
    {80, 5, 2, 6, 3},
    {96, 3, 1, 6, 2},
    {192, 5, 2, 6, 4},
    {320, 3, 1, 6, 1},
}};
constexpr int64_t head_channels = 1280;  // not scaled by alpha
constexpr double alpha = 1.0;
constexpr int first_stack_index = 8;  // torchvision's layers.0-7 are the stem's conv/bn/relu modules

// torchvision's _round_to_multiple_of(depth * alpha, 8): with its default 0.9 bias it is the same
// rule as _make_divisible.
int64_t scaled(int64_t depth) { return make_divisible(depth * alpha); }

// x (N,C,H,W)  y (N,K,P,Q)
Tensor inverted_residual(Tensor x, const Stack& stack, int64_t stride) {
    int64_t C = x.dim(1), mid = C * stack.expand, K = scaled(stack.channels), R = stack.kernel;
    Tensor y = x | conv(mid, 1) | bn() | relu()
                 | conv(mid, R, {.stride = stride, .pad = R / 2, .groups = mid}) | bn() | relu()
                 | conv(K, 1) | bn();
    return (stride == 1 && C == K) ? add(y, x) : y;
}

}  // namespace

Tensor mnasnet1_0(Tensor x, int64_t classes) {
    {
        Scope s(x, "layers");
        int64_t C = scaled(stem_channels);
        x = x | conv(C, 3, {.stride = 2, .pad = 1}) | bn() | relu()
              | conv(C, 3, {.pad = 1, .groups = C}) | bn() | relu()
              | conv(scaled(sepconv_channels), 1) | bn();
    }
    for (size_t st = 0; st < stacks.size(); ++st) {
        const Stack& stack = stacks[st];
        for (int i = 0; i < stack.repeats; ++i) {
            Scope s(x, cat("layers.", first_stack_index + st, ".", i));
            int64_t stride = i == 0 ? stack.stride : 1;
            x = inverted_residual(x, stack, stride);
        }
    }
    {
        Scope s(x, "layers");
        x = x | conv(head_channels, 1) | bn() | relu();
    }
    // torchvision takes x.mean([2, 3]): the same as a 1x1 adaptive average pool, flattened.
    x = x | adaptive_avgpool(1) | flatten();
    Scope s(x, "classifier");
    return x | dropout(0.2) | linear(classes);
}

}  // namespace ridge::nets
