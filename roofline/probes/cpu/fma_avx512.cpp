// fp32 FMA throughput with AVX-512F (compiled with -mavx512f; called only when the CPU has it).
// 16 accumulators cover a 4-cycle latency on two 512-bit pipes twice over.
#include <immintrin.h>

#include "roofline/probes/cpu/kernels.h"

namespace ridge::probe::kernels {

float fma_avx512(int64_t iterations) {
    const __m512 m = _mm512_set1_ps(0.5f), c = _mm512_set1_ps(0.5f);
    __m512 a[16];
    for (int k = 0; k < 16; ++k) a[k] = _mm512_set1_ps(0.1f * float(k + 1));
    for (int64_t i = 0; i < iterations; ++i) {
        for (int r = 0; r < 2; ++r) {
            a[0] = _mm512_fmadd_ps(a[0], m, c);
            a[1] = _mm512_fmadd_ps(a[1], m, c);
            a[2] = _mm512_fmadd_ps(a[2], m, c);
            a[3] = _mm512_fmadd_ps(a[3], m, c);
            a[4] = _mm512_fmadd_ps(a[4], m, c);
            a[5] = _mm512_fmadd_ps(a[5], m, c);
            a[6] = _mm512_fmadd_ps(a[6], m, c);
            a[7] = _mm512_fmadd_ps(a[7], m, c);
            a[8] = _mm512_fmadd_ps(a[8], m, c);
            a[9] = _mm512_fmadd_ps(a[9], m, c);
            a[10] = _mm512_fmadd_ps(a[10], m, c);
            a[11] = _mm512_fmadd_ps(a[11], m, c);
            a[12] = _mm512_fmadd_ps(a[12], m, c);
            a[13] = _mm512_fmadd_ps(a[13], m, c);
            a[14] = _mm512_fmadd_ps(a[14], m, c);
            a[15] = _mm512_fmadd_ps(a[15], m, c);
        }
    }
    __m512 s = a[0];
    for (int k = 1; k < 16; ++k) s = _mm512_add_ps(s, a[k]);
    alignas(64) float out[16];
    _mm512_store_ps(out, s);
    float sum = 0;
    for (float v : out) sum += v;
    return sum;
}

}  // namespace ridge::probe::kernels
