// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor vgg11(Tensor) { throw BuildError("vgg11: not yet defined"); }
Tensor vgg13(Tensor) { throw BuildError("vgg13: not yet defined"); }
Tensor vgg16(Tensor) { throw BuildError("vgg16: not yet defined"); }
Tensor vgg19(Tensor) { throw BuildError("vgg19: not yet defined"); }
Tensor vgg16_bn(Tensor) { throw BuildError("vgg16_bn: not yet defined"); }
}
