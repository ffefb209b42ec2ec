// Reference data movement. Every op here is a copy, views included: the reference owns one
// buffer per graph tensor. Backward routes each element of dy back to the element it came from.
// Concat:          x_i (O,D_i,I)  y (O,sum D_i,I) along `dim`
// ChannelShuffle:  x (N,C,H,W) seen as (N,G,C/G,H,W), its two group axes swapped: y (N,C,H,W)
// Flatten/Reshape: the same elements in the same order under another shape
// Permute:         y's dimension k is x's dimension order[k]
// Slice:           x (O,D,I)  y (O,length,I), rows [start, start+length) of `dim`
// Select:          x (O,D,I)  y (O,I), row `index` of `dim`, which is removed
#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

// Copies (or, backward, adds) a block of rows [start, start+len) of dimension n between a tensor
// seen as (O,n,I) and a packed (O,len,I) one.
template <class Real>
void copy_rows(const Real* from, Real* to, Around big, int64_t start, int64_t len, bool to_big, bool add) {
    for (int64_t o = 0; o < big.outer; ++o)
        for (int64_t k = 0; k < len * big.inner; ++k) {
            int64_t bi = (o * big.n + start) * big.inner + k, si = o * len * big.inner + k;
            Real v = to_big ? from[si] : from[bi];
            Real& dst = to_big ? to[bi] : to[si];
            dst = add ? dst + v : v;
        }
}

// Offset in x of each element of y for a permutation, in y's row-major order.
std::vector<int64_t> permuted_offsets(const Shape& x, const std::vector<int>& order) {
    const size_t r = x.size();
    std::vector<int64_t> xstride(r, 1);
    for (size_t i = r - 1; i-- > 0;) xstride[i] = xstride[i + 1] * x[i + 1];
    Shape y(r);
    std::vector<int64_t> step(r);  // x's stride along y's dimension k
    for (size_t k = 0; k < r; ++k) {
        int d = normalize_dim(order[k], r);
        y[k] = x[d];
        step[k] = xstride[d];
    }
    std::vector<int64_t> offsets(size_t(numel(x)));
    std::vector<int64_t> pos(r, 0);
    int64_t off = 0;
    for (int64_t& o : offsets) {
        o = off;
        for (size_t k = r; k-- > 0;) {  // next element of y, carrying like an odometer
            off += step[k];
            if (++pos[k] < y[k]) break;
            off -= step[k] * y[k];
            pos[k] = 0;
        }
    }
    return offsets;
}

// x's channel that y's channel j holds after a shuffle of G groups of C/G channels.
int64_t shuffled_from(int64_t j, int64_t C, int64_t G) {
    const int64_t per = C / G;  // y channel j = cg*G + g comes from x channel g*per + cg
    return (j % G) * per + j / G;
}


}  // namespace

template <class Real, class Acc>
void fwd(const Concat& op, const FwdT<Real, Acc>& f) {
    const int d = normalize_dim(op.dim, f.y.shape.size());
    const Around ya = around(f.y.shape, d);
    int64_t start = 0;
    // y[o, start_i + k, j] = x_i[o, k, j]
    for (const CViewT<Real>& x : f.in) {
        copy_rows(x.p, f.y.p, ya, start, x.shape[d], true, false);
        start += x.shape[d];
    }
}

template <class Real, class Acc>
void bwd(const Concat& op, const BwdT<Real, Acc>& b) {
    const int d = normalize_dim(op.dim, b.dy.shape.size());
    const Around ya = around(b.dy.shape, d);
    int64_t start = 0;
    // dx_i[o, k, j] += dy[o, start_i + k, j]
    for (size_t i = 0; i < b.in.size(); ++i) {
        if (b.dx[i].p) copy_rows(b.dy.p, b.dx[i].p, ya, start, b.in[i].shape[d], false, true);
        start += b.in[i].shape[d];
    }
}

template <class Real, class Acc>
void fwd(const ChannelShuffle& op, const FwdT<Real, Acc>& f) {
    const Shape& s = f.in[0].shape;
    const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
    // y[n, j, :] = x[n, shuffled_from(j), :]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < C; ++j)
            for (int64_t e = 0; e < HW; ++e)
                f.y.p[(n * C + j) * HW + e] = f.in[0].p[(n * C + shuffled_from(j, C, op.G)) * HW + e];
}

template <class Real, class Acc>
void bwd(const ChannelShuffle& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Shape& s = b.in[0].shape;
    const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
    // dx[n, shuffled_from(j), :] += dy[n, j, :]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < C; ++j)
            for (int64_t e = 0; e < HW; ++e)
                b.dx[0].p[(n * C + shuffled_from(j, C, op.G)) * HW + e] += b.dy.p[(n * C + j) * HW + e];
}

template <class Real, class Acc>
void fwd(const Flatten&, const FwdT<Real, Acc>& f) { copy_through(f); }
template <class Real, class Acc>
void bwd(const Flatten&, const BwdT<Real, Acc>& b) { add_through(b); }
template <class Real, class Acc>
void fwd(const Reshape&, const FwdT<Real, Acc>& f) { copy_through(f); }
template <class Real, class Acc>
void bwd(const Reshape&, const BwdT<Real, Acc>& b) { add_through(b); }

template <class Real, class Acc>
void fwd(const Permute& op, const FwdT<Real, Acc>& f) {
    const auto src = permuted_offsets(f.in[0].shape, op.order);
    // y[e] = x[src[e]]
    for (size_t e = 0; e < src.size(); ++e) f.y.p[e] = f.in[0].p[src[e]];
}

template <class Real, class Acc>
void bwd(const Permute& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const auto src = permuted_offsets(b.in[0].shape, op.order);
    // dx[src[e]] += dy[e]
    for (size_t e = 0; e < src.size(); ++e) b.dx[0].p[src[e]] += b.dy.p[e];
}

template <class Real, class Acc>
void fwd(const Slice& op, const FwdT<Real, Acc>& f) {
    const Around xa = around(f.in[0].shape, normalize_dim(op.dim, f.in[0].shape.size()));
    // y[o, k, j] = x[o, start + k, j]
    copy_rows(f.in[0].p, f.y.p, xa, op.start, op.length, false, false);
}

template <class Real, class Acc>
void bwd(const Slice& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Around xa = around(b.in[0].shape, normalize_dim(op.dim, b.in[0].shape.size()));
    // dx[o, start + k, j] += dy[o, k, j]
    copy_rows(b.dy.p, b.dx[0].p, xa, op.start, op.length, true, true);
}

template <class Real, class Acc>
void fwd(const Select& op, const FwdT<Real, Acc>& f) {
    const Around xa = around(f.in[0].shape, normalize_dim(op.dim, f.in[0].shape.size()));
    // y[o, j] = x[o, index, j]
    copy_rows(f.in[0].p, f.y.p, xa, op.index, 1, false, false);
}

template <class Real, class Acc>
void bwd(const Select& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Around xa = around(b.in[0].shape, normalize_dim(op.dim, b.in[0].shape.size()));
    // dx[o, index, j] += dy[o, j]
    copy_rows(b.dy.p, b.dx[0].p, xa, op.index, 1, true, true);
}

RIDGE_REF_INSTANTIATE(Concat);
RIDGE_REF_INSTANTIATE(ChannelShuffle);
RIDGE_REF_INSTANTIATE(Flatten);
RIDGE_REF_INSTANTIATE(Reshape);
RIDGE_REF_INSTANTIATE(Permute);
RIDGE_REF_INSTANTIATE(Slice);
RIDGE_REF_INSTANTIATE(Select);

}  // namespace ridge::ref
