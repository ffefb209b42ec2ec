// AlexNet (Krizhevsky et al. 2012) as torchvision defines it: the single-GPU variant of
// "One weird trick" (Krizhevsky 2014), with 64/192 channels in the first two convs where the
// paper had 96/256.
#include "netdefs/nets.h"

namespace ridge::nets {

Tensor alexnet(Tensor x, int64_t classes) {
    {
        Scope s(x, "features");
        x = x | conv(64, 11, {.stride = 4, .pad = 2, .bias = true}) | relu() | maxpool(3, {.stride = 2})
              | conv(192, 5, {.pad = 2, .bias = true}) | relu() | maxpool(3, {.stride = 2})
              | conv(384, 3, {.pad = 1, .bias = true}) | relu()
              | conv(256, 3, {.pad = 1, .bias = true}) | relu()
              | conv(256, 3, {.pad = 1, .bias = true}) | relu() | maxpool(3, {.stride = 2});
    }
    // The adaptive pool pins the classifier's input to 256x6x6 whatever the resolution.
    x = x | named("avgpool", adaptive_avgpool(6)) | flatten();
    Scope s(x, "classifier");
    return x | dropout(0.5) | linear(4096) | relu()
             | dropout(0.5) | linear(4096) | relu()
             | linear(classes);
}

}  // namespace ridge::nets
