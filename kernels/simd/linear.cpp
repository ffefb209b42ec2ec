// A linear layer on one row in inference, y = w x + b: the classifiers at batch 1, whose time is
// reading the weights once. The weights are in panels of 16 output rows, each panel the rows'
// columns in order, 16 floats per column (oneDNN's AB16b16a): a thread reads one contiguous stream,
// which the prefetcher follows even where rows are short (regnet_y_400mf's 440 inputs), and each
// column is one vector times a broadcast input, no sums across lanes. On the 2-core EPYC this read
// AlexNet's 9216x4096 fc1 from memory at about 37 GB/s, where oneDNN 2.6's brgemm inner product (in
// its AB16b64a) reached about 27.
// x (C)  w (K,C) in AB16b16a, C and K padded to 16 with zeros  b (K) or null  y (K)
#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t panel = 16;

// out[j] = sum over c < C of w[c, j] * x[c] for one panel w (C, 16): two chains over c to hide the
// FMA latency, each a pair of 8-lane halves. Memory-bound, so 8 lanes cost nothing on AVX-512,
// and GCC keeps 16-lane accumulators in AVX2 registers only by spilling them every column (the
// AVX2 clone ran at half the speed of the AVX-512 one).
RIDGE_SIMD_CLONES void panel_dots(const float* x, const float* w, int64_t C, float* out) {
    using V = Vec<8>;
    V a0 = {}, a1 = {}, b0 = {}, b1 = {};
    int64_t c = 0;
    for (; c + 2 <= C; c += 2, w += 2 * panel) {
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
        b0 += load<V>(w + panel) * x[c + 1];
        b1 += load<V>(w + panel + 8) * x[c + 1];
    }
    if (c < C) {
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
    }
    store(out, a0 + b0);
    store(out + 8, a1 + b1);
}

}  // namespace

void linear_row(const float* x, const float* w, const float* b, bool relu, float* y, int64_t C, int64_t K) {
    const int64_t panels = (K + panel - 1) / panel, panel_floats = (C + panel - 1) / panel * panel * panel;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < panels; ++i) {
        float out[panel];
        panel_dots(x, w + i * panel_floats, C, out);
        for (int64_t j = 0, k = i * panel; j < panel && k < K; ++j, ++k) {
            const float v = b ? out[j] + b[k] : out[j];
            y[k] = relu && !(v > 0) ? 0.0f : v;  // ReLU of NaN is 0, as the reference takes it
        }
    }
}

// A linear layer on few rows in training (squeeze-excitation's two at a training batch: 8 rows,
// 16 to 1152 channels squeezed to 4 to 240): forward and both gradients as three shapes of work
// over a weight matrix M (R, L) stored with its long side L contiguous. A squeeze (C -> K, C > K)
// keeps w as PyTorch does, (K, C); an expansion (K > C) keeps it transposed, (C, K). Its forward
// and data gradient are then dot products along L or sums of M's rows, and its weight gradient
// outer products, each vectorized along L and blocked over rows so that the FMA chains are
// independent. A first version with one dot product per output, a sum across lanes for each, took
// 0.14 ms on efficientnet_b0's 48 -> 1152 expansion at batch 8 (9216 outputs of length 48) in
// `ridge bench`'s per-layer pass, and 0.04 ms as sums of rows (6 us alone with its data in cache).
namespace {

using V16 = Vec<16>;

// [lo, hi) of `count` items for thread t of `threads`, in whole multiples of `unit`.
void share(int64_t count, int64_t unit, int t, int threads, int64_t& lo, int64_t& hi) {
    const int64_t units = (count + unit - 1) / unit;
    lo = std::min(count, units * t / threads * unit);
    hi = std::min(count, units * (t + 1) / threads * unit);
}

RIDGE_SIMD_INLINE float lanes_sum(V16 v) {
    float s = 0;
    for (int j = 0; j < 16; ++j) s += v[j];
    return s;
}

// out[n, r] = a[n] . M[r] (+ bias[r]) for B rows of a from n0, r in [r0, r1).
template <int B>
RIDGE_SIMD_INLINE void dots_block(const float* a, const float* M, const float* bias, float* out, int64_t n0,
                                  int64_t R, int64_t L, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
        const float* m = M + r * L;
        V16 acc[B] = {};
        int64_t l = 0;
        for (; l + 16 <= L; l += 16) {
            const V16 v = load<V16>(m + l);
            for (int j = 0; j < B; ++j) acc[j] += load<V16>(a + (n0 + j) * L + l) * v;
        }
        for (int j = 0; j < B; ++j) {
            float s = lanes_sum(acc[j]);
            for (int64_t i = l; i < L; ++i) s += a[(n0 + j) * L + i] * m[i];
            out[(n0 + j) * R + r] = s + (bias ? bias[r] : 0.0f);
        }
    }
}

RIDGE_SIMD_CLONES void dots(const float* a, const float* M, const float* bias, float* out, int64_t N, int64_t R,
                            int64_t L, int64_t r0, int64_t r1) {
    int64_t n = 0;
    for (; n + 4 <= N; n += 4) dots_block<4>(a, M, bias, out, n, R, L, r0, r1);
    for (; n < N; ++n) dots_block<1>(a, M, bias, out, n, R, L, r0, r1);
}

