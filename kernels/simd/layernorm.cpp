// LayerNorm over rows of D contiguous floats, y = (x - mean) / sqrt(var + eps) * gamma + beta with
// the row's mean and biased variance, and its gradients. oneDNN 2.6 runs every layernorm on
// simple_layer_normalization, portable C++ without vector code: 13 to 17 us for the backward of
// convnext_tiny's classifier layernorm (1 or 8 rows of 768), vit_b_16's ln_1 gradients at 2 to 2.4
// times what memory allows. Memory-bound: a row stays in L1 between its passes, so x and dy are
// read once from memory and y or dx written once.
//
// The mean and variance are two passes over the row (the variance from the deviations, not from
// E[x^2] - mean^2, which cancels when |mean| is large against the spread), in float: the partial
// sums run in two chains of 16 lanes (8 below AVX-512), so a row of 768 sums 24 (48) terms a lane.
//
// Backward, with xhat = (x - mean) * r, r = 1 / sqrt(var + eps), and g = dy * gamma:
//   dx = r * (g - mean of g - xhat * mean of g * xhat),  dgamma = sum over rows of dy * xhat,
//   dbeta = sum over rows of dy.
// Rows split into `threads` chunks, each summing dgamma and dbeta into its own part of the scratch,
// which are then added in chunk order: the result does not depend on the team's timing.
// x, y, dy, dx (rows, D)  gamma, beta, dgamma, dbeta (D)  mean, var (rows)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

// On rows of 384 floats or more, a row's first pass asks for the line 16 KB on in each array it
// reads from memory (x, and dy for the gradient): a thread's rows follow one another, so the
// lines it will want next arrive while this row is summed, where the hardware prefetcher alone
// left the passes waiting on memory. Addresses past the arrays' ends are asked for as integers:
// a prefetch never faults, a pointer formed there would be undefined. On the 2-core Zen 5, each
// kernel alone after both threads wrote 128 MB (its inputs in memory), medians of 60 calls, 2 or
// 3 alternated runs: vit's 1576 rows of 768 forward 267-438 -> 237-313 us, gradient 465-691 ->
// 417-587; 392 rows of 768 101-124 -> 81-101 and 166-183 -> 135-156; convnext's 1568 rows of 384,
// gradient 218-330 -> 199-285, forward level. On 192 and 96 floats (6272 and 25088 rows) it was
// level or up to 10 % slower, hence the threshold. vit_b_16's training step at batch 8 (`ridge
// profile`, 2 alternated pairs): its 25 layernorm gradients 11.2-11.7 -> 9.2-9.4 ms in all, the
// forwards 5.3-5.8 -> 4.2-4.4.
RIDGE_SIMD_INLINE bool prefetches_rows(int64_t D) { return D >= 384; }
RIDGE_SIMD_INLINE void prefetch_rows_ahead(const float* p) {
    constexpr uintptr_t ahead = 16384;
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + ahead));
}

// W lanes: 16 in the AVX-512 build, 8 below it. A 16-lane accumulator carried across a loop is kept
// in memory by GCC 12's AVX2 code (each add a store and reload through the stack): the forward ran
// at 5.5 GB/s on 3152 rows of 768, a quarter of this host's memory speed.
// far: x is rows of a tensor in memory (prefetches_rows), not a row gathered into L1.
template <int W>
RIDGE_SIMD_INLINE void forward_row(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                                   float* var, int64_t D, float eps, bool far) {
    using V = Vec<W>;
    // Two chains each: a single one waits on the add's latency at every step.
    V s0 = {}, s1 = {};
    int64_t i = 0;
    for (; i + 2 * W <= D; i += 2 * W) {
        if (far && i % 16 == 0) prefetch_rows_ahead(x + i);
        if (far && (i + W) % 16 == 0) prefetch_rows_ahead(x + i + W);
        s0 += load<V>(x + i), s1 += load<V>(x + i + W);
    }
    for (; i + W <= D; i += W) s0 += load<V>(x + i);
    float sum = sum_lanes(s0 + s1);
    for (; i < D; ++i) sum += x[i];
    const float m0 = sum / float(D);

    // The deviations' own sum corrects the first pass's mean for its rounding, which matters where
    // |mean| is large against the spread: y is taken from the deviations and that correction. The
    // mean kept for the backward is rounded to a float, so its xhat is off by half an ulp of the
    // mean over the spread (3e-5 at a mean of 1000 and a spread of 1).
    V q0 = {}, q1 = {}, e0 = {}, e1 = {};
    i = 0;
    for (; i + 2 * W <= D; i += 2 * W) {
        const V d0 = load<V>(x + i) - m0, d1 = load<V>(x + i + W) - m0;
        e0 += d0, q0 += d0 * d0, e1 += d1, q1 += d1 * d1;
    }
    for (; i + W <= D; i += W) {
        const V d = load<V>(x + i) - m0;
        e0 += d, q0 += d * d;
    }
    float sq = sum_lanes(q0 + q1), err = sum_lanes(e0 + e1);
    for (; i < D; ++i) err += x[i] - m0, sq += (x[i] - m0) * (x[i] - m0);
    const float c = err / float(D), m = m0 + c, v = std::max(sq / float(D) - c * c, 0.0f);
    const float r = 1.0f / std::sqrt(v + eps);
    if (mean) *mean = m;
    if (var) *var = v;

    i = 0;
    for (; i + W <= D; i += W) store(y + i, (load<V>(x + i) - m0 - c) * r * load<V>(gamma + i) + load<V>(beta + i));
    for (; i < D; ++i) y[i] = (x[i] - m0 - c) * r * gamma[i] + beta[i];
}

