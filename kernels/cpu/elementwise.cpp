// Reference elementwise arithmetic.
// Add, Mul:    a, b (NumPy-broadcastable)  y (broadcast shape): backward sums dy over the
//              dimensions an input was broadcast along.
// Scale:       x (E)  y = s*x (E)
// LayerScale:  x (O,C,I)  gamma (C)  y[o,c,i] = gamma[c] * x[o,c,i]; C is x's dimension `dim`
#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

// For each element of y in row-major order, the offset of the element of `in` it reads: shapes
// are aligned at the right, and along a dimension where `in` has size 1 (or lacks it) every y
// index reads the same element.
std::vector<int64_t> source_offsets(const Shape& in, const Shape& y) {
    const size_t r = y.size(), lead = r - in.size();
    std::vector<int64_t> stride(r, 0);  // in's stride along y's dimension i, 0 where broadcast
    int64_t s = 1;
    for (size_t i = r; i-- > lead;) {
        if (in[i - lead] != 1) stride[i] = s;
        s *= in[i - lead];
    }
    std::vector<int64_t> offsets(size_t(numel(y)));
    std::vector<int64_t> pos(r, 0);  // y's multi-index of element e
    int64_t off = 0;
    for (int64_t& o : offsets) {
        o = off;
        for (size_t i = r; i-- > 0;) {  // step to the next element, carrying like an odometer
            off += stride[i];
            if (++pos[i] < y[i]) break;
            off -= stride[i] * y[i];
            pos[i] = 0;
        }
    }
    return offsets;
}

}  // namespace

template <class Real, class Acc>
void fwd(const Add&, const FwdT<Real, Acc>& f) {
    const auto ia = source_offsets(f.in[0].shape, f.y.shape), ib = source_offsets(f.in[1].shape, f.y.shape);
    // y[e] = a[ia[e]] + b[ib[e]]
    for (size_t e = 0; e < ia.size(); ++e) f.y.p[e] = f.in[0].p[ia[e]] + f.in[1].p[ib[e]];
}

template <class Real, class Acc>
void bwd(const Add&, const BwdT<Real, Acc>& b) {
    // da[ia[e]] += dy[e]: the identity, or a sum over the broadcast dimensions
    for (int i = 0; i < 2; ++i) {
        if (!b.dx[i].p) continue;
        const auto src = source_offsets(b.in[i].shape, b.dy.shape);
        std::vector<Acc> d(size_t(numel(b.in[i].shape)), 0.0);
        for (size_t e = 0; e < src.size(); ++e) d[src[e]] += b.dy.p[e];
        add_into(b.dx[i].p, d);
    }
}

template <class Real, class Acc>
void fwd(const Mul&, const FwdT<Real, Acc>& f) {
    const auto ia = source_offsets(f.in[0].shape, f.y.shape), ib = source_offsets(f.in[1].shape, f.y.shape);
    // y[e] = a[ia[e]] * b[ib[e]]
    for (size_t e = 0; e < ia.size(); ++e) f.y.p[e] = f.in[0].p[ia[e]] * f.in[1].p[ib[e]];
}

template <class Real, class Acc>
void bwd(const Mul&, const BwdT<Real, Acc>& b) {
    const auto src0 = source_offsets(b.in[0].shape, b.dy.shape), src1 = source_offsets(b.in[1].shape, b.dy.shape);
    // da[ia[e]] += dy[e] * b[ib[e]] and db[ib[e]] += dy[e] * a[ia[e]], summed where broadcast
    for (int i = 0; i < 2; ++i) {
        if (!b.dx[i].p) continue;
        const auto& self = i == 0 ? src0 : src1;
        const auto& other = i == 0 ? src1 : src0;
        const Real* o = b.in[1 - i].p;
        std::vector<Acc> d(size_t(numel(b.in[i].shape)), 0.0);
        for (size_t e = 0; e < self.size(); ++e) d[self[e]] += Acc(b.dy.p[e]) * o[other[e]];
        add_into(b.dx[i].p, d);
    }
}

template <class Real, class Acc>
void fwd(const Scale& op, const FwdT<Real, Acc>& f) {
    // y[e] = s * x[e]
    for (int64_t e = 0; e < numel(f.y.shape); ++e) f.y.p[e] = Real(op.s * f.in[0].p[e]);
}

template <class Real, class Acc>
void bwd(const Scale& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    // dx[e] += s * dy[e]
    for (int64_t e = 0; e < numel(b.dy.shape); ++e) b.dx[0].p[e] += Real(op.s * b.dy.p[e]);
}

template <class Real, class Acc>
void fwd(const LayerScale& op, const FwdT<Real, Acc>& f) {
    const Around a = around(f.in[0].shape, normalize_dim(op.dim, f.in[0].shape.size()));
    const Real* gamma = f.params[0];
    // y[o,c,i] = gamma[c] * x[o,c,i]
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t c = 0; c < a.n; ++c)
            for (int64_t i = 0; i < a.inner; ++i) {
                int64_t e = (o * a.n + c) * a.inner + i;
                f.y.p[e] = gamma[c] * f.in[0].p[e];
            }
}

template <class Real, class Acc>
void bwd(const LayerScale& op, const BwdT<Real, Acc>& b) {
    const Around a = around(b.in[0].shape, normalize_dim(op.dim, b.in[0].shape.size()));
    const Real *x = b.in[0].p, *dy = b.dy.p, *gamma = b.params[0];
    Real* dgamma = b.dparams.empty() ? nullptr : b.dparams[0];
    std::vector<Acc> dg(size_t(a.n), 0.0);
    // dx[o,c,i] += gamma[c] * dy[o,c,i];  dgamma[c] += sum over o,i of dy[o,c,i] * x[o,c,i]
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t c = 0; c < a.n; ++c)
            for (int64_t i = 0; i < a.inner; ++i) {
                int64_t e = (o * a.n + c) * a.inner + i;
                if (b.dx[0].p) b.dx[0].p[e] += gamma[c] * dy[e];
                dg[c] += Acc(dy[e]) * x[e];
            }
    if (dgamma) add_into(dgamma, dg);
}

RIDGE_REF_INSTANTIATE(Add);
RIDGE_REF_INSTANTIATE(Mul);
RIDGE_REF_INSTANTIATE(Scale);
RIDGE_REF_INSTANTIATE(LayerScale);

}  // namespace ridge::ref
