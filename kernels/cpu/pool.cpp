// Reference pooling with PyTorch's windows.
// Pool2d:             x (N,C,H,W)  y (N,C,P,Q), window (R,S), stride, padding, ceil_mode
// AdaptiveAvgPool2d:  x (N,C,H,W)  y (N,C,P,Q), window i covers [floor(i*H/P), ceil((i+1)*H/P))
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

// The input rows [lo, hi) one output row's window covers, and the divisor of an average pool.
struct Span {
    int64_t lo, hi;  // clipped to the input
    int64_t padded;  // extent inside the padded input: what count_include_pad divides by
};

// Output index p of a window of k taps: it starts at p*stride - pad_lo, in the left padding for
// the first outputs; with ceil_mode the last one may also run past the right padding, and what
// lies beyond that is in no count at all.
Span window(int64_t p, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t in) {
    int64_t lo = p * stride - pad_lo, hi = std::min(lo + k, in + pad_hi);
    return {std::max<int64_t>(lo, 0), std::min(hi, in), hi - lo};
}

Span adaptive_window(int64_t i, int64_t in, int64_t out) {
    int64_t lo = (i * in) / out, hi = ((i + 1) * in + out - 1) / out;
    return {lo, hi, hi - lo};
}

struct Dims {
    int64_t N, C, H, W, P, Q;
};
Dims dims(const Shape& x, const Shape& y) { return {x[0], x[1], x[2], x[3], y[2], y[3]}; }

// Flat index of the first maximum of x's window (rows rh, columns rw) in one (H,W) plane,
// scanning rows then columns as PyTorch does; the gradient is routed to it alone.
template <class Real>
int64_t argmax(const Real* x, int64_t W, Span rh, Span rw) {
    int64_t best = rh.lo * W + rw.lo;
    Real m = -std::numeric_limits<Real>::infinity();
    for (int64_t h = rh.lo; h < rh.hi; ++h)
        for (int64_t w = rw.lo; w < rw.hi; ++w) {
            const Real v = x[h * W + w];
            if (v > m || std::isnan(v)) {  // a NaN wins, as in PyTorch, so it propagates
                m = v;
                best = h * W + w;
            }
        }
    return best;
}

}  // namespace

template <class Real, class Acc>
void fwd(const Pool2d& op, const FwdT<Real, Acc>& f) {
    const Dims d = dims(f.in[0].shape, f.y.shape);
    for (int64_t nc = 0; nc < d.N * d.C; ++nc) {
        const Real* x = f.in[0].p + nc * d.H * d.W;
        Real* y = f.y.p + nc * d.P * d.Q;
        for (int64_t p = 0; p < d.P; ++p) {
            Span rh = window(p, op.kernel.h, op.stride.h, op.pad.top, op.pad.bottom, d.H);
            for (int64_t q = 0; q < d.Q; ++q) {
                Span rw = window(q, op.kernel.w, op.stride.w, op.pad.left, op.pad.right, d.W);
                if (op.kind == Pool2d::Kind::max) {
                    // y[p,q] = max of the window's input elements (padding never wins)
                    y[p * d.Q + q] = x[argmax(x, d.W, rh, rw)];
                } else {
                    // y[p,q] = sum of the window's input elements / divisor; padding adds zeros
                    Acc sum = 0;
                    for (int64_t h = rh.lo; h < rh.hi; ++h)
                        for (int64_t w = rw.lo; w < rw.hi; ++w) sum += x[h * d.W + w];
                    int64_t div = op.count_include_pad ? rh.padded * rw.padded : (rh.hi - rh.lo) * (rw.hi - rw.lo);
                    y[p * d.Q + q] = Real(sum / Acc(div));
                }
            }
        }
    }
}

template <class Real, class Acc>
void bwd(const Pool2d& op, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Dims d = dims(b.in[0].shape, b.dy.shape);
    for (int64_t nc = 0; nc < d.N * d.C; ++nc) {
        const Real* x = b.in[0].p + nc * d.H * d.W;
        const Real* dy = b.dy.p + nc * d.P * d.Q;
        Real* dx = b.dx[0].p + nc * d.H * d.W;
        for (int64_t p = 0; p < d.P; ++p) {
            Span rh = window(p, op.kernel.h, op.stride.h, op.pad.top, op.pad.bottom, d.H);
            for (int64_t q = 0; q < d.Q; ++q) {
                Span rw = window(q, op.kernel.w, op.stride.w, op.pad.left, op.pad.right, d.W);
                if (op.kind == Pool2d::Kind::max) {
                    // dx at the window's first maximum += dy[p,q]
                    dx[argmax(x, d.W, rh, rw)] += dy[p * d.Q + q];
                } else {
                    // every input element of the window += dy[p,q] / divisor
                    int64_t div = op.count_include_pad ? rh.padded * rw.padded : (rh.hi - rh.lo) * (rw.hi - rw.lo);
                    Real g = Real(Acc(dy[p * d.Q + q]) / Acc(div));
                    for (int64_t h = rh.lo; h < rh.hi; ++h)
                        for (int64_t w = rw.lo; w < rw.hi; ++w) dx[h * d.W + w] += g;
                }
            }
        }
    }
}

template <class Real, class Acc>
void fwd(const AdaptiveAvgPool2d&, const FwdT<Real, Acc>& f) {
    const Dims d = dims(f.in[0].shape, f.y.shape);
    // y[p,q] = mean of x over the window rows (p) x columns (q)
    for (int64_t nc = 0; nc < d.N * d.C; ++nc) {
        const Real* x = f.in[0].p + nc * d.H * d.W;
        for (int64_t p = 0; p < d.P; ++p) {
            Span rh = adaptive_window(p, d.H, d.P);
            for (int64_t q = 0; q < d.Q; ++q) {
                Span rw = adaptive_window(q, d.W, d.Q);
                Acc sum = 0;
                for (int64_t h = rh.lo; h < rh.hi; ++h)
                    for (int64_t w = rw.lo; w < rw.hi; ++w) sum += x[h * d.W + w];
                f.y.p[(nc * d.P + p) * d.Q + q] = Real(sum / Acc(rh.padded * rw.padded));
            }
        }
    }
}

template <class Real, class Acc>
void bwd(const AdaptiveAvgPool2d&, const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    const Dims d = dims(b.in[0].shape, b.dy.shape);
    // every element of window (p,q) += dy[p,q] / its size; windows may overlap
    for (int64_t nc = 0; nc < d.N * d.C; ++nc) {
        Real* dx = b.dx[0].p + nc * d.H * d.W;
        for (int64_t p = 0; p < d.P; ++p) {
            Span rh = adaptive_window(p, d.H, d.P);
            for (int64_t q = 0; q < d.Q; ++q) {
                Span rw = adaptive_window(q, d.W, d.Q);
                Real g = Real(Acc(b.dy.p[(nc * d.P + p) * d.Q + q]) / Acc(rh.padded * rw.padded));
                for (int64_t h = rh.lo; h < rh.hi; ++h)
                    for (int64_t w = rw.lo; w < rw.hi; ++w) dx[h * d.W + w] += g;
            }
        }
    }
}

RIDGE_REF_INSTANTIATE(Pool2d);
RIDGE_REF_INSTANTIATE(AdaptiveAvgPool2d);

}  // namespace ridge::ref
