// Pooling through cuDNN where it expresses the op exactly: symmetric padding and the floor-mode
// output size (ceil_mode pools whose last window would start inside the padding give the same
// size and qualify). Average pooling divides by the whole window with count_include_pad, by the
// input elements covered without, as cuDNN's two average modes do when every window lies inside
// the padded input, which the floor mode guarantees. Everything else (ceil_mode windows running
// past the padding, asymmetric padding, adaptive pooling) runs the hand-written kernel.
//   x (N,C,H,W)  y (N,C,P,Q)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

class PoolLayer final : public LayerBase {
public:
    PoolLayer(Plan& p, int node, const gpu::PoolShape& s, bool lib) : LayerBase(p, node), s_(s), lib_(lib) {}

    ~PoolLayer() override {
        if (pd_) cudnnDestroyPoolingDescriptor(pd_);
    }

    void setup(Dev&) override {
        if (!lib_) return;
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        xd_.set(p.dt, xs[0], xs[1], xs[2], xs[3]);
        yd_.set(p.dt, ys[0], ys[1], ys[2], ys[3]);
        cudnnPoolingMode_t mode = s_.kind == gpu::PoolShape::Kind::max ? CUDNN_POOLING_MAX
                                  : s_.count_include_pad              ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                                      : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
        RIDGE_CUDNN_CHECK(cudnnCreatePoolingDescriptor(&pd_));
        RIDGE_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pd_, mode, CUDNN_PROPAGATE_NAN, checked_int(s_.R, "R"),
                                                      checked_int(s_.S, "S"), checked_int(s_.pt, "pad"),
                                                      checked_int(s_.pl, "pad"), checked_int(s_.sh, "stride"),
                                                      checked_int(s_.sw, "stride")));
    }

    void forward(Dev& d) override {
        if (!lib_) return gpu::pool_forward(p.dt, s_, xv(d), yv(d), d.s);
        const float one = 1, zero = 0;
        RIDGE_CUDNN_CHECK(cudnnPoolingForward(d.dnn, pd_, &one, xd_.d, xv(d), &zero, yd_.d, yv(d)));
    }

    bool has_dgrad() const override { return wants_dx(); }
    void dgrad(Dev& d) override {
        if (!wants_dx()) return;
        if (!lib_) return gpu::pool_backward(p.dt, s_, xv(d), dy(d), dx(d), d.s);
        const float one = 1;
        RIDGE_CUDNN_CHECK(
            cudnnPoolingBackward(d.dnn, pd_, &one, yd_.d, yv(d), yd_.d, dy(d), xd_.d, xv(d), &one, xd_.d, dx(d)));
    }

private:
    gpu::PoolShape s_;
    bool lib_;
    TensorDesc xd_, yd_;
    cudnnPoolingDescriptor_t pd_ = nullptr;
};

bool cudnn_expresses(const gpu::PoolShape& s) {
    if (s.pt != s.pb || s.pl != s.pr) return false;
    int64_t P = (s.H + 2 * s.pt - s.R) / s.sh + 1, Q = (s.W + 2 * s.pl - s.S) / s.sw + 1;
    return P == s.P && Q == s.Q;
}

}  // namespace

std::unique_ptr<LayerRun> pool_layer(Plan& p, int node, const Pool2d& op) {
    const Node& n = p.g.nodes()[size_t(node)];
    gpu::PoolShape s = gpu::pool_shape(op, p.shape(n.inputs[0]), p.shape(n.output));
    return std::make_unique<PoolLayer>(p, node, s, cudnn_expresses(s));
}

std::unique_ptr<LayerRun> pool_layer(Plan& p, int node, const AdaptiveAvgPool2d& op) {
    const Node& n = p.g.nodes()[size_t(node)];
    gpu::PoolShape s = gpu::pool_shape(op, p.shape(n.inputs[0]), p.shape(n.output));
    return std::make_unique<PoolLayer>(p, node, s, false);
}

}  // namespace ridge::cudnn
