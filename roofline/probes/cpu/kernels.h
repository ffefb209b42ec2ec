#pragma once
// The inner loops of the CPU probes, one file per instruction set so each is compiled with its own
// flags (-mavx2 -mfma, -mavx512f) and only called after __builtin_cpu_supports says it may run.
#include <cstdint>

namespace ridge::probe::kernels {

// fp32 FMA throughput: independent accumulators, enough to cover the FMA latency on every pipe.
// Each returns a value that depends on every FMA, so none can be dropped.
inline constexpr int64_t fma_scalar_flops_per_iteration = 16 * 2;
float fma_scalar(int64_t iterations);
inline constexpr int64_t fma_avx2_flops_per_iteration = 24 * 8 * 2;  // 24 FMAs of 8 lanes
float fma_avx2(int64_t iterations);
inline constexpr int64_t fma_avx512_flops_per_iteration = 32 * 16 * 2;  // 32 FMAs of 16 lanes
float fma_avx512(int64_t iterations);

// STREAM kernels over [0, n) with stores that bypass the caches (no write-allocate read), as
// glibc's memcpy does for large copies. Pointers 32-byte aligned, n a multiple of 4.
void copy_nt(const double* a, double* c, int64_t n);
void scale_nt(const double* c, double* b, double s, int64_t n);
void add_nt(const double* a, const double* b, double* c, int64_t n);
void triad_nt(const double* b, const double* c, double* a, double s, int64_t n);

// Read bandwidth: sums `passes` passes over p[0, n); n a multiple of 32, p 32-byte aligned.
double read_avx2(const double* p, int64_t n, int64_t passes);
double read_scalar(const double* p, int64_t n, int64_t passes);

}  // namespace ridge::probe::kernels
