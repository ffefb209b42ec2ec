// Layernorm over the middle dimension of (outer, D, inner): ViT's rows (inner 1) and ConvNeXt's
// channels-first LayerNorm2d (D = C, inner = H*W). One warp per row; mean and variance by two
// passes in fp32 (no E[x^2] - E[x]^2 cancellation); gamma and beta gradients by one block per
// channel over every row, so they are deterministic.
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

constexpr int warp = 32;
constexpr float eps = 1e-5f;

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = warp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

template <class T>
__global__ void forward_kernel(const T* x, const float* gamma, const float* beta, T* y, float* mean, float* istd,
                               Around3 a) {
    const int64_t rows = a.outer * a.inner;
    const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp;
    const int lane = threadIdx.x % warp;
    if (r >= rows) return;
    const int64_t base = (r / a.inner) * a.n * a.inner + r % a.inner;
    float s = 0;
    for (int64_t i = lane; i < a.n; i += warp) s += ld(x, base + i * a.inner);
    const float mu = warp_sum(s) / float(a.n);
    float v = 0;
    for (int64_t i = lane; i < a.n; i += warp) {
        float d = ld(x, base + i * a.inner) - mu;
        v += d * d;
    }
    const float is = rsqrtf(warp_sum(v) / float(a.n) + eps);
    for (int64_t i = lane; i < a.n; i += warp)
        st(y, base + i * a.inner, (ld(x, base + i * a.inner) - mu) * is * gamma[i] + beta[i]);
    if (lane == 0) mean[r] = mu, istd[r] = is;
}

// dx = istd * (g - (sum g + xhat * sum g*xhat) / D) with g = dy * gamma.
template <class T>
__global__ void backward_data_kernel(const T* x, const T* dy, const float* gamma, const float* mean,
                                     const float* istd, T* dx, Around3 a) {
    const int64_t rows = a.outer * a.inner;
    const int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / warp;
    const int lane = threadIdx.x % warp;
    if (r >= rows) return;
    const int64_t base = (r / a.inner) * a.n * a.inner + r % a.inner;
    const float mu = mean[r], is = istd[r];
    float sg = 0, sgx = 0;
    for (int64_t i = lane; i < a.n; i += warp) {
        int64_t e = base + i * a.inner;
        float g = ld(dy, e) * gamma[i], xh = (ld(x, e) - mu) * is;
        sg += g;
        sgx += g * xh;
    }
    sg = warp_sum(sg);
    sgx = warp_sum(sgx);
    for (int64_t i = lane; i < a.n; i += warp) {
        int64_t e = base + i * a.inner;
        float g = ld(dy, e) * gamma[i], xh = (ld(x, e) - mu) * is;
        add_to(dx, e, is * (g - (sg + xh * sgx) / float(a.n)));
    }
}

template <class T>
__global__ void backward_params_kernel(const T* x, const T* dy, const float* mean, const float* istd, float* dgamma,
                                       float* dbeta, Around3 a) {
    __shared__ float pg[threads_per_block], pb[threads_per_block];
    const int64_t i = blockIdx.x;
    float sg = 0, sb = 0;
    for (int64_t r = threadIdx.x; r < a.outer * a.inner; r += blockDim.x) {
        int64_t e = (r / a.inner) * a.n * a.inner + i * a.inner + r % a.inner;
        float g = ld(dy, e);
        sg += g * (ld(x, e) - mean[r]) * istd[r];
        sb += g;
    }
    pg[threadIdx.x] = sg;
    pb[threadIdx.x] = sb;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (int(threadIdx.x) < w) pg[threadIdx.x] += pg[threadIdx.x + w], pb[threadIdx.x] += pb[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        if (dgamma) dgamma[i] += pg[0];
        if (dbeta) dbeta[i] += pb[0];
    }
}

unsigned warp_blocks(int64_t rows) {
    return unsigned((rows * warp + threads_per_block - 1) / threads_per_block);
}

}  // namespace

void layernorm_forward(DType t, const void* x, const float* gamma, const float* beta, void* y, float* mean, float* istd,
                       Around3 a, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        forward_kernel<T><<<warp_blocks(a.outer * a.inner), threads_per_block, 0, s>>>(
            static_cast<const T*>(x), gamma, beta, static_cast<T*>(y), mean, istd, a);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

void layernorm_backward(DType t, const void* x, const void* dy, const float* gamma, const float* mean, const float* istd,
                        void* dx, float* dgamma, float* dbeta, Around3 a, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        if (dx) {
            backward_data_kernel<T><<<warp_blocks(a.outer * a.inner), threads_per_block, 0, s>>>(
                static_cast<const T*>(x), static_cast<const T*>(dy), gamma, mean, istd, static_cast<T*>(dx), a);
            RIDGE_CUDA_CHECK_LAUNCH();
        }
        if (dgamma || dbeta)
            backward_params_kernel<T><<<unsigned(a.n), threads_per_block, 0, s>>>(
                static_cast<const T*>(x), static_cast<const T*>(dy), mean, istd, dgamma, dbeta, a);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
