// RegNet (Radosavovic et al. 2020, "Designing Network Design Spaces") as torchvision defines it:
// a 3x3 stem, four stages of residual bottlenecks with grouped 3x3 convs (RegNetY adds
// squeeze-excitation), and a linear classifier. A net is named by six numbers; the stages follow
// from them by the paper's quantized-linear rule.
#include <algorithm>
#include <cmath>
#include <vector>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

// The paper's parameters of one RegNet.
struct RegNetSpec {
    int depth;              // d: bottleneck blocks in all
    double w_0;             // initial width
    double w_a;             // slope of the linear width ramp
    double w_m;             // ratio between consecutive stage widths
    int64_t group_width;    // channels per group of the 3x3 conv
    double se_ratio = 0.0;  // SE squeeze width over the block's input width; 0: no SE (RegNetX)
};

struct Stage {
    int64_t width;  // output channels of every block; torchvision's bottleneck multiplier is 1
    int depth;
    int64_t group_width;
};

// The quantized-linear rule: block i would have width u_i = w_0 + w_a*i; snapping log_{w_m}(u_i/w_0)
// to an integer s_i gives w_0*w_m^s_i, rounded to a multiple of 8. Runs of equal widths are the
// stages, each widened until its group width divides it. Rounding is half-to-even (std::nearbyint),
// as torch.round: regnet_x_1_6gf's second stage is exactly 22.5 eighths wide and must round to 22.
std::vector<Stage> stages(const RegNetSpec& spec) {
    const double quantum = 8;
    std::vector<Stage> out;
    for (int i = 0; i < spec.depth; ++i) {
        double u = spec.w_0 + spec.w_a * i;
        double s = std::nearbyint(std::log(u / spec.w_0) / std::log(spec.w_m));
        auto width = int64_t(std::nearbyint(spec.w_0 * std::pow(spec.w_m, s) / quantum) * quantum);
        if (out.empty() || out.back().width != width)
            out.push_back({width, 0, spec.group_width});
        ++out.back().depth;
    }
    for (Stage& st : out) {
        st.group_width = std::min(st.group_width, st.width);
        st.width = make_divisible(double(st.width), st.group_width);
    }
    return out;
}

// 1x1, grouped 3x3 carrying the stride, [SE,] 1x1: all at the stage width.
Tensor bottleneck_transform(Tensor x, const Stage& st, int64_t stride, double se_ratio) {
    Scope s(x, "f");
    int64_t width_in = x.dim(1);
    Tensor y = x | conv(st.width, 1) | bn() | relu()
                 | conv(st.width, 3, {.stride = stride, .pad = 1, .groups = st.width / st.group_width}) | bn() | relu();
    // The squeeze width is relative to the block's input width, not the bottleneck's.
    if (se_ratio > 0) y = squeeze_excitation(y, int64_t(std::nearbyint(se_ratio * double(width_in))), relu(), sigmoid());
    return y | conv(st.width, 1) | bn();
}

Tensor res_bottleneck(Tensor x, const Stage& st, int64_t stride, double se_ratio) {
    Tensor skip = shortcut(x, st.width, stride, "proj");
    return add(skip, bottleneck_transform(x, st, stride, se_ratio)) | relu();
}

Tensor regnet(Tensor x, const RegNetSpec& spec, int64_t classes) {
    const int64_t stem_width = 32;
    {
        Scope s(x, "stem");
        x = x | conv(stem_width, 3, {.stride = 2, .pad = 1}) | bn() | relu();
    }
    std::vector<Stage> trunk = stages(spec);
    for (size_t stage = 0; stage < trunk.size(); ++stage) {
        for (int i = 0; i < trunk[stage].depth; ++i) {
            Scope s(x, cat("trunk_output.block", stage + 1, ".block", stage + 1, "-", i));
            x = res_bottleneck(x, trunk[stage], i == 0 ? 2 : 1, spec.se_ratio);
        }
    }
    return x | adaptive_avgpool(1) | flatten() | named("fc", linear(classes));
}

}  // namespace

Tensor regnet_y_400mf(Tensor x, int64_t classes) {
    return regnet(x, {.depth = 16, .w_0 = 48, .w_a = 27.89, .w_m = 2.09, .group_width = 8, .se_ratio = 0.25}, classes);
}
Tensor regnet_x_1_6gf(Tensor x, int64_t classes) {
    return regnet(x, {.depth = 18, .w_0 = 80, .w_a = 34.01, .w_m = 2.25, .group_width = 24}, classes);
}

}  // namespace ridge::nets
