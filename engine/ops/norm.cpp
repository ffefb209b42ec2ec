#include "engine/ops/norm.h"

namespace ridge {

int normalize_dim(int dim, size_t rank) {
    int r = int(rank);
    int d = dim < 0 ? dim + r : dim;
    if (d < 0 || d >= r) throw ShapeError(cat("dimension ", dim, " is out of range for rank ", r));
    return d;
}

Shape shape(const BatchNorm&, const std::vector<Shape>& in) {
    if (in.at(0).size() < 2) throw ShapeError("batchnorm needs an input with a channel dimension (N,C,...)");
    return in[0];
}

Work work(const BatchNorm&, const Ctx& c) {
    const Shape& x = c.in[0];
    Ex E = var("E", numel(x)), C = var("C", x[1]);
    Work w;
    w.params = w.note("params", lit(2) * C);
    // Inference form: mean, variance, gamma and beta fold into one scale and shift per channel.
    w.fwd_flops = w.note("fwd FLOPs", lit(2) * E);
    // dx = gamma*istd*(dy - (sum(dy) + xhat*sum(dy*xhat))/M): 5 per element, given both sums.
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(5) * E);
    // xhat = (x-mean)*istd (2), dgamma = sum(dy*xhat) (2), dbeta = sum(dy) (1).
    w.wgrad_flops = w.note("wgrad FLOPs", lit(5) * E);
    w.saved_inputs = {0};
    w.saved_extra_bytes = 2 * x[1] * 4;  // batch mean and inverse std, fp32 as cuDNN and oneDNN keep them
    return w;
}

Shape shape(const LayerNorm& op, const std::vector<Shape>& in) {
    normalize_dim(op.dim, in.at(0).size());
    return in[0];
}

Work work(const LayerNorm& op, const Ctx& c) {
    const Shape& x = c.in[0];
    int64_t D = x[normalize_dim(op.dim, x.size())];
    Ex E = var("E", numel(x)), Dx = var("D", D);
    Work w;
    w.params = w.note("params", lit(2) * Dx);
    // mean (1), x-mean (1), square and sum for the variance (2), times istd (1), gamma and beta (2).
    w.fwd_flops = w.note("fwd FLOPs", lit(7) * E);
    // g = dy*gamma (1), sum(g) (1), sum(g*xhat) (2), dx = istd*(g - (sum(g) + xhat*sum(g*xhat))/D) (5).
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(9) * E);
    w.wgrad_flops = w.note("wgrad FLOPs", lit(5) * E);
    w.saved_inputs = {0};
    w.saved_extra_bytes = 2 * (numel(x) / D) * 4;  // per-row mean and inverse std, fp32
    return w;
}

std::string kind(const BatchNorm&) { return "batchnorm"; }
Category category(const BatchNorm&, const Shape&) { return Category::norm; }

// gamma, beta (learned), then the running statistics the inference forward reads (not learned).
std::vector<ParamSpec> params(const BatchNorm&, const std::vector<Shape>& in) {
    int64_t C = in.at(0)[1];
    return {{"gamma", {C}}, {"beta", {C}}, {"running_mean", {C}, false}, {"running_var", {C}, false}};
}

std::string kind(const LayerNorm&) { return "layernorm"; }
Category category(const LayerNorm&, const Shape&) { return Category::norm; }

std::vector<ParamSpec> params(const LayerNorm& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    int64_t D = x[size_t(normalize_dim(op.dim, x.size()))];
    return {{"gamma", {D}}, {"beta", {D}}};
}

}  // namespace ridge
