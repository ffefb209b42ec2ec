// Reference dropout and stochastic depth: the identity in training too (executor.h), so a step
// is reproducible and every backend agrees element by element. The output is a copy.
// x (E)  y (E)
#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {
void copy(const Fwd& f) {
    for (int64_t e = 0; e < numel(f.y.shape); ++e) f.y.p[e] = f.in[0].p[e];
}
void add_back(const Bwd& b) {
    if (!b.dx[0].p) return;
    for (int64_t e = 0; e < numel(b.dy.shape); ++e) b.dx[0].p[e] += b.dy.p[e];
}
}  // namespace

void fwd(const Dropout&, const Fwd& f) { copy(f); }
void bwd(const Dropout&, const Bwd& b) { add_back(b); }
void fwd(const StochasticDepth&, const Fwd& f) { copy(f); }
void bwd(const StochasticDepth&, const Bwd& b) { add_back(b); }

}  // namespace ridge::ref
