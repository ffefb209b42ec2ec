// SiLU, x * sigmoid(x), and its gradient, elementwise over a buffer in any layout. oneDNN 2.6's
// jit swish evaluates exp and a division per element at about 39 cycles a 16-lane vector on Zen 4,
// a compute-bound 4x over what memory allows; in efficientnet_b0's training step at batch 8 its
// forward and backward took 45 of 204 ms. These need one exp and one division per element and no
// comparison (see sigmoid and silu below): the forward at about 17 cycles a vector, so inference
// runs it after the conv rather than oneDNN's swish as a post-op (engine/backend/onednn/fusion.cpp).
// Hardsigmoid and its gradient too, which oneDNN 2.6 lacks as a primitive of its own, and the
// sigmoid on its own (a squeeze-excitation's gate outside a fusion): oneDNN's logistic took 11 to
// 31 us for efficientnet_b7's 16x480 to 16x3840 gates at batch 16, the same compute-bound pace.
// And ReLU, which the executor runs here on small tensors (engine/backend/onednn/activation.cpp).
// x, y, dy, dx (n) contiguous
#include <omp.h>

#include <algorithm>
#include <array>

#include "kernels/simd/means.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

using V = Vec<16>;

// sigmoid(x) and 1 - sigmoid(x), each from e = e^-|x| without a difference, so both keep their
// relative precision: e / (1 + e) and 1 / (1 + e), in the order x's sign says. Past |x| = 87 the
// exp's argument is clamped and e is then taken as 0, where the true e^-|x| is below e^-87: an
// error under |x| * 2e-38 in SiLU, and exactly 0 and 1 where the limits are, so SiLU and its
// gradient of huge x are x and dy, of huge -x zero, and of +-inf and NaN NaN, as PyTorch has them
// (0 * inf). Every test is integer arithmetic on the bits: |x| > 87 compares as non-negative ints.
struct Sigmoid {
    V s, complement;
};
RIDGE_SIMD_INLINE Sigmoid sigmoid(V x) {
    const VI negative = bits(x) >> 31;  // all ones where the sign bit is set
    VI t = bits(x) | int32_t(0x80000000);  // -|x|
    // max(t, -87) as floats: among negative floats, the larger the magnitude the larger the bits
    // as a signed integer, so it is their minimum, min(a, b) = b + ((a - b) & ((a - b) >> 31)).
    const VI lo = bits(V{} - 87.0f), d = t - lo;
    t = lo + (d & (d >> 31));
    const VI beyond = magnitude_above(x, 87.0f);
    const V e = floats(bits(exp_bounded(floats(t))) & ~beyond), one = V{} + 1.0f;
    const V inverse = 1.0f / (1.0f + e);
    return {select(negative, e, one) * inverse, select(negative, one, e) * inverse};
}

// x / (1 + e^-x): no complement is needed here, so the exp takes -x itself and the sign selects
// nothing, some ten vector operations fewer than x * sigmoid(x) above. For |x| <= 87, e^-x is a
// normal float and neither the sum nor the quotient loses digits. Beyond (and for inf and NaN) the
// lane is the limit: x where x is positive (x, inf, NaN), x * 0 where negative (-0, or NaN for
// -inf and NaN), as x * sigmoid(x) gives them; the exp's value there is garbage and unused.
RIDGE_SIMD_INLINE V silu(V x) {
    const VI negative = bits(x) >> 31;
    const VI beyond = magnitude_above(x, 87.0f);
    const V y = x / (1.0f + exp_bounded(-x));
    const V limit = x * floats(bits(V{} + 1.0f) & ~negative);
    return select(beyond, limit, y);
}

// dx = dy * (s * (1 + x * (1 - s))). dy comes last: where s is near float's smallest normal (x
// near -87), dy * s first would be subnormal and lose digits before the next product.
RIDGE_SIMD_INLINE V silu_grad(V x, V dy) {
    const Sigmoid g = sigmoid(x);
    return dy * (g.s * (1.0f + x * g.complement));
}

// The floats [i, n) of p in a vector's worth, zero-padded.
RIDGE_SIMD_INLINE std::array<float, 16> tail_of(const float* p, int64_t i, int64_t n) {
    std::array<float, 16> t{};
    std::copy(p + i, p + n, t.begin());
    return t;
}

