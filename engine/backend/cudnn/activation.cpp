// Activations: cuDNN's for relu, relu6 (clipped relu at 6), sigmoid and silu (swish, beta 1); the
// erf GELU, hardswish and hardsigmoid, which cuDNN lacks, by the hand-written kernels. Add, mul,
// scale, layer scale and the position embedding by the hand-written kernels too: cuDNN's
// cudnnOpTensor broadcasts only over whole dimensions of equal rank and has no backward.
//   x (any)  y (same shape)
#include "engine/backend/cudnn/ops.h"
#include "engine/overloaded.h"

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

class EltwiseLayer final : public LayerBase {
public:
    EltwiseLayer(Plan& p, int node) : LayerBase(p, node) {}

    void forward(Dev& d) override {
        const Shape& ys = p.shape(y());
        int64_t E = numel(ys);
        std::visit(overloaded{[&](const Add&) {
                                  gpu::add_forward(p.dt, xv(d, 0), gpu::bcast(p.shape(x(0)), ys), xv(d, 1),
                                                   gpu::bcast(p.shape(x(1)), ys), yv(d), d.s);
                              },
                              [&](const Mul&) {
                                  gpu::mul_forward(p.dt, xv(d, 0), gpu::bcast(p.shape(x(0)), ys), xv(d, 1),
                                                   gpu::bcast(p.shape(x(1)), ys), yv(d), d.s);
                              },
                              [&](const Scale& s) { gpu::scale_forward(p.dt, xv(d), float(s.s), yv(d), E, d.s); },
                              [&](const LayerScale& s) {
                                  gpu::channel_scale_forward(p.dt, xv(d), d.f(param(0)), yv(d), around(s.dim), d.s);
                              },
                              [&](const PosEmbedding&) {
                                  gpu::bias_forward(p.dt, xv(d), d.f(param(0)), yv(d), {ys[0], E / ys[0], 1}, d.s);
                              },
                              [&](const auto&) { throw std::logic_error("cudnn: not an elementwise op"); }},
                   n.op);
    }

    bool has_dgrad() const override { return any_wants_dx(); }
    bool has_wgrad() const override { return learns(); }

    void dgrad(Dev& d) override {
        const Shape& ys = p.shape(y());
        int64_t E = numel(ys);
        std::visit(overloaded{[&](const Add&) { binary_backward(d, false); },
                              [&](const Mul&) { binary_backward(d, true); },
                              [&](const Scale& s) {
                                  if (wants_dx()) gpu::scale_backward(p.dt, dy(d), float(s.s), dx(d), E, d.s);
                              },
                              [&](const LayerScale& s) {
                                  if (wants_dx())
                                      gpu::channel_scale_backward(p.dt, xv(d), dy(d), d.f(param(0)), dx(d), nullptr,
                                                                  around(s.dim), d.s);
                              },
                              [&](const PosEmbedding&) {
                                  if (wants_dx()) gpu::scale_backward(p.dt, dy(d), 1.0f, dx(d), E, d.s);
                              },
                              [&](const auto&) { throw std::logic_error("cudnn: not an elementwise op"); }},
                   n.op);
    }

    void wgrad(Dev& d) override {
        const Shape& ys = p.shape(y());
        int g = p.params[size_t(node)].empty() ? -1 : p.params[size_t(node)][0].grad;
        if (g < 0) return;
        if (auto* s = std::get_if<LayerScale>(&n.op))
            gpu::channel_scale_backward(p.dt, xv(d), dy(d), d.f(param(0)), nullptr, d.f(g), around(s->dim), d.s);
        if (std::holds_alternative<PosEmbedding>(n.op))
            gpu::bias_backward(p.dt, dy(d), d.f(g), {ys[0], numel(ys) / ys[0], 1}, d.s);
    }

private:
    int param(size_t j) const { return p.params[size_t(node)].at(j).master; }
    gpu::Around3 around(int dim) const {
        const Shape& s = p.shape(x());
        return gpu::around3(s, normalize_dim(dim, s.size()));
    }
    // Each input's gradient: dy (times the other input, for mul) summed over the dimensions it
    // was broadcast along.
    void binary_backward(Dev& d, bool mul) {
        const Shape& ys = p.shape(y());
        for (size_t i = 0; i < 2; ++i) {
            if (!wants_dx(i)) continue;
            gpu::Bcast self = gpu::bcast(p.shape(x(i)), ys), other = gpu::bcast(p.shape(x(1 - i)), ys);
            gpu::broadcast_backward(p.dt, dy(d), self, numel(p.shape(x(i))), mul ? xv(d, 1 - i) : nullptr, other,
                                    dx(d, i), d.s);
        }
    }
};

}  // namespace

std::unique_ptr<LayerRun> activation_layer(Plan& p, int node, const Activation& op) {
    return std::make_unique<ActivationLayer>(p, node, op);
}

std::unique_ptr<LayerRun> eltwise_layer(Plan& p, int node) { return std::make_unique<EltwiseLayer>(p, node); }

}  // namespace ridge::cudnn
