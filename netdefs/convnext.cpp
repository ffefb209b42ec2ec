// ConvNeXt (Liu et al. 2022, "A ConvNet for the 2020s") as torchvision defines it: a 4x4 patchify
// stem, four stages of inverted-bottleneck blocks (7x7 depthwise conv, LayerNorm, 4x MLP, GELU)
// separated by LayerNorm + 2x2 stride-2 convs, and a LayerNorm + linear classifier.
#include <array>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

struct ConvNeXtStage {
    int64_t width;
    int blocks;
};

struct ConvNeXtSpec {
    std::array<ConvNeXtStage, 4> stages;
    double stochastic_depth_prob;  // of the last block; the first has 0, linear in between
};

// Depthwise 7x7, then an MLP over channels. It runs channels-last so that the LayerNorm and the
// linears act on C as the last dimension; the stem, downsampling and classifier norms stay
// channels-first, hence ln(1) there.
Tensor inverted_bottleneck(Tensor x) {
    Scope s(x, "block");
    int64_t C = x.dim(1);
    return x | conv(C, 7, {.pad = 3, .groups = C, .bias = true})
             | permute({0, 2, 3, 1}) | ln() | linear(4 * C) | gelu() | linear(C)
             | permute({0, 3, 1, 2});
}

Tensor cn_block(Tensor x, double sd_prob) {
    Tensor y = inverted_bottleneck(x) | layer_scale(1) | stochastic_depth(sd_prob);
    return add(y, x);
}

Tensor convnext(Tensor x, const ConvNeXtSpec& spec, int64_t classes) {
    {
        Scope s(x, "features.0");
        x = x | conv(spec.stages[0].width, 4, {.stride = 4, .bias = true}) | ln(1);
    }
    int total_blocks = 0;
    for (const ConvNeXtStage& st : spec.stages) total_blocks += st.blocks;

    int block_id = 0;
    for (size_t stage = 0; stage < spec.stages.size(); ++stage) {
        if (stage > 0) {
            Scope s(x, cat("features.", 2 * stage));
            x = x | ln(1) | conv(spec.stages[stage].width, 2, {.stride = 2, .bias = true});
        }
        for (int i = 0; i < spec.stages[stage].blocks; ++i, ++block_id) {
            Scope s(x, cat("features.", 2 * stage + 1, ".", i));
            x = cn_block(x, spec.stochastic_depth_prob * block_id / (total_blocks - 1.0));
        }
    }
    x = x | adaptive_avgpool(1);
    Scope s(x, "classifier");
    return x | ln(1) | flatten() | linear(classes);
}

}  // namespace

Tensor convnext_tiny(Tensor x, int64_t classes) {
    return convnext(x, {.stages = {{{96, 3}, {192, 3}, {384, 9}, {768, 3}}}, .stochastic_depth_prob = 0.1}, classes);
}

}  // namespace ridge::nets
