#pragma once
// Learned tokens of a vision transformer.
// ClassToken:    x (N,T,D) -> y (N,T+1,D), a learned (D) vector prepended to every sequence
// PosEmbedding:  x (N,T,D) -> y = x + e, e (T,D) learned
#include "engine/formula.h"

namespace ridge {

struct ClassToken {};
struct PosEmbedding {};

Shape shape(const ClassToken& op, const std::vector<Shape>& in);
Work work(const ClassToken& op, const Ctx& c);
Shape shape(const PosEmbedding& op, const std::vector<Shape>& in);
Work work(const PosEmbedding& op, const Ctx& c);

}  // namespace ridge
