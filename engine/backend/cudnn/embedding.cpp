// The class token and the position embedding by the hand-written kernels (kernels/cuda): the
// token is written in front of the sequence and its gradient summed over the batch; the embedding
// is a bias over the batch (bias_forward with an outer extent of N), its gradient dy summed over N.
//   class token:  x (N,T,D)  token (D)  y (N,T+1,D)
//   position:     x (N,T,D)  e (T,D)    y (N,T,D)
#include "engine/backend/cudnn/ops.h"

namespace ridge::cudnn {

namespace {

class ClassTokenLayer final : public LayerBase {
public:
    using LayerBase::LayerBase;

    void forward(Dev& d) override {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        gpu::block_into(p.dt, xv(d), yv(d), xs[0], ys[1], 1, xs[1], xs[2], false, d.s);
        gpu::class_token_forward(p.dt, d.f(p.param(node, 0).master), yv(d), ys[0], ys[1], ys[2], d.s);
    }

    bool has_dgrad() const override { return any_wants_dx(); }
    bool has_wgrad() const override { return learns(); }

    void dgrad(Dev& d) override {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        if (wants_dx()) gpu::block_from(p.dt, dy(d), dx(d), xs[0], ys[1], 1, xs[1], xs[2], true, d.s);
    }

    void wgrad(Dev& d) override {
        const Shape& ys = p.shape(y());
        int g = p.param(node, 0).grad;
        if (g >= 0) gpu::class_token_backward(p.dt, dy(d), d.f(g), ys[0], ys[1], ys[2], d.s);
    }
};

class PosEmbeddingLayer final : public LayerBase {
public:
    using LayerBase::LayerBase;

    void forward(Dev& d) override {
        const Shape& ys = p.shape(y());
        int64_t E = numel(ys);
        gpu::bias_forward(p.dt, xv(d), d.f(p.param(node, 0).master), yv(d), {ys[0], E / ys[0], 1}, d.s);
    }

    bool has_dgrad() const override { return any_wants_dx(); }
    bool has_wgrad() const override { return learns(); }

    void dgrad(Dev& d) override {
        if (wants_dx()) gpu::scale_backward(p.dt, dy(d), 1.0f, dx(d), numel(p.shape(y())), d.s);
    }

    void wgrad(Dev& d) override {
        const Shape& ys = p.shape(y());
        int g = p.param(node, 0).grad;
        if (g >= 0) gpu::bias_backward(p.dt, dy(d), d.f(g), {ys[0], numel(ys) / ys[0], 1}, d.s);
    }
};

}  // namespace

std::unique_ptr<LayerRun> embedding_layer(Plan& p, int node, const ClassToken&) {
    return std::make_unique<ClassTokenLayer>(p, node);
}

std::unique_ptr<LayerRun> embedding_layer(Plan& p, int node, const PosEmbedding&) {
    return std::make_unique<PosEmbeddingLayer>(p, node);
}

}  // namespace ridge::cudnn