RIDGE_SIMD_LEAF void ln_forward_rows(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                                     float* var, int64_t rows, int64_t D, float eps) {
    for (int64_t row = 0; row < rows; ++row, x += D, y += D) {
        float* m = mean ? mean + row : nullptr;
        float* v = var ? var + row : nullptr;
        if (wide_vectors())
            forward_row<16>(x, gamma, beta, y, m, v, D, eps, prefetches_rows(D));
        else
            forward_row<8>(x, gamma, beta, y, m, v, D, eps, prefetches_rows(D));
    }
}

// Positions p0..p1 of one image: each position's C channels gathered from their blocks into row
// (C floats), then normalized as a row into y, channels-last. The same arithmetic as a row of
// ln_forward_rows, so y is bit for bit what a copy to channels-last and layernorm_forward give.
// A block is copied whole, as one vector: row has room for the padded channels, which the row's
// arithmetic does not read. Each block's stream is prefetched 1 KB ahead (16 positions of 16
// channels, 32 of 8): without it, convnext_tiny's stem layernorm at batch 8 took 0.66-0.83 ms, with it
// 0.56-0.84 in alternated runs (2 KB: no better).
template <int B, int W>
RIDGE_SIMD_INLINE void ln_gather_rows(const float* x, const float* gamma, const float* beta, float* y, float* row,
                                      const ChannelLayout& l, int64_t p0, int64_t p1, float eps) {
    const int64_t CB = l.blocks();
    constexpr uintptr_t ahead = 1024;
    for (int64_t p = p0; p < p1; ++p) {
        for (int64_t cb = 0; cb < CB; ++cb) {
            const float* at = x + cb * l.block_stride() + p * B;
            __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(at) + ahead));
            store(row + cb * B, load<Vec<B>>(at));
        }
        forward_row<W>(row, gamma, beta, y + p * l.C, nullptr, nullptr, l.C, eps, false);
    }
}

RIDGE_SIMD_LEAF void ln_forward_gathered(const float* x, const float* gamma, const float* beta, float* y, float* row,
                                         const ChannelLayout& l, int64_t p0, int64_t p1, float eps) {
    const bool wide = wide_vectors();
    if (l.block == 16)
        wide ? ln_gather_rows<16, 16>(x, gamma, beta, y, row, l, p0, p1, eps)
             : ln_gather_rows<16, 8>(x, gamma, beta, y, row, l, p0, p1, eps);
    else
        wide ? ln_gather_rows<8, 16>(x, gamma, beta, y, row, l, p0, p1, eps)
             : ln_gather_rows<8, 8>(x, gamma, beta, y, row, l, p0, p1, eps);
}

