// Linear layers and attention's batched products through cuBLAS. cuBLAS is column-major and
// ridge's tensors row-major: a row-major (r,c) matrix is the column-major (c,r) transpose, so each
// product below is written for the transposes (y^T = w x^T for a linear), which needs no copy.
// fp16 and bf16 inputs accumulate in fp32 (blas_compute), and beta = 1 adds into gradients.
//   linear:  x (M,C)  w (K,C)  b (K)  y (M,K)
//   matmul:  a (B,M,L)  b (B,L,J), or (B,J,L) with transpose_b  y (B,M,J)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

// One strided-batched product in column-major terms: C (m,n) = op(A) (m,k) op(B) (k,n), beta 0 or 1.
struct Gemm {
    cublasOperation_t ta, tb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t sa = 0, sb = 0, sc = 0, batch = 1;
};

void gemm(const Dev& d, const Plan& p, const Gemm& g, const void* A, const void* B, void* C, bool accumulate) {
    const float one = 1, zero = 0;
    cudaDataType_t t = blas_type(p.dt);
    RIDGE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        d.blas, g.ta, g.tb, checked_int(g.m, "m"), checked_int(g.n, "n"), checked_int(g.k, "k"), &one, A, t,
        checked_int(g.lda, "lda"), g.sa, B, t, checked_int(g.ldb, "ldb"), g.sb, accumulate ? &one : &zero, C, t,
        checked_int(g.ldc, "ldc"), g.sc, checked_int(g.batch, "batch"), blas_compute(p.precision),
        CUBLAS_GEMM_DEFAULT));
}

constexpr auto N = CUBLAS_OP_N;
constexpr auto T = CUBLAS_OP_T;

class LinearLayer final : public LayerBase {
public:
    LinearLayer(Plan& p, int node, const Linear&) : LayerBase(p, node) {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        C_ = xs.back(), K_ = ys.back(), M_ = numel(xs) / C_;
        const auto& q = p.params[size_t(node)];
        w_ = q.at(0);
        if (q.size() > 1) bias_ = q[1].master, dbias_ = q[1].grad;
    }

    void forward(Dev& d) override {
        // y^T (K,M) = w (as (K,C) from the row-major (C,K) view, transposed) x^T (C,M)
        gemm(d, p, {T, N, K_, M_, C_, C_, C_, K_}, d.at(w_.copy), xv(d), yv(d), false);
        if (bias_ >= 0) gpu::bias_forward(p.dt, yv(d), d.f(bias_), yv(d), {M_, K_, 1}, d.s);
    }
    bool has_dgrad() const override { return wants_dx(); }
    bool has_wgrad() const override { return w_.grad >= 0 || dbias_ >= 0; }
    void dgrad(Dev& d) override {
        // dx^T (C,M) = w^T (C,K) dy^T (K,M)
        if (wants_dx()) gemm(d, p, {N, N, C_, M_, K_, C_, K_, C_}, d.at(w_.copy), dy(d), dx(d), true);
    }
    void wgrad(Dev& d) override {
        // dw^T (C,K) = x^T (C,M) dy (M,K)
        if (w_.grad >= 0) gemm(d, p, {N, T, C_, K_, M_, C_, K_, C_}, xv(d), dy(d), d.at(w_.grad), true);
        if (dbias_ >= 0) gpu::bias_backward(p.dt, dy(d), d.f(dbias_), {M_, K_, 1}, d.s);
    }

private:
    int64_t M_, C_, K_;
    Param w_;
    int bias_ = -1, dbias_ = -1;
};

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

std::unique_ptr<LayerRun> linear_layer(Plan& p, int node, const Linear& op) {
    return std::make_unique<LinearLayer>(p, node, op);
}

std::unique_ptr<LayerRun> matmul_layer(Plan& p, int node, const Matmul& op) {
    return std::make_unique<MatmulLayer>(p, node, op);
}

}  // namespace ridge::cudnn
