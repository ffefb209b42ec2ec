#include "netdefs/zoo.h"

#include <algorithm>

#include "netdefs/nets.h"

namespace ridge {

const std::vector<ZooEntry>& zoo() {
    using namespace nets;
    static const std::vector<ZooEntry> entries = {
        {"alexnet", "AlexNet: 5 convs, 3 FC layers (2012)", 224, alexnet},
        {"vgg11", "VGG-11: plain 3x3 conv stacks, 3 FC layers", 224, vgg11},
        {"vgg13", "VGG-13", 224, vgg13},
        {"vgg16", "VGG-16", 224, vgg16},
        {"vgg19", "VGG-19", 224, vgg19},
        {"vgg16_bn", "VGG-16 with batchnorm after every conv", 224, vgg16_bn},
        {"resnet18", "ResNet-18: basic residual blocks [2,2,2,2]", 224, resnet18},
        {"resnet34", "ResNet-34: basic residual blocks [3,4,6,3]", 224, resnet34},
        {"resnet50", "ResNet-50: bottleneck blocks [3,4,6,3]", 224, resnet50},
        {"resnet101", "ResNet-101: bottleneck blocks [3,4,23,3]", 224, resnet101},
        {"resnet152", "ResNet-152: bottleneck blocks [3,8,36,3]", 224, resnet152},
        {"wide_resnet50_2", "Wide ResNet-50-2: bottlenecks twice as wide", 224, wide_resnet50_2},
        {"wide_resnet101_2", "Wide ResNet-101-2", 224, wide_resnet101_2},
        {"resnext50_32x4d", "ResNeXt-50 32x4d: grouped 3x3 convs, 32 groups", 224, resnext50_32x4d},
        {"squeezenet1_0", "SqueezeNet 1.0: fire modules, no FC layer", 224, squeezenet1_0},
        {"squeezenet1_1", "SqueezeNet 1.1: earlier downsampling, fewer MACs", 224, squeezenet1_1},
        {"googlenet", "GoogLeNet (Inception v1), without auxiliary heads", 224, googlenet},
        {"inception_v3", "Inception v3 at 299x299, without auxiliary head", 299, inception_v3},
        {"densenet121", "DenseNet-121: dense blocks [6,12,24,16], growth 32", 224, densenet121},
        {"densenet169", "DenseNet-169: dense blocks [6,12,32,32], growth 32", 224, densenet169},
        {"mobilenet_v2", "MobileNetV2: inverted residuals, depthwise convs", 224, mobilenet_v2},
        {"mobilenet_v3_large", "MobileNetV3-Large: SE, hardswish", 224, mobilenet_v3_large},
        {"mobilenet_v3_small", "MobileNetV3-Small", 224, mobilenet_v3_small},
        {"shufflenet_v2_x1_0", "ShuffleNetV2 1.0x: channel split and shuffle", 224, shufflenet_v2_x1_0},
        {"mnasnet1_0", "MnasNet 1.0: searched mobile architecture", 224, mnasnet1_0},
        {"efficientnet_b0", "EfficientNet-B0: MBConv with SE, SiLU", 224, efficientnet_b0},
        {"efficientnet_b7", "EfficientNet-B7 at 600x600", 600, efficientnet_b7},
        {"regnet_y_400mf", "RegNetY-400MF: grouped bottlenecks with SE", 224, regnet_y_400mf},
        {"regnet_x_1_6gf", "RegNetX-1.6GF: grouped bottlenecks", 224, regnet_x_1_6gf},
        {"convnext_tiny", "ConvNeXt-T: 7x7 depthwise, LayerNorm, GELU MLPs", 224, convnext_tiny},
        {"vit_b_16", "ViT-B/16: 12 transformer layers on 16x16 patches", 224, vit_b_16},
    };
    return entries;
}

const ZooEntry* find_net(std::string_view name) {
    for (const ZooEntry& e : zoo())
        if (e.name == name) return &e;
    return nullptr;
}

Graph build(const ZooEntry& e, int64_t N, int64_t H, int64_t W, int64_t classes) {
    Graph g{std::string(e.name)};
    e.body(g.input({N, 3, H, W}), classes);
    return g;
}

int64_t min_resolution(const ZooEntry& e) {
    for (int64_t r = 1; r <= e.default_res; ++r) {
        try {
            build(e, 1, r, r);
            return r;
        } catch (const BuildError&) {
        }
    }
    return e.default_res;
}

}  // namespace ridge
