#pragma once
// The plan of a cuDNN run, made without a device: every buffer's size (graph tensors, their
// gradients, weights in fp32 and in the storage type, what layers save for backward, the
// convolution workspace), and per layer an object that will run its forward and backward.
// Devices, handles, descriptors and algorithm searches come only in setup(), from prepare().
//
// Layout: every tensor is dense row-major in its graph shape (NCHW), so cuDNN, cuBLAS and the
// hand-written kernels read each other's outputs without reorders. Flatten, reshape, dropout and
// stochastic depth alias their input's buffer (and its gradient's); slice and select are copies.
// Gradients are collected by adding, as the reference kernels do: they live in one region that
// backward() zeroes with one memset, and every backward call adds its share (cuDNN and cuBLAS
// with beta = 1).
#include <cublas_v2.h>
#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/backend/cudnn/check.h"
#include "engine/backend/executor.h"
#include "engine/graph.h"
#include "kernels/cuda/from_ops.h"

namespace ridge::cudnn {

// What a layer needs to run at setup and at every step.
struct Dev {
    cudnnHandle_t dnn = nullptr;
    cublasHandle_t blas = nullptr;
    cudaStream_t s = nullptr;
    char* arena = nullptr;
    const std::vector<size_t>* offsets = nullptr;
    void* ws = nullptr;  // the shared convolution workspace
    size_t ws_bytes = 0;
    void* at(int buffer) const { return buffer < 0 ? nullptr : arena + (*offsets)[size_t(buffer)]; }
    float* f(int buffer) const { return static_cast<float*>(at(buffer)); }
};

enum class Region { main, grads };

// A learned or state tensor of a layer.
struct Param {
    int master = -1;  // fp32: what load() writes, update() changes and weights() reads
    int copy = -1;    // what the layer reads: the master, or a storage-type copy (conv and linear weights)
    int grad = -1;    // fp32, or the storage type where the layer reads the copy; -1 when not learned
    int velocity = -1;  // fp32 SGD velocity: learned tensors when training with momentum
    bool library = false;  // read by cuDNN or cuBLAS: in the storage type
    int64_t count = 0;
};

class Plan {
public:
    Plan(const Graph& g, const ExecOptions& o);

    const Graph& g;
    const bool train, fused;
    const Precision precision;
    const DType dt;               // storage type of activations, gradients and library weights
    const float loss_scale;       // fp16: static, see executor.cpp
    int64_t elem() const { return dtype_bytes(dt); }

    int buffer(int64_t bytes, Region r = Region::main);
    int value(int t) const { return value_[size_t(root[size_t(t)])]; }
    int grad(int t) const { return grad_[size_t(root[size_t(t)])]; }
    bool needs_grad(int t) const { return grad(t) >= 0; }
    const Shape& shape(int t) const { return g.tensor(t).shape; }
    const Param& param(int node, size_t j) const { return params[size_t(node)].at(j); }

    std::vector<int> root;  // per tensor: the tensor whose buffer it lives in
    std::vector<std::vector<Param>> params;
    // Inference, fused: a conv followed by a batchnorm that alone reads it absorbs it; the
    // batchnorm's output aliases the conv's and load() folds the statistics into the conv's
    // weights and a bias (fold_bias[conv], fp32 K).
    std::vector<int> folded_into;  // per node: the conv a batchnorm is folded into, or -1
    std::vector<int> fold_bias;    // per node: the folded bias buffer of a conv, or -1

    // Sizes and placement: main buffers, then the gradients (zeroed together), then the workspace.
    std::vector<int64_t> bytes;
    std::vector<Region> region;
    int64_t workspace_bytes = 0;
    int64_t place(std::vector<size_t>& offsets, size_t& grads_begin, size_t& grads_end) const;

private:
    std::vector<int> value_, grad_;  // per root tensor
};

// One layer's run. Constructed while planning (buffers requested, nothing on a device); setup()
// creates descriptors and searches algorithms; the rest run on the stream. dgrad adds into the
// gradients of the inputs that need one; wgrad into the learned parameters'. A layer whose
// library call yields both at once does it all in dgrad and has no wgrad.
class LayerRun {
public:
    virtual ~LayerRun() = default;
    virtual void setup(Dev&) {}
    virtual void forward(Dev&) = 0;
    virtual void dgrad(Dev&) {}
    virtual void wgrad(Dev&) {}
    virtual bool has_dgrad() const { return false; }
    virtual bool has_wgrad() const { return false; }
    virtual std::string algorithm() const { return {}; }
};

std::unique_ptr<LayerRun> make_layer(Plan& p, int node);

// ---- descriptors and library settings by precision ----

cudnnDataType_t cudnn_type(DType t);
cudaDataType_t blas_type(DType t);
cublasComputeType_t blas_compute(Precision p);

// One strided-batched product in column-major terms: C (m,n) = op(A) (m,k) op(B) (k,n), beta 0 or 1.
struct Gemm {
    cublasOperation_t ta, tb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t sa = 0, sb = 0, sc = 0, batch = 1;
};
// C = op(A) op(B) (+ C when accumulating) through cublasGemmStridedBatchedEx, in the plan's storage
// type with blas_compute's accumulation: linear.cpp and matmul.cpp.
void gemm(const Dev& d, const Plan& p, const Gemm& g, const void* A, const void* B, void* C, bool accumulate);

// RAII over a cuDNN tensor descriptor of a dense row-major 4-d view.
struct TensorDesc {
    cudnnTensorDescriptor_t d = nullptr;
    TensorDesc() = default;
    TensorDesc(const TensorDesc&) = delete;
    TensorDesc& operator=(const TensorDesc&) = delete;
    ~TensorDesc();
    void set(DType t, int64_t n, int64_t c, int64_t h, int64_t w);
};

// A dense (n, c, h, w) view of a shape for descriptors: rank 2 (N,C) -> (N,C,1,1), rank 3
// (N,C,L) -> (N,C,L,1), rank 4 as is; higher ranks fold the trailing dimensions into w.
struct Dims4 {
    int64_t n = 1, c = 1, h = 1, w = 1;
};
Dims4 dims4(const Shape& s);
int checked_int(int64_t v, const char* what);  // cuDNN takes int dimensions

}  // namespace ridge::cudnn
