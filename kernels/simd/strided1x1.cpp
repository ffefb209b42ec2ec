// The data gradient of a 1x1 convolution at a stride over 1 (RegNet's projections of a stage's
// first block, ResNet's downsampling), in the channel-blocked layouts its forward runs in.
//
// strided1x1_dgrad: dy (N,K,P,Q) and dx (N,C,H,W) in nChw{B}c, w (K,C,1,1) plain
// Only the positions (p*stride_h, q*stride_w) of dx receive a gradient: w's transpose times dy's
// column there, a product over K, and zero elsewhere. oneDNN 2.6 computes the product into a
// dense buffer and spreads it over dx; where x's gradient arrived from another branch first, the
// executor then sums the two with a binary add: three passes over the whole of dx, where adding in
// place touches the strided positions' lines alone (a quarter of them at stride 2 in nChw16c).
//
// A unit is one output row p of one image: it writes dx's rows p*stride_h up to the next output
// row's (zeros, then the products; or adds the products alone). Within it, strips of up to 8
// positions (6 below AVX-512) by 2 vectors of channels hold the accumulators: per k, 2 weight
// vectors and a broadcast of dy per position feed 2 FMAs per position.
#include <algorithm>
#include <cstring>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

int64_t blocks(int64_t channels, int64_t block) { return (channels + block - 1) / block; }

// s in every lane: one vbroadcastss. Written 0 + s, GCC 12 adds first (the sum differs from s
// where s is -0), a scalar add beside every broadcast. Compiled for the target, as every helper
// that calls it (as pool.cpp's max_nan): lowered for baseline x86-64 before inlining, the 16-lane
// form became 16 masked broadcasts, one a lane, and resnet50's downsampling gradients ran 10 times
// slower.
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V splat(float s) {
    if constexpr (sizeof(V) == 32)
        return V{s, s, s, s, s, s, s, s};
    else
        return V{s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s};
}

// Positions q0 .. q0 + T - 1 of one output row, channel vectors v0 .. v0 + NV - 1 (of VL lanes
// each, in the padded channels' order): the products over k, stored into dx or added to it.
template <int VL, int T, int NV>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void strip(const float* dyrow, const float* u, float* dxrow, bool add,
                                             const Strided1x1& d, int64_t q0, int64_t v0) {
    using V = Vec<VL>;
    const int64_t L = d.block, CP = blocks(d.C, L) * L, PQL = d.P * d.Q * L;
    V acc[T][NV] = {};
    // k by block and lane: a division by the block at every k took a third of the time.
    const float* wk = u + v0 * VL;
    for (int64_t k0 = 0; k0 < d.K; k0 += L) {
        const float* dk = dyrow + (k0 / L) * PQL + q0 * L;
        for (const float* end = dk + std::min(L, d.K - k0); dk < end; ++dk, wk += CP) {
            V w[NV];
            for (int j = 0; j < NV; ++j) w[j] = load<V>(wk + j * VL);
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const V b = splat<V>(dk[t * L]);
                for (int j = 0; j < NV; ++j) acc[t][j] += b * w[j];
            }
        }
    }
    const int64_t HWL = d.H * d.W * L;
    for (int t = 0; t < T; ++t)
        for (int j = 0; j < NV; ++j) {
            const int64_t c0 = (v0 + j) * VL;
            float* at = dxrow + (c0 / L) * HWL + (q0 + t) * d.stride_w * L + c0 % L;
            store(at, add ? load<V>(at) + acc[t][j] : acc[t][j]);
        }
}

template <int VL, int T>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void strips(const float* dyrow, const float* u, float* dxrow, bool add,
                                              const Strided1x1& d, int64_t q0) {
    const int64_t vectors = blocks(d.C, d.block) * d.block / VL;
    int64_t v = 0;
    for (; v + 2 <= vectors; v += 2) strip<VL, T, 2>(dyrow, u, dxrow, add, d, q0, v);
    if (v < vectors) strip<VL, T, 1>(dyrow, u, dxrow, add, d, q0, v);
}

