// Add, mul, scale and layer scale by the hand-written kernels (kernels/cuda/elementwise.cu):
// cuDNN's cudnnOpTensor broadcasts only over whole dimensions of equal rank and has no backward.
//   x (any)  y (same shape); add and mul broadcast either operand onto y (NumPy rules)
#include "engine/backend/cudnn/ops.h"
#include "engine/overloaded.h"

namespace ridge::cudnn {

namespace {

class ElementwiseLayer final : public LayerBase {
public:
    ElementwiseLayer(Plan& p, int node) : LayerBase(p, node) {}

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
                              [&](const auto&) { throw std::logic_error("cudnn: not an elementwise op"); }},
                   n.op);
    }

    void wgrad(Dev& d) override {
        int g = p.params[size_t(node)].empty() ? -1 : p.params[size_t(node)][0].grad;
        if (g < 0) return;
        if (auto* s = std::get_if<LayerScale>(&n.op))
            gpu::channel_scale_backward(p.dt, xv(d), dy(d), d.f(param(0)), nullptr, d.f(g), around(s->dim), d.s);
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

std::unique_ptr<LayerRun> elementwise_layer(Plan& p, int node) { return std::make_unique<ElementwiseLayer>(p, node); }

}  // namespace ridge::cudnn
