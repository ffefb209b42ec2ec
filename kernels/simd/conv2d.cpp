// The weight gradient of a depthwise convolution in the channel-blocked layout (simd.h).
// x (N,C,H,W) and dy (N,C,P,Q) in nChw{B}c  dw (C,1,1,R,S) in Abcde{B}a or plain  db (C)
//
// A block of B channels is B independent 2-D correlations, so the vectors run across the block's
// channels; for each output row and each input row it meets, row() accumulates every tap of that
// kernel row in registers and adds them into the taps' sums once per row. Work is split over channel
// blocks, and over chunks of images when there are fewer blocks than twice the threads; each unit
// writes its partial sums to scratch, and a second pass adds the chunks into dw.
#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t max_taps = 11;

int64_t image_chunks(const Depthwise& d, int threads) {
    int64_t CB = (d.C + d.block - 1) / d.block;
    if (CB >= 2 * threads) return 1;
    return std::min(d.N, (2 * threads + CB - 1) / CB);
}

// taps[s] += sum over q in [lo, hi) of dy[q] * x[q*stride + s*dilation - pad]: one tap's pass
// along a row, two chains to hide the FMA latency.
template <int B>
RIDGE_SIMD_INLINE void tap_pass(const float* xrow, const float* dyrow, Vec<B>& tap, int64_t off, int64_t sw,
                                int64_t lo, int64_t hi) {
    using V = Vec<B>;
    V s0 = {}, s1 = {};
    int64_t q = lo;
    for (; q + 1 < hi; q += 2) {
        s0 += load<V>(dyrow + q * B) * load<V>(xrow + (q * sw + off) * B);
        s1 += load<V>(dyrow + (q + 1) * B) * load<V>(xrow + ((q + 1) * sw + off) * B);
    }
    if (q < hi) s0 += load<V>(dyrow + q * B) * load<V>(xrow + (q * sw + off) * B);
    tap += s0 + s1;
}

// One output row against one input row: taps[s] for every s. With stride and dilation 1 and a
// kernel width known at compile time, the columns where every tap lands inside the row go four
// at a time: 4 dy vectors and the S + 3 input vectors they meet are loaded once for 4 * S FMAs
// (two accumulator sets, so 2 * S chains are in flight). Edges and other shapes take one pass
// per tap.
// The output columns where each tap of a kernel row lands inside the input row, the same for
// every row, and the run of columns where all of them do, taken four at a time.
struct Columns {
    int64_t off[max_taps], lo[max_taps], hi[max_taps];
    int64_t a = 0, b = 0;
    Columns(const Depthwise& d, bool blocks) {
        const int64_t sw = d.stride_w;
        for (int64_t s = 0; s < d.S; ++s) {
            off[s] = s * d.dil_w - d.pad_l;
            lo[s] = off[s] >= 0 ? 0 : (-off[s] + sw - 1) / sw;
            hi[s] = d.W - 1 - off[s] < 0 ? 0 : std::min(d.Q, (d.W - 1 - off[s]) / sw + 1);
        }
        if (!blocks) return;
        a = std::max(lo[0], lo[d.S - 1]);
        b = std::max(a, std::min(hi[0], hi[d.S - 1]));
        b = a + (b - a) / 4 * 4;
    }
};

template <int B, int S>
RIDGE_SIMD_INLINE void row(const float* xrow, const float* dyrow, Vec<B>* taps, const Depthwise& d,
                           const Columns& c) {
    using V = Vec<B>;
    const int64_t sw = d.stride_w, taps_n = S > 0 ? S : d.S, a = c.a, b = c.b;
    if constexpr (S > 0) {
        if (a < b) {
            V acc0[S] = {}, acc1[S] = {};
            for (int64_t q = a; q < b; q += 4) {
                const float* xq = xrow + (q - d.pad_l) * B;
                V d0 = load<V>(dyrow + q * B), d1 = load<V>(dyrow + (q + 1) * B);
                V d2 = load<V>(dyrow + (q + 2) * B), d3 = load<V>(dyrow + (q + 3) * B);
                V xs[S + 3];
                for (int j = 0; j < S + 3; ++j) xs[j] = load<V>(xq + j * B);
                for (int t = 0; t < S; ++t) {
                    acc0[t] += d0 * xs[t] + d1 * xs[t + 1];
                    acc1[t] += d2 * xs[t + 2] + d3 * xs[t + 3];
                }
            }
            for (int t = 0; t < S; ++t) taps[t] += acc0[t] + acc1[t];
        }
    }
    for (int64_t t = 0; t < taps_n; ++t) {
        if (a < b) {  // the columns before and after the block
            tap_pass<B>(xrow, dyrow, taps[t], c.off[t], sw, c.lo[t], std::min(c.hi[t], a));
            tap_pass<B>(xrow, dyrow, taps[t], c.off[t], sw, std::max(c.lo[t], b), c.hi[t]);
        } else {
            tap_pass<B>(xrow, dyrow, taps[t], c.off[t], sw, c.lo[t], c.hi[t]);
        }
    }
}

// Partial sums of channel block cb over images [n0, n1): acc holds R*S tap vectors, then the bias.
template <int B, int S>
RIDGE_SIMD_INLINE void unit(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                            int64_t n1) {
    using V = Vec<B>;
    const int64_t CB = (d.C + B - 1) / B, R = d.R, Sn = d.S;
    V taps[max_taps * max_taps] = {};
    V bias = {};
    const Columns cols(d, S > 0 && d.stride_w == 1 && d.dil_w == 1);
    for (int64_t n = n0; n < n1; ++n) {
        const float* xn = x + (n * CB + cb) * d.H * d.W * B;
        const float* dyn = dy + (n * CB + cb) * d.P * d.Q * B;
        for (int64_t p = 0; p < d.P; ++p) {
            const float* dyrow = dyn + p * d.Q * B;
            for (int64_t q = 0; q < d.Q; ++q) bias += load<V>(dyrow + q * B);
            for (int64_t r = 0; r < R; ++r) {
                int64_t ih = p * d.stride_h - d.pad_t + r * d.dil_h;
                if (ih < 0 || ih >= d.H) continue;
                row<B, S>(xn + ih * d.W * B, dyrow, taps + r * Sn, d, cols);
            }
        }
    }
    for (int64_t t = 0; t < R * Sn; ++t) store(acc + t * B, taps[t]);
    store(acc + R * Sn * B, bias);
}

template <int B>
RIDGE_SIMD_INLINE void unit_any(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb,
                                int64_t n0, int64_t n1) {
    if (d.S == 3) return unit<B, 3>(x, dy, acc, d, cb, n0, n1);
    if (d.S == 5) return unit<B, 5>(x, dy, acc, d, cb, n0, n1);
    if (d.S == 7) return unit<B, 7>(x, dy, acc, d, cb, n0, n1);
    unit<B, 0>(x, dy, acc, d, cb, n0, n1);
}

RIDGE_SIMD_CLONES void unit16(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                              int64_t n1) {
    unit_any<16>(x, dy, acc, d, cb, n0, n1);
}

RIDGE_SIMD_CLONES void unit8(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                             int64_t n1) {
    unit_any<8>(x, dy, acc, d, cb, n0, n1);
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

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
