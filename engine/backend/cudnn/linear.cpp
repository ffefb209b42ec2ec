// Linear layers through cuBLAS (gemm(), plan.h), over the leading dimensions flattened. cuBLAS is
// column-major and ridge's tensors row-major: a row-major (r,c) matrix is the column-major (c,r)
// transpose, so each product below is written for the transposes (y^T = w x^T), which needs no
// copy. The bias is added by a hand-written kernel.
//   x (M,C)  w (K,C)  b (K)  y (M,K)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

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

}  // namespace

std::unique_ptr<LayerRun> linear_layer(Plan& p, int node, const Linear& op) {
    return std::make_unique<LinearLayer>(p, node, op);
}

}  // namespace ridge::cudnn
