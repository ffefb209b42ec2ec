// The weight gradient of a convolution reading few channels: a net's first conv, on the image.
//
// image_conv_wgrad: x (N,C,H,W) plain  dy (N,K,P,Q) in nChw{L}c or channels-last  dw (K,C,R,S)
// plain  db (K)
// dw[k][c][r][s] is a sum over every output position of dy times the input under tap (r, s), so the
// work is the forward's while the result is a few thousand floats. oneDNN 2.6 runs it below its
// forward's speed on AVX2 (vgg11's 3x3 on 224x224 at batch 1: 56 GFLOP/s, alexnet's 11x11 stride 4
// on its GEMM at 54; resnet50's 7x7 stride 2 at batch 8 took 1.6x its forward). Here vectors run
// across L output channels of dy, and each input value under a tap is broadcast against them: a
// group of kernel rows (G of them, G*S sums, at most 12 in registers) is summed along an output
// row, dy's row loaded once per group. Work is split over blocks of L output channels and, with
// fewer blocks than twice the threads, over chunks of images; each unit keeps its partial sums in
// scratch, and a second pass adds the chunks into dw.
#include <omp.h>

#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

int64_t image_lanes(const ImageConv& d) {
    if (d.block == 8 || d.block == 16) return d.block;
    return d.K % 16 == 0 && wide_vectors() ? 16 : 8;
}

int64_t image_chunks(const ImageConv& d, int threads) { return wgrad_chunks(d.K / image_lanes(d), d.N, threads); }

// Floats of one unit's scratch: the sums of every (c, r, s) and the bias's, L lanes each, then a
// row of W zeros that kernel rows in the padding read.
int64_t unit_floats(const ImageConv& d) { return (d.C * d.R * d.S + 1) * image_lanes(d) + d.W; }

// Kernel rows summed at once: 3x3 and 5x5 kernels hold 9 and 10 sums, 7x7 and 11x11 one row's 7
// and 11; 8 independent sums keep both FMA pipes of a Zen 3 or Skylake core busy.
template <int S>
constexpr int rows_at_once = S <= 3   ? 3
                             : S <= 5 ? 2
                                      : 1;

// Adds column q of dy's row (v) times the G rows' inputs under each tap; at an edge only the taps
// inside the row.
template <int L, int S, int G, bool edge>
RIDGE_SIMD_INLINE void column(Vec<L> (&acc)[G][S], Vec<L> v, const float* const* rows, int64_t w0, int64_t W) {
#pragma GCC unroll 3
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 11
        for (int s = 0; s < S; ++s)
            if (!edge || (w0 + s >= 0 && w0 + s < W)) acc[g][s] += v * rows[g][w0 + s];
}

// Block kb of dy (L channels) over images [n0, n1): part holds the C*R*S tap sums, then the bias's.
template <int L, int S>
RIDGE_SIMD_INLINE void unit(const float* x, const float* dy, float* part, const ImageConv& d, int64_t kb, int64_t n0,
                            int64_t n1) {
    using V = Vec<L>;
    constexpr int G = rows_at_once<S>;
    const int64_t KB = d.K / L, ps = d.block == L ? L : d.K, CRS = d.C * d.R * S;
    float* zeros = part + (CRS + 1) * L;
    std::fill(part, zeros + d.W, 0.0f);
    // Output columns whose window lies inside the row: [q_lo, q_hi).
    const int64_t q_lo = std::min(d.Q, (d.pad_l + d.stride_w - 1) / d.stride_w);
    const int64_t q_hi =
        std::max(q_lo, std::min(d.Q, d.W - S + d.pad_l >= 0 ? (d.W - S + d.pad_l) / d.stride_w + 1 : 0));
    V bias = {};
    for (int64_t n = n0; n < n1; ++n) {
        const float* dyn = dy + (d.block == L ? (n * KB + kb) * d.P * d.Q * L : n * d.P * d.Q * d.K + kb * L);
        for (int64_t p = 0; p < d.P; ++p) {
            const float* dyrow = dyn + p * d.Q * ps;
            for (int64_t q = 0; q < d.Q; ++q) bias += load<V>(dyrow + q * ps);
            for (int64_t c = 0; c < d.C; ++c)
                for (int64_t r0 = 0; r0 < d.R; r0 += G) {
                    const float* rows[G];
                    bool any = false;
                    for (int g = 0; g < G; ++g) {
                        const int64_t h = p * d.stride_h - d.pad_t + r0 + g;
                        const bool inside = r0 + g < d.R && h >= 0 && h < d.H;
                        rows[g] = inside ? x + ((n * d.C + c) * d.H + h) * d.W : zeros;
                        any = any || inside;
                    }
                    if (!any) continue;
                    // Sums of rows past R are kept in registers and dropped.
                    float* sums = part + (c * d.R + r0) * S * L;
                    const int live = int(std::min<int64_t>(G, d.R - r0));
                    V acc[G][S];
                    for (int g = 0; g < G; ++g)
                        for (int s = 0; s < S; ++s) acc[g][s] = g < live ? load<V>(sums + (g * S + s) * L) : V{};
                    const int64_t sw = d.stride_w, pl = d.pad_l;
                    for (int64_t q = 0; q < q_lo; ++q)
                        column<L, S, G, true>(acc, load<V>(dyrow + q * ps), rows, q * sw - pl, d.W);
                    for (int64_t q = q_lo; q < q_hi; ++q)
                        column<L, S, G, false>(acc, load<V>(dyrow + q * ps), rows, q * sw - pl, d.W);
                    for (int64_t q = q_hi; q < d.Q; ++q)
                        column<L, S, G, true>(acc, load<V>(dyrow + q * ps), rows, q * sw - pl, d.W);
                    for (int g = 0; g < live; ++g)
                        for (int s = 0; s < S; ++s) store(sums + (g * S + s) * L, acc[g][s]);
                }
        }
    }
    store(part + CRS * L, bias);
}

