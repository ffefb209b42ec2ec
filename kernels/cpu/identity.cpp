// Reference dropout and stochastic depth: the identity in training too (executor.h), so a step
// is reproducible and every backend agrees element by element. The output is a copy.
// x (E)  y (E)
#include "kernels/cpu/ops.h"

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const Dropout&, const FwdT<Real, Acc>& f) { copy_through(f); }
template <class Real, class Acc>
void bwd(const Dropout&, const BwdT<Real, Acc>& b) { add_through(b); }
template <class Real, class Acc>
void fwd(const StochasticDepth&, const FwdT<Real, Acc>& f) { copy_through(f); }
template <class Real, class Acc>
void bwd(const StochasticDepth&, const BwdT<Real, Acc>& b) { add_through(b); }

RIDGE_REF_INSTANTIATE(Dropout);
RIDGE_REF_INSTANTIATE(StochasticDepth);

}  // namespace ridge::ref
