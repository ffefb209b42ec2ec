#pragma once
// Softmax along one dimension.  x (any)  y (same shape)
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Softmax {
    int dim = -1;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};

Shape shape(const Softmax& op, const std::vector<Shape>& in);
Work work(const Softmax& op, const Ctx& c);
std::string kind(const Softmax& op);
Category category(const Softmax& op, const Shape& x0);

}  // namespace ridge
