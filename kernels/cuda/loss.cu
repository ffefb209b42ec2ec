// Mean softmax cross-entropy, one block per row: the row's max, the sum of exponentials, the
// loss log(sum) - (x_label - max), and the gradient (softmax - onehot) / N, all in fp32. The
// gradient is multiplied by the loss scale of fp16 training so small gradients survive in fp16.
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

__device__ float block_reduce(float v, float* part, bool take_max) {
    part[threadIdx.x] = v;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (int(threadIdx.x) < w)
            part[threadIdx.x] = take_max ? fmaxf(part[threadIdx.x], part[threadIdx.x + w])
                                         : part[threadIdx.x] + part[threadIdx.x + w];
        __syncthreads();
    }
    float r = part[0];
    __syncthreads();
    return r;
}

template <class T>
__global__ void row_kernel(const T* logits, const int32_t* labels, T* dlogits, float* row_loss, int64_t N, int64_t K,
                           float grad_scale) {
    __shared__ float part[threads_per_block];
    const int64_t n = blockIdx.x;
    const T* x = logits + n * K;
    float m = -INFINITY;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) m = fmaxf(m, ld(x, k));
    m = block_reduce(m, part, true);
    float s = 0;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) s += expf(ld(x, k) - m);
    s = block_reduce(s, part, false);
    const int32_t label = labels[n];
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
        float p = expf(ld(x, k) - m) / s;
        st(dlogits + n * K, k, (p - (k == label ? 1.0f : 0.0f)) / float(N) * grad_scale);
    }
    if (threadIdx.x == 0) row_loss[n] = logf(s) - (ld(x, label) - m);
}

__global__ void mean_kernel(const float* row_loss, float* loss, int64_t N) {
    __shared__ float part[threads_per_block];
    float s = 0;
    for (int64_t n = threadIdx.x; n < N; n += blockDim.x) s += row_loss[n];
    s = block_reduce(s, part, false);
    if (threadIdx.x == 0) loss[0] = s / float(N);
}

}  // namespace

void softmax_cross_entropy(DType t, const void* logits, const int32_t* labels, void* dlogits, float* row_loss, float* loss,
                           int64_t N, int64_t K, float grad_scale, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        row_kernel<T><<<unsigned(N), threads_per_block, 0, s>>>(static_cast<const T*>(logits), labels,
                                                                 static_cast<T*>(dlogits), row_loss, N, K, grad_scale);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
    mean_kernel<<<1, threads_per_block, 0, s>>>(row_loss, loss, N);
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
