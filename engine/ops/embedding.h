#pragma once
// Learned tokens of a vision transformer.
// ClassToken:    x (N,T,D) -> y (N,T+1,D), a learned (D) vector prepended to every sequence
// PosEmbedding:  x (N,T,D) -> y = x + e, e (T,D) learned
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct ClassToken {
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "";
};
struct PosEmbedding {
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "";
};

Shape shape(const ClassToken& op, const std::vector<Shape>& in);
Work work(const ClassToken& op, const Ctx& c);
Shape shape(const PosEmbedding& op, const std::vector<Shape>& in);
Work work(const PosEmbedding& op, const Ctx& c);
std::string kind(const ClassToken& op);
std::string kind(const PosEmbedding& op);
Category category(const ClassToken& op, const Shape& x0);
Category category(const PosEmbedding& op, const Shape& x0);
std::vector<ParamSpec> params(const ClassToken& op, const std::vector<Shape>& in);
std::vector<ParamSpec> params(const PosEmbedding& op, const std::vector<Shape>& in);

}  // namespace ridge
