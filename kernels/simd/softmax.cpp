// Softmax along rows of contiguous elements, y = e^(x - max) / sum of e^(x - max), and its
// gradient dx = y * (dy - sum over the row of dy * y). oneDNN 2.6's jit softmax took 0.49 ms for
// vit_b_16's attention weights at batch 1 (12x197 rows of 197) on the 2-core Zen 4, 5.8x what
// memory allows; its jit softmax backward exists only for AVX-512, and on AVX2 hosts vit_b_16's
// attention gradients (8x12x197 rows of 197) ran its reference implementation at 7 to 9 ms a layer,
// 8x what memory allows. Both are memory-bound here: a row stays in L1 between its passes.
// x, y, dy, dx (rows, n) plain
#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

RIDGE_SIMD_LEAF void softmax_backward_row(const float* y, const float* dy, float* dx, int64_t n) {
    using V = Vec<16>;
    const float dot = simd::dot(dy, y, n);
    const V d = V{} + dot;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) store(dx + i, load<V>(y + i) * (load<V>(dy + i) - d));
    for (; i < n; ++i) dx[i] = y[i] * (dy[i] - dot);
}

// e^(x - m) for 16 lanes of x <= m: 0 where x - m is below -87 (e^-87 is 1.6e-38) or -inf, NaN
// where it is NaN (x NaN, or x and m both +inf), so a NaN spreads over its row as in PyTorch. The
// tests are integer arithmetic on the bits (activation.cpp's sigmoid says why): with the sign bit
// set, a larger magnitude has the larger signed bits.
RIDGE_SIMD_INLINE Vec16 exp_shifted(Vec16 x, float m) {
    VI t = bits(x - m);
    const VI nan = nan_lanes(floats(t));
    t |= int32_t(0x80000000);  // -|t|: x = m gives -0, not +0
    const VI lo = bits(Vec16{} - 87.0f), d = t - lo;
    const VI beyond = (-d) >> 31;  // all ones where t < -87
    t = lo + (d & (d >> 31));      // max(t, -87)
    return floats((bits(exp_bounded(floats(t))) & ~beyond) | nan);
}

// exp_shifted for a row without NaN whose maximum m is finite, so x - m lies in [-inf, 0]: the
// same bits, without the NaN lanes' tests. With AVX-512 the clamp at -87 and the zeros below it
// are a compare, a max and a masked move (in the AVX2 build a 16-lane compare becomes scalar code,
// vec.h's select says so, and the integer form stays, less its NaN test).
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE Vec16 exp_shifted_finite(Vec16 x, float m) {
#if RIDGE_SIMD_WIDE
    const Vec16 t = x - m, lo = Vec16{} - 87.0f;
    const Vec16 e = exp_bounded(t > lo ? t : lo);
    return t < lo ? Vec16{} : e;
#else
    VI t = bits(x - m) | int32_t(0x80000000);
    const VI lo = bits(Vec16{} - 87.0f), d = t - lo;
    const VI beyond = (-d) >> 31;
    t = lo + (d & (d >> 31));
    return floats(bits(exp_bounded(floats(t))) & ~beyond);
#endif
}

RIDGE_SIMD_INLINE void add_halves(Vec8& lo, Vec8& hi, Vec16 e) {
    lo += __builtin_shufflevector(e, e, 0, 1, 2, 3, 4, 5, 6, 7);
    hi += __builtin_shufflevector(e, e, 8, 9, 10, 11, 12, 13, 14, 15);
}

// The exponentials of a row into y and their sum; rows of 16 or more end on the row's last 16
// floats, overlapping the vectors before them: the lanes already summed are cleared before the
// sum (their exponentials, written again, are the same bits: that vector of x, last_x, is read
// before y is written, as y may be x). The tail went through a stack copy before: two calls to
// memcpy and a vector load of scalar stores, which made vit_b_16's rows of 197 take 470 cycles
// each on the Zen 5 against 280 for rows of 208 (one thread, rows in L1). Its 12x197 rows of 197
// alone, two threads: 168 -> 114-123 us; its 12 softmaxes in `ridge bench vit_b_16`'s per-layer
// pass, three alternated runs: 1.44-1.51 -> 1.13-1.18 ms.
template <bool Finite>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE Vec16 e_of(Vec16 v, float m) {
    if constexpr (Finite)
        return exp_shifted_finite(v, m);
    else
        return exp_shifted(v, m);
}

