#include "engine/ops/softmax.h"

#include "engine/ops/norm.h"

namespace ridge {

Shape shape(const Softmax& op, const std::vector<Shape>& in) {
    normalize_dim(op.dim, in.at(0).size());
    return in[0];
}

Work work(const Softmax&, const Ctx& c) {
    Ex E = var("E", numel(c.out));
    Work w;
    // Numerically safe form: running max (1), x-max (1), exp (1), sum (1), divide (1).
    w.fwd_flops = w.note("fwd FLOPs", lit(5) * E);
    // dx = y*(dy - sum(dy*y)): multiply and sum (2), subtract (1), multiply (1).
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(4) * E);
    w.saves_output = true;
    return w;
}

std::string kind(const Softmax&) { return "softmax"; }
Category category(const Softmax&, const Shape&) { return Category::softmax; }

}  // namespace ridge
