// Batchnorm through cuDNN (spatial mode: statistics per channel over N and every position), and
// layernorm through the hand-written kernel (cuDNN's legacy API has none). cuDNN keeps the
// batchnorm's scale, shift and statistics in fp32 whatever the data type, as ridge does.
//   batchnorm: x (N,C,...)  gamma, beta, running mean and variance (C)
//   layernorm: x (..., D, ...)  gamma, beta (D)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

constexpr double eps = 1e-5;  // executor.h; above CUDNN_BN_MIN_EPSILON

class BatchNormLayer final : public LayerBase {
public:
    BatchNormLayer(Plan& p, int node) : LayerBase(p, node) {
        C_ = p.shape(x())[1];
        if (p.train) {
            mean_ = p.buffer(C_ * 4);
            istd_ = p.buffer(C_ * 4);
            // cuDNN's backward always writes dx; a batchnorm on the graph's input writes it here.
            if (!wants_dx()) scratch_ = p.buffer(numel(p.shape(x())) * p.elem());
        }
    }

    void setup(Dev&) override {
        Dims4 s = dims4(p.shape(x()));
        xd_.set(p.dt, s.n, s.c, s.h, s.w);
        if (!pd_.d) RIDGE_CUDNN_CHECK(cudnnCreateTensorDescriptor(&pd_.d));
        RIDGE_CUDNN_CHECK(cudnnDeriveBNTensorDescriptor(pd_.d, xd_.d, CUDNN_BATCHNORM_SPATIAL));
    }

    void forward(Dev& d) override {
        const float one = 1, zero = 0;
        const auto& q = p.params[size_t(node)];
        if (!p.train) {
            RIDGE_CUDNN_CHECK(cudnnBatchNormalizationForwardInference(
                d.dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd_.d, xv(d), xd_.d, yv(d), pd_.d, d.at(q[0].master),
                d.at(q[1].master), d.at(q[2].master), d.at(q[3].master), eps));
            return;
        }
        // An averaging factor of 0 leaves the running statistics exactly as they were (executor.h).
        RIDGE_CUDNN_CHECK(cudnnBatchNormalizationForwardTraining(
            d.dnn, CUDNN_BATCHNORM_SPATIAL, &one, &zero, xd_.d, xv(d), xd_.d, yv(d), pd_.d, d.at(q[0].master),
            d.at(q[1].master), 0.0, d.at(q[2].master), d.at(q[3].master), eps, d.at(mean_), d.at(istd_)));
    }

    // One cuDNN call gives dx, dgamma and dbeta; its time is all dgrad.
    bool has_dgrad() const override { return true; }
    void dgrad(Dev& d) override {
        const float one = 1, zero = 0;
        const auto& q = p.params[size_t(node)];
        void* out = wants_dx() ? dx(d) : d.at(scratch_);
        RIDGE_CUDNN_CHECK(cudnnBatchNormalizationBackward(d.dnn, CUDNN_BATCHNORM_SPATIAL, &one, wants_dx() ? &one : &zero,
                                                          &one, &one, xd_.d, xv(d), xd_.d, dy(d), xd_.d, out, pd_.d,
                                                          d.at(q[0].master), d.at(q[0].grad), d.at(q[1].grad), eps,
                                                          d.at(mean_), d.at(istd_)));
    }

private:
    int64_t C_;
    int mean_ = -1, istd_ = -1, scratch_ = -1;
    TensorDesc xd_, pd_;
};

class LayerNormLayer final : public LayerBase {
public:
    LayerNormLayer(Plan& p, int node, const LayerNorm& op) : LayerBase(p, node) {
        const Shape& xs = p.shape(x());
        a_ = gpu::around3(xs, normalize_dim(op.dim, xs.size()));
        mean_ = p.buffer(a_.outer * a_.inner * 4);
        istd_ = p.buffer(a_.outer * a_.inner * 4);
    }

    void forward(Dev& d) override {
        const auto& q = p.params[size_t(node)];
        gpu::layernorm_forward(p.dt, xv(d), d.f(q[0].master), d.f(q[1].master), yv(d), d.f(mean_), d.f(istd_), a_,
                               d.s);
    }
    bool has_dgrad() const override { return wants_dx(); }
    bool has_wgrad() const override { return learns(); }
    void dgrad(Dev& d) override {
        if (!wants_dx()) return;
        const auto& q = p.params[size_t(node)];
        gpu::layernorm_backward(p.dt, xv(d), dy(d), d.f(q[0].master), d.f(mean_), d.f(istd_), dx(d), nullptr, nullptr,
                                a_, d.s);
    }
    void wgrad(Dev& d) override {
        const auto& q = p.params[size_t(node)];
        gpu::layernorm_backward(p.dt, xv(d), dy(d), d.f(q[0].master), d.f(mean_), d.f(istd_), nullptr,
                                d.f(q[0].grad), d.f(q[1].grad), a_, d.s);
    }

private:
    gpu::Around3 a_;
    int mean_, istd_;
};

// A batchnorm folded into the conv before it (fused inference): its output is the conv's.
class Folded final : public LayerBase {
public:
    using LayerBase::LayerBase;
    void forward(Dev&) override {}
};

}  // namespace

std::unique_ptr<LayerRun> batchnorm_layer(Plan& p, int node, const BatchNorm&) {
    if (p.folded_into[size_t(node)] >= 0) return std::make_unique<Folded>(p, node);
    return std::make_unique<BatchNormLayer>(p, node);
}

std::unique_ptr<LayerRun> layernorm_layer(Plan& p, int node, const LayerNorm& op) {
    return std::make_unique<LayerNormLayer>(p, node, op);
}

}  // namespace ridge::cudnn
