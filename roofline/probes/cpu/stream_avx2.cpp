// STREAM kernels with non-temporal stores and the AVX2 read kernel of the sweep (compiled with
// -mavx2; called only when the CPU has AVX2). Streaming stores write whole lines without reading
// them first, which is what glibc's memcpy does above its non-temporal threshold; without them a
// triad moves 4 arrays' worth of bytes while STREAM counts 3.
#include <immintrin.h>

#include "roofline/probes/cpu/kernels.h"

namespace ridge::probe::kernels {

void copy_nt(const double* a, double* c, int64_t n) {
    for (int64_t i = 0; i < n; i += 4) _mm256_stream_pd(c + i, _mm256_load_pd(a + i));
    _mm_sfence();
}

void scale_nt(const double* c, double* b, double s, int64_t n) {
    const __m256d vs = _mm256_set1_pd(s);
    for (int64_t i = 0; i < n; i += 4) _mm256_stream_pd(b + i, _mm256_mul_pd(vs, _mm256_load_pd(c + i)));
    _mm_sfence();
}

void add_nt(const double* a, const double* b, double* c, int64_t n) {
    for (int64_t i = 0; i < n; i += 4)
        _mm256_stream_pd(c + i, _mm256_add_pd(_mm256_load_pd(a + i), _mm256_load_pd(b + i)));
    _mm_sfence();
}

void triad_nt(const double* b, const double* c, double* a, double s, int64_t n) {
    const __m256d vs = _mm256_set1_pd(s);
    for (int64_t i = 0; i < n; i += 4)
        _mm256_stream_pd(a + i, _mm256_add_pd(_mm256_load_pd(b + i), _mm256_mul_pd(vs, _mm256_load_pd(c + i))));
    _mm_sfence();
}

// Eight independent sums keep two loads per cycle in flight (L1 on current x86 cores).
double read_avx2(const double* p, int64_t n, int64_t passes) {
    __m256d s0 = _mm256_setzero_pd(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    for (int64_t r = 0; r < passes; ++r) {
        for (int64_t i = 0; i < n; i += 32) {
            s0 = _mm256_add_pd(s0, _mm256_load_pd(p + i));
            s1 = _mm256_add_pd(s1, _mm256_load_pd(p + i + 4));
            s2 = _mm256_add_pd(s2, _mm256_load_pd(p + i + 8));
            s3 = _mm256_add_pd(s3, _mm256_load_pd(p + i + 12));
            s4 = _mm256_add_pd(s4, _mm256_load_pd(p + i + 16));
            s5 = _mm256_add_pd(s5, _mm256_load_pd(p + i + 20));
            s6 = _mm256_add_pd(s6, _mm256_load_pd(p + i + 24));
            s7 = _mm256_add_pd(s7, _mm256_load_pd(p + i + 28));
        }
    }
    __m256d s = _mm256_add_pd(_mm256_add_pd(_mm256_add_pd(s0, s1), _mm256_add_pd(s2, s3)),
                              _mm256_add_pd(_mm256_add_pd(s4, s5), _mm256_add_pd(s6, s7)));
    alignas(32) double out[4];
    _mm256_store_pd(out, s);
    return out[0] + out[1] + out[2] + out[3];
}

}  // namespace ridge::probe::kernels
