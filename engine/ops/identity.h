#pragma once
// Regularizers that are the identity at inference and cost nothing in the model: they alias
// their input. Kept in the graph so the layer list matches the network's definition.
#include "engine/formula.h"

namespace ridge {

struct Dropout {
    double p;
};
struct StochasticDepth {
    double p;
};

template <class Op>
    requires std::is_same_v<Op, Dropout> || std::is_same_v<Op, StochasticDepth>
Shape shape(const Op&, const std::vector<Shape>& in) {
    return in.at(0);
}
template <class Op>
    requires std::is_same_v<Op, Dropout> || std::is_same_v<Op, StochasticDepth>
Work work(const Op&, const Ctx&) {
    return {};
}

}  // namespace ridge
