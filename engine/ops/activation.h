#pragma once
// Elementwise nonlinearities.  x (any)  y (same shape)
#include "engine/formula.h"

namespace ridge {

struct Activation {
    enum class Fn { relu, relu6, sigmoid, silu, gelu, hardswish, hardsigmoid } fn;
};

std::string_view fn_name(Activation::Fn fn);
Shape shape(const Activation& op, const std::vector<Shape>& in);
Work work(const Activation& op, const Ctx& c);

}  // namespace ridge
