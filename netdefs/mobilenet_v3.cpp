// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor mobilenet_v3_large(Tensor) { throw BuildError("mobilenet_v3_large: not yet defined"); }
Tensor mobilenet_v3_small(Tensor) { throw BuildError("mobilenet_v3_small: not yet defined"); }
}
