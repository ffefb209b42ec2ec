// The class token: a learned (D) vector written as token 0 of every sequence, y (N,T+1,D), and its
// gradient summed over the batch in fp32. The sequence itself is copied by block_into (layout.cu);
// the position embedding is a bias over the batch (bias_forward, elementwise.cu).
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

template <class T>
__global__ void token_kernel(const float* token, T* y, int64_t N, int64_t T1, int64_t D) {
    RIDGE_GRID_STRIDE(e, N * D) st(y, (e / D) * T1 * D + e % D, token[e % D]);
}

template <class T>
__global__ void token_grad_kernel(const T* dy, float* dtoken, int64_t N, int64_t T1, int64_t D) {
    RIDGE_GRID_STRIDE(d, D) {
        float sum = 0;
        for (int64_t n = 0; n < N; ++n) sum += ld(dy, n * T1 * D + d);
        dtoken[d] += sum;
    }
}

}  // namespace

void class_token_forward(DType t, const float* token, void* y, int64_t N, int64_t T1, int64_t D, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        token_kernel<T><<<blocks_for(N * D), threads_per_block, 0, s>>>(token, static_cast<T*>(y), N, T1, D);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

void class_token_backward(DType t, const void* dy, float* dtoken, int64_t N, int64_t T1, int64_t D, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        token_grad_kernel<T><<<blocks_for(D), threads_per_block, 0, s>>>(static_cast<const T*>(dy), dtoken, N, T1, D);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
