// fp32 FMA throughput with AVX2 + FMA3 (compiled with -mavx2 -mfma; called only when the CPU has
// both). 12 accumulators cover a 4-cycle FMA latency on two pipes with room to spare; the loop
// body issues each twice so the loop overhead is 1 branch per 24 FMAs.
#include <immintrin.h>

#include "roofline/probes/cpu/kernels.h"

namespace ridge::probe::kernels {

float fma_avx2(int64_t iterations) {
    // x <- x * m + c converges to c / (1 - m) = 1: no overflow, no denormals, however long it runs.
    const __m256 m = _mm256_set1_ps(0.5f), c = _mm256_set1_ps(0.5f);
    __m256 a0 = _mm256_set1_ps(0.1f), a1 = _mm256_set1_ps(0.2f), a2 = _mm256_set1_ps(0.3f),
           a3 = _mm256_set1_ps(0.4f), a4 = _mm256_set1_ps(0.5f), a5 = _mm256_set1_ps(0.6f),
           a6 = _mm256_set1_ps(0.7f), a7 = _mm256_set1_ps(0.8f), a8 = _mm256_set1_ps(0.9f),
           a9 = _mm256_set1_ps(1.1f), a10 = _mm256_set1_ps(1.2f), a11 = _mm256_set1_ps(1.3f);
    for (int64_t i = 0; i < iterations; ++i) {
        for (int r = 0; r < 2; ++r) {
            a0 = _mm256_fmadd_ps(a0, m, c);
            a1 = _mm256_fmadd_ps(a1, m, c);
            a2 = _mm256_fmadd_ps(a2, m, c);
            a3 = _mm256_fmadd_ps(a3, m, c);
            a4 = _mm256_fmadd_ps(a4, m, c);
            a5 = _mm256_fmadd_ps(a5, m, c);
            a6 = _mm256_fmadd_ps(a6, m, c);
            a7 = _mm256_fmadd_ps(a7, m, c);
            a8 = _mm256_fmadd_ps(a8, m, c);
            a9 = _mm256_fmadd_ps(a9, m, c);
            a10 = _mm256_fmadd_ps(a10, m, c);
            a11 = _mm256_fmadd_ps(a11, m, c);
        }
    }
    __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                             _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    s = _mm256_add_ps(s, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    alignas(32) float out[8];
    _mm256_store_ps(out, s);
    return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

}  // namespace ridge::probe::kernels
