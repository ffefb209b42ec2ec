#include "engine/analysis.h"

#include <algorithm>
#include <optional>
#include <set>

namespace ridge {

void Counts::operator+=(const Counts& o) {
    params = checked_add(params, o.params);
    macs = checked_add(macs, o.macs);
    fwd_flops = checked_add(fwd_flops, o.fwd_flops);
    dgrad_flops = checked_add(dgrad_flops, o.dgrad_flops);
    wgrad_flops = checked_add(wgrad_flops, o.wgrad_flops);
    param_bytes = checked_add(param_bytes, o.param_bytes);
    activation_bytes = checked_add(activation_bytes, o.activation_bytes);
    saved_bytes = checked_add(saved_bytes, o.saved_bytes);
    fwd_traffic_bytes = checked_add(fwd_traffic_bytes, o.fwd_traffic_bytes);
    bwd_traffic_bytes = checked_add(bwd_traffic_bytes, o.bwd_traffic_bytes);
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

// The interval of its input's dimension `dim` that a slice or select takes; none for other ops.
struct Region {
    int dim;
    int64_t begin, end;
};
std::optional<Region> region_of(const Op& op, size_t rank) {
    if (const auto* s = std::get_if<Slice>(&op)) return Region{normalize_dim(s->dim, rank), s->start, s->start + s->length};
    if (const auto* s = std::get_if<Select>(&op)) return Region{normalize_dim(s->dim, rank), s->index, s->index + 1};
    return std::nullopt;
}

// Whether every reader of n's input is a slice or select along one dimension and their regions
// tile it, without gap or overlap (ViT's q, k and v; shufflenet's two halves): then each one's
// gradient is its own region of the input's gradient.
bool tiles_input(const Graph& g, const Node& n) {
    const Shape& x = g.tensor(n.inputs[0]).shape;
    const int dim = region_of(n.op, x.size())->dim;
    std::vector<Region> regions;
    for (const Node& m : g.nodes()) {
        if (std::find(m.inputs.begin(), m.inputs.end(), n.inputs[0]) == m.inputs.end()) continue;
        const std::optional<Region> r = region_of(m.op, x.size());
        if (!r || r->dim != dim) return false;
        regions.push_back(*r);
    }
    std::sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) { return a.begin < b.begin; });
    int64_t covered = 0;
    for (const Region& r : regions) {
        if (r.begin != covered) return false;
        covered = r.end;
    }
    return covered == x[size_t(dim)];
}

// Bytes of one layer, noted in w beside its FLOPs. X input elements, Y output elements, Wt weights,
// Sv saved elements, DX elements of the input gradients, b bytes per element.
Counts layer_counts(const Graph& g, const Node& n, const Ctx& ctx, Work& w, int64_t bytes) {
    Counts c;
    c.params = w.params;
    c.macs = w.macs;
    c.fwd_flops = w.fwd_flops;
    c.dgrad_flops = w.dgrad_flops;
    c.wgrad_flops = w.wgrad_flops;
    Ex b = var("b", bytes), Wt = var("Wt", w.params);
    c.param_bytes = checked_mul(Wt.v, bytes);
    if (op_is_alias(n.op)) {
        // A view writes nothing forward. A slice's or select's gradient is a tensor of its input's
        // shape, dy in its region and zeros elsewhere (as PyTorch's slice_backward and
        // select_backward allocate it): read Y, write X; where the views on the input tile it,
        // each writes its region only.
        if (region_of(n.op, ctx.in[0].size()) && ctx.needs_grad[0]) {
            Ex Y = var("Y", numel(ctx.out)), DX = var("DX", tiles_input(g, n) ? numel(ctx.out) : numel(ctx.in[0]));
            c.bwd_traffic_bytes = w.note("bwd traffic bytes", (Y + DX) * b);
        }
        return c;
    }

    int64_t x_elems = 0, dx_elems = 0, saved_elems = 0;
    bool any_dgrad = false;
    for (size_t i = 0; i < ctx.in.size(); ++i) {
        x_elems = checked_add(x_elems, numel(ctx.in[i]));
        if (ctx.needs_grad[i]) dx_elems = checked_add(dx_elems, numel(ctx.in[i]));
        any_dgrad = any_dgrad || ctx.needs_grad[i];
    }
    Ex X = var("X", x_elems), Y = var("Y", numel(ctx.out));
    c.activation_bytes = w.note("activation bytes", Y * b);
    // Forward: read every input and the weights once, write the output once.
    c.fwd_traffic_bytes = w.note("fwd traffic bytes", (X + Wt + Y) * b);

    if (!any_dgrad && w.params == 0) return c;  // takes no part in backward
    for (int i : w.saved_inputs) saved_elems = checked_add(saved_elems, numel(ctx.in[i]));
    if (w.saves_output) saved_elems = checked_add(saved_elems, numel(ctx.out));
    Ex S = var("Sv", saved_elems), extra = var("extra", w.saved_extra_bytes);
    Ex saved = S * b;
    if (extra.v) saved = saved + extra;
    c.saved_bytes = w.note("saved bytes", saved);
    // Backward: read dy, the saved tensors and (for dgrad) the weights once; write each needed
    // input gradient and the weight gradient once.
    Ex moved = Y + S;
    if (any_dgrad && Wt.v) moved = moved + Wt;
    if (dx_elems) moved = moved + var("DX", dx_elems);
    if (Wt.v) moved = moved + Wt;
    Ex bwd = moved * b;
    if (extra.v) bwd = bwd + extra;
    c.bwd_traffic_bytes = w.note("bwd traffic bytes", bwd);
    return c;
}
}  // namespace

Work layer_work(const Graph& g, const Node& n, DType dtype) {
    Ctx ctx = context(g, n);
    Work w = op_work(n.op, ctx);
    layer_counts(g, n, ctx, w, dtype_bytes(dtype));
    return w;
}

Analysis analyze(const Graph& g, DType dtype) {
    const int64_t b = dtype_bytes(dtype);
    Analysis a{g.model(), g.input_shape(), dtype, {}, {}, {}};
    std::array<TypeTotals, category_count> types{};
    std::set<int> saved_storage;  // storages kept for backward, each counted once in the total
    int64_t saved_extra = 0;

    for (const Node& n : g.nodes()) {
        Ctx ctx = context(g, n);
        Work w = op_work(n.op, ctx);
        LayerCost L{n.name, op_kind(n.op), op_category(n.op, ctx.in[0]), ctx.out, layer_counts(g, n, ctx, w, b)};
        if (L.c.saved_bytes) {
            for (int i : w.saved_inputs) saved_storage.insert(g.tensor(n.inputs[i]).storage);
            if (w.saves_output) saved_storage.insert(g.tensor(n.output).storage);
            saved_extra += w.saved_extra_bytes;
        }
        TypeTotals& t = types[int(L.category)];
        t.category = L.category;
        ++t.layers;
        t.c += L.c;
        a.totals += L.c;
        a.layers.push_back(std::move(L));
    }
    for (const TypeTotals& t : types)
        if (t.layers) a.by_type.push_back(t);

    int64_t saved = saved_extra;
    for (int s : saved_storage) saved = checked_add(saved, checked_mul(numel(g.tensor(s).shape), b));
    a.totals.saved_bytes = saved;
    const int64_t W = a.totals.param_bytes;
    a.totals.train_memory_bytes = checked_add(checked_mul(3, W), saved);
    a.totals.train_memory_adam_bytes = checked_add(checked_mul(4, W), saved);
    return a;
}

}  // namespace ridge
