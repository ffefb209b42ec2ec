#pragma once
// Regularizers that are the identity at inference and cost nothing in the model: they alias
// their input. Kept in the graph so the layer list matches the network's definition.
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Dropout {
    double p;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};
struct StochasticDepth {
    double p;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};

inline std::string kind(const Dropout&) { return "dropout"; }
inline std::string kind(const StochasticDepth&) { return "stochastic_depth"; }
template <class Op>
    requires std::is_same_v<Op, Dropout> || std::is_same_v<Op, StochasticDepth>
Category category(const Op&, const Shape&) {
    return Category::identity;
}

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
