#include "engine/ops/linear.h"

namespace ridge {

Shape shape(const Linear& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (x.size() < 2) throw ShapeError("linear needs at least a 2-d input (M,C)");
    if (op.K < 1) throw ShapeError("output features must be positive");
    if (op.C && op.C != x.back()) throw ShapeError(cat("input has ", x.back(), " features, weights expect ", op.C));
    Shape y = x;
    y.back() = op.K;
    return y;
}

Work work(const Linear& op, const Ctx& c) {
    const Shape& x = c.in[0];
    Ex M = var("M", numel(x) / x.back()), C = var("C", x.back()), K = var("K", op.K);
    Work w;
    Ex params = K * C;
    if (op.bias) params = params + K;
    w.params = w.note("params", params);
    Ex macs = M * K * C;
    w.macs = w.note("MACs", macs);
    Ex fwd = lit(2) * var("MACs", macs.v);
    if (op.bias) fwd = fwd + M * K;
    w.fwd_flops = w.note("fwd FLOPs", fwd);
    // dx = dy * w and dw = dy^T * x are GEMMs of the same size as the forward; db sums dy over M.
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(2) * var("MACs", macs.v));
    Ex wgrad = lit(2) * var("MACs", macs.v);
    if (op.bias) wgrad = wgrad + M * K;
    w.wgrad_flops = w.note("wgrad FLOPs", wgrad);
    w.saved_inputs = {0};
    return w;
}

std::string kind(const Linear&) { return "linear"; }
Category category(const Linear&, const Shape&) { return Category::linear; }

// weight (K, C), then bias (K) when the layer has one.
std::vector<ParamSpec> params(const Linear& op, const std::vector<Shape>& in) {
    std::vector<ParamSpec> p{{"weight", {op.K, in.at(0).back()}}};
    if (op.bias) p.push_back({"bias", {op.K}});
    return p;
}

}  // namespace ridge
