#pragma once
// Elementwise nonlinearities.  x (any)  y (same shape)
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Activation {
    enum class Fn { relu, relu6, sigmoid, silu, gelu, hardswish, hardsigmoid } fn;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};

std::string_view fn_name(Activation::Fn fn);
Shape shape(const Activation& op, const std::vector<Shape>& in);
Work work(const Activation& op, const Ctx& c);
std::string kind(const Activation& op);
Category category(const Activation& op, const Shape& x0);

}  // namespace ridge
