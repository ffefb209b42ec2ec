// DenseNet-BC (Huang et al. 2016, "Densely connected convolutional networks") as torchvision
// defines it: bottleneck layers (bn-relu-1x1 conv to 4k channels, bn-relu-3x3 conv to k) and
// transitions that halve the channels (compression 0.5).
#include <array>
#include <vector>

#include "netdefs/nets.h"

namespace ridge::nets {

namespace {

struct DenseNetSpec {
    std::array<int, 4> layers;    // dense layers per block
    int64_t growth = 32;          // k: channels each layer adds
    int64_t stem_width = 64;
};

constexpr int64_t kBottleneckFactor = 4;  // the 1x1 conv's width in units of k (bn_size)

// Each layer reads the concatenation of everything before it in the block. torchvision
// concatenates afresh in every layer (no preallocated buffer), so the graph does too: the
// copies are part of its memory traffic.
Tensor dense_layer(const std::vector<Tensor>& features, int64_t growth) {
    Tensor x = concat(features);
    return x | named("norm1", bn()) | relu() | conv(kBottleneckFactor * growth, 1)
             | named("norm2", bn()) | relu() | conv(growth, 3, {.pad = 1});
}

Tensor dense_block(Tensor x, int layers, int64_t growth) {
    std::vector<Tensor> features = {x};
    for (int i = 0; i < layers; ++i) {
        Scope s(x, cat("denselayer", i + 1));
        features.push_back(dense_layer(features, growth));
    }
    return concat(features);
}

Tensor transition(Tensor x) {
    return x | named("norm", bn()) | relu() | conv(x.dim(1) / 2, 1) | named("pool", avgpool(2));
}

Tensor densenet(Tensor x, const DenseNetSpec& spec, int64_t classes) {
    {
        Scope s(x, "features");
        x = x | named("conv0", conv(spec.stem_width, 7, {.stride = 2, .pad = 3})) | named("norm0", bn())
              | named("relu0", relu()) | named("pool0", maxpool(3, {.stride = 2, .pad = 1}));
        for (int b = 0; b < 4; ++b) {
            {
                Scope block(x, cat("denseblock", b + 1));
                x = dense_block(x, spec.layers[b], spec.growth);
            }
            if (b < 3) {
                Scope t(x, cat("transition", b + 1));
                x = transition(x);
            }
        }
        x = x | named("norm5", bn());
    }
    return x | relu() | adaptive_avgpool(1) | flatten() | named("classifier", linear(classes));
}

}  // namespace

Tensor densenet121(Tensor x, int64_t classes) { return densenet(x, {.layers = {6, 12, 24, 16}}, classes); }
Tensor densenet169(Tensor x, int64_t classes) { return densenet(x, {.layers = {6, 12, 32, 32}}, classes); }

}  // namespace ridge::nets
