#pragma once
// What every hand-written kernel shares: fp32 arithmetic on any storage type, the grid of a
// grid-stride loop, and one switch from the runtime storage type onto the template.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cuda/check.h"
#include "kernels/cuda/kernels.h"

namespace ridge::gpu {

__device__ __forceinline__ float ld(const float* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __half* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16* p, int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }
__device__ __forceinline__ void st(__nv_bfloat16* p, int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
// Read-modify-write by one thread: the sum is formed in fp32 and rounded once.
template <class T>
__device__ __forceinline__ void add_to(T* p, int64_t i, float v) {
    st(p, i, ld(p, i) + v);
}
// Several threads adding into one element (pooling's backward). 16-bit atomics need sm_70 (half)
// and sm_80 (bf16); ridge builds for sm_90 by default.
__device__ __forceinline__ void atomic_add(float* p, int64_t i, float v) { atomicAdd(p + i, v); }
__device__ __forceinline__ void atomic_add(__half* p, int64_t i, float v) { atomicAdd(p + i, __float2half_rn(v)); }
__device__ __forceinline__ void atomic_add(__nv_bfloat16* p, int64_t i, float v) {
    atomicAdd(p + i, __float2bfloat16_rn(v));
}

constexpr int threads_per_block = 256;

// Blocks for a grid-stride loop over n elements: enough to fill an H100 many times over, few
// enough that each thread does a handful of elements.
inline unsigned blocks_for(int64_t n) {
    int64_t b = (n + threads_per_block - 1) / threads_per_block;
    return unsigned(b < 1 ? 1 : b > 65535 * 4 ? 65535 * 4 : b);
}

#define RIDGE_GRID_STRIDE(i, n) \
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

// Calls f with a null pointer of the storage type, to pick the template instance.
template <class F>
void dispatch(DType t, F&& f) {
    switch (t) {
        case DType::fp32: f(static_cast<float*>(nullptr)); break;
        case DType::fp16: f(static_cast<__half*>(nullptr)); break;
        case DType::bf16: f(static_cast<__nv_bfloat16*>(nullptr)); break;
    }
}

// Offset of flat output index e into an input broadcast onto the output's shape.
__device__ __forceinline__ int64_t bcast_offset(const Bcast& b, int64_t e) {
    int64_t off = 0;
    for (int d = b.rank - 1; d >= 0; --d) {
        off += (e % b.dims[d]) * b.stride[d];
        e /= b.dims[d];
    }
    return off;
}

}  // namespace ridge::gpu
