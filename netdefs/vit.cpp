// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor vit_b_16(Tensor) { throw BuildError("vit_b_16: not yet defined"); }
}
