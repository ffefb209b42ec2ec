#pragma once
// The hand-written CUDA kernels (one .cu per op family), for what cuDNN and cuBLAS lack or do
// poorly, and the loss and the optimizer. Host functions that launch on a stream and check the
// launch; every tensor is dense row-major in the shapes of engine/ops/ (NCHW for images), in the
// storage type `DType` (fp32, fp16 or bf16). Arithmetic and every sum are fp32 whatever the storage.
// Learned parameters these kernels read (biases, layernorm, layer scale, tokens, embeddings) and
// the gradients they write for them are fp32: small, and updated in fp32 by sgd().
//
// Backward kernels ADD into the gradients they are given (as kernels/cpu does), so a tensor read
// by several layers collects every share in one buffer that the executor zeroes once per step.
#include <cuda_runtime.h>

#include <cstdint>

#include <vector>

#include "engine/shape.h"

namespace ridge::gpu {

// A tensor seen around one dimension as (outer, n, inner): element (o, i, j) at (o*n + i)*inner + j.
struct Around3 {
    int64_t outer = 1, n = 1, inner = 1;
};
Around3 around3(const Shape& s, int dim);

// NumPy broadcasting of an input onto the output's shape, both padded to `rank` dimensions:
// the output's extents and the input's strides in elements (0 along a broadcast dimension).
constexpr int max_rank = 6;
struct Bcast {
    int rank = 0;
    int64_t dims[max_rank] = {};
    int64_t stride[max_rank] = {};
};
Bcast bcast(const Shape& in, const Shape& out);  // throws when in does not broadcast to out

// ---- elementwise.cu ------------------------------------------------------------------------
// y = a + b, y = a * b with broadcasting.  a (ba)  b (bb)  y (ba.dims)
void add_forward(DType t, const void* a, Bcast ba, const void* b, Bcast bb, void* y, cudaStream_t s);
void mul_forward(DType t, const void* a, Bcast ba, const void* b, Bcast bb, void* y, cudaStream_t s);
// dx += sum over the broadcast dimensions of dy (* other, for mul).  dy (bx.dims)  dx (numel nx)
// other (bo onto dy's shape), null for add.
void broadcast_backward(DType t, const void* dy, Bcast bx, int64_t nx, const void* other, Bcast bo, void* dx,
                        cudaStream_t s);
// y = s * x; dx += s * dy.  x, y, dy, dx (n)
void scale_forward(DType t, const void* x, float scale, void* y, int64_t n, cudaStream_t s);
void scale_backward(DType t, const void* dy, float scale, void* dx, int64_t n, cudaStream_t s);
// y = x + b[i] over (outer, n, inner) (conv and linear bias, position embedding); y may be x.
// x, y (outer,n,inner)  b (n) fp32
void bias_forward(DType t, const void* x, const float* b, void* y, Around3 a, cudaStream_t s);
// db[i] += sum over outer and inner of dy.  dy (outer,n,inner)  db (n) fp32
void bias_backward(DType t, const void* dy, float* db, Around3 a, cudaStream_t s);
// y = g[i] * x (layer scale); dx += g[i] * dy; dg[i] += sum dy * x.  g, dg (n) fp32
void channel_scale_forward(DType t, const void* x, const float* g, void* y, Around3 a, cudaStream_t s);
void channel_scale_backward(DType t, const void* x, const void* dy, const float* g, void* dx, float* dg, Around3 a,
                            cudaStream_t s);
// y = x * scale or y += x * scale, fp32 in or out: host I/O, gradient hand-over between buffers.
void convert(DType from, const void* x, DType to, void* y, int64_t n, float scale, bool accumulate, cudaStream_t s);

// ---- activation.cu -------------------------------------------------------------------------
// Every activation of the DSL (from_ops.h maps Activation::Fn here); the executor uses cuDNN's for
// relu, relu6, sigmoid and silu.  x, y, dy, dx (n)
enum class Act { relu, relu6, sigmoid, silu, gelu, hardswish, hardsigmoid };
void activation_forward(DType t, Act fn, const void* x, void* y, int64_t n, cudaStream_t s);
void activation_backward(DType t, Act fn, const void* x, const void* dy, void* dx, int64_t n, cudaStream_t s);

// ---- layout.cu -----------------------------------------------------------------------------
// A block of `len` rows along the middle dimension moved between two tensors seen as
// (outer, n_big, inner) and (outer, len, inner), at row `offset` of the big one: concat's forward
// (into the big one) and backward (out of it), slice and select (out), and their backward (in).
// accumulate adds instead of writing.
void block_into(DType t, const void* small, void* big, int64_t outer, int64_t n_big, int64_t offset, int64_t len,
                int64_t inner, bool accumulate, cudaStream_t s);
void block_from(DType t, const void* big, void* small, int64_t outer, int64_t n_big, int64_t offset, int64_t len,
                int64_t inner, bool accumulate, cudaStream_t s);
// y = x permuted: y's dimension d is x's dimension order[d] (channel shuffle is the permute
// (N,G,C/G,HW) -> (N,C/G,G,HW)). accumulate adds into y: the backward is the inverse permute.
// x (dims)  y (dims[order[0]], ...)
void permute(DType t, const void* x, const Shape& dims, const std::vector<int>& order, void* y, bool accumulate,
             cudaStream_t s);

// ---- embedding.cu --------------------------------------------------------------------------
// y[n, 0, :] = token for every n.  token (D) fp32  y (N, T+1, D)
void class_token_forward(DType t, const float* token, void* y, int64_t N, int64_t T1, int64_t D, cudaStream_t s);
// dtoken[d] += sum over n of dy[n, 0, d].  dy (N, T+1, D)  dtoken (D) fp32
void class_token_backward(DType t, const void* dy, float* dtoken, int64_t N, int64_t T1, int64_t D, cudaStream_t s);

// ---- norm.cu -------------------------------------------------------------------------------
// Layernorm over the middle dimension of (outer, D, inner), epsilon 1e-5; saves mean and 1/std
// per row (outer*inner, fp32) for backward.  gamma, beta, dgamma, dbeta (D) fp32
void layernorm_forward(DType t, const void* x, const float* gamma, const float* beta, void* y, float* mean, float* istd,
                       Around3 a, cudaStream_t s);
void layernorm_backward(DType t, const void* x, const void* dy, const float* gamma, const float* mean, const float* istd,
                        void* dx, float* dgamma, float* dbeta, Around3 a, cudaStream_t s);

// ---- pool.cu -------------------------------------------------------------------------------
// Pooling with windows as kernels/cpu/pool.cpp defines them: max (first maximum in row-major
// order gets the gradient), average (either divisor), adaptive average. x (N,C,H,W)  y (N,C,P,Q)
struct PoolShape {
    int64_t NC = 0, H = 0, W = 0, P = 0, Q = 0;
    enum class Kind { max, avg, adaptive } kind = Kind::max;
    int64_t R = 1, S = 1, sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    bool count_include_pad = true;
};
void pool_forward(DType t, const PoolShape& p, const void* x, void* y, cudaStream_t s);
void pool_backward(DType t, const PoolShape& p, const void* x, const void* dy, void* dx, cudaStream_t s);

// ---- loss.cu -------------------------------------------------------------------------------
// Mean softmax cross-entropy of logits (N,K) against labels (N, int32, on the device); writes
// dlogits (N,K) = (softmax - onehot) / N * grad_scale and loss[0] (fp32, unscaled). row_loss (N)
// is scratch, summed in a fixed order so the loss does not depend on scheduling.
void softmax_cross_entropy(DType t, const void* logits, const int32_t* labels, void* dlogits, float* row_loss, float* loss,
                           int64_t N, int64_t K, float grad_scale, cudaStream_t s);

// ---- sgd.cu --------------------------------------------------------------------------------
// SGD as torch.optim.SGD over fp32 master weights (executor.h): d = g * inv_scale + wd * w;
// v = momentum * v + d; w -= lr * v (without a velocity, w -= lr * d), and the storage copy
// written from the result (null when the weights are used in fp32).
// w (n) fp32  g (n, storage gt)  velocity (n) fp32, null when momentum is 0  copy (n, storage ct)
struct SgdStep {
    float lr = 0, momentum = 0, weight_decay = 0, inv_scale = 1;
};
void sgd(float* w, DType gt, const void* g, float* velocity, DType ct, void* copy, int64_t n, const SgdStep& step,
         cudaStream_t s);

}  // namespace ridge::gpu
