#pragma once
// What the kernels of kernels/simd share: fixed-width float vectors (GCC vector extensions, so the
// same source becomes AVX-512, AVX2 or SSE code), the attribute that compiles a leaf function for
// the build's instruction set, and how a weight gradient splits the batch over threads.
//
// Only leaf functions carry the target: an OpenMP region is outlined into a function of its own,
// which would not inherit it, so the kernels split work over threads in plain code and call a
// leaf compiled for the target for each piece.

// The helpers below pass vectors wider than the baseline ABI by value; they, and every lambda that
// takes or returns a vector (RIDGE_SIMD_LAMBDA), are always inlined into a leaf compiled for the
// vectors' width, so no call ever crosses that ABI. GCC still notes
// each such signature (-Wpsabi), so kernels/CMakeLists.txt turns that note off for these files.

#include <cstdint>

namespace ridge::simd {

// The kernels are built once per instruction set (RIDGE_SIMD_TARGET, with RIDGE_SIMD_ISA naming
// the namespace; kernels/CMakeLists.txt), and each leaf is compiled for that target alone.
// kernels/simd/dispatch.cpp picks one build per host at load time for every caller, and
// bench/kernels runs each build the host supports.
#ifndef RIDGE_SIMD_TARGET
#error "kernels/simd sources are built once per instruction set: RIDGE_SIMD_TARGET names it"
#endif
#define RIDGE_SIMD_LEAF __attribute__((target(RIDGE_SIMD_TARGET)))
#define RIDGE_SIMD_INLINE inline __attribute__((always_inline))
// The same for a lambda that takes or returns a vector: a lambda does not inherit its enclosing
// leaf's target, so where it is not inlined (-Og, -O0) it is a baseline function called with
// the leaf's ABI; an AVX-512 leaf then passes 64-byte vectors in zmm registers that the lambda
// reads from the stack (a sanitized -Og build's SiLU gave garbage and crashed on AVX-512 hosts).
#define RIDGE_SIMD_LAMBDA __attribute__((always_inline))
// A helper that compares 16-lane vectors and selects takes RIDGE_SIMD_LEAF as well: GCC 12 lowers
// such a select for the target of the function it is written in, before inlining it into a leaf.
// pool.cpp's max_nan as a baseline helper made squeezenet1_1's pools at batch 16 take 25 times as
// long (its 8-lane select came out whole, as vcmpps and vblendvps on ymm registers).

// Whether the leaves run their AVX-512 code (RIDGE_SIMD_WIDE, set with the build's target).
// Elsewhere a 16-lane vector is two 8-lane halves, and GCC 12 keeps a kernel's many 16-lane
// accumulators in memory there (depthwise_wgrad's 7x7 taps in the AVX2 build: a third of its
// instructions were stack loads and stores), so a kernel that can run either width takes 8 lanes.
// Static: each ISA build's copy answers for its own target.
static inline bool wide_vectors() { return RIDGE_SIMD_WIDE; }
#if !defined(RIDGE_SIMD_WIDE) || !defined(RIDGE_SIMD_VECTOR_BYTES)
#error "kernels/CMakeLists.txt sets RIDGE_SIMD_WIDE and RIDGE_SIMD_VECTOR_BYTES with each build's target"
#endif

typedef float Vec8 __attribute__((vector_size(32)));
typedef float Vec16 __attribute__((vector_size(64)));

template <int lanes>
struct VecOf;
template <>
struct VecOf<8> {
    using type = Vec8;
};
template <>
struct VecOf<16> {
    using type = Vec16;
};
template <int lanes>
using Vec = typename VecOf<lanes>::type;

// The int32 lanes of Vec<L>: masks, and integers kept beside each float lane. Spelled out per
// width: GCC 12 rejects __builtin_convertvector on a vector type whose size depends on a template
// parameter.
template <int L>
struct LaneBits;
template <>
struct LaneBits<8> {
    typedef int32_t type __attribute__((vector_size(32)));
};
template <>
struct LaneBits<16> {
    typedef int32_t type __attribute__((vector_size(64)));
};

// Loads and stores through memcpy: any alignment, no aliasing question (one vmovups each).
template <class V>
RIDGE_SIMD_INLINE V load(const float* p) {
    V v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
template <class V>
RIDGE_SIMD_INLINE void store(float* p, V v) {
    __builtin_memcpy(p, &v, sizeof v);
}

// r[i] = 8 values of position i becomes r[c] = 8 positions of value c.
RIDGE_SIMD_INLINE void transpose8(Vec8 (&r)[8]) {
    typedef int32_t L8 __attribute__((vector_size(32)));
    Vec8 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], L8{0, 8, 1, 9, 4, 12, 5, 13});
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], L8{2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int i = 0; i < 8; i += 4)
        for (int j = 0; j < 2; ++j) {
            u[i + j] = __builtin_shuffle(t[i + j], t[i + j + 2], L8{0, 1, 8, 9, 4, 5, 12, 13});
            u[i + j + 2] = __builtin_shuffle(t[i + j], t[i + j + 2], L8{2, 3, 10, 11, 6, 7, 14, 15});
        }
    // u[0], u[1], u[2], u[3] hold values 0 and 4, 2 and 6, 1 and 5, 3 and 7 of positions 0-3 in
    // their 128-bit halves (u[4..7] of positions 4-7): the last step joins halves.
    const int order[4] = {0, 2, 1, 3};
    for (int j = 0; j < 4; ++j) {
        r[j] = __builtin_shuffle(u[order[j]], u[order[j] + 4], L8{0, 1, 2, 3, 8, 9, 10, 11});
        r[j + 4] = __builtin_shuffle(u[order[j]], u[order[j] + 4], L8{4, 5, 6, 7, 12, 13, 14, 15});
    }
}