template <int L>
RIDGE_SIMD_INLINE void unit_any(const float* x, const float* dy, float* part, const ImageConv& d, int64_t kb,
                                int64_t n0, int64_t n1) {
    if (d.S == 3) return unit<L, 3>(x, dy, part, d, kb, n0, n1);
    if (d.S == 5) return unit<L, 5>(x, dy, part, d, kb, n0, n1);
    if (d.S == 7) return unit<L, 7>(x, dy, part, d, kb, n0, n1);
    unit<L, 11>(x, dy, part, d, kb, n0, n1);
}

RIDGE_SIMD_LEAF void unit16(const float* x, const float* dy, float* part, const ImageConv& d, int64_t kb, int64_t n0,
                            int64_t n1) {
    unit_any<16>(x, dy, part, d, kb, n0, n1);
}

RIDGE_SIMD_LEAF void unit8(const float* x, const float* dy, float* part, const ImageConv& d, int64_t kb, int64_t n0,
                           int64_t n1) {
    unit_any<8>(x, dy, part, d, kb, n0, n1);
}

}  // namespace

bool image_conv_wgrad_supported(const ImageConv& d) {
    const bool layout = ((d.block == 8 || d.block == 16) && d.K % d.block == 0) || (d.block == d.K && d.K % 8 == 0);
    const bool taps = d.S == 3 || d.S == 5 || d.S == 7 || d.S == 11;
    return layout && taps && d.N >= 1 && d.C >= 1 && d.H >= 1 && d.W >= 1 && d.R >= 1 && d.P >= 1 && d.Q >= 1 &&
           d.stride_h >= 1 && d.stride_w >= 1 && d.pad_t >= 0 && d.pad_l >= 0;
}

size_t image_conv_wgrad_scratch(const ImageConv& d, int threads) {
    return size_t(image_chunks(d, threads) * (d.K / image_lanes(d)) * unit_floats(d));
}

void image_conv_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const ImageConv& d,
                      int threads) {
    const int64_t L = image_lanes(d), KB = d.K / L, NC = image_chunks(d, threads), per = unit_floats(d);
    const int64_t CRS = d.C * d.R * d.S;
    for_units(KB * NC, threads, [&](int64_t u) {
        const int64_t kb = u / NC, k = u % NC;
        (L == 16 ? unit16 : unit8)(x, dy, scratch + u * per, d, kb, d.N * k / NC, d.N * (k + 1) / NC);
    });
    for_units(KB, threads, [&](int64_t kb) {
        float* part = scratch + kb * NC * per;
        for (int64_t k = 1; k < NC; ++k)
            for (int64_t i = 0; i < (CRS + 1) * L; ++i) part[i] += part[k * per + i];
        for (int64_t j = 0; j < L; ++j)
            for (int64_t t = 0; t < CRS; ++t) dw[(kb * L + j) * CRS + t] = part[t * L + j];
        if (db) std::copy(part + CRS * L, part + CRS * L + L, db + kb * L);
    });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
