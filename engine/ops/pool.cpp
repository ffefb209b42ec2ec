#include "engine/ops/pool.h"

#include <algorithm>

namespace ridge {

namespace {
// Sum over the outputs along one axis of how many input positions each window covers, padding
// excluded. A window set's element count is the product of the two axes' sums.
int64_t covered(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad_lo) {
    int64_t sum = 0;
    for (int64_t p = 0; p < out; ++p) {
        int64_t lo = p * stride - pad_lo, hi = std::min(lo + k, in);
        sum += hi - std::max<int64_t>(lo, 0);
    }
    return sum;
}

int64_t adaptive_covered(int64_t in, int64_t out) {
    int64_t sum = 0;
    for (int64_t i = 0; i < out; ++i) sum += (((i + 1) * in + out - 1) / out) - (i * in) / out;
    return sum;
}
}  // namespace

Shape shape(const Pool2d& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (x.size() != 4) throw ShapeError("pooling needs a 4-d input (N,C,H,W)");
    if (op.kernel.h < 1 || op.kernel.w < 1 || op.stride.h < 1 || op.stride.w < 1)
        throw ShapeError("kernel and stride must be positive");
    if (std::max(op.pad.top, op.pad.bottom) * 2 > op.kernel.h || std::max(op.pad.left, op.pad.right) * 2 > op.kernel.w)
        throw ShapeError("padding must be at most half the kernel");
    int64_t P = window_out(x[2], op.pad.top, op.pad.bottom, op.kernel.h, op.stride.h, 1, op.ceil_mode);
    int64_t Q = window_out(x[3], op.pad.left, op.pad.right, op.kernel.w, op.stride.w, 1, op.ceil_mode);
    if (P < 1 || Q < 1)
        throw ShapeError(cat("output size ", P, "x", Q, " is not positive: kernel ", op.kernel.h, "x", op.kernel.w,
                             " does not fit the padded input"));
    return {x[0], x[1], P, Q};
}

Work work(const Pool2d& op, const Ctx& c) {
    const Shape &x = c.in[0], &y = c.out;
    Ex N = var("N", x[0]), C = var("C", x[1]), P = var("P", y[2]), Q = var("Q", y[3]);
    // Sh, Sw: input rows (columns) covered by the windows, summed over the outputs, padding excluded.
    Ex Sh = var("Sh", covered(x[2], y[2], op.kernel.h, op.stride.h, op.pad.top));
    Ex Sw = var("Sw", covered(x[3], y[3], op.kernel.w, op.stride.w, op.pad.left));
    Work w;
    if (op.kind == Pool2d::Kind::max) {
        // A window of n elements needs n-1 comparisons; backward adds dy at the argmax.
        w.fwd_flops = w.note("fwd FLOPs", N * C * (Sh * Sw - P * Q));
        if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", N * C * P * Q);
        w.saved_inputs = {0};
        w.saved_extra_bytes = numel(y) * 8;  // argmax indices, int64 as PyTorch keeps them
    } else {
        // n-1 adds and one divide per window; backward divides dy once and adds it n times.
        w.fwd_flops = w.note("fwd FLOPs", N * C * Sh * Sw);
        if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", N * C * (Sh * Sw + P * Q));
    }
    return w;
}

Shape shape(const AdaptiveAvgPool2d& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (x.size() != 4) throw ShapeError("adaptive pooling needs a 4-d input (N,C,H,W)");
    if (op.out.h < 1 || op.out.w < 1) throw ShapeError("output size must be positive");
    return {x[0], x[1], op.out.h, op.out.w};
}

Work work(const AdaptiveAvgPool2d&, const Ctx& c) {
    const Shape &x = c.in[0], &y = c.out;
    Ex N = var("N", x[0]), C = var("C", x[1]), P = var("P", y[2]), Q = var("Q", y[3]);
    Ex Sh = var("Sh", adaptive_covered(x[2], y[2])), Sw = var("Sw", adaptive_covered(x[3], y[3]));
    Work w;
    w.fwd_flops = w.note("fwd FLOPs", N * C * Sh * Sw);
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", N * C * (Sh * Sw + P * Q));
    return w;
}

std::string kind(const Pool2d& op) { return op.kind == Pool2d::Kind::max ? "maxpool" : "avgpool"; }
Category category(const Pool2d&, const Shape&) { return Category::pool; }
std::string kind(const AdaptiveAvgPool2d&) { return "adaptive_avgpool"; }
Category category(const AdaptiveAvgPool2d&, const Shape&) { return Category::pool; }

}  // namespace ridge