// y = f(x...) element by element over n floats of each input: whole vectors, then the tail
// through zero-padded copies (whose extra lanes are dropped).
template <class F, class... In>
RIDGE_SIMD_INLINE void map_span(float* y, int64_t n, F f, const In*... x) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) store(y + i, f(load<V>(x + i)...));
    if (i == n) return;
    float ys[16];
    store(ys, f(load<V>(tail_of(x, i, n).data())...));
    std::copy(ys, ys + (n - i), y + i);
}

RIDGE_SIMD_LEAF void silu_span(const float* x, float* y, int64_t n) {
    map_span(y, n, [](V v) RIDGE_SIMD_LAMBDA { return silu(v); }, x);
}

RIDGE_SIMD_LEAF void silu_grad_span(const float* x, const float* dy, float* dx, int64_t n) {
    map_span(dx, n, [](V v, V g) RIDGE_SIMD_LAMBDA { return silu_grad(v, g); }, x, dy);
}

// GELU, x * Phi(x), Phi the normal distribution, and its gradient Phi(x) + x * phi(x). oneDNN
// 2.6's gelu_erf ran at 0.32 ns an element on 2 threads of the Zen 5 (vit_b_16's 8x197x3072 and
// convnext_tiny's 8x384x56x56 in the per-layer pass: 25 GB/s, four times what memory allows).
// Phi from erf's approximation 7.1.26 of Abramowitz and Stegun (|error| <= 1.5e-7; oneDNN's
// gelu_erf evaluates the same one): with z = |x| / sqrt2 and t = 1 / (1 + p z), the tail
// 1 - erf(z) = t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) e^(-z^2). For x < 0 Phi is that tail halved,
// without a difference. e^(-z^2) = e^(-x^2 / 2) is also phi's factor, so the gradient takes one exp.
// Past z^2 = 87 (|x| > 13.2) the exp's lane is taken as 0, where the true value is below 2e-38: Phi
// is then exactly 0 or 1. +inf gives inf, -inf and NaN give NaN (x * Phi: -inf * 0), as the
// reference's x * erfc(-x / sqrt2) / 2 does.
struct Gauss {
    V Phi, e;  // e = e^(-x^2 / 2)
};
RIDGE_SIMD_INLINE Gauss gauss(V x) {
    const VI negative = bits(x) >> 31;
    const V z = floats(bits(x) & 0x7fffffff) * 0.707106781186547524f;
    const V z2 = z * z;
    const V e = floats(bits(exp_bounded(-z2)) & ~magnitude_above(z2, 87.0f));
    const V t = 1.0f / (1.0f + 0.3275911f * z);
    V q = 1.061405429f * t - 1.453152027f;
    q = q * t + 1.421413741f;
    q = q * t - 0.284496736f;
    q = q * t + 0.254829592f;
    const V tail = 0.5f * (q * t) * e;  // Phi(-|x|)
    return {select(negative, tail, 1.0f - tail), e};
}

RIDGE_SIMD_LEAF void gelu_span(const float* x, float* y, int64_t n) {
    map_span(y, n, [](V v) RIDGE_SIMD_LAMBDA { return v * gauss(v).Phi; }, x);
}

// dx = dy * (Phi(x) + x e^(-x^2 / 2) / sqrt(2 pi)).
RIDGE_SIMD_LEAF void gelu_grad_span(const float* x, const float* dy, float* dx, int64_t n) {
    map_span(
        dx, n,
        [](V v, V g) RIDGE_SIMD_LAMBDA {
            const Gauss u = gauss(v);
            return g * (u.Phi + v * u.e * 0.398942280401432678f);
        },
        x, dy);
}

// sigmoid above takes a NaN as beyond 87 (its limit 0 or 1, by the sign bit): here it stays NaN.
RIDGE_SIMD_LEAF void sigmoid_span(const float* x, float* y, int64_t n) {
    map_span(y, n, [](V v) RIDGE_SIMD_LAMBDA { return select(nan_lanes(v), v, sigmoid(v).s); }, x);
}

// dx = dy * y * (1 - y) from the output y, as oneDNN's logistic_use_dst_for_bwd and the reference
// take it. A plain loop: the vectorizer widens it per target.
RIDGE_SIMD_LEAF void sigmoid_grad_span(const float* y, const float* dy, float* dx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * y[i] * (1.0f - y[i]);
}

// Pieces of this many floats (a multiple of 16) spread the work over the threads.
constexpr int64_t piece = 4096;

