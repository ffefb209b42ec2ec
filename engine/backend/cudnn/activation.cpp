// Activations: cuDNN's for relu, relu6 (clipped relu at 6), sigmoid and silu (swish, beta 1); the
// erf GELU, hardswish and hardsigmoid, which cuDNN lacks, by the hand-written kernels.
//   x (any)  y (same shape)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

using Fn = Activation::Fn;

bool in_cudnn(Fn fn) { return fn == Fn::relu || fn == Fn::relu6 || fn == Fn::sigmoid || fn == Fn::silu; }

class ActivationLayer final : public LayerBase {
public:
    ActivationLayer(Plan& p, int node, const Activation& op) : LayerBase(p, node), fn_(op.fn) {}

    ~ActivationLayer() override {
        if (ad_) cudnnDestroyActivationDescriptor(ad_);
    }

    void setup(Dev&) override {
        if (!in_cudnn(fn_)) return;
        const Shape& s = p.shape(x());
        xd_.set(p.dt, s[0], numel(s) / s[0], 1, 1);
        RIDGE_CUDNN_CHECK(cudnnCreateActivationDescriptor(&ad_));
        cudnnActivationMode_t mode = fn_ == Fn::relu      ? CUDNN_ACTIVATION_RELU
                                     : fn_ == Fn::relu6   ? CUDNN_ACTIVATION_CLIPPED_RELU
                                     : fn_ == Fn::sigmoid ? CUDNN_ACTIVATION_SIGMOID
                                                          : CUDNN_ACTIVATION_SWISH;
        RIDGE_CUDNN_CHECK(cudnnSetActivationDescriptor(ad_, mode, CUDNN_PROPAGATE_NAN, fn_ == Fn::relu6 ? 6.0 : 0.0));
        if (fn_ == Fn::silu) RIDGE_CUDNN_CHECK(cudnnSetActivationDescriptorSwishBeta(ad_, 1.0));
    }

    void forward(Dev& d) override {
        if (!in_cudnn(fn_)) return gpu::activation_forward(p.dt, gpu::act_of(fn_), xv(d), yv(d), numel(p.shape(x())), d.s);
        const float one = 1, zero = 0;
        RIDGE_CUDNN_CHECK(cudnnActivationForward(d.dnn, ad_, &one, xd_.d, xv(d), &zero, xd_.d, yv(d)));
    }

    bool has_dgrad() const override { return wants_dx(); }
    void dgrad(Dev& d) override {
        if (!wants_dx()) return;
        if (!in_cudnn(fn_)) return gpu::activation_backward(p.dt, gpu::act_of(fn_), xv(d), dy(d), dx(d), numel(p.shape(x())), d.s);
        const float one = 1;
        RIDGE_CUDNN_CHECK(
            cudnnActivationBackward(d.dnn, ad_, &one, xd_.d, yv(d), xd_.d, dy(d), xd_.d, xv(d), &one, xd_.d, dx(d)));
    }

private:
    Fn fn_;
    TensorDesc xd_;
    cudnnActivationDescriptor_t ad_ = nullptr;
};

}  // namespace

std::unique_ptr<LayerRun> activation_layer(Plan& p, int node, const Activation& op) {
    return std::make_unique<ActivationLayer>(p, node, op);
}

}  // namespace ridge::cudnn
