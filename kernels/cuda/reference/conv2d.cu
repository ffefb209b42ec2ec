// Naive convolution on the device, one thread per output element of each pass: forward per y,
// backward-data per x (gathering the outputs each tap feeds), backward-filter per w (summing over
// N,P,Q). Test-only: slow, obvious, fp32 with fp32 accumulation.
#include "kernels/cuda/check.h"
#include "kernels/cuda/reference/reference.h"

namespace ridge::gpu::ref {

namespace {

constexpr int threads = 256;
unsigned blocks(int64_t n) { return unsigned((n + threads - 1) / threads); }

// x (N,C,H,W)  w (K,C/G,R,S)  b (K)  y (N,K,P,Q)
__global__ void forward_kernel(ConvShape c, const float* x, const float* w, const float* b, float* y) {
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= c.N * c.K * c.P * c.Q) return;
    int64_t q = e % c.Q, p = (e / c.Q) % c.P, k = (e / (c.Q * c.P)) % c.K, n = e / (c.Q * c.P * c.K);
    int64_t Cg = c.C / c.G, Kg = c.K / c.G, g = k / Kg;
    float acc = b ? b[k] : 0.0f;
    for (int64_t ci = 0; ci < Cg; ++ci)
        for (int64_t r = 0; r < c.R; ++r)
            for (int64_t s = 0; s < c.S; ++s) {
                int64_t h = p * c.sh - c.pt + r * c.dh, ww = q * c.sw - c.pl + s * c.dw;
                if (h < 0 || h >= c.H || ww < 0 || ww >= c.W) continue;
                acc += x[((n * c.C + g * Cg + ci) * c.H + h) * c.W + ww] * w[((k * Cg + ci) * c.R + r) * c.S + s];
            }
    y[e] = acc;
}

// dy (N,K,P,Q)  w (K,C/G,R,S)  dx (N,C,H,W)
__global__ void backward_data_kernel(ConvShape c, const float* dy, const float* w, float* dx) {
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= c.N * c.C * c.H * c.W) return;
    int64_t ww = e % c.W, h = (e / c.W) % c.H, ch = (e / (c.W * c.H)) % c.C, n = e / (c.W * c.H * c.C);
    int64_t Cg = c.C / c.G, Kg = c.K / c.G, g = ch / Cg, ci = ch % Cg;
    float acc = 0;
    for (int64_t kk = 0; kk < Kg; ++kk)
        for (int64_t r = 0; r < c.R; ++r)
            for (int64_t s = 0; s < c.S; ++s) {
                int64_t ph = h + c.pt - r * c.dh, qw = ww + c.pl - s * c.dw;
                if (ph < 0 || qw < 0 || ph % c.sh || qw % c.sw) continue;
                int64_t p = ph / c.sh, q = qw / c.sw;
                if (p >= c.P || q >= c.Q) continue;
                int64_t k = g * Kg + kk;
                acc += dy[((n * c.K + k) * c.P + p) * c.Q + q] * w[((k * Cg + ci) * c.R + r) * c.S + s];
            }
    dx[e] = acc;
}

// x (N,C,H,W)  dy (N,K,P,Q)  dw (K,C/G,R,S)
__global__ void backward_filter_kernel(ConvShape c, const float* x, const float* dy, float* dw) {
    int64_t Cg = c.C / c.G, Kg = c.K / c.G;
    int64_t e = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= c.K * Cg * c.R * c.S) return;
    int64_t s = e % c.S, r = (e / c.S) % c.R, ci = (e / (c.S * c.R)) % Cg, k = e / (c.S * c.R * Cg);
    int64_t g = k / Kg;
    float acc = 0;
    for (int64_t n = 0; n < c.N; ++n)
        for (int64_t p = 0; p < c.P; ++p)
            for (int64_t q = 0; q < c.Q; ++q) {
                int64_t h = p * c.sh - c.pt + r * c.dh, ww = q * c.sw - c.pl + s * c.dw;
                if (h < 0 || h >= c.H || ww < 0 || ww >= c.W) continue;
                acc += dy[((n * c.K + k) * c.P + p) * c.Q + q] * x[((n * c.C + g * Cg + ci) * c.H + h) * c.W + ww];
            }
    dw[e] = acc;
}

// dy (N,K,P,Q)  db (K)
__global__ void backward_bias_kernel(ConvShape c, const float* dy, float* db) {
    int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k >= c.K) return;
    float acc = 0;
    for (int64_t n = 0; n < c.N; ++n)
        for (int64_t pq = 0; pq < c.P * c.Q; ++pq) acc += dy[(n * c.K + k) * c.P * c.Q + pq];
    db[k] = acc;
}

}  // namespace

void conv_forward(const ConvShape& c, const float* x, const float* w, const float* b, float* y, cudaStream_t s) {
    forward_kernel<<<blocks(c.N * c.K * c.P * c.Q), threads, 0, s>>>(c, x, w, b, y);
    RIDGE_CUDA_CHECK_LAUNCH();
}

void conv_backward_data(const ConvShape& c, const float* dy, const float* w, float* dx, cudaStream_t s) {
    backward_data_kernel<<<blocks(c.N * c.C * c.H * c.W), threads, 0, s>>>(c, dy, w, dx);
    RIDGE_CUDA_CHECK_LAUNCH();
}

void conv_backward_filter(const ConvShape& c, const float* x, const float* dy, float* dw, float* db, cudaStream_t s) {
    backward_filter_kernel<<<blocks(c.K * (c.C / c.G) * c.R * c.S), threads, 0, s>>>(c, x, dy, dw);
    RIDGE_CUDA_CHECK_LAUNCH();
    if (!db) return;
    backward_bias_kernel<<<blocks(c.K), threads, 0, s>>>(c, dy, db);
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu::ref