// min(max(x + 3, 0), 6) / 6: the reference's order of operations, so the kinks fall where it puts
// them; a NaN stays NaN. Written as plain loops, GCC 12 made both of these scalar code with a
// branch per element (it keeps the division out of the clamped cases, and then may not run it
// on every lane): 17.7 us for 7680 floats on a Zen 3 core, a mobilenet_v3_large gate at batch 8.
// Here the clamps are bit operations and the division runs on every lane.
RIDGE_SIMD_INLINE V hardsigmoid(V x) {
    const V t = x + 3.0f;
    const VI nan = nan_lanes(t), negative = (bits(t) >> 31) & ~nan;
    const V lifted = floats(bits(t) & ~negative);  // +0 where t < 0: non-negative floats order as ints
    return select(magnitude_above(lifted, 6.0f) & ~nan, V{} + 6.0f, lifted) / 6.0f;
}

RIDGE_SIMD_LEAF void hardsigmoid_span(const float* x, float* y, int64_t n) {
    map_span(y, n, [](V v) RIDGE_SIMD_LAMBDA { return hardsigmoid(v); }, x);
}

// The slope 1/6 on the open interval (-3, 3), as PyTorch's backward takes it, 0 outside and at a
// NaN x: |x| < 3 is |x| not above 0x1.7ffffep+1, the float just below 3.
RIDGE_SIMD_LEAF void hardsigmoid_grad_span(const float* x, const float* dy, float* dx, int64_t n) {
    map_span(
        dx, n, [](V v, V g) RIDGE_SIMD_LAMBDA { return select(magnitude_above(v, 0x1.7ffffep+1f), V{}, g / 6.0f); },
        x, dy);
}

