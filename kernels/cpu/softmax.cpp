// Reference softmax along one dimension.
// x (O,D,I)  y (O,D,I): each of the O*I rows of D elements sums to 1; D is x's dimension `dim`.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/ops.h"

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const Softmax& op, const FwdT<Real, Acc>& f) {
    const Around a = around(f.in[0].shape, normalize_dim(op.dim, f.in[0].shape.size()));
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t j = 0; j < a.inner; ++j) {
            const Real* x = f.in[0].p + o * a.n * a.inner + j;
            Real* y = f.y.p + o * a.n * a.inner + j;
            // y[i] = exp(x[i] - max x) / sum over i' of exp(x[i'] - max x): the shift keeps exp finite
            Acc m = x[0];
            for (int64_t i = 1; i < a.n; ++i) m = std::max(m, Acc(x[i * a.inner]));
            Acc sum = 0;
            for (int64_t i = 0; i < a.n; ++i) sum += std::exp(x[i * a.inner] - m);
            for (int64_t i = 0; i < a.n; ++i) y[i * a.inner] = Real(std::exp(x[i * a.inner] - m) / sum);
        }
}

template <class Real, class Acc>
void bwd(const Softmax& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Around a = around(b.y.shape, normalize_dim(op.dim, b.y.shape.size()));
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t j = 0; j < a.inner; ++j) {
            const int64_t base = o * a.n * a.inner + j;
            const Real *y = b.y.p + base, *dy = b.dy.p + base;
            // dx[i] += y[i] * (dy[i] - sum over i' of dy[i'] * y[i'])
            Acc dot = 0;
            for (int64_t i = 0; i < a.n; ++i) dot += Acc(dy[i * a.inner]) * y[i * a.inner];
            for (int64_t i = 0; i < a.n; ++i)
                b.dx[0].p[base + i * a.inner] += Real(y[i * a.inner] * (dy[i * a.inner] - dot));
        }
}

RIDGE_REF_INSTANTIATE(Softmax);

}  // namespace ridge::ref
