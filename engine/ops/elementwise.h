#pragma once
// Elementwise arithmetic with NumPy broadcasting.
// Add, Mul:     a, b (broadcastable)  y (broadcast shape); Mul with b (N,C,1,1) is squeeze-excitation
// Scale:        y = s*x with a constant s, as attention's 1/sqrt(d)
// LayerScale:   y = gamma*x with gamma (x[dim]) learned, as ConvNeXt's layer scale
#include "engine/formula.h"

namespace ridge {

struct Add {};
struct Mul {};
struct Scale {
    double s;
};
struct LayerScale {
    int dim = 1;
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

}  // namespace ridge
