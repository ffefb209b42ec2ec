#pragma once
// Pooling.  x (N,C,H,W)  y (N,C,P,Q)
#include "engine/ops/conv2d.h"

namespace ridge {

struct Pool2d {
    enum class Kind { max, avg } kind;
    Hw kernel;  // R, S
    Hw stride;
    Padding pad = 0;
    bool ceil_mode = false;
    bool count_include_pad = true;  // avg only: the divisor's choice, which changes no count
};

// torchvision's AdaptiveAvgPool2d: window i covers [floor(i*H/P), ceil((i+1)*H/P)).
struct AdaptiveAvgPool2d {
    Hw out;
};

Shape shape(const Pool2d& op, const std::vector<Shape>& in);
Work work(const Pool2d& op, const Ctx& c);
Shape shape(const AdaptiveAvgPool2d& op, const std::vector<Shape>& in);
Work work(const AdaptiveAvgPool2d& op, const Ctx& c);

}  // namespace ridge
