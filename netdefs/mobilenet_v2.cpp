// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor mobilenet_v2(Tensor) { throw BuildError("mobilenet_v2: not yet defined"); }
}
