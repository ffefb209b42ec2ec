// Reference 2-D convolution with PyTorch's nn.Conv2d semantics: a cross-correlation over zero
// padding (top, bottom, left, right may differ), with stride, dilation and groups.
// x (N,C,H,W)  w (K,C/G,R,S)  b (K)  y (N,K,P,Q)
#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

struct Geometry {
    int64_t N, C, H, W, K, G, Cg, Kg, R, S, P, Q;
    int64_t sh, sw, pt, pl, dh, dw;
    // The input row (column) that output row p (column q) reads through kernel tap r (s); outside
    // [0,H) ([0,W)) the tap reads the zero padding.
    int64_t row(int64_t p, int64_t r) const { return p * sh - pt + r * dh; }
    int64_t col(int64_t q, int64_t s) const { return q * sw - pl + s * dw; }
};

Geometry geometry(const Conv2d& op, const Shape& x, const Shape& y) {
    Geometry g{};
    g.N = x[0], g.C = x[1], g.H = x[2], g.W = x[3];
    g.K = op.K, g.G = op.G, g.Cg = g.C / g.G, g.Kg = g.K / g.G;
    g.R = op.kernel.h, g.S = op.kernel.w, g.P = y[2], g.Q = y[3];
    g.sh = op.stride.h, g.sw = op.stride.w, g.pt = op.pad.top, g.pl = op.pad.left;
    g.dh = op.dilation.h, g.dw = op.dilation.w;
    return g;
}

}  // namespace

template <class Real, class Acc>
void fwd(const Conv2d& op, const FwdT<Real, Acc>& f) {
    const Geometry g = geometry(op, f.in[0].shape, f.y.shape);
    const Real* x = f.in[0].p;
    const Real* w = f.params[0];
    const Real* bias = op.bias ? f.params[1] : nullptr;
    Real* y = f.y.p;
    // y[n,k,p,q] = b[k] + sum over the group's channels c and taps (r,s) of x[n,c,h,w] * w[k,c,r,s]
    for (int64_t n = 0; n < g.N; ++n)
        for (int64_t k = 0; k < g.K; ++k) {
            const int64_t c0 = (k / g.Kg) * g.Cg;  // first input channel of k's group
            for (int64_t p = 0; p < g.P; ++p)
                for (int64_t q = 0; q < g.Q; ++q) {
                    Acc acc = bias ? bias[k] : 0.0;
                    for (int64_t c = 0; c < g.Cg; ++c) {
                        const Real* xc = x + (n * g.C + c0 + c) * g.H * g.W;
                        const Real* wk = w + (k * g.Cg + c) * g.R * g.S;
                        for (int64_t r = 0; r < g.R; ++r) {
                            int64_t h = g.row(p, r);
                            if (h < 0 || h >= g.H) continue;
                            for (int64_t s = 0; s < g.S; ++s) {
                                int64_t wi = g.col(q, s);
                                if (wi < 0 || wi >= g.W) continue;
                                acc += Acc(xc[h * g.W + wi]) * wk[r * g.S + s];
                            }
                        }
                    }
                    y[((n * g.K + k) * g.P + p) * g.Q + q] = Real(acc);
                }
        }
}

template <class Real, class Acc>
void bwd(const Conv2d& op, const BwdT<Real, Acc>& b) {
    const Geometry g = geometry(op, b.in[0].shape, b.dy.shape);
    const Real* x = b.in[0].p;
    const Real* w = b.params[0];
    const Real* dy = b.dy.p;
    auto dy_at = [&](int64_t n, int64_t k, int64_t p, int64_t q) { return dy[((n * g.K + k) * g.P + p) * g.Q + q]; };

    // db[k] += sum over n,p,q of dy[n,k,p,q]
    if (op.bias && b.dparams.size() > 1 && b.dparams[1])
        for (int64_t k = 0; k < g.K; ++k) {
            Acc acc = 0;
            for (int64_t n = 0; n < g.N; ++n)
                for (int64_t p = 0; p < g.P; ++p)
                    for (int64_t q = 0; q < g.Q; ++q) acc += dy_at(n, k, p, q);
            b.dparams[1][k] += Real(acc);
        }

    // dw[k,c,r,s] += sum over n,p,q of dy[n,k,p,q] * x[n, group's c, row(p,r), col(q,s)]
    if (!b.dparams.empty() && b.dparams[0])
        for (int64_t k = 0; k < g.K; ++k) {
            const int64_t c0 = (k / g.Kg) * g.Cg;
            for (int64_t c = 0; c < g.Cg; ++c)
                for (int64_t r = 0; r < g.R; ++r)
                    for (int64_t s = 0; s < g.S; ++s) {
                        Acc acc = 0;
                        for (int64_t n = 0; n < g.N; ++n) {
                            const Real* xc = x + (n * g.C + c0 + c) * g.H * g.W;
                            for (int64_t p = 0; p < g.P; ++p) {
                                int64_t h = g.row(p, r);
                                if (h < 0 || h >= g.H) continue;
                                for (int64_t q = 0; q < g.Q; ++q) {
                                    int64_t wi = g.col(q, s);
                                    if (wi < 0 || wi >= g.W) continue;
                                    acc += Acc(dy_at(n, k, p, q)) * xc[h * g.W + wi];
                                }
                            }
                        }
                        b.dparams[0][((k * g.Cg + c) * g.R + r) * g.S + s] += Real(acc);
                    }
        }

    // dx[n,c,h,w] += sum over the taps that read it of dy[n,k,p,q] * w[k,c,r,s]: the forward's
    // loops with the product scattered back; a scratch of Acc collects the K/G*R*S terms.
    if (b.dx[0].p) {
        std::vector<Acc> dx(size_t(g.N * g.C * g.H * g.W), 0.0);
        for (int64_t n = 0; n < g.N; ++n)
            for (int64_t k = 0; k < g.K; ++k) {
                const int64_t c0 = (k / g.Kg) * g.Cg;
                for (int64_t p = 0; p < g.P; ++p)
                    for (int64_t q = 0; q < g.Q; ++q) {
                        const Acc d = dy_at(n, k, p, q);
                        for (int64_t c = 0; c < g.Cg; ++c) {
                            Acc* dxc = dx.data() + (n * g.C + c0 + c) * g.H * g.W;
                            const Real* wk = w + (k * g.Cg + c) * g.R * g.S;
                            for (int64_t r = 0; r < g.R; ++r) {
                                int64_t h = g.row(p, r);
                                if (h < 0 || h >= g.H) continue;
                                for (int64_t s = 0; s < g.S; ++s) {
                                    int64_t wi = g.col(q, s);
                                    if (wi < 0 || wi >= g.W) continue;
                                    dxc[h * g.W + wi] += d * wk[r * g.S + s];
                                }
                            }
                        }
                    }
            }
        add_into(b.dx[0].p, dx);
    }
}

RIDGE_REF_INSTANTIATE(Conv2d);

}  // namespace ridge::ref
