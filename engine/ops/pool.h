#pragma once
// Pooling.  x (N,C,H,W)  y (N,C,P,Q)
#include "engine/ops/conv2d.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Pool2d {
    enum class Kind { max, avg } kind;
    Hw kernel;  // R, S
    Hw stride;
    Padding pad = 0;
    bool ceil_mode = false;
    bool count_include_pad = true;  // avg only: the divisor's choice, which changes no count
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};

// torchvision's AdaptiveAvgPool2d: window i covers [floor(i*H/P), ceil((i+1)*H/P)).
struct AdaptiveAvgPool2d {
    Hw out;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};

Shape shape(const Pool2d& op, const std::vector<Shape>& in);
Work work(const Pool2d& op, const Ctx& c);
Shape shape(const AdaptiveAvgPool2d& op, const std::vector<Shape>& in);
Work work(const AdaptiveAvgPool2d& op, const Ctx& c);
std::string kind(const Pool2d& op);
Category category(const Pool2d& op, const Shape& x0);
std::string kind(const AdaptiveAvgPool2d& op);
Category category(const AdaptiveAvgPool2d& op, const Shape& x0);

}  // namespace ridge
