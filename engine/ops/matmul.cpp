#include "engine/ops/matmul.h"

namespace ridge {

Shape shape(const Matmul& op, const std::vector<Shape>& in) {
    const Shape &a = in.at(0), &b = in.at(1);
    if (a.size() < 2 || a.size() != b.size()) throw ShapeError("matmul needs two inputs of the same rank >= 2");
    for (size_t i = 0; i + 2 < a.size(); ++i)
        if (a[i] != b[i]) throw ShapeError(cat("batch dimension ", i, " differs: ", a[i], " vs ", b[i]));
    size_t r = a.size();
    int64_t L_b = op.transpose_b ? b[r - 1] : b[r - 2], J = op.transpose_b ? b[r - 2] : b[r - 1];
    if (a[r - 1] != L_b)
        throw ShapeError(cat("inner dimensions differ: a has ", a[r - 1], " columns, b has ", L_b, " rows"));
    Shape y = a;
    y[r - 1] = J;
    return y;
}

Work work(const Matmul&, const Ctx& c) {
    const Shape &a = c.in[0], &y = c.out;
    size_t r = a.size();
    Ex B = var("B", numel(a) / (a[r - 2] * a[r - 1])), M = var("M", a[r - 2]), L = var("L", a[r - 1]),
       J = var("J", y[r - 1]);
    Work w;
    Ex macs = B * M * J * L;
    w.macs = w.note("MACs", macs);
    w.fwd_flops = w.note("fwd FLOPs", lit(2) * var("MACs", macs.v));
    // da = dy * b^T and db = a^T * dy: one product of the forward's size per input needing it.
    int64_t grads = int64_t(c.needs_grad[0]) + int64_t(c.needs_grad[1]);
    if (grads) w.dgrad_flops = w.note("dgrad FLOPs", lit(2 * grads) * var("MACs", macs.v));
    w.saved_inputs = {0, 1};
    return w;
}

std::string kind(const Matmul&) { return "matmul"; }
Category category(const Matmul&, const Shape&) { return Category::matmul; }

}  // namespace ridge
