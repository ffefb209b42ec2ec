// Softmax along any dimension through cuDNN: the tensor seen as (outer, n, inner, 1) and
// normalized over its channels (CUDNN_SOFTMAX_MODE_CHANNEL), with the max subtracted first
// (CUDNN_SOFTMAX_ACCURATE), as the reference does.  x (any)  y (same shape)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

class SoftmaxLayer final : public LayerBase {
public:
    SoftmaxLayer(Plan& p, int node, const Softmax& op) : LayerBase(p, node) {
        const Shape& s = p.shape(x());
        a_ = gpu::around3(s, normalize_dim(op.dim, s.size()));
    }

    void setup(Dev&) override { xd_.set(p.dt, a_.outer, a_.n, a_.inner, 1); }

    void forward(Dev& d) override {
        const float one = 1, zero = 0;
        RIDGE_CUDNN_CHECK(cudnnSoftmaxForward(d.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, xd_.d,
                                              xv(d), &zero, xd_.d, yv(d)));
    }

    bool has_dgrad() const override { return wants_dx(); }
    void dgrad(Dev& d) override {
        if (!wants_dx()) return;
        const float one = 1;
        RIDGE_CUDNN_CHECK(cudnnSoftmaxBackward(d.dnn, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, xd_.d,
                                               yv(d), xd_.d, dy(d), &one, xd_.d, dx(d)));
    }

private:
    gpu::Around3 a_;
    TensorDesc xd_;
};

}  // namespace

std::unique_ptr<LayerRun> softmax_layer(Plan& p, int node, const Softmax& op) {
    return std::make_unique<SoftmaxLayer>(p, node, op);
}

}  // namespace ridge::cudnn
