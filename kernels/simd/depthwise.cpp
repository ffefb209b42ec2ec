// The weight gradient of a depthwise convolution in the channel-blocked layout (simd.h).
// x (N,C,H,W) and dy (N,C,P,Q) in nChw{B}c  dw (C,1,1,R,S) in Abcde{B}a or plain  db (C)
//
// A block of B channels is B independent 2-D correlations, so the vectors run across the block's
// channels: for each output row and tap, one pass along the row accumulates dy times the shifted
// input row in registers, and adds into that tap's sum once per row. Work is split over channel
// blocks, and over chunks of images when there are fewer blocks than twice the threads; each unit
// writes its partial sums to scratch, and a second pass adds the chunks into dw.
#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd {

namespace {

constexpr int64_t max_taps = 11;

int64_t image_chunks(const Depthwise& d, int threads) {
    int64_t CB = (d.C + d.block - 1) / d.block;
    if (CB >= 2 * threads) return 1;
    return std::min(d.N, (2 * threads + CB - 1) / CB);
}

// Partial sums of channel block cb over images [n0, n1): acc holds R*S tap vectors, then the bias.
template <int B>
RIDGE_SIMD_INLINE void unit(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                            int64_t n1) {
    using V = Vec<B>;
    const int64_t CB = (d.C + B - 1) / B, R = d.R, S = d.S;
    V taps[max_taps * max_taps] = {};
    V bias = {};
    for (int64_t n = n0; n < n1; ++n) {
        const float* xn = x + (n * CB + cb) * d.H * d.W * B;
        const float* dyn = dy + (n * CB + cb) * d.P * d.Q * B;
        for (int64_t p = 0; p < d.P; ++p) {
            const float* dyrow = dyn + p * d.Q * B;
            for (int64_t q = 0; q < d.Q; ++q) bias += load<V>(dyrow + q * B);
            for (int64_t r = 0; r < R; ++r) {
                int64_t ih = p * d.stride_h - d.pad_t + r * d.dil_h;
                if (ih < 0 || ih >= d.H) continue;
                const float* xrow = xn + ih * d.W * B;
                for (int64_t s = 0; s < S; ++s) {
                    // Input column of output column q: q*stride + off; keep those inside the row.
                    const int64_t off = s * d.dil_w - d.pad_l, sw = d.stride_w;
                    int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
                    int64_t hi = d.W - 1 - off < 0 ? 0 : std::min(d.Q, (d.W - 1 - off) / sw + 1);
                    V s0 = {}, s1 = {};
                    int64_t q = lo;
                    for (; q + 1 < hi; q += 2) {
                        s0 += load<V>(dyrow + q * B) * load<V>(xrow + (q * sw + off) * B);
                        s1 += load<V>(dyrow + (q + 1) * B) * load<V>(xrow + ((q + 1) * sw + off) * B);
                    }
                    if (q < hi) s0 += load<V>(dyrow + q * B) * load<V>(xrow + (q * sw + off) * B);
                    taps[r * S + s] += s0 + s1;
                }
            }
        }
    }
    for (int64_t t = 0; t < R * S; ++t) store(acc + t * B, taps[t]);
    store(acc + R * S * B, bias);
}

RIDGE_SIMD_CLONES void unit16(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                              int64_t n1) {
    unit<16>(x, dy, acc, d, cb, n0, n1);
}

RIDGE_SIMD_CLONES void unit8(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                             int64_t n1) {
    unit<8>(x, dy, acc, d, cb, n0, n1);
}

}  // namespace

bool depthwise_wgrad_supported(const Depthwise& d) {
    return (d.block == 8 || d.block == 16) && d.R >= 1 && d.S >= 1 && d.R <= max_taps && d.S <= max_taps;
}

size_t depthwise_wgrad_scratch(const Depthwise& d, int threads) {
    int64_t CB = (d.C + d.block - 1) / d.block;
    return size_t(image_chunks(d, threads) * CB * (d.R * d.S + 1) * d.block);
}

void depthwise_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Depthwise& d,
                     int threads) {
    const int64_t CB = (d.C + d.block - 1) / d.block, NC = image_chunks(d, threads), B = d.block;
    const int64_t RS = d.R * d.S, per = (RS + 1) * B;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t u = 0; u < CB * NC; ++u) {
        int64_t cb = u / NC, k = u % NC;
        int64_t n0 = d.N * k / NC, n1 = d.N * (k + 1) / NC;
        (B == 16 ? unit16 : unit8)(x, dy, scratch + u * per, d, cb, n0, n1);
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t cb = 0; cb < CB; ++cb) {
        const float* part = scratch + cb * NC * per;
        for (int64_t i = 0; i < per; ++i) {
            float sum = 0;
            for (int64_t k = 0; k < NC; ++k) sum += part[k * per + i];
            int64_t t = i / B, c = cb * B + i % B;
            if (t == RS) {
                if (db && c < d.C) db[c] = sum;
            } else if (d.blocked_weights) {
                dw[cb * RS * B + i] = sum;
            } else if (c < d.C) {
                dw[c * RS + t] = sum;
            }
        }
    }
}

}  // namespace ridge::simd
