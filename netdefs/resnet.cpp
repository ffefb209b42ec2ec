// ResNet (He et al. 2015), Wide ResNet (Zagoruyko & Komodakis 2016) and ResNeXt (Xie et al. 2017),
// as torchvision defines them: the stride-2 sits on the 3x3 conv of a bottleneck (ResNet v1.5).
#include <array>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

struct ResNetSpec {
    bool bottleneck;
    std::array<int, 4> blocks;      // residual blocks per stage
    int64_t groups = 1;             // ResNeXt cardinality
    int64_t width_per_group = 64;   // 128 doubles the bottleneck width (Wide ResNet)
};

Tensor basic_block(Tensor x, int64_t planes, int64_t stride) {
    Tensor y = x | conv(planes, 3, {.stride = stride, .pad = 1}) | bn() | relu()
                 | conv(planes, 3, {.pad = 1}) | bn();
    return add(y, shortcut(x, planes, stride, "downsample")) | relu();
}

Tensor bottleneck(Tensor x, int64_t planes, int64_t stride, const ResNetSpec& spec) {
    int64_t width = planes * spec.width_per_group / 64 * spec.groups;
    Tensor y = x | conv(width, 1) | bn() | relu()
                 | conv(width, 3, {.stride = stride, .pad = 1, .groups = spec.groups}) | bn() | relu()
                 | conv(4 * planes, 1) | bn();
    return add(y, shortcut(x, 4 * planes, stride, "downsample")) | relu();
}

Tensor resnet(Tensor x, const ResNetSpec& spec, int64_t classes) {
    x = x | conv(64, 7, {.stride = 2, .pad = 3}) | bn() | relu() | maxpool(3, {.stride = 2, .pad = 1});
    const std::array<int64_t, 4> planes = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; ++stage) {
        for (int i = 0; i < spec.blocks[stage]; ++i) {
            Scope s(x, cat("layer", stage + 1, ".", i));
            int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
            x = spec.bottleneck ? bottleneck(x, planes[stage], stride, spec)
                                : basic_block(x, planes[stage], stride);
        }
    }
    return x | adaptive_avgpool(1) | flatten() | named("fc", linear(classes));
}

}  // namespace

Tensor resnet18(Tensor x, int64_t classes) { return resnet(x, {.bottleneck = false, .blocks = {2, 2, 2, 2}}, classes); }
Tensor resnet34(Tensor x, int64_t classes) { return resnet(x, {.bottleneck = false, .blocks = {3, 4, 6, 3}}, classes); }
Tensor resnet50(Tensor x, int64_t classes) { return resnet(x, {.bottleneck = true, .blocks = {3, 4, 6, 3}}, classes); }
Tensor resnet101(Tensor x, int64_t classes) {
    return resnet(x, {.bottleneck = true, .blocks = {3, 4, 23, 3}}, classes);
}
Tensor resnet152(Tensor x, int64_t classes) {
    return resnet(x, {.bottleneck = true, .blocks = {3, 8, 36, 3}}, classes);
}
Tensor wide_resnet50_2(Tensor x, int64_t classes) {
    return resnet(x, {.bottleneck = true, .blocks = {3, 4, 6, 3}, .width_per_group = 128}, classes);
}
Tensor wide_resnet101_2(Tensor x, int64_t classes) {
    return resnet(x, {.bottleneck = true, .blocks = {3, 4, 23, 3}, .width_per_group = 128}, classes);
}
Tensor resnext50_32x4d(Tensor x, int64_t classes) {
    return resnet(x, {.bottleneck = true, .blocks = {3, 4, 6, 3}, .groups = 32, .width_per_group = 4}, classes);
}

}  // namespace ridge::nets
