#pragma once
// The micro-kernel of kernels/simd's matrix products (Winograd's products at each point, the
// linear layers on many rows): a block of up to six rows times a panel of 16 columns.
#include <cstdint>

#include "kernels/simd/simd.h"  // RIDGE_SIMD_ISA, which names the namespace below
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

// m (R x 16) = a (R x n, rows a_row and terms a_term floats apart) times b (n x 16, terms b_term
// apart), or m += that where add: twelve accumulators, two vectors of b and a broadcast in the
// sixteen AVX2 registers. The unrolling is asked for: GCC 12 at -O2 kept the accumulators in memory
// (a loop over rows), and a broadcast written 0 + s cost an add. The accumulators start at zero
// and m is added at the end: loaded first, where add is a run-time flag, GCC kept them in memory.
// The loop over terms is unrolled four times too (the same sums in the same order): on one core
// of the Zen 3, with its loop and branch once per term, the kernel alone on data in L1 ran at 70
// to 89 GFLOP/s against 91 to 93 for bare FMAs, and unrolled at 81 to 92. On 2 threads, medians of
// alternated calls in a test program, linear_gemm on vit_b_16's four shapes at batch 1 took 0.87
// to 1.07 of the time (out_proj's 1.07 in one of two runs), Winograd's forward 0.80 to 0.98.
template <int R>
RIDGE_SIMD_INLINE void multiply_rows(const float* a, int64_t a_row, int64_t a_term, const float* b, int64_t b_term,
                                     int64_t n, float* m, int64_t ldm, bool add) {
    using V = Vec8;
    V acc0[R], acc1[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc0[i] = acc1[i] = V{};
#pragma GCC unroll 4
    for (int64_t c = 0; c < n; ++c) {
        const V b0 = load<V>(b + c * b_term), b1 = load<V>(b + c * b_term + 8);
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
            const float s = a[i * a_row + c * a_term];
            const V ai = {s, s, s, s, s, s, s, s};
            acc0[i] += ai * b0;
            acc1[i] += ai * b1;
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
        if (add) acc0[i] += load<V>(m + i * ldm), acc1[i] += load<V>(m + i * ldm + 8);
        store(m + i * ldm, acc0[i]);
        store(m + i * ldm + 8, acc1[i]);
    }
}

// The same for any R from 1 to 6, chosen at run time.
RIDGE_SIMD_INLINE void multiply_rows(int64_t R, const float* a, int64_t a_row, int64_t a_term, const float* b,
                                     int64_t b_term, int64_t n, float* m, int64_t ldm, bool add) {
    switch (R) {
        case 6: multiply_rows<6>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
        case 5: multiply_rows<5>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
        case 4: multiply_rows<4>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
        case 3: multiply_rows<3>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
        case 2: multiply_rows<2>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
        default: multiply_rows<1>(a, a_row, a_term, b, b_term, n, m, ldm, add); break;
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
