#pragma once
// Fully connected layer over the last dimension of any rank.
// x (M..., C)  w (K, C)  b (K)  y (M..., K);  M is the product of the leading dimensions.
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Linear {
    int64_t K;  // output features
    bool bias = true;
    int64_t C = 0;  // input features the weights expect; 0 takes them from the input
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "fc";
};

Shape shape(const Linear& op, const std::vector<Shape>& in);
Work work(const Linear& op, const Ctx& c);
std::string kind(const Linear& op);
Category category(const Linear& op, const Shape& x0);
std::vector<ParamSpec> params(const Linear& op, const std::vector<Shape>& in);

}  // namespace ridge
