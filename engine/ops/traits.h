#pragma once
// What the graph asks of every op beside its shape rule and cost formula. Each op struct declares
// these itself, next to its parameters, with no defaults anywhere, so an op that forgets one does
// not compile (engine/op.cpp visits them):
//   static constexpr int arity;               inputs it takes; 0 means one or more
//   static constexpr bool has_params;         it owns tensors, which params(op, in) lists
//   static constexpr bool aliases;            its output is a view of input 0: no bytes, no forward
//                                             traffic (a slice's or select's gradient: analysis.cpp)
//   static constexpr std::string_view label;  base of default layer names ("conv"); "" uses kind()
// and beside its shape rule:
//   std::string kind(const Op&);                                 the layer's type column
//   Category category(const Op&, const Shape& x0);               its group in the by-type totals
//   std::vector<ParamSpec> params(const Op&, const std::vector<Shape>& in);   when has_params
#include <string>
#include <string_view>
#include <vector>

#include "engine/shape.h"

namespace ridge {

// A tensor a layer owns. Learned ones are trained and counted in params; the rest (batchnorm's
// running statistics) are state the inference forward reads.
struct ParamSpec {
    std::string name;  // "weight", "bias", "gamma", "beta", "running_mean", "running_var", "token", "embedding"
    Shape shape;
    bool learned = true;
};

// Layer-type groups for the by-type totals, in report order.
enum class Category { conv, dwconv, linear, matmul, norm, activation, pool, elementwise, softmax, embedding, data_movement, identity };
inline constexpr int category_count = 12;
std::string_view category_name(Category c);

}  // namespace ridge
