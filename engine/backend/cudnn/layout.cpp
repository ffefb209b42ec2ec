// Data movement by the hand-written kernels: concat, slice and select as blocks along one
// dimension, channel shuffle and permute as permutes (layout_layer). Flatten, reshape, dropout
// and stochastic depth alias their input (plan.h) and run nothing (alias_layer).
// make_layer (executor.cpp) sends each op to one of them by name.
#include "engine/backend/cudnn/ops.h"
#include "engine/overloaded.h"

namespace ridge::cudnn {

namespace {

std::vector<int> inverse(const std::vector<int>& order) {
    std::vector<int> inv(order.size());
    for (size_t d = 0; d < order.size(); ++d) inv[size_t(order[d])] = int(d);
    return inv;
}

class LayoutLayer final : public LayerBase {
public:
    LayoutLayer(Plan& p, int node) : LayerBase(p, node) {}

    void forward(Dev& d) override {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        std::visit(
            overloaded{[&](const Concat& op) {
                           int dim = normalize_dim(op.dim, ys.size());
                           gpu::Around3 a = gpu::around3(ys, dim);
                           int64_t off = 0;
                           for (size_t i = 0; i < n.inputs.size(); ++i) {
                               int64_t len = p.shape(x(i))[size_t(dim)];
                               gpu::block_into(p.dt, xv(d, i), yv(d), a.outer, a.n, off, len, a.inner, false, d.s);
                               off += len;
                           }
                       },
                       [&](const ChannelShuffle& op) {
                           gpu::permute(p.dt, xv(d), shuffle_dims(op.G), {0, 2, 1, 3}, yv(d), false, d.s);
                       },
                       [&](const Permute& op) { gpu::permute(p.dt, xv(d), xs, op.order, yv(d), false, d.s); },
                       [&](const Slice& op) {
                           gpu::Around3 a = gpu::around3(xs, normalize_dim(op.dim, xs.size()));
                           gpu::block_from(p.dt, xv(d), yv(d), a.outer, a.n, op.start, op.length, a.inner, false, d.s);
                       },
                       [&](const Select& op) {
                           gpu::Around3 a = gpu::around3(xs, normalize_dim(op.dim, xs.size()));
                           gpu::block_from(p.dt, xv(d), yv(d), a.outer, a.n, op.index, 1, a.inner, false, d.s);
                       },
                       [&](const auto&) { throw std::logic_error("cudnn: not a data-movement op"); }},
            n.op);
    }

    bool has_dgrad() const override { return any_wants_dx(); }

    void dgrad(Dev& d) override {
        const Shape &xs = p.shape(x()), &ys = p.shape(y());
        std::visit(
            overloaded{[&](const Concat& op) {
                           int dim = normalize_dim(op.dim, ys.size());
                           gpu::Around3 a = gpu::around3(ys, dim);
                           int64_t off = 0;
                           for (size_t i = 0; i < n.inputs.size(); ++i) {
                               int64_t len = p.shape(x(i))[size_t(dim)];
                               if (wants_dx(i))
                                   gpu::block_from(p.dt, dy(d), dx(d, i), a.outer, a.n, off, len, a.inner, true, d.s);
                               off += len;
                           }
                       },
                       [&](const ChannelShuffle& op) {
                           if (!wants_dx()) return;
                           Shape s = shuffle_dims(op.G);
                           gpu::permute(p.dt, dy(d), {s[0], s[2], s[1], s[3]}, {0, 2, 1, 3}, dx(d), true, d.s);
                       },
                       [&](const Permute& op) {
                           if (wants_dx()) gpu::permute(p.dt, dy(d), ys, inverse(op.order), dx(d), true, d.s);
                       },
                       [&](const Slice& op) {
                           if (!wants_dx()) return;
                           gpu::Around3 a = gpu::around3(xs, normalize_dim(op.dim, xs.size()));
                           gpu::block_into(p.dt, dy(d), dx(d), a.outer, a.n, op.start, op.length, a.inner, true, d.s);
                       },
                       [&](const Select& op) {
                           if (!wants_dx()) return;
                           gpu::Around3 a = gpu::around3(xs, normalize_dim(op.dim, xs.size()));
                           gpu::block_into(p.dt, dy(d), dx(d), a.outer, a.n, op.index, 1, a.inner, true, d.s);
                       },
                       [&](const auto&) { throw std::logic_error("cudnn: not a data-movement op"); }},
            n.op);
    }

private:
    // x (N,C,H,W) seen as (N, G, C/G, H*W)
    Shape shuffle_dims(int64_t G) const {
        const Shape& s = p.shape(x());
        return {s[0], G, s[1] / G, numel(s) / (s[0] * s[1])};
    }
};

// Views and identities: the output is the input's buffer, the gradient its gradient's.
class Alias final : public LayerBase {
public:
    using LayerBase::LayerBase;
    void forward(Dev&) override {}
};

}  // namespace

std::unique_ptr<LayerRun> layout_layer(Plan& p, int node) { return std::make_unique<LayoutLayer>(p, node); }

std::unique_ptr<LayerRun> alias_layer(Plan& p, int node) { return std::make_unique<Alias>(p, node); }

}  // namespace ridge::cudnn
