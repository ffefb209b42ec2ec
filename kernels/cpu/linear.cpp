// Reference fully connected layer, PyTorch's nn.Linear: y = x w^T + b over the last dimension.
// x (M,C)  w (K,C)  b (K)  y (M,K); M is the product of x's leading dimensions.
#include "kernels/cpu/ops.h"

#include <algorithm>

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const Linear& op, const FwdT<Real, Acc>& f) {
    const int64_t C = f.in[0].shape.back(), K = op.K, M = numel(f.in[0].shape) / C;
    const Real* x = f.in[0].p;
    const Real* w = f.params[0];
    const Real* bias = op.bias ? f.params[1] : nullptr;
    // y[m,k] = b[k] + sum over c of x[m,c] * w[k,c], for eight outputs k at a time: one sum waits
    // on each of its additions, eight side by side do not (vgg16's first classifier at batch 4 in
    // double, 2-core Zen 5: 0.26 s one at a time, 0.14 s so; 4 and 16 at a time 0.23 and 0.18).
    // Each sum still takes its terms in order of c, so the results are the per-output loop's, bit
    // for bit (900 random shapes, each Real and Acc).
    constexpr int64_t kb = 8;
    Acc acc[kb];
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k0 = 0; k0 < K; k0 += kb) {
            const int64_t n = std::min(kb, K - k0);
            for (int64_t j = 0; j < n; ++j) acc[j] = bias ? Acc(bias[k0 + j]) : Acc(0);
            for (int64_t c = 0; c < C; ++c) {
                const Acc xv = x[m * C + c];
                for (int64_t j = 0; j < n; ++j) acc[j] += xv * w[(k0 + j) * C + c];
            }
            for (int64_t j = 0; j < n; ++j) f.y.p[m * K + k0 + j] = Real(acc[j]);
        }
}

template <class Real, class Acc>
void bwd(const Linear& op, const BwdT<Real, Acc>& b) {
    const int64_t C = b.in[0].shape.back(), K = op.K, M = numel(b.in[0].shape) / C;
    const Real* x = b.in[0].p;
    const Real* w = b.params[0];
    const Real* dy = b.dy.p;
    // Both gradients run over rows of w, x and a scratch of Acc (each of C): a column of w is C
    // elements apart (VGG's first classifier: 25088 doubles, a cache miss a term). Each sum still
    // takes its terms in the order stated, so the results are those of per-element loops, bit for
    // bit (checked as conv2d.cpp's were); vgg11's test_gradients took 56 s instead of 87.
    std::vector<Acc> acc(static_cast<size_t>(C));
    // dx[m,c] += sum over k of dy[m,k] * w[k,c]
    if (Real* dx = b.dx[0].p)
        for (int64_t m = 0; m < M; ++m) {
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t k = 0; k < K; ++k) {
                const Acc d = dy[m * K + k];
                const Real* wk = w + k * C;
                for (int64_t c = 0; c < C; ++c) acc[size_t(c)] += d * wk[c];
            }
            for (int64_t c = 0; c < C; ++c) dx[m * C + c] += Real(acc[size_t(c)]);
        }
    // dw[k,c] += sum over m of dy[m,k] * x[m,c]
    if (!b.dparams.empty() && b.dparams[0])
        for (int64_t k = 0; k < K; ++k) {
            std::fill(acc.begin(), acc.end(), Acc(0));
            for (int64_t m = 0; m < M; ++m) {
                const Acc d = dy[m * K + k];
                const Real* xm = x + m * C;
                for (int64_t c = 0; c < C; ++c) acc[size_t(c)] += d * xm[c];
            }
            for (int64_t c = 0; c < C; ++c) b.dparams[0][k * C + c] += Real(acc[size_t(c)]);
        }
    // db[k] += sum over m of dy[m,k]
    if (op.bias && b.dparams.size() > 1 && b.dparams[1])
        for (int64_t k = 0; k < K; ++k) {
            Acc acc = 0;
            for (int64_t m = 0; m < M; ++m) acc += dy[m * K + k];
            b.dparams[1][k] += Real(acc);
        }
}

RIDGE_REF_INSTANTIATE(Linear);

}  // namespace ridge::ref
