// Softmax's gradient along rows of contiguous elements: dx = y * (dy - sum over the row of dy * y).
// oneDNN 2.6 has a jit softmax backward only for AVX-512; on AVX2 hosts vit_b_16's attention
// gradients (8x12x197 rows of 197) ran its reference implementation at 7 to 9 ms a layer, 8x what
// memory allows. Memory-bound: each row is read twice (it stays in L1) and written once.
// y, dy, dx (rows, n) plain
#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

RIDGE_SIMD_CLONES void softmax_backward_row(const float* y, const float* dy, float* dx, int64_t n) {
    using V = Vec<16>;
    const float dot = simd::dot(dy, y, n);
    const V d = V{} + dot;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) store(dx + i, load<V>(y + i) * (load<V>(dy + i) - d));
    for (; i < n; ++i) dx[i] = y[i] * (dy[i] - dot);
}

}  // namespace

void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t r = 0; r < rows; ++r) softmax_backward_row(y + r * n, dy + r * n, dx + r * n, n);
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
