#pragma once
// What the kernels of kernels/simd share: fixed-width float vectors (GCC vector extensions, so the
// same source becomes AVX-512, AVX2 or SSE code) and the attribute that compiles a leaf function
// once per instruction set and picks one at load time (an ifunc).
//
// Only leaf functions carry the clones: an OpenMP region is outlined into a function of its own,
// which would not inherit them, so the kernels split work over threads in plain code and call a
// cloned leaf for each piece.

// The helpers below pass vectors wider than the baseline ABI by value; they are always inlined
// into a clone compiled for the vectors' width, so no call ever crosses that ABI.
#pragma GCC diagnostic ignored "-Wpsabi"

#include <cstdint>

namespace ridge::simd {

// A build for one instruction set only (RIDGE_SIMD_TARGET, with RIDGE_SIMD_ISA naming it; see
// simd.h) compiles each leaf for that target alone, so bench/kernels can run every variant the
// host supports instead of only the one the load-time choice picks.
#ifdef RIDGE_SIMD_TARGET
#define RIDGE_SIMD_CLONES __attribute__((target(RIDGE_SIMD_TARGET)))
#else
#define RIDGE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#define RIDGE_SIMD_INLINE inline __attribute__((always_inline))

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

// sum of a[i] * b[i] over n floats: two chains of 16-lane partial sums to hide the FMA latency,
// then the tail in scalar. Inlined into each caller's clone, so it is built per instruction set.
RIDGE_SIMD_INLINE float dot(const float* a, const float* b, int64_t n) {
    using V = Vec<16>;
    V s0 = {}, s1 = {};
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 += load<V>(a + i) * load<V>(b + i);
        s1 += load<V>(a + i + 16) * load<V>(b + i + 16);
    }
    s0 += s1;
    float s = 0;
    for (int j = 0; j < 16; ++j) s += s0[j];
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

}  // namespace ridge::simd
