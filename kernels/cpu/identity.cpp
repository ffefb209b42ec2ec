// Reference dropout and stochastic depth: the identity in training too (executor.h), so a step
// is reproducible and every backend agrees element by element. The output is a copy.
// x (E)  y (E)
#include "kernels/cpu/ops.h"

namespace ridge::ref {

void fwd(const Dropout&, const Fwd& f) { copy_through(f); }
void bwd(const Dropout&, const Bwd& b) { add_through(b); }
void fwd(const StochasticDepth&, const Fwd& f) { copy_through(f); }
void bwd(const StochasticDepth&, const Bwd& b) { add_through(b); }

}  // namespace ridge::ref
