#include "engine/ops/elementwise.h"

#include "engine/ops/norm.h"

namespace ridge {

Shape broadcast(const Shape& a, const Shape& b) {
    size_t r = std::max(a.size(), b.size());
    Shape y(r);
    for (size_t i = 0; i < r; ++i) {
        int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
        int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (da != db && da != 1 && db != 1)
            throw ShapeError(cat("shapes ", to_string(a), " and ", to_string(b), " do not match in dimension ", i,
                                 " (", da, " vs ", db, ")"));
        y[i] = std::max(da, db);
    }
    return y;
}

Shape shape(const Add&, const std::vector<Shape>& in) { return broadcast(in.at(0), in.at(1)); }

Work work(const Add&, const Ctx& c) {
    Ex E = var("E", numel(c.out));
    Work w;
    w.fwd_flops = w.note("fwd FLOPs", E);
    // The gradient passes through unchanged, except to a broadcast input, where dy is summed.
    Ex dgrad = lit(0);
    for (int i = 0; i < 2; ++i)
        if (c.needs_grad[i] && numel(c.in[i]) < E.v) dgrad = dgrad.v ? dgrad + E : E;
    if (dgrad.v) w.dgrad_flops = w.note("dgrad FLOPs", dgrad);
    return w;
}

Shape shape(const Mul&, const std::vector<Shape>& in) { return broadcast(in.at(0), in.at(1)); }

Work work(const Mul&, const Ctx& c) {
    Ex E = var("E", numel(c.out));
    Work w;
    w.fwd_flops = w.note("fwd FLOPs", E);
    // da = dy*b (E), summed over the broadcast dimensions when a is the smaller one (E more).
    int64_t per = 0;
    for (int i = 0; i < 2; ++i)
        if (c.needs_grad[i]) per += numel(c.in[i]) < E.v ? 2 : 1;
    if (per) w.dgrad_flops = w.note("dgrad FLOPs", lit(per) * E);
    w.saved_inputs = {0, 1};
    return w;
}

Shape shape(const Scale&, const std::vector<Shape>& in) { return in.at(0); }

Work work(const Scale&, const Ctx& c) {
    Ex E = var("E", numel(c.out));
    Work w;
    w.fwd_flops = w.note("fwd FLOPs", E);
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", E);
    return w;
}

Shape shape(const LayerScale& op, const std::vector<Shape>& in) {
    normalize_dim(op.dim, in.at(0).size());
    return in[0];
}

Work work(const LayerScale& op, const Ctx& c) {
    const Shape& x = c.in[0];
    Ex E = var("E", numel(x)), C = var("C", x[normalize_dim(op.dim, x.size())]);
    Work w;
    w.params = w.note("params", C);
    w.fwd_flops = w.note("fwd FLOPs", E);
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", E);  // dy*gamma
    w.wgrad_flops = w.note("wgrad FLOPs", lit(2) * E);              // sum(dy*x)
    w.saved_inputs = {0};
    return w;
}

std::string kind(const Add&) { return "add"; }
std::string kind(const Mul&) { return "mul"; }
std::string kind(const Scale&) { return "scale"; }
std::string kind(const LayerScale&) { return "layer_scale"; }
Category category(const Add&, const Shape&) { return Category::elementwise; }
Category category(const Mul&, const Shape&) { return Category::elementwise; }
Category category(const Scale&, const Shape&) { return Category::elementwise; }
Category category(const LayerScale&, const Shape&) { return Category::elementwise; }

// gamma over the scaled dimension.
std::vector<ParamSpec> params(const LayerScale& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    return {{"gamma", {x[size_t(normalize_dim(op.dim, x.size()))]}}};
}

}  // namespace ridge