// One chunk of rows: dgamma and dbeta summed into dg and db (overwritten), and dx written or added
// to when not null.
template <int W>
RIDGE_SIMD_INLINE void backward_rows(const float* x, const float* dy, const float* gamma, const float* mean,
                                     const float* var, float* dx, bool add_dx, float* dg, float* db, int64_t rows,
                                     int64_t D, float eps) {
    using V = Vec<W>;
    const bool far = prefetches_rows(D);
    std::fill(dg, dg + D, 0.0f);
    std::fill(db, db + D, 0.0f);
    for (int64_t row = 0; row < rows; ++row, x += D, dy += D) {
        const float m = mean[row], r = 1.0f / std::sqrt(var[row] + eps);
        V sg = {}, sgx = {};
        int64_t i = 0;
        for (; i + W <= D; i += W) {
            if (far && i % 16 == 0) prefetch_rows_ahead(x + i), prefetch_rows_ahead(dy + i);
            const V d = load<V>(dy + i), xh = (load<V>(x + i) - m) * r, g = d * load<V>(gamma + i);
            sg += g, sgx += g * xh;
            store(dg + i, load<V>(dg + i) + d * xh);
            store(db + i, load<V>(db + i) + d);
        }
        float g_sum = sum_lanes(sg), gx_sum = sum_lanes(sgx);
        for (; i < D; ++i) {
            const float xh = (x[i] - m) * r, g = dy[i] * gamma[i];
            g_sum += g, gx_sum += g * xh;
            dg[i] += dy[i] * xh;
            db[i] += dy[i];
        }
        if (!dx) continue;
        const float a = g_sum / float(D), b = gx_sum / float(D);
        i = 0;
        for (; i + W <= D; i += W) {
            const V xh = (load<V>(x + i) - m) * r, before = add_dx ? load<V>(dx + i) : V{};
            store(dx + i, before + (load<V>(dy + i) * load<V>(gamma + i) - a - xh * b) * r);
        }
        for (; i < D; ++i) dx[i] = (add_dx ? dx[i] : 0.0f) + (dy[i] * gamma[i] - a - (x[i] - m) * r * b) * r;
        dx += D;
    }
}

RIDGE_SIMD_LEAF void ln_backward_rows(const float* x, const float* dy, const float* gamma, const float* mean,
                                      const float* var, float* dx, bool add_dx, float* dg, float* db, int64_t rows,
                                      int64_t D, float eps) {
    if (wide_vectors())
        backward_rows<16>(x, dy, gamma, mean, var, dx, add_dx, dg, db, rows, D, eps);
    else
        backward_rows<8>(x, dy, gamma, mean, var, dx, add_dx, dg, db, rows, D, eps);
}

RIDGE_SIMD_LEAF void add_into(float* acc, const float* part, int64_t n) {
    for (int64_t i = 0; i < n; ++i) acc[i] += part[i];
}

}  // namespace

void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,
                       int64_t rows, int64_t D, float eps) {
    // Rows in chunks, one leaf call each.
    constexpr int64_t chunk = 4;
    for_units((rows + chunk - 1) / chunk, omp_get_max_threads(), [&](int64_t u) {
        const int64_t r0 = u * chunk;
        ln_forward_rows(x + r0 * D, gamma, beta, y + r0 * D, mean ? mean + r0 : nullptr, var ? var + r0 : nullptr,
                        std::min(chunk, rows - r0), D, eps);
    });
}

void layernorm_channels_forward(const float* x, const ChannelLayout& l, const float* gamma, const float* beta,
                                float* y, float eps) {
    if (l.block != 8 && l.block != 16)
        throw std::invalid_argument("layernorm_channels_forward: channel blocks of 8 or 16 only, not " +
                                    std::to_string(l.block));
    // Positions in chunks of 64: each chunk reads a run of every block of its image, one stream a
    // block, as a copy to channels-last would, without the copy's pass over memory.
    constexpr int64_t chunk = 64;
    const int64_t chunks = (l.HW + chunk - 1) / chunk;
#pragma omp parallel
    {
        std::vector<float> row(size_t(l.padded_channels()));
#pragma omp for schedule(static)
        for (int64_t u = 0; u < l.N * chunks; ++u) {
            const int64_t n = u / chunks, p0 = u % chunks * chunk;
            ln_forward_gathered(x + n * l.batch_stride(), gamma, beta, y + n * l.HW * l.C, row.data(), l, p0,
                                std::min(l.HW, p0 + chunk), eps);
        }
    }
}

size_t layernorm_backward_scratch(int64_t D, int threads) { return size_t(2 * D * std::max(threads, 1)); }

void layernorm_backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* var,
                        float* dx, bool add_dx, float* dgamma, float* dbeta, float* scratch, int64_t rows, int64_t D,
                        float eps, int threads) {
    const int64_t T = std::max(threads, 1);
    for_units(T, int(T), [&](int64_t k) {
        const int64_t r0 = rows * k / T, r1 = rows * (k + 1) / T;
        ln_backward_rows(x + r0 * D, dy + r0 * D, gamma, mean + r0, var + r0, dx ? dx + r0 * D : nullptr, add_dx,
                         scratch + 2 * D * k, scratch + 2 * D * k + D, r1 - r0, D, eps);
    });
    std::copy(scratch, scratch + D, dgamma);
    std::copy(scratch + D, scratch + 2 * D, dbeta);
    for (int64_t k = 1; k < T; ++k) {
        add_into(dgamma, scratch + 2 * D * k, D);
        add_into(dbeta, scratch + 2 * D * k + D, D);
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
