// Inception v3 (Szegedy et al. 2015, "Rethinking the Inception architecture") as torchvision
// defines it, without the auxiliary head (training only) or the input transform. Module and
// branch names are torchvision's (Mixed_5b.branch7x7_2, ...), which follow the TF-slim port.
// Every conv is BasicConv2d: conv without bias, batchnorm, ReLU.
#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

// The pooling branch of the non-reducing modules: a same-size 3x3 average whose border windows
// divide by 9, padding included, as F.avg_pool2d does by default.
Tensor avg_branch(Tensor x, int64_t K) {
    x = x | avgpool(3, {.stride = 1, .pad = 1});
    return basic_conv(x, "branch_pool", K, 1);
}

// 35x35 grid (Figure 5): 5x5 and double-3x3 towers.
Tensor inception_a(Tensor x, int64_t pool_features) {
    Tensor b1 = basic_conv(x, "branch1x1", 64, 1);
    Tensor b5 = basic_conv(x, "branch5x5_1", 48, 1);
    b5 = basic_conv(b5, "branch5x5_2", 64, 5, {.pad = 2});
    Tensor b3 = basic_conv(x, "branch3x3dbl_1", 64, 1);
    b3 = basic_conv(b3, "branch3x3dbl_2", 96, 3, {.pad = 1});
    b3 = basic_conv(b3, "branch3x3dbl_3", 96, 3, {.pad = 1});
    return concat({b1, b5, b3, avg_branch(x, pool_features)});
}

// 35 -> 17 grid reduction (Figure 10): stride-2 convs beside a stride-2 max pool.
Tensor inception_b(Tensor x) {
    Tensor b3 = basic_conv(x, "branch3x3", 384, 3, {.stride = 2});
    Tensor bd = basic_conv(x, "branch3x3dbl_1", 64, 1);
    bd = basic_conv(bd, "branch3x3dbl_2", 96, 3, {.pad = 1});
    bd = basic_conv(bd, "branch3x3dbl_3", 96, 3, {.stride = 2});
    Tensor pool = x | maxpool(3, {.stride = 2});
    return concat({b3, bd, pool});
}

// 17x17 grid (Figure 6): 7x7 convs factored into 1x7 and 7x1 pairs, c7 channels inside.
Tensor inception_c(Tensor x, int64_t c7) {
    const ConvOpts row = {.pad = Padding(0, 3)}, col = {.pad = Padding(3, 0)};
    Tensor b1 = basic_conv(x, "branch1x1", 192, 1);
    Tensor b7 = basic_conv(x, "branch7x7_1", c7, 1);
    b7 = basic_conv(b7, "branch7x7_2", c7, {1, 7}, row);
    b7 = basic_conv(b7, "branch7x7_3", 192, {7, 1}, col);
    Tensor bd = basic_conv(x, "branch7x7dbl_1", c7, 1);
    bd = basic_conv(bd, "branch7x7dbl_2", c7, {7, 1}, col);
    bd = basic_conv(bd, "branch7x7dbl_3", c7, {1, 7}, row);
    bd = basic_conv(bd, "branch7x7dbl_4", c7, {7, 1}, col);
    bd = basic_conv(bd, "branch7x7dbl_5", 192, {1, 7}, row);
    return concat({b1, b7, bd, avg_branch(x, 192)});
}

// 17 -> 8 grid reduction.
Tensor inception_d(Tensor x) {
    Tensor b3 = basic_conv(x, "branch3x3_1", 192, 1);
    b3 = basic_conv(b3, "branch3x3_2", 320, 3, {.stride = 2});
    Tensor b7 = basic_conv(x, "branch7x7x3_1", 192, 1);
    b7 = basic_conv(b7, "branch7x7x3_2", 192, {1, 7}, {.pad = Padding(0, 3)});
    b7 = basic_conv(b7, "branch7x7x3_3", 192, {7, 1}, {.pad = Padding(3, 0)});
    b7 = basic_conv(b7, "branch7x7x3_4", 192, 3, {.stride = 2});
    Tensor pool = x | maxpool(3, {.stride = 2});
    return concat({b3, b7, pool});
}

// 8x8 grid (Figure 7): the towers end in parallel 1x3 and 3x1 convs whose outputs are
// concatenated, widening the module rather than deepening it.
Tensor inception_e(Tensor x) {
    const ConvOpts row = {.pad = Padding(0, 1)}, col = {.pad = Padding(1, 0)};
    Tensor b1 = basic_conv(x, "branch1x1", 320, 1);
    Tensor b3 = basic_conv(x, "branch3x3_1", 384, 1);
    b3 = concat({basic_conv(b3, "branch3x3_2a", 384, {1, 3}, row), basic_conv(b3, "branch3x3_2b", 384, {3, 1}, col)});
    Tensor bd = basic_conv(x, "branch3x3dbl_1", 448, 1);
    bd = basic_conv(bd, "branch3x3dbl_2", 384, 3, {.pad = 1});
    bd = concat(
        {basic_conv(bd, "branch3x3dbl_3a", 384, {1, 3}, row), basic_conv(bd, "branch3x3dbl_3b", 384, {3, 1}, col)});
    return concat({b1, b3, bd, avg_branch(x, 192)});
}

template <class Block, class... Args>
Tensor mixed(Tensor x, const std::string& name, Block block, Args... args) {
    Scope s(x, name);
    return block(x, args...);
}

}  // namespace

Tensor inception_v3(Tensor x, int64_t classes) {
    // Stem: unpadded convs and pools take 299 to 35.
    x = basic_conv(x, "Conv2d_1a_3x3", 32, 3, {.stride = 2});
    x = basic_conv(x, "Conv2d_2a_3x3", 32, 3);
    x = basic_conv(x, "Conv2d_2b_3x3", 64, 3, {.pad = 1}) | named("maxpool1", maxpool(3, {.stride = 2}));
    x = basic_conv(x, "Conv2d_3b_1x1", 80, 1);
    x = basic_conv(x, "Conv2d_4a_3x3", 192, 3) | named("maxpool2", maxpool(3, {.stride = 2}));

    x = mixed(x, "Mixed_5b", inception_a, 32);
    x = mixed(x, "Mixed_5c", inception_a, 64);
    x = mixed(x, "Mixed_5d", inception_a, 64);
    x = mixed(x, "Mixed_6a", inception_b);
    x = mixed(x, "Mixed_6b", inception_c, 128);
    x = mixed(x, "Mixed_6c", inception_c, 160);
    x = mixed(x, "Mixed_6d", inception_c, 160);
    x = mixed(x, "Mixed_6e", inception_c, 192);
    x = mixed(x, "Mixed_7a", inception_d);
    x = mixed(x, "Mixed_7b", inception_e);
    x = mixed(x, "Mixed_7c", inception_e);

    // torchvision drops out before flattening; the order changes nothing but the layer list.
    return x | named("avgpool", adaptive_avgpool(1)) | dropout(0.5) | flatten() | named("fc", linear(classes));
}

}  // namespace ridge::nets