// ReLU and its gradient from the output (dx = dy where y > 0), as oneDNN's relu_use_dst_for_bwd
// takes it. x > 0 ? x : 0, as the reference: a NaN and -0 give +0 (oneDNN's max(x, 0) instruction
// does the same). Plain loops without a division: GCC widens them per target (a compare and a mask).
RIDGE_SIMD_LEAF void relu_span(const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

RIDGE_SIMD_LEAF void relu_grad_span(const float* y, const float* dy, float* dx, int64_t n) {
    for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

// The floats of each piece: about `piece`, a multiple of 16, and as many pieces as a multiple of
// the team's threads, so each thread takes the same share (a sigmoid over 16x1152 gates, 4.5
// pieces of 4096, left one thread 3 of them).
int64_t piece_size(int64_t n) {
    const int64_t threads = omp_get_max_threads();
    int64_t pieces = (n + piece - 1) / piece;
    if (pieces <= 1) return piece;  // one piece, or none for an empty span
    pieces = (pieces + threads - 1) / threads * threads;
    return ((n + pieces - 1) / pieces + 15) / 16 * 16;
}

// A span function over n elements, run piece by piece on the threads; one piece (a squeeze's few
// rows) on the calling thread, without a team (team.h's for_units).
void in_pieces(const float* x, float* y, int64_t n, void (*span)(const float*, float*, int64_t)) {
    const int64_t size = piece_size(n), pieces = (n + size - 1) / size;
    for_units(pieces, omp_get_max_threads(),
              [&](int64_t u) { span(x + u * size, y + u * size, std::min(size, n - u * size)); });
}

void in_pieces(const float* x, const float* dy, float* dx, int64_t n,
               void (*span)(const float*, const float*, float*, int64_t)) {
    const int64_t size = piece_size(n), pieces = (n + size - 1) / size;
    for_units(pieces, omp_get_max_threads(),
              [&](int64_t u) { span(x + u * size, dy + u * size, dx + u * size, std::min(size, n - u * size)); });
}

// y = silu(x) over `rows` rows of K vectors, `stride` floats apart, their sums added into sums
// (16 K floats). A silu is a long chain of dependent operations (the exp's polynomial, a
// division): the K vectors of a row, or two rows of a single vector, give the core independent
// chains to overlap, and the sums stay in registers for the whole strip.
template <int K>
RIDGE_SIMD_INLINE void silu_sum_strip(const float* x, float* y, float* sums, int64_t rows, int64_t stride) {
    V a[K], b = {};
    for (int k = 0; k < K; ++k) a[k] = load<V>(sums + 16 * k);
    int64_t r = 0;
    if constexpr (K == 1)
        for (; r + 2 <= rows; r += 2) {
            const V u = silu(load<V>(x + r * stride)), v = silu(load<V>(x + (r + 1) * stride));
            store(y + r * stride, u);
            store(y + (r + 1) * stride, v);
            a[0] += u;
            b += v;
        }
    for (; r < rows; ++r)
        for (int k = 0; k < K; ++k) {
            const V v = silu(load<V>(x + r * stride + 16 * k));
            store(y + r * stride + 16 * k, v);
            a[k] += v;
        }
    a[0] += b;
    for (int k = 0; k < K; ++k) store(sums + 16 * k, a[k]);
}

// The same over rows of `width` floats: strips of four vectors, one of the rest, and a last
// partial vector through a zero-padded copy.
RIDGE_SIMD_LEAF void silu_sum_rows(const float* x, float* y, float* sums, int64_t rows, int64_t width, int64_t stride) {
    int64_t i = 0;
    for (; i + 64 <= width; i += 64) silu_sum_strip<4>(x + i, y + i, sums + i, rows, stride);
    const int64_t left = (width - i) / 16;
    if (left == 3) silu_sum_strip<3>(x + i, y + i, sums + i, rows, stride);
    if (left == 2) silu_sum_strip<2>(x + i, y + i, sums + i, rows, stride);
    if (left == 1) silu_sum_strip<1>(x + i, y + i, sums + i, rows, stride);
    i += left * 16;
    if (i == width) return;
    for (int64_t r = 0; r < rows; ++r) {
        float ys[16];
        store(ys, silu(load<V>(tail_of(x + r * stride, i, width).data())));
        for (int64_t j = i; j < width; ++j) y[r * stride + j] = ys[j - i], sums[j] += ys[j - i];
    }
}

}  // namespace

void silu_forward(const float* x, float* y, int64_t n) { in_pieces(x, y, n, silu_span); }

void silu_backward(const float* x, const float* dy, float* dx, int64_t n) { in_pieces(x, dy, dx, n, silu_grad_span); }
void gelu_forward(const float* x, float* y, int64_t n) { in_pieces(x, y, n, gelu_span); }
void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) { in_pieces(x, dy, dx, n, gelu_grad_span); }
void sigmoid_forward(const float* x, float* y, int64_t n) { in_pieces(x, y, n, sigmoid_span); }
void sigmoid_backward(const float* y, const float* dy, float* dx, int64_t n) { in_pieces(y, dy, dx, n, sigmoid_grad_span); }
void relu_forward(const float* x, float* y, int64_t n) { in_pieces(x, y, n, relu_span); }
void relu_backward(const float* y, const float* dy, float* dx, int64_t n) { in_pieces(y, dy, dx, n, relu_grad_span); }
namespace {

// dy where y > 0, else 0 (a NaN in y gives 0). A vector wider than the target's registers is taken
// in pieces of their width (in_registers, vec.h).
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V where_positive(V y, V dy) {
    if constexpr (sizeof(V) > RIDGE_SIMD_VECTOR_BYTES)
        return in_registers<where_positive<RegisterVec>>(y, dy);
    else
        return y > 0.0f ? dy : V{};
}

// One image's channel block cb of dx (and y), from dy's blocks in 8-lane pieces, position by
// position (a piece at a time over the whole block, each line of y and dx was met twice: 2.7 ms
// against oneDNN's 2.9 for a reorder and the eltwise, regnet_x_1_6gf's largest). A piece of dx
// whose channels dy's padded blocks do not hold (a last block of 16 half past C, dy in blocks of
// 8) takes zeros, as y's padding does.
RIDGE_SIMD_LEAF void relu_grad_block(const float* y, const float* dy, float* dx, const ChannelLayout& l,
                                     int64_t dy_block, int64_t n, int64_t cb) {
    const int64_t B = l.block, pieces = B / 8;
    const int64_t at = n * l.batch_stride() + cb * l.block_stride();
    const ChannelLayout dyl{l.N, l.C, l.HW, dy_block};
    const float* from[2] = {nullptr, nullptr};  // each piece's first position in dy; null: none
    for (int64_t j = 0; j < pieces; ++j) {
        const int64_t c0 = cb * B + j * 8;
        if (c0 < dyl.padded_channels()) from[j] = dy + dyl.offset(n, c0, 0);
    }
    const float* yb = y + at;
    float* dxb = dx + at;
    for (int64_t s = 0; s < l.HW; ++s)
        for (int64_t j = 0; j < pieces; ++j) {
            const Vec8 v = from[j] ? where_positive(load<Vec8>(yb + s * B + j * 8), load<Vec8>(from[j] + s * dy_block))
                                   : Vec8{};
            store(dxb + s * B + j * 8, v);
        }
}

}  // namespace

