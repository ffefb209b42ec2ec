// VGG (Simonyan & Zisserman 2014), configurations A (11), B (13), D (16) and E (19) of the
// paper's Table 1, as torchvision defines them: every conv is 3x3, pad 1, with a bias (kept even
// when batchnorm follows), and a 2x2 max pool closes each of the five stages.
#include <array>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

struct VggSpec {
    std::array<int, 5> convs;  // 3x3 convs per stage; stage widths are fixed below
    bool batch_norm = false;
};

constexpr std::array<int64_t, 5> kStageWidth = {64, 128, 256, 512, 512};

Tensor vgg(Tensor x, const VggSpec& spec, int64_t classes) {
    {
        Scope s(x, "features");
        for (int stage = 0; stage < 5; ++stage) {
            for (int i = 0; i < spec.convs[stage]; ++i) {
                x = x | conv(kStageWidth[stage], 3, {.pad = 1, .bias = true});
                if (spec.batch_norm) x = x | bn();
                x = x | relu();
            }
            x = x | maxpool(2);
        }
    }
    // The adaptive pool pins the classifier's input to 512x7x7 whatever the resolution.
    x = x | named("avgpool", adaptive_avgpool(7)) | flatten();
    Scope s(x, "classifier");
    return x | linear(4096) | relu() | dropout(0.5)
             | linear(4096) | relu() | dropout(0.5)
             | linear(classes);
}

}  // namespace

Tensor vgg11(Tensor x, int64_t classes) { return vgg(x, {.convs = {1, 1, 2, 2, 2}}, classes); }
Tensor vgg13(Tensor x, int64_t classes) { return vgg(x, {.convs = {2, 2, 2, 2, 2}}, classes); }
Tensor vgg16(Tensor x, int64_t classes) { return vgg(x, {.convs = {2, 2, 3, 3, 3}}, classes); }
Tensor vgg19(Tensor x, int64_t classes) { return vgg(x, {.convs = {2, 2, 4, 4, 4}}, classes); }
Tensor vgg16_bn(Tensor x, int64_t classes) { return vgg(x, {.convs = {2, 2, 3, 3, 3}, .batch_norm = true}, classes); }

}  // namespace ridge::nets
