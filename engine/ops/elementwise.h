#pragma once
// Elementwise arithmetic with NumPy broadcasting.
// Add, Mul:     a, b (broadcastable)  y (broadcast shape); Mul with b (N,C,1,1) is squeeze-excitation
// Scale:        y = s*x with a constant s, as attention's 1/sqrt(d)
// LayerScale:   y = gamma*x with gamma (x[dim]) learned, as ConvNeXt's layer scale
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Add {
    static constexpr int arity = 2;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct Mul {
    static constexpr int arity = 2;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct Scale {
    double s;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct LayerScale {
    int dim = 1;
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "";
};

Shape broadcast(const Shape& a, const Shape& b);  // throws ShapeError when not broadcastable

Shape shape(const Add& op, const std::vector<Shape>& in);
Work work(const Add& op, const Ctx& c);
Shape shape(const Mul& op, const std::vector<Shape>& in);
Work work(const Mul& op, const Ctx& c);
Shape shape(const Scale& op, const std::vector<Shape>& in);
Work work(const Scale& op, const Ctx& c);
Shape shape(const LayerScale& op, const std::vector<Shape>& in);
Work work(const LayerScale& op, const Ctx& c);
std::string kind(const Add& op);
std::string kind(const Mul& op);
std::string kind(const Scale& op);
std::string kind(const LayerScale& op);
Category category(const Add& op, const Shape& x0);
Category category(const Mul& op, const Shape& x0);
Category category(const Scale& op, const Shape& x0);
Category category(const LayerScale& op, const Shape& x0);
std::vector<ParamSpec> params(const LayerScale& op, const std::vector<Shape>& in);

}  // namespace ridge
