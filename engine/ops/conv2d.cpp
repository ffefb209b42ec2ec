#include "engine/ops/conv2d.h"

namespace ridge {

int64_t window_out(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t k, int64_t stride,
                   int64_t dilation, bool ceil_mode) {
    // PyTorch floors (in + pads - extent + [stride-1 with ceil_mode]) / stride; a negative
    // numerator means no window fits. With ceil_mode a last, partial window may hang over the end.
    int64_t num = in + pad_lo + pad_hi - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
    if (num < 0) return 0;
    int64_t out = num / stride + 1;
    // PyTorch's rule: with ceil_mode the last window must start inside the input or the left
    // padding, otherwise it would only see right padding.
    if (ceil_mode && (out - 1) * stride >= in + pad_lo) --out;
    return out;
}

Shape shape(const Conv2d& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (x.size() != 4) throw ShapeError("conv2d needs a 4-d input (N,C,H,W)");
    int64_t C = x[1];
    if (op.C && op.C != C) throw ShapeError(cat("input has ", C, " channels, weights expect ", op.C));
    if (op.K < 1 || op.kernel.h < 1 || op.kernel.w < 1 || op.stride.h < 1 || op.stride.w < 1 ||
        op.dilation.h < 1 || op.dilation.w < 1 || op.G < 1)
        throw ShapeError("channels, kernel, stride, dilation and groups must be positive");
    if (op.pad.top < 0 || op.pad.bottom < 0 || op.pad.left < 0 || op.pad.right < 0)
        throw ShapeError("padding must not be negative");
    if (C % op.G != 0) throw ShapeError(cat("groups ", op.G, " do not divide the ", C, " input channels"));
    if (op.K % op.G != 0) throw ShapeError(cat("groups ", op.G, " do not divide the ", op.K, " output channels"));
    int64_t eff_r = op.dilation.h * (op.kernel.h - 1) + 1, eff_s = op.dilation.w * (op.kernel.w - 1) + 1;
    int64_t ph = x[2] + op.pad.top + op.pad.bottom, pw = x[3] + op.pad.left + op.pad.right;
    if (eff_r > ph || eff_s > pw)
        throw ShapeError(cat("kernel ", eff_r, "x", eff_s, " is larger than the padded input ", ph, "x", pw));
    int64_t P = window_out(x[2], op.pad.top, op.pad.bottom, op.kernel.h, op.stride.h, op.dilation.h);
    int64_t Q = window_out(x[3], op.pad.left, op.pad.right, op.kernel.w, op.stride.w, op.dilation.w);
    return {x[0], op.K, P, Q};
}

bool is_depthwise(const Conv2d& op, const Shape& x) { return op.G > 1 && op.G == x[1]; }

Work work(const Conv2d& op, const Ctx& c) {
    const Shape &x = c.in[0], &y = c.out;
    Ex N = var("N", x[0]), K = var("K", op.K), CG = var("C/G", x[1] / op.G);
    Ex R = var("R", op.kernel.h), S = var("S", op.kernel.w), P = var("P", y[2]), Q = var("Q", y[3]);
    Work w;
    Ex params = K * CG * R * S;
    if (op.bias) params = params + K;
    w.params = w.note("params", params);
    Ex macs = N * K * P * Q * CG * R * S;
    w.macs = w.note("MACs", macs);
    Ex fwd = lit(2) * var("MACs", macs.v);
    if (op.bias) fwd = fwd + N * K * P * Q;
    w.fwd_flops = w.note("fwd FLOPs", fwd);
    // dgrad is the transposed convolution of dy with w: the same multiply-adds as the forward.
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(2) * var("MACs", macs.v));
    // wgrad correlates x with dy: again the same multiply-adds; the bias gradient sums dy.
    Ex wgrad = lit(2) * var("MACs", macs.v);
    if (op.bias) wgrad = wgrad + N * K * P * Q;
    w.wgrad_flops = w.note("wgrad FLOPs", wgrad);
    w.saved_inputs = {0};
    return w;
}

std::string kind(const Conv2d&) { return "conv2d"; }
Category category(const Conv2d& op, const Shape& x0) { return is_depthwise(op, x0) ? Category::dwconv : Category::conv; }

// weight (K, C/G, R, S), then bias (K) when the conv has one.
std::vector<ParamSpec> params(const Conv2d& op, const std::vector<Shape>& in) {
    std::vector<ParamSpec> p{{"weight", {op.K, in.at(0)[1] / op.G, op.kernel.h, op.kernel.w}}};
    if (op.bias) p.push_back({"bias", {op.K}});
    return p;
}

}  // namespace ridge
