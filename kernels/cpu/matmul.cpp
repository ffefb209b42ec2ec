// Reference batched matrix product of two activations, torch.matmul on equal batch dimensions.
// a (B,M,L)  b (B,L,J), or b (B,J,L) with transpose_b  y (B,M,J); B is the product of the leading
// dimensions.
#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

struct Dims {
    int64_t B, M, L, J;
};

Dims dims(const Matmul& op, const Shape& a, const Shape& b) {
    const size_t r = a.size();
    const int64_t M = a[r - 2], L = a[r - 1], J = op.transpose_b ? b[r - 2] : b[r - 1];
    return {numel(a) / (M * L), M, L, J};
}

// Offset of b's element (l, j) within one batch: b is (L,J), or (J,L) when transposed.
int64_t b_at(bool transposed, const Dims& d, int64_t l, int64_t j) { return transposed ? j * d.L + l : l * d.J + j; }

}  // namespace

template <class Real, class Acc>
void fwd(const Matmul& op, const FwdT<Real, Acc>& f) {
    const Dims d = dims(op, f.in[0].shape, f.in[1].shape);
    // y[i,m,j] = sum over l of a[i,m,l] * b[i,l,j]
    for (int64_t i = 0; i < d.B; ++i) {
        const Real* a = f.in[0].p + i * d.M * d.L;
        const Real* b = f.in[1].p + i * d.L * d.J;
        Real* y = f.y.p + i * d.M * d.J;
        for (int64_t m = 0; m < d.M; ++m)
            for (int64_t j = 0; j < d.J; ++j) {
                Acc acc = 0;
                for (int64_t l = 0; l < d.L; ++l) acc += Acc(a[m * d.L + l]) * b[b_at(op.transpose_b, d, l, j)];
                y[m * d.J + j] = Real(acc);
            }
    }
}

template <class Real, class Acc>
void bwd(const Matmul& op, const BwdT<Real, Acc>& bw) {
    const Dims d = dims(op, bw.in[0].shape, bw.in[1].shape);
    for (int64_t i = 0; i < d.B; ++i) {
        const Real* a = bw.in[0].p + i * d.M * d.L;
        const Real* b = bw.in[1].p + i * d.L * d.J;
        const Real* dy = bw.dy.p + i * d.M * d.J;
        // da[i,m,l] += sum over j of dy[i,m,j] * b[i,l,j]
        if (bw.dx[0].p) {
            Real* da = bw.dx[0].p + i * d.M * d.L;
            for (int64_t m = 0; m < d.M; ++m)
                for (int64_t l = 0; l < d.L; ++l) {
                    Acc acc = 0;
                    for (int64_t j = 0; j < d.J; ++j) acc += Acc(dy[m * d.J + j]) * b[b_at(op.transpose_b, d, l, j)];
                    da[m * d.L + l] += Real(acc);
                }
        }
        // db[i,l,j] += sum over m of a[i,m,l] * dy[i,m,j]  (stored at b's (J,L) place when transposed)
        if (bw.dx[1].p) {
            Real* db = bw.dx[1].p + i * d.L * d.J;
            for (int64_t l = 0; l < d.L; ++l)
                for (int64_t j = 0; j < d.J; ++j) {
                    Acc acc = 0;
                    for (int64_t m = 0; m < d.M; ++m) acc += Acc(a[m * d.L + l]) * dy[m * d.J + j];
                    db[b_at(op.transpose_b, d, l, j)] += Real(acc);
                }
        }
    }
}

RIDGE_REF_INSTANTIATE(Matmul);

}  // namespace ridge::ref
