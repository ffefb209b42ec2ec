#pragma once
// Batched matrix product of two activations (attention): no weights.
// a (B..., M, L)  b (B..., L, J), or b (B..., J, L) with transpose_b  y (B..., M, J)
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Matmul {
    bool transpose_b = false;  // y = a * b^T, as in q * k^T, without materializing k^T
    static constexpr int arity = 2;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};

Shape shape(const Matmul& op, const std::vector<Shape>& in);
Work work(const Matmul& op, const Ctx& c);
std::string kind(const Matmul& op);
Category category(const Matmul& op, const Shape& x0);

}  // namespace ridge
