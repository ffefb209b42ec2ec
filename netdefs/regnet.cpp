// PLACEHOLDER: replaced by the real netdef
#include "netdefs/nets.h"
namespace ridge::nets {
Tensor regnet_y_400mf(Tensor) { throw BuildError("regnet_y_400mf: not yet defined"); }
Tensor regnet_x_1_6gf(Tensor) { throw BuildError("regnet_x_1_6gf: not yet defined"); }
}
