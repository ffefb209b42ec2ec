// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor convnext_tiny(Tensor) { throw BuildError("convnext_tiny: not yet defined"); }
}
