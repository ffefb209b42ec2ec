#pragma once
// Every zoo network: takes the image batch x (N,3,H,W), returns the logits (N,classes)
// (1000 in the zoo: ImageNet; `ridge train` sets the dataset's class count).
// Each is the architecture of torchvision's function of the same name (no auxiliary heads).
#include "engine/dsl.h"

namespace ridge::nets {

Tensor alexnet(Tensor x, int64_t classes);
Tensor vgg11(Tensor x, int64_t classes);
Tensor vgg13(Tensor x, int64_t classes);
Tensor vgg16(Tensor x, int64_t classes);
Tensor vgg19(Tensor x, int64_t classes);
Tensor vgg16_bn(Tensor x, int64_t classes);
Tensor resnet18(Tensor x, int64_t classes);
Tensor resnet34(Tensor x, int64_t classes);
Tensor resnet50(Tensor x, int64_t classes);
Tensor resnet101(Tensor x, int64_t classes);
Tensor resnet152(Tensor x, int64_t classes);
Tensor wide_resnet50_2(Tensor x, int64_t classes);
Tensor wide_resnet101_2(Tensor x, int64_t classes);
Tensor resnext50_32x4d(Tensor x, int64_t classes);
Tensor squeezenet1_0(Tensor x, int64_t classes);
Tensor squeezenet1_1(Tensor x, int64_t classes);
Tensor googlenet(Tensor x, int64_t classes);
Tensor inception_v3(Tensor x, int64_t classes);
Tensor densenet121(Tensor x, int64_t classes);
Tensor densenet169(Tensor x, int64_t classes);
Tensor mobilenet_v2(Tensor x, int64_t classes);
Tensor mobilenet_v3_large(Tensor x, int64_t classes);
Tensor mobilenet_v3_small(Tensor x, int64_t classes);
Tensor shufflenet_v2_x1_0(Tensor x, int64_t classes);
Tensor mnasnet1_0(Tensor x, int64_t classes);
Tensor efficientnet_b0(Tensor x, int64_t classes);
Tensor efficientnet_b7(Tensor x, int64_t classes);
Tensor regnet_y_400mf(Tensor x, int64_t classes);
Tensor regnet_x_1_6gf(Tensor x, int64_t classes);
Tensor convnext_tiny(Tensor x, int64_t classes);
Tensor vit_b_16(Tensor x, int64_t classes);

}  // namespace ridge::nets
