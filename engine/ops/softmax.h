#pragma once
// Softmax along one dimension.  x (any)  y (same shape)
#include "engine/formula.h"

namespace ridge {

struct Softmax {
    int dim = -1;
};

Shape shape(const Softmax& op, const std::vector<Shape>& in);
Work work(const Softmax& op, const Ctx& c);

}  // namespace ridge
