// Reference fully connected layer, PyTorch's nn.Linear: y = x w^T + b over the last dimension.
// x (M,C)  w (K,C)  b (K)  y (M,K); M is the product of x's leading dimensions.
#include "kernels/cpu/ops.h"

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const Linear& op, const FwdT<Real, Acc>& f) {
    const int64_t C = f.in[0].shape.back(), K = op.K, M = numel(f.in[0].shape) / C;
    const Real* x = f.in[0].p;
    const Real* w = f.params[0];
    const Real* bias = op.bias ? f.params[1] : nullptr;
    // y[m,k] = b[k] + sum over c of x[m,c] * w[k,c]
    for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 0; k < K; ++k) {
            Acc acc = bias ? bias[k] : 0.0;
            for (int64_t c = 0; c < C; ++c) acc += Acc(x[m * C + c]) * w[k * C + c];
            f.y.p[m * K + k] = Real(acc);
        }
}

template <class Real, class Acc>
void bwd(const Linear& op, const BwdT<Real, Acc>& b) {
    const int64_t C = b.in[0].shape.back(), K = op.K, M = numel(b.in[0].shape) / C;
    const Real* x = b.in[0].p;
    const Real* w = b.params[0];
    const Real* dy = b.dy.p;
    // dx[m,c] += sum over k of dy[m,k] * w[k,c]
    if (Real* dx = b.dx[0].p)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t c = 0; c < C; ++c) {
                Acc acc = 0;
                for (int64_t k = 0; k < K; ++k) acc += Acc(dy[m * K + k]) * w[k * C + c];
                dx[m * C + c] += Real(acc);
            }
    // dw[k,c] += sum over m of dy[m,k] * x[m,c]
    if (!b.dparams.empty() && b.dparams[0])
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < C; ++c) {
                Acc acc = 0;
                for (int64_t m = 0; m < M; ++m) acc += Acc(dy[m * K + k]) * x[m * C + c];
                b.dparams[0][k * C + c] += Real(acc);
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
