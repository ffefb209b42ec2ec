#pragma once
// 2-D convolution.  x (N,C,H,W)  w (K,C/G,R,S)  b (K)  y (N,K,P,Q)
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

// A pair (height, width); a single number means both.
struct Hw {
    int64_t h, w;
    Hw(int64_t v = 0) : h(v), w(v) {}
    Hw(int64_t h_, int64_t w_) : h(h_), w(w_) {}
};

// Zero padding: one number, (height, width), or (top, bottom, left, right) for asymmetric padding.
struct Padding {
    int64_t top = 0, bottom = 0, left = 0, right = 0;
    Padding(int64_t v = 0) : top(v), bottom(v), left(v), right(v) {}
    Padding(int64_t h, int64_t w) : top(h), bottom(h), left(w), right(w) {}
    Padding(int64_t t, int64_t b, int64_t l, int64_t r) : top(t), bottom(b), left(l), right(r) {}
};

struct Conv2d {
    int64_t K;       // output channels
    Hw kernel;       // R, S
    Hw stride = 1;
    Padding pad = 0;
    Hw dilation = 1;
    int64_t G = 1;   // groups; G == C is depthwise
    bool bias = false;
    int64_t C = 0;   // input channels the weights expect; 0 takes them from the input
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "conv";
};

// Output extent of a sliding window, or <= 0 when the window does not fit.
int64_t window_out(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t k, int64_t stride,
                   int64_t dilation, bool ceil_mode = false);

Shape shape(const Conv2d& op, const std::vector<Shape>& in);
Work work(const Conv2d& op, const Ctx& c);
bool is_depthwise(const Conv2d& op, const Shape& x);
std::string kind(const Conv2d& op);
Category category(const Conv2d& op, const Shape& x0);
std::vector<ParamSpec> params(const Conv2d& op, const std::vector<Shape>& in);

}  // namespace ridge
