// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor efficientnet_b0(Tensor) { throw BuildError("efficientnet_b0: not yet defined"); }
Tensor efficientnet_b7(Tensor) { throw BuildError("efficientnet_b7: not yet defined"); }
}