void relu_backward_reblocked(const float* y, const float* dy, int64_t dy_block, float* dx, const ChannelLayout& l,
                             int threads) {
    for_units(l.N * l.blocks(), threads,
              [&](int64_t u) { relu_grad_block(y, dy, dx, l, dy_block, u / l.blocks(), u % l.blocks()); });
}

void hardsigmoid_forward(const float* x, float* y, int64_t n) { in_pieces(x, y, n, hardsigmoid_span); }
void hardsigmoid_backward(const float* x, const float* dy, float* dx, int64_t n) {
    in_pieces(x, dy, dx, n, hardsigmoid_grad_span);
}

// Channels-last with fewer images than threads splits the images over the threads: at batch 1
// one thread had summed the map alone. Wide rows split by channels, in runs of 256 or more (no
// sums to add after); narrower ones by positions, each thread summing its rows into sums of its
// own, added in thread order after: split by channels, two threads reading and writing 3 of
// every 6 lines of a row (96 channels of 56x56) took twice one thread's time. On 2 threads of the
// Zen 5, warm, against silu_forward and channel_means in turn: 1x96x56x56 41 against 121 us (the
// SiLU alone 36), 1x1152x7x7 by channels 10 against 25 (by positions 22).
constexpr int64_t channel_run_least = 256;

void silu_channel_means(const float* x, float* y, float* out, const ChannelLayout& l) {
    const int64_t B = l.block;
    const int threads = omp_get_max_threads();
    const float k = 1.0f / float(l.HW);
    if (B == l.C && l.N < threads && l.C < channel_run_least * threads) {
        means_by_positions(l, out, [x, y, C = l.C](int64_t at, int64_t rows, int64_t w, float* sums) {
            silu_sum_rows(x + at, y + at, sums, rows, w, C);
        });
        return;
    }
    if (B == l.C) {
        const int64_t parts = l.N < threads ? threads / l.N : 1;
        const int64_t width = std::min(means_run, ((l.C + parts - 1) / parts + 15) / 16 * 16);
        const int64_t runs = (l.C + width - 1) / width;
        for_units(l.N * runs, omp_get_max_threads(), [&](int64_t u) {
            const int64_t n = u / runs, c0 = u % runs * width, w = std::min(width, l.C - c0);
            const int64_t at = n * l.batch_stride() + c0;
            float sums[means_run] = {};
            silu_sum_rows(x + at, y + at, sums, l.HW, w, l.C);
            for (int64_t j = 0; j < w; ++j) out[n * l.C + c0 + j] = k * sums[j];
        });
        return;
    }
    // Plain (a block of 1) or channel blocks of 8 or 16: a unit is one image's block, its HW rows
    // of B floats (padding lanes included: silu(0) is 0, and their sums are dropped).
    const int64_t units = l.N * l.blocks();
    for_units(units, omp_get_max_threads(), [&](int64_t u) {
        const int64_t n = u / l.blocks(), cb = u % l.blocks();
        const int64_t at = n * l.batch_stride() + cb * l.block_stride();
        float sums[16] = {};
        if (B == 1) {  // the channel's span as rows of 16 and a tail
            float part[16] = {};
            const int64_t whole = l.HW / 16 * 16;
            silu_sum_rows(x + at, y + at, part, whole / 16, 16, 16);
            silu_sum_rows(x + at + whole, y + at + whole, part, 1, l.HW - whole, 0);
            for (float v : part) sums[0] += v;
        } else if (B == 8) {
            // Rows of 8 follow each other: two a vector, whose halves' sums are added after.
            float part[16] = {};
            silu_sum_rows(x + at, y + at, part, l.HW / 2, 16, 16);
            if (l.HW % 2) silu_sum_rows(x + at + (l.HW - 1) * 8, y + at + (l.HW - 1) * 8, part, 1, 8, 8);
            for (int64_t j = 0; j < 8; ++j) sums[j] = part[j] + part[j + 8];
        } else {
            silu_sum_rows(x + at, y + at, sums, l.HW, B, B);
        }
        for (int64_t j = 0; j < B && cb * B + j < l.C; ++j) out[n * l.C + cb * B + j] = k * sums[j];
    });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