template <int VL>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void row(const float* dy, const float* u, float* dx, bool add, const Strided1x1& d,
                                           int64_t n, int64_t p) {
    const int64_t L = d.block, CB = blocks(d.C, L), KB = blocks(d.K, L);
    const int64_t h0 = p * d.stride_h, h1 = std::min(d.H, h0 + d.stride_h);
    float* dxrow = dx + (n * CB * d.H + h0) * d.W * L;
    if (!add)
        for (int64_t cb = 0; cb < CB; ++cb)
            std::memset(dxrow + cb * d.H * d.W * L, 0, size_t((h1 - h0) * d.W * L) * sizeof(float));
    const float* dyrow = dy + (n * KB * d.P + p) * d.Q * L;
    // 8 positions by 2 vectors: 16 accumulators, 2 weight vectors and a broadcast within
    // AVX-512's 32 registers; 6 positions within AVX2's 16.
    constexpr int most = VL == 16 ? 8 : 6;
    int64_t q = 0;
    for (; q + most <= d.Q; q += most) strips<VL, most>(dyrow, u, dxrow, add, d, q);
    switch (d.Q - q) {
        case 7: return strips<VL, 7>(dyrow, u, dxrow, add, d, q);
        case 6: return strips<VL, 6>(dyrow, u, dxrow, add, d, q);
        case 5: return strips<VL, 5>(dyrow, u, dxrow, add, d, q);
        case 4: return strips<VL, 4>(dyrow, u, dxrow, add, d, q);
        case 3: return strips<VL, 3>(dyrow, u, dxrow, add, d, q);
        case 2: return strips<VL, 2>(dyrow, u, dxrow, add, d, q);
        case 1: return strips<VL, 1>(dyrow, u, dxrow, add, d, q);
        default: return;
    }
}

RIDGE_SIMD_LEAF void row16(const float* dy, const float* u, float* dx, bool add, const Strided1x1& d, int64_t n,
                           int64_t p) {
    row<16>(dy, u, dx, add, d, n, p);
}

RIDGE_SIMD_LEAF void row8(const float* dy, const float* u, float* dx, bool add, const Strided1x1& d, int64_t n,
                          int64_t p) {
    row<8>(dy, u, dx, add, d, n, p);
}

}  // namespace

bool strided1x1_dgrad_supported(const Strided1x1& d) {
    return (d.block == 8 || d.block == 16) && d.N >= 1 && d.C >= 1 && d.K >= 1 && d.H >= 1 && d.W >= 1 &&
           d.stride_h >= 1 && d.stride_w >= 1 && d.P == (d.H - 1) / d.stride_h + 1 && d.Q == (d.W - 1) / d.stride_w + 1;
}

size_t strided1x1_packed(const Strided1x1& d) { return size_t(d.K * blocks(d.C, d.block) * d.block); }

void strided1x1_dgrad(const float* dy, const float* w, float* dx, float* packed, bool add, const Strided1x1& d,
                      int threads) {
    // Where C is not a multiple of the block, w's rows padded by zeros, so that a vector never
    // reads the next row and the padding channels of dx stay zero.
    const int64_t CP = blocks(d.C, d.block) * d.block;
    if (CP != d.C)
        for_units(d.K, threads, [&](int64_t k) {
            std::copy(w + k * d.C, w + (k + 1) * d.C, packed + k * CP);
            std::fill(packed + k * CP + d.C, packed + (k + 1) * CP, 0.0f);
        });
    const float* u = CP != d.C ? packed : w;
    const bool sixteen = d.block == 16 && wide_vectors();
    for_units(d.N * d.P, threads,
              [&](int64_t unit) { (sixteen ? row16 : row8)(dy, u, dx, add, d, unit / d.P, unit % d.P); });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
