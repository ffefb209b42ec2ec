// Attention's batched products through cuBLAS (gemm(), plan.h), written for the column-major
// transposes of ridge's row-major matrices as in linear.cpp, a transposed operand read through
// its strides without a copy.
//   a (B,M,L)  b (B,L,J), or (B,J,L) with transpose_b  y (B,M,J)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

constexpr auto N = CUBLAS_OP_N;
constexpr auto T = CUBLAS_OP_T;

class MatmulLayer final : public LayerBase {
public:
    MatmulLayer(Plan& p, int node, const Matmul& op) : LayerBase(p, node), tb_(op.transpose_b) {
        const Shape &a = p.shape(x(0)), &ys = p.shape(y());
        size_t r = a.size();
        M_ = a[r - 2], L_ = a[r - 1], J_ = ys[r - 1], B_ = numel(a) / (M_ * L_);
    }

    void forward(Dev& d) override {
        // y^T (J,M) = b^T (J,L) a^T (L,M); b stored (L,J) is b^T column-major, stored (J,L) needs T.
        Gemm g{tb_ ? T : N, N, J_, M_, L_, tb_ ? L_ : J_, L_, J_, L_ * J_, M_ * L_, M_ * J_, B_};
        gemm(d, p, g, xv(d, 1), xv(d, 0), yv(d), false);
    }
    bool has_dgrad() const override { return wants_dx(0) || wants_dx(1); }
    void dgrad(Dev& d) override {
        if (wants_dx(0)) {
            // da^T (L,M) = b (L,J) dy^T (J,M)
            Gemm g{tb_ ? N : T, N, L_, M_, J_, tb_ ? L_ : J_, J_, L_, L_ * J_, M_ * J_, M_ * L_, B_};
            gemm(d, p, g, xv(d, 1), dy(d), dx(d, 0), true);
        }
        if (wants_dx(1)) {
            if (tb_) {
                // db (J,L) stored row-major is db^T (L,J) column-major = a^T (L,M) dy (M,J)
                Gemm g{N, T, L_, J_, M_, L_, J_, L_, M_ * L_, M_ * J_, L_ * J_, B_};
                gemm(d, p, g, xv(d, 0), dy(d), dx(d, 1), true);
            } else {
                // db (L,J) stored row-major is db^T (J,L) column-major = dy^T (J,M) a (M,L)
                Gemm g{N, T, J_, L_, M_, J_, L_, J_, M_ * J_, M_ * L_, L_ * J_, B_};
                gemm(d, p, g, dy(d), xv(d, 0), dx(d, 1), true);
            }
        }
    }

private:
    bool tb_;
    int64_t M_, L_, J_, B_;
};

}  // namespace

std::unique_ptr<LayerRun> matmul_layer(Plan& p, int node, const Matmul& op) {
    return std::make_unique<MatmulLayer>(p, node, op);
}

}  // namespace ridge::cudnn