// 16 int32 lanes, for the bit-level work on 16-lane float vectors; VU, unsigned, where the
// arithmetic may wrap (a cast between the two keeps the bits).
typedef int32_t VI __attribute__((vector_size(64)));
typedef uint32_t VU __attribute__((vector_size(64)));

RIDGE_SIMD_INLINE VI bits(Vec16 v) {
    VI i;
    __builtin_memcpy(&i, &v, sizeof i);
    return i;
}
RIDGE_SIMD_INLINE Vec16 floats(VI i) {
    Vec16 v;
    __builtin_memcpy(&v, &i, sizeof v);
    return v;
}
// a where the mask is all ones, else b. Comparisons and ?: on 16-lane vectors become scalar code
// in the AVX2 build (GCC 12 splits only arithmetic and bit operations into two 8-lane halves), so
// the kernels select and clamp with integer bit operations alone.
RIDGE_SIMD_INLINE Vec16 select(VI mask, Vec16 a, Vec16 b) { return floats((bits(a) & mask) | (bits(b) & ~mask)); }
// All ones where |x| > c (c >= 0, up to +inf), and where x is a NaN, whose magnitude has bits above
// +inf's: non-negative floats compare as their bits do. The magnitude is taken before the
// subtraction, which then cannot overflow.
RIDGE_SIMD_INLINE VI magnitude_above(Vec16 x, float c) {
    return (bits(Vec16{} + c) - (bits(x) & 0x7fffffff)) >> 31;
}
RIDGE_SIMD_INLINE VI nan_lanes(Vec16 x) { return magnitude_above(x, __builtin_inff()); }

