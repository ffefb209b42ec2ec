// SqueezeNet (Iandola et al. 2016) 1.0, and 1.1 from the authors' repository (a 3x3 stem and
// earlier pooling for 2.4x fewer MACs), as torchvision defines them. No fully connected layer:
// a 1x1 conv makes the class scores and a global average pool reduces them.
#include <vector>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

struct FireWidths {
    int64_t squeeze;
    int64_t expand;  // each of the 1x1 and 3x3 expand convs; the module outputs twice this
};

struct SqueezeNetSpec {
    int64_t stem_width;
    int64_t stem_kernel;
    // Fire modules between the stem's max pools; a pool precedes each group.
    std::vector<std::vector<FireWidths>> groups;
};

Tensor fire(Tensor x, FireWidths w) {
    Tensor s = x | named("squeeze", conv(w.squeeze, 1, {.bias = true})) | relu();
    Tensor e1 = s | named("expand1x1", conv(w.expand, 1, {.bias = true})) | relu();
    Tensor e3 = s | named("expand3x3", conv(w.expand, 3, {.pad = 1, .bias = true})) | relu();
    return concat({e1, e3});
}

Tensor squeezenet(Tensor x, const SqueezeNetSpec& spec, int64_t classes) {
    {
        Scope s(x, "features");
        x = x | conv(spec.stem_width, spec.stem_kernel, {.stride = 2, .bias = true}) | relu();
        int k = 0;
        for (const auto& group : spec.groups) {
            // ceil_mode keeps the border rows a floor pool would drop: at 224 the second pool maps
            // 54 to 27, not 26.
            x = x | maxpool(3, {.stride = 2, .ceil_mode = true});
            for (FireWidths w : group) {
                Scope f(x, cat("fire", ++k));
                x = fire(x, w);
            }
        }
    }
    Scope s(x, "classifier");
    return x | dropout(0.5) | named("final_conv", conv(classes, 1, {.bias = true})) | relu()
             | adaptive_avgpool(1) | flatten();
}

}  // namespace

Tensor squeezenet1_0(Tensor x, int64_t classes) {
    return squeezenet(x, {.stem_width = 96,
                          .stem_kernel = 7,
                          .groups = {{{16, 64}, {16, 64}, {32, 128}},
                                     {{32, 128}, {48, 192}, {48, 192}, {64, 256}},
                                     {{64, 256}}}},
                      classes);
}

Tensor squeezenet1_1(Tensor x, int64_t classes) {
    return squeezenet(x, {.stem_width = 64,
                          .stem_kernel = 3,
                          .groups = {{{16, 64}, {16, 64}},
                                     {{32, 128}, {32, 128}},
                                     {{48, 192}, {48, 192}, {64, 256}, {64, 256}}}},
                      classes);
}

}  // namespace ridge::nets
