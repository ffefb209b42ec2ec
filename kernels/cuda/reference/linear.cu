// Naive fully connected layer on the device: one thread per output element, a plain dot product.
// Test-only, fp32 with fp32 accumulation.
#include "kernels/cuda/check.h"
#include "kernels/cuda/reference/reference.h"

namespace ridge::gpu::ref {

namespace {

constexpr int threads = 256;
unsigned blocks(int64_t n) { return unsigned((n + threads - 1) / threads); }

// x (M,C)  w (K,C)  b (K)  y (M,K)
__global__ void forward_kernel(int64_t M, int64_t C, int64_t K, const float* x, const float* w, const float* b,
                               float* y) {
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= M * K) return;
    int64_t m = e / K, k = e % K;
    float acc = b ? b[k] : 0.0f;
    for (int64_t c = 0; c < C; ++c) acc += x[m * C + c] * w[k * C + c];
    y[e] = acc;
}

// dy (M,K)  w (K,C)  dx (M,C)
__global__ void backward_data_kernel(int64_t M, int64_t C, int64_t K, const float* dy, const float* w, float* dx) {
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= M * C) return;
    int64_t m = e / C, c = e % C;
    float acc = 0;
    for (int64_t k = 0; k < K; ++k) acc += dy[m * K + k] * w[k * C + c];
    dx[e] = acc;
}

// x (M,C)  dy (M,K)  dw (K,C)  db (K)
__global__ void backward_weight_kernel(int64_t M, int64_t C, int64_t K, const float* x, const float* dy, float* dw,
                                       float* db) {
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= K * C) return;
    int64_t k = e / C, c = e % C;
    float acc = 0, bias = 0;
    for (int64_t m = 0; m < M; ++m) acc += dy[m * K + k] * x[m * C + c], bias += dy[m * K + k];
    dw[e] = acc;
    if (db && c == 0) db[k] = bias;
}

}  // namespace

void linear_forward(int64_t M, int64_t C, int64_t K, const float* x, const float* w, const float* b, float* y,
                    cudaStream_t s) {
    forward_kernel<<<blocks(M * K), threads, 0, s>>>(M, C, K, x, w, b, y);
    RIDGE_CUDA_CHECK_LAUNCH();
}

void linear_backward(int64_t M, int64_t C, int64_t K, const float* x, const float* w, const float* dy, float* dx,
                     float* dw, float* db, cudaStream_t s) {
    if (dx) {
        backward_data_kernel<<<blocks(M * C), threads, 0, s>>>(M, C, K, dy, w, dx);
        RIDGE_CUDA_CHECK_LAUNCH();
    }
    backward_weight_kernel<<<blocks(K * C), threads, 0, s>>>(M, C, K, x, dy, dw, db);
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu::ref