template <bool Finite>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE float exponentials(const float* x, float* y, int64_t n, float m, Vec16 last_x) {
    // The sum in two 8-lane halves: a 16-lane accumulator carried across the loop stays on the
    // stack in GCC 12's AVX2 code (layernorm.cpp has the figures), and AVX-512 loses nothing on a
    // loop bound by its exponentials.
    Vec8 s_lo = {}, s_hi = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        Vec16 e = e_of<Finite>(load<Vec16>(x + i), m);
        store(y + i, e);
        add_halves(s_lo, s_hi, e);
    }
    if (n >= 16 && i < n) {
        const Vec16 e = e_of<Finite>(last_x, m);
        store(y + n - 16, e);
        const VI lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
        const VI done = (lane - int32_t(16 - (n - i))) >> 31;  // all ones on lanes summed already
        add_halves(s_lo, s_hi, floats(bits(e) & ~done));
    } else if (i < n) {  // under 16: through a vector whose other lanes are -inf, which give 0
        float tail[16];
        std::fill(tail, tail + 16, -__builtin_inff());
        std::copy(x + i, x + n, tail);
        Vec16 e = e_of<Finite>(load<Vec16>(tail), m);
        add_halves(s_lo, s_hi, e);
        store(tail, e);
        std::copy(tail, tail + (n - i), y + i);
    }
    return sum_lanes(s_lo + s_hi);
}

// The maximum, then the exponentials, then their scaling. The first pass also sums the row: the
// sum is NaN where the row holds a NaN (or infinities of both signs, or partial sums past the
// float range both ways), and a row whose sum is not and whose maximum is finite takes the
// exponentials without NaN tests (exp_shifted_finite), the same bits; the others keep them.
// vit_b_16's 8x12x197 rows of 197 alone, two threads on the 2-core Zen 5, in cache: 1.06-1.11 ->
// 0.76-0.84 ms on AVX-512, 2.23 -> 1.80-1.88 in the AVX2 build; from memory both about 0.8.
RIDGE_SIMD_LEAF void softmax_forward_row(const float* x, float* y, int64_t n) {
    using V8 = Vec<8>;  // 8 lanes compare in one instruction on AVX2 as on AVX-512
    const bool overlap = n >= 16 && n % 16 != 0;
    V8 m0 = V8{} - __builtin_inff(), m1 = m0, s0 = {}, s1 = {};
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const V8 a = load<V8>(x + i), b = load<V8>(x + i + 8);
        m0 = a > m0 ? a : m0;
        m1 = b > m1 ? b : m1;
        s0 += a;
        s1 += b;
    }
    // Read before the exponentials write y, which may be x.
    const Vec16 last_x = overlap ? load<Vec16>(x + n - 16) : Vec16{};
    if (overlap) {
        const V8 a = load<V8>(x + n - 16), b = load<V8>(x + n - 8);
        m0 = a > m0 ? a : m0;
        m1 = b > m1 ? b : m1;
        s0 += a;
        s1 += b;
        i = n;
    }
    m0 = m1 > m0 ? m1 : m0;
    float m = -__builtin_inff(), sum = sum_lanes(s0 + s1);
    for (int j = 0; j < 8; ++j) m = std::max(m, m0[j]);
    for (; i < n; ++i) m = std::max(m, x[i]), sum += x[i];

    const bool finite = sum == sum && m > -__builtin_inff() && m < __builtin_inff();
    const float k = 1.0f / (finite ? exponentials<true>(x, y, n, m, last_x) : exponentials<false>(x, y, n, m, last_x));
    const Vec16 last = overlap ? load<Vec16>(y + n - 16) * k : Vec16{};
    i = 0;
    for (; i + 16 <= n; i += 16) store(y + i, load<Vec16>(y + i) * k);
    if (overlap)
        store(y + n - 16, last);
    else
        for (; i < n; ++i) y[i] *= k;
}

}  // namespace

void softmax_forward(const float* x, float* y, int64_t rows, int64_t n) {
    for_units(rows, omp_get_max_threads(), [&](int64_t r) { softmax_forward_row(x + r * n, y + r * n, n); });
}

void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t n) {
    for_units(rows, omp_get_max_threads(), [&](int64_t r) {
        softmax_backward_row(y + r * n, dy + r * n, dx + r * n, n);
    });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
