#pragma once
// Naive CUDA kernels for the library-backed ops: one thread per output element, a plain loop over
// the taps, fp32 in and out with fp32 accumulation. They exist only so tests can check cuDNN and
// cuBLAS on the device against something simple; nothing else may call them.
#include <cuda_runtime.h>

#include <cstdint>


namespace ridge::gpu::ref {

struct ConvShape {
    int64_t N, C, H, W, K, R, S, P, Q, G;
    int64_t sh, sw, pt, pl, dh, dw;
};
// conv_shape() in kernels/cuda/reference/from_ops.h fills this from a Conv2d.

// x (N,C,H,W)  w (K,C/G,R,S)  b (K) or null  y (N,K,P,Q)
void conv_forward(const ConvShape& c, const float* x, const float* w, const float* b, float* y, cudaStream_t s);
// dx (N,C,H,W) = sum over the outputs each input tap feeds of dy * w (written, not added)
void conv_backward_data(const ConvShape& c, const float* dy, const float* w, float* dx, cudaStream_t s);
// dw (K,C/G,R,S) = sum over N,P,Q of dy * x; db (K) = sum of dy, when db is not null (written)
void conv_backward_filter(const ConvShape& c, const float* x, const float* dy, float* dw, float* db, cudaStream_t s);

// x (M,C)  w (K,C)  b (K) or null  y (M,K)
void linear_forward(int64_t M, int64_t C, int64_t K, const float* x, const float* w, const float* b, float* y,
                    cudaStream_t s);
// dx (M,C) = dy w;  dw (K,C) = dy^T x;  db (K) = column sums of dy, when not null (all written)
void linear_backward(int64_t M, int64_t C, int64_t K, const float* x, const float* w, const float* dy, float* dx,
                     float* dw, float* db, cudaStream_t s);

}  // namespace ridge::gpu::ref
