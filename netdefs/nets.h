#pragma once
// Every zoo network: takes the image batch x (N,3,H,W), returns the logits (N,1000).
// Each is the architecture of torchvision's function of the same name (no auxiliary heads).
#include "engine/dsl.h"

namespace ridge::nets {

Tensor alexnet(Tensor x);
Tensor vgg11(Tensor x);
Tensor vgg13(Tensor x);
Tensor vgg16(Tensor x);
Tensor vgg19(Tensor x);
Tensor vgg16_bn(Tensor x);
Tensor resnet18(Tensor x);
Tensor resnet34(Tensor x);
Tensor resnet50(Tensor x);
Tensor resnet101(Tensor x);
Tensor resnet152(Tensor x);
Tensor wide_resnet50_2(Tensor x);
Tensor wide_resnet101_2(Tensor x);
Tensor resnext50_32x4d(Tensor x);
Tensor squeezenet1_0(Tensor x);
Tensor squeezenet1_1(Tensor x);
Tensor googlenet(Tensor x);
Tensor inception_v3(Tensor x);
Tensor densenet121(Tensor x);
Tensor densenet169(Tensor x);
Tensor mobilenet_v2(Tensor x);
Tensor mobilenet_v3_large(Tensor x);
Tensor mobilenet_v3_small(Tensor x);
Tensor shufflenet_v2_x1_0(Tensor x);
Tensor mnasnet1_0(Tensor x);
Tensor efficientnet_b0(Tensor x);
Tensor efficientnet_b7(Tensor x);
Tensor regnet_y_400mf(Tensor x);
Tensor regnet_x_1_6gf(Tensor x);
Tensor convnext_tiny(Tensor x);
Tensor vit_b_16(Tensor x);

}  // namespace ridge::nets
