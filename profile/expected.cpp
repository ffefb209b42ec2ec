#include "profile/expected.h"

#include <cstdio>

namespace ridge::profile {

int64_t taps_inside(int64_t extent, int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
    int64_t n = 0;
    for (int64_t p = 0; p < out; ++p)
        for (int64_t r = 0; r < k; ++r) {
            int64_t at = p * stride - pad + r * dilation;
            n += at >= 0 && at < extent;
        }
    return n;
}

std::optional<Expected> expected_flops(const Graph& g, int node, StepPhase phase, const std::string& impl,
                                       int64_t analytic) {
    if (node < 0 || analytic <= 0) return std::nullopt;
    const Node& n = g.nodes()[size_t(node)];
    const auto* op = std::get_if<Conv2d>(&n.op);
    if (!op) return std::nullopt;
    const Shape& x = g.tensor(n.inputs[0]).shape;  // (N,C,H,W)
    const Shape& y = g.tensor(n.output).shape;     // (N,K,P,Q)
    int64_t N = x[0], CG = x[1] / op->G, K = op->K, P = y[2], Q = y[3];
    int64_t vh = taps_inside(x[2], P, op->kernel.h, op->stride.h, op->pad.top, op->dilation.h);
    int64_t vw = taps_inside(x[3], Q, op->kernel.w, op->stride.w, op->pad.left, op->dilation.w);
    int64_t all = P * op->kernel.h * Q * op->kernel.w;
    if (vh * vw == all) return std::nullopt;
    double share = 1.0 - double(vh * vw) / double(all);
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.1f%%", 100 * share);
    // kernels/simd's depthwise conv, its data and weight gradients ("ridge:...") visit only the taps
    // inside the map (the forward's last strip of 8 outputs also computes those past the row, up
    // to 7, and drops them); its grouped conv of 4 channels a group multiplies the padding's columns.
    const bool depthwise = op->G == x[1] && op->K == x[1];
    bool direct = impl.rfind("brg", 0) == 0 || impl.rfind("jit", 0) == 0 || (depthwise && impl.rfind("ridge", 0) == 0);
    if (!direct) return Expected{analytic, cat(pct, " of the MACs multiply zero padding (counted: not a direct kernel)")};
    // The model's extra terms (a bias added, or summed for its gradient) stay as they are.
    int64_t macs = N * K * CG * P * Q * op->kernel.h * op->kernel.w;
    int64_t extra = phase == StepPhase::dgrad ? 0 : analytic - 2 * macs;
    int64_t inside = N * K * CG * vh * vw;
    return Expected{2 * inside + extra, cat(pct, " of the MACs multiply zero padding, which a direct kernel skips")};
}

}  // namespace ridge::profile
