#include "engine/analysis.h"

#include <set>

namespace ridge {

void Counts::operator+=(const Counts& o) {
    params += o.params;
    macs += o.macs;
    fwd_flops += o.fwd_flops;
    dgrad_flops += o.dgrad_flops;
    wgrad_flops += o.wgrad_flops;
    param_bytes += o.param_bytes;
    activation_bytes += o.activation_bytes;
    saved_bytes += o.saved_bytes;
    fwd_traffic_bytes += o.fwd_traffic_bytes;
    bwd_traffic_bytes += o.bwd_traffic_bytes;
}

double Counts::fwd_intensity() const { return fwd_traffic_bytes ? double(fwd_flops) / fwd_traffic_bytes : 0; }
double Counts::bwd_intensity() const { return bwd_traffic_bytes ? double(bwd_flops()) / bwd_traffic_bytes : 0; }

namespace {
Ctx context(const Graph& g, const Node& n) {
    Ctx c;
    for (int id : n.inputs) {
        c.in.push_back(g.tensor(id).shape);
        c.needs_grad.push_back(g.tensor(id).requires_grad);
    }
    c.out = g.tensor(n.output).shape;
    return c;
}
}  // namespace

Work layer_work(const Graph& g, const Node& n) { return op_work(n.op, context(g, n)); }

Analysis analyze(const Graph& g, DType dtype) {
    const int64_t b = dtype_bytes(dtype);
    Analysis a{g.model(), g.input_shape(), dtype, {}, {}, {}};
    std::array<TypeTotals, category_count> types{};
    std::set<int> saved_storage;  // storages kept for backward, each counted once in the total
    int64_t saved_extra = 0;

    for (const Node& n : g.nodes()) {
        Ctx ctx = context(g, n);
        Work w = op_work(n.op, ctx);
        LayerCost L{n.name, op_kind(n.op), op_category(n.op, ctx.in[0]), ctx.out, {}};
        Counts& c = L.c;
        c.params = w.params;
        c.macs = w.macs;
        c.fwd_flops = w.fwd_flops;
        c.dgrad_flops = w.dgrad_flops;
        c.wgrad_flops = w.wgrad_flops;
        c.param_bytes = w.params * b;

        int64_t out_bytes = numel(ctx.out) * b;
        bool any_dgrad = false;
        for (bool need : ctx.needs_grad) any_dgrad = any_dgrad || need;
        bool in_backward = any_dgrad || w.params > 0;

        if (!op_is_alias(n.op)) {
            c.activation_bytes = out_bytes;
            // Forward: read every input and the weights once, write the output once.
            for (const Shape& s : ctx.in) c.fwd_traffic_bytes += numel(s) * b;
            c.fwd_traffic_bytes += c.param_bytes + out_bytes;
        }
        if (in_backward && !op_is_alias(n.op)) {
            for (int i : w.saved_inputs) {
                c.saved_bytes += numel(ctx.in[i]) * b;
                saved_storage.insert(g.tensor(n.inputs[i]).storage);
            }
            if (w.saves_output) {
                c.saved_bytes += out_bytes;
                saved_storage.insert(g.tensor(n.output).storage);
            }
            c.saved_bytes += w.saved_extra_bytes;
            saved_extra += w.saved_extra_bytes;
            // Backward: read dy, what was saved and (for dgrad) the weights once; write each
            // needed input gradient and the weight gradient once.
            c.bwd_traffic_bytes = out_bytes + c.saved_bytes + (any_dgrad ? c.param_bytes : 0) + c.param_bytes;
            for (size_t i = 0; i < ctx.in.size(); ++i)
                if (ctx.needs_grad[i]) c.bwd_traffic_bytes += numel(ctx.in[i]) * b;
        }

        TypeTotals& t = types[int(L.category)];
        t.category = L.category;
        ++t.layers;
        t.c += c;
        a.totals += c;
        a.layers.push_back(std::move(L));
    }
    for (const TypeTotals& t : types)
        if (t.layers) a.by_type.push_back(t);

    int64_t saved = saved_extra;
    for (int s : saved_storage) saved += numel(g.tensor(s).shape) * b;
    a.totals.saved_bytes = saved;
    const int64_t W = a.totals.param_bytes;
    a.totals.train_memory_bytes = 3 * W + saved;
    a.totals.train_memory_adam_bytes = 4 * W + saved;
    return a;
}

}  // namespace ridge
