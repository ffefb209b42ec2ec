// GoogLeNet (Szegedy et al. 2014, "Going deeper with convolutions") as torchvision defines it,
// without the auxiliary heads (training only) or the input transform. Every conv is
// torchvision's BasicConv2d: conv without bias, batchnorm, ReLU, which the paper predates.
#include <array>
#include <vector>

#include "netdefs/blocks.h"

namespace ridge::nets {

namespace {

// One row of the paper's Table 1.
struct InceptionWidths {
    int64_t b1;         // #1x1
    int64_t b2_reduce;  // #3x3 reduce
    int64_t b2;         // #3x3
    int64_t b3_reduce;  // #5x5 reduce
    int64_t b3;         // #5x5, but torchvision's conv is 3x3 (pytorch/vision#906)
    int64_t pool_proj;  // pool proj
};

struct InceptionStage {
    int number;                            // 3, 4, 5: modules are named inception3a, 3b, ...
    std::vector<InceptionWidths> modules;
    int64_t pool_after;                    // kernel of the stride-2 max pool that follows; 0: none
};

const std::array<InceptionStage, 3> kStages = {{
    {3, {{64, 96, 128, 16, 32, 32}, {128, 128, 192, 32, 96, 64}}, 3},
    {4,
     {{192, 96, 208, 16, 48, 64},
      {160, 112, 224, 24, 64, 64},
      {128, 128, 256, 24, 64, 64},
      {112, 144, 288, 32, 64, 64},
      {256, 160, 320, 32, 128, 128}},
     2},
    {5, {{256, 160, 320, 32, 128, 128}, {384, 192, 384, 48, 128, 128}}, 0},
}};

// A 1x1 reduction, then a 3x3 conv: torchvision's branch2 and branch3 (Sequentials, hence "0", "1").
Tensor reduced_3x3(Tensor x, const std::string& name, int64_t reduce, int64_t K) {
    Scope s(x, name);
    Tensor y = basic_conv(x, "0", reduce, 1);
    return basic_conv(y, "1", K, 3, {.pad = 1});
}

// A same-size 3x3 max pool, then a 1x1 projection.
Tensor pool_projection(Tensor x, int64_t K) {
    Scope s(x, "branch4");
    Tensor y = x | named("0", maxpool(3, {.stride = 1, .pad = 1, .ceil_mode = true}));
    return basic_conv(y, "1", K, 1);
}

Tensor inception(Tensor x, const InceptionWidths& w) {
    Tensor b1 = basic_conv(x, "branch1", w.b1, 1);
    Tensor b2 = reduced_3x3(x, "branch2", w.b2_reduce, w.b2);
    Tensor b3 = reduced_3x3(x, "branch3", w.b3_reduce, w.b3);
    Tensor b4 = pool_projection(x, w.pool_proj);
    return concat({b1, b2, b3, b4});
}

}  // namespace

Tensor googlenet(Tensor x, int64_t classes) {
    // ceil_mode on the stride-2 pools: the paper's 112 -> 56 -> 28 -> 14 at 224 needs the last,
    // partial window of each 3x3 pool (floor mode gives 55, 27, 13).
    const PoolOpts halve = {.stride = 2, .ceil_mode = true};
    x = basic_conv(x, "conv1", 64, 7, {.stride = 2, .pad = 3}) | named("maxpool1", maxpool(3, halve));
    x = basic_conv(x, "conv2", 64, 1);
    x = basic_conv(x, "conv3", 192, 3, {.pad = 1}) | named("maxpool2", maxpool(3, halve));
    for (const InceptionStage& stage : kStages) {
        char letter = 'a';
        for (const InceptionWidths& w : stage.modules) {
            Scope s(x, cat("inception", stage.number, letter++));
            x = inception(x, w);
        }
        if (stage.pool_after) x = x | named(cat("maxpool", stage.number), maxpool(stage.pool_after, halve));
    }
    return x | named("avgpool", adaptive_avgpool(1)) | flatten() | dropout(0.2) | named("fc", linear(classes));
}

}  // namespace ridge::nets