// e^t for |t| <= 87: t = k ln2 + r with |r| <= ln2 / 2, e^r from a degree-6 polynomial (the form
// and coefficients of Cephes' expf: a few ulp), and 2^k added into the exponent field; k stays
// within [-126, 126], so the result is a normal float. The integer steps are unsigned: a lane
// outside (inf, NaN, a huge value) gives garbage but no overflow a sanitizer would report, so
// callers compute every lane and replace those outside with their limit. Shared by SiLU
// (activation.cpp) and softmax (softmax.cpp).
RIDGE_SIMD_INLINE Vec16 exp_bounded(Vec16 t) {
    using V = Vec16;
    // k = round(t / ln 2) by adding 1.5 * 2^23: the sum's low mantissa bits hold k.
    const float magic = 12582912.0f;
    V kf = t * 1.44269504088896341f + magic;
    const VU k = VU(bits(kf)) - VU(bits(V{} + magic));
    kf -= magic;
    // r = t - k ln2, ln2 in two parts (Cody and Waite) so that r keeps its low bits.
    V r = t - kf * 0.693359375f;
    r = r + kf * 2.12194440e-4f;
    V p = V{} + 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    return floats(VI(VU(bits(p)) + (k << 23)));
}

// The sum of a vector's lanes, first to last.
RIDGE_SIMD_INLINE float sum_lanes(Vec16 v) {
    float s = 0;
    for (int j = 0; j < 16; ++j) s += v[j];
    return s;
}
RIDGE_SIMD_INLINE float sum_lanes(Vec8 v) {
    float s = 0;
    for (int j = 0; j < 8; ++j) s += v[j];
    return s;
}

// sum of a[i] * b[i] over n floats: two chains of W-lane partial sums to hide the FMA latency,
// then the tail in scalar. Inlined into each calling leaf, so it is built per instruction set.
template <int W>
RIDGE_SIMD_INLINE float dot_lanes(const float* a, const float* b, int64_t n) {
    using V = Vec<W>;
    V s0 = {}, s1 = {};
    int64_t i = 0;
    for (; i + 2 * W <= n; i += 2 * W) {
        s0 += load<V>(a + i) * load<V>(b + i);
        s1 += load<V>(a + i + W) * load<V>(b + i + W);
    }
    float s = sum_lanes(s0 + s1);
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}
// 16 lanes only where the build runs AVX-512: below it GCC 12 keeps 16-lane accumulators carried
// across a loop on the stack (layernorm.cpp has the figures). Static, as wide_vectors(): each ISA
// build's copy has its own body.
static RIDGE_SIMD_INLINE float dot(const float* a, const float* b, int64_t n) {
    return wide_vectors() ? dot_lanes<16>(a, b, n) : dot_lanes<8>(a, b, n);
}

// The chunks of the batch a weight gradient sums apart, each into its own copy of the sums, added
// at the end: one where its `blocks` channel blocks give each of `threads` threads two, else as
// many chunks of whole images as make up the difference, at most N.
inline int64_t wgrad_chunks(int64_t blocks, int64_t N, int threads) {
    if (blocks >= 2 * threads) return 1;
    const int64_t want = (2 * threads + blocks - 1) / blocks;
    return want < N ? want : N;
}

}  // namespace ridge::simd

namespace ridge::simd::inline RIDGE_SIMD_ISA {

// The floats of one of the build's vector registers.
typedef float RegisterVec __attribute__((vector_size(RIDGE_SIMD_VECTOR_BYTES)));

// f(a, b) on a vector wider than the build's registers, in pieces of their width: GCC 12 lowers a
// compare wider than the target lane by lane, in scalar compares and moves (pool.cpp's max_nan in
// the SSE2 build: resnet50's maxpool at batch 16 57 ms, against 1.6 in the AVX2 build). f is
// compiled for the target (RIDGE_SIMD_LEAF), as is every helper that calls it.
template <auto f, class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V in_registers(V a, V b) {
    constexpr int pieces = sizeof(V) / sizeof(RegisterVec);
    RegisterVec x[pieces], y[pieces];
    __builtin_memcpy(x, &a, sizeof a);
    __builtin_memcpy(y, &b, sizeof b);
    for (int i = 0; i < pieces; ++i) x[i] = f(x[i], y[i]);
    __builtin_memcpy(&a, x, sizeof a);
    return a;
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
