#pragma once
// Batched matrix product of two activations (attention): no weights.
// a (B..., M, L)  b (B..., L, J), or b (B..., J, L) with transpose_b  y (B..., M, J)
#include "engine/formula.h"

namespace ridge {

struct Matmul {
    bool transpose_b = false;  // y = a * b^T, as in q * k^T, without materializing k^T
};

Shape shape(const Matmul& op, const std::vector<Shape>& in);
Work work(const Matmul& op, const Ctx& c);

}  // namespace ridge