// out[n, l] = sum over r of coef[n, r] M[r, l] (+ bias[l]) for B rows from n0, l in [l0, l1).
template <int B>
RIDGE_SIMD_INLINE void combos_block(const float* coef, const float* M, const float* bias, float* out, int64_t n0,
                                    int64_t R, int64_t L, int64_t l0, int64_t l1) {
    int64_t l = l0;
    for (; l + 16 <= l1; l += 16) {
        V16 acc[B];
        for (int j = 0; j < B; ++j) acc[j] = bias ? load<V16>(bias + l) : V16{};
        for (int64_t r = 0; r < R; ++r) {
            const V16 v = load<V16>(M + r * L + l);
            for (int j = 0; j < B; ++j) acc[j] += coef[(n0 + j) * R + r] * v;
        }
        for (int j = 0; j < B; ++j) store(out + (n0 + j) * L + l, acc[j]);
    }
    for (; l < l1; ++l)
        for (int j = 0; j < B; ++j) {
            float s = bias ? bias[l] : 0.0f;
            for (int64_t r = 0; r < R; ++r) s += coef[(n0 + j) * R + r] * M[r * L + l];
            out[(n0 + j) * L + l] = s;
        }
}

RIDGE_SIMD_CLONES void combos(const float* coef, const float* M, const float* bias, float* out, int64_t N, int64_t R,
                              int64_t L, int64_t l0, int64_t l1) {
    int64_t n = 0;
    for (; n + 8 <= N; n += 8) combos_block<8>(coef, M, bias, out, n, R, L, l0, l1);
    for (; n < N; ++n) combos_block<1>(coef, M, bias, out, n, R, L, l0, l1);
}

// out[r, l] = sum over n of coef[n, r] v[n, l] for B rows from r0, every l.
template <int B>
RIDGE_SIMD_INLINE void outer_block(const float* coef, const float* v, float* out, int64_t N, int64_t R, int64_t L,
                                   int64_t r0) {
    int64_t l = 0;
    for (; l + 16 <= L; l += 16) {
        V16 acc[B] = {};
        for (int64_t n = 0; n < N; ++n) {
            const V16 x = load<V16>(v + n * L + l);
            for (int j = 0; j < B; ++j) acc[j] += coef[n * R + r0 + j] * x;
        }
        for (int j = 0; j < B; ++j) store(out + (r0 + j) * L + l, acc[j]);
    }
    for (; l < L; ++l)
        for (int j = 0; j < B; ++j) {
            float s = 0;
            for (int64_t n = 0; n < N; ++n) s += coef[n * R + r0 + j] * v[n * L + l];
            out[(r0 + j) * L + l] = s;
        }
}

RIDGE_SIMD_CLONES void outer(const float* coef, const float* v, float* out, int64_t N, int64_t R, int64_t L,
                             int64_t r0, int64_t r1) {
    int64_t r = r0;
    for (; r + 4 <= r1; r += 4) outer_block<4>(coef, v, out, N, R, L, r);
    for (; r < r1; ++r) outer_block<1>(coef, v, out, N, R, L, r);
}

}  // namespace

void linear_rows(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t C, int64_t K,
                 bool transposed, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
        int64_t lo, hi;
        if (transposed) {  // w (C, K): y rows are sums of w's rows
            share(K, 16, t, threads, lo, hi);
            combos(x, w, b, y, N, C, K, lo, hi);
        } else {  // w (K, C): y is dot products along C
            share(K, 1, t, threads, lo, hi);
            dots(x, w, b, y, N, K, C, lo, hi);
        }
    }
}

void linear_rows_dgrad(const float* dy, const float* w, float* dx, int64_t N, int64_t C, int64_t K, bool transposed,
                       int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
        int64_t lo, hi;
        if (transposed) {  // w (C, K): dx is dot products along K
            share(C, 1, t, threads, lo, hi);
            dots(dy, w, nullptr, dx, N, C, K, lo, hi);
        } else {  // w (K, C): dx rows are sums of w's rows
            share(C, 16, t, threads, lo, hi);
            combos(dy, w, nullptr, dx, N, K, C, lo, hi);
        }
    }
}

void linear_rows_wgrad(const float* x, const float* dy, float* dw, float* db, int64_t N, int64_t C, int64_t K,
                       bool transposed, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int t = 0; t < threads; ++t) {
        int64_t lo, hi;
        if (transposed) {  // dw (C, K) = x^T dy
            share(C, 4, t, threads, lo, hi);
            outer(x, dy, dw, N, C, K, lo, hi);
        } else {  // dw (K, C) = dy^T x
            share(K, 4, t, threads, lo, hi);
            outer(dy, x, dw, N, K, C, lo, hi);
        }
        if (db) {
            share(K, 1, t, threads, lo, hi);
            for (int64_t k = lo; k < hi; ++k) {
                float s = 0;
                for (int64_t n = 0; n < N; ++n) s += dy[n * K + k];
                db[k] = s;
            }
        }
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
