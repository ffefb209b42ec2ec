#pragma once
// The micro-kernel of kernels/simd's matrix products (Winograd's products at each point, the
// linear layers on many rows, a net's first conv): a block of up to six rows times a panel of 16
// columns.
#include <cstdint>

#include "kernels/simd/simd.h"  // RIDGE_SIMD_ISA, which names the namespace below
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

// m (R x 16) = a (R x n, rows a_row and terms a_term floats apart) times b (n x 16, terms b_term
// apart), or m += that where add. With runs, the terms are `runs` runs of n, run j's at
// a + j * a_run in a and after run j - 1's in b (a conv's taps, a run per input row): the
// accumulators stay in registers across runs (image_conv.cpp has the figures); added to the
// linear layers and Winograd, runs of 1, the loop left their times level (0.96 to 1.02, medians of
// alternated calls). m's rows are ldm floats apart, and a row's second 8 columns `half` floats
// after its first (8 where the 16 are contiguous; in nChw8c the stride of a channel block).
// Twelve accumulators, two vectors of b and a broadcast fill the sixteen AVX2 registers. The
// unrolling is asked for: GCC 12 at -O2 kept the accumulators in memory (a loop over rows), and a
// broadcast written 0 + s cost an add. The accumulators start at zero and m is added at the end:
// loaded first, where add is a run-time flag, GCC kept them in memory. The loop over terms is
// unrolled four times too (the same sums in the same order): on one core of the Zen 3, with its
// loop and branch once per term, the kernel alone on data in L1 ran at 70 to 89 GFLOP/s against
// 91 to 93 for bare FMAs, and unrolled at 81 to 92. On 2 threads, medians of alternated calls in a
// test program, linear_gemm on vit_b_16's four shapes at batch 1 took 0.87 to 1.07 of the time
// (out_proj's 1.07 in one of two runs), Winograd's forward 0.80 to 0.98.
template <int R>
RIDGE_SIMD_INLINE void multiply_rows(const float* a, int64_t a_row, int64_t a_term, const float* b, int64_t b_term,
                                     int64_t n, float* m, int64_t ldm, bool add, int64_t half = 8, int64_t runs = 1,
                                     int64_t a_run = 0) {
    using V = Vec8;
    V acc0[R], acc1[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc0[i] = acc1[i] = V{};
    for (int64_t run = 0; run < runs; ++run, a += a_run, b += n * b_term) {
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
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
        if (add) acc0[i] += load<V>(m + i * ldm), acc1[i] += load<V>(m + i * ldm + half);
        store(m + i * ldm, acc0[i]);
        store(m + i * ldm + half, acc1[i]);
    }
}

// The same for any R from 1 to 6, chosen at run time.
RIDGE_SIMD_INLINE void multiply_rows(int64_t R, const float* a, int64_t a_row, int64_t a_term, const float* b,
                                     int64_t b_term, int64_t n, float* m, int64_t ldm, bool add, int64_t half = 8,
                                     int64_t runs = 1, int64_t a_run = 0) {
    switch (R) {
        case 6:
            multiply_rows<6>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
        case 5:
            multiply_rows<5>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
        case 4:
            multiply_rows<4>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
        case 3:
            multiply_rows<3>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
        case 2:
            multiply_rows<2>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
        default:
            multiply_rows<1>(a, a_row, a_term, b, b_term, n, m, ldm, add, half, runs, a_run);
            break;
    }
}

// m (4 x 24, rows ldm floats apart) = a (4 x n, rows a_row floats apart, terms adjacent) times b
// (n x 24, dense): multiply_rows for a panel of three vectors, again twelve accumulators, the
// vectors of b and a broadcast in the sixteen registers. Winograd's groups of 24 channels
// (regnet_x_1_6gf) take it: in panels of 16 each group's 24 outputs were padded to 32, and its
// product did a third more multiplies than needed.
RIDGE_SIMD_INLINE void multiply_rows24(const float* a, int64_t a_row, const float* b, int64_t n, float* m,
                                       int64_t ldm) {
    using V = Vec8;
    V acc[4][3];
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) acc[i][0] = acc[i][1] = acc[i][2] = V{};
#pragma GCC unroll 4
    for (int64_t c = 0; c < n; ++c) {
        const V b0 = load<V>(b + c * 24), b1 = load<V>(b + c * 24 + 8), b2 = load<V>(b + c * 24 + 16);
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
            const float s = a[i * a_row + c];
            const V ai = {s, s, s, s, s, s, s, s};
            acc[i][0] += ai * b0;
            acc[i][1] += ai * b1;
            acc[i][2] += ai * b2;
        }
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        store(m + i * ldm, acc[i][0]);
        store(m + i * ldm + 8, acc[i][1]);
        store(m + i * ldm + 16, acc[i][2]);
    }
}

// A tile of multiply_rows' (rows x 16, laid out as there) after its last pass: the bias (16 floats,
// or null) added, then the ReLU, which takes a NaN to 0 as the reference kernel does.
RIDGE_SIMD_INLINE void finish_tile(float* m, int64_t ldm, int64_t rows, const float* b, bool relu, int64_t half = 8) {
    using V = Vec8;
    for (int64_t i = 0; i < rows; ++i) {
        float* row = m + i * ldm;
        V lo = load<V>(row), hi = load<V>(row + half);
        if (b) lo += load<V>(b), hi += load<V>(b + 8);
        if (relu) {
            lo = lo > 0 ? lo : V{};
            hi = hi > 0 ? hi : V{};
        }
        store(row, lo);
        store(row + half, hi);
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
