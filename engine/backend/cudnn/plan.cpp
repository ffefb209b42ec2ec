#include "engine/backend/cudnn/plan.h"

#include <climits>

#include "engine/backend/fold.h"

namespace ridge::cudnn {

namespace {

bool aliases(const Op& op) {
    return std::holds_alternative<Flatten>(op) || std::holds_alternative<Reshape>(op) ||
           std::holds_alternative<Dropout>(op) || std::holds_alternative<StochasticDepth>(op);
}

DType storage(Precision p) {
    switch (p) {
        case Precision::fp16: return DType::fp16;
        case Precision::bf16: return DType::bf16;
        default: return DType::fp32;
    }
}

// fp16 keeps a static loss scale: every step is the same computation (executor.h asks for
// reproducible steps, and a bench times identical steps), which a dynamic scale that skips
// overflowing steps would break. 2^10 lifts the mean cross-entropy's per-logit gradients, O(1/N),
// well above fp16's subnormal range (6e-8) while gradients of O(10) stay far below its maximum
// (65504). bf16 has fp32's exponent range and needs none.
float loss_scale_of(Precision p) { return p == Precision::fp16 ? 1024.0f : 1.0f; }

constexpr size_t align = 256;  // cudaMalloc's own alignment: vectorized and tensor-core loads
size_t aligned(int64_t b) { return (size_t(b) + align - 1) / align * align; }

}  // namespace

Plan::Plan(const Graph& graph, const ExecOptions& o)
    : g(graph),
      train(o.mode == Mode::train),
      fused(o.fused),
      precision(o.precision),
      dt(storage(o.precision)),
      loss_scale(loss_scale_of(o.precision)) {
    const auto& nodes = g.nodes();
    size_t T = 1;
    for (const Node& n : nodes) T = std::max(T, size_t(n.output) + 1);
    root.resize(T);
    for (size_t t = 0; t < T; ++t) root[t] = int(t);
    folded_into.assign(nodes.size(), -1);
    fold_bias.assign(nodes.size(), -1);

    const std::vector<int> folds = batchnorm_folds(g);
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        if (aliases(n.op)) root[size_t(n.output)] = root[size_t(n.inputs[0])];
        if (!fused || train || folds[i] < 0) continue;
        folded_into[i] = folds[i];
        root[size_t(n.output)] = root[size_t(n.inputs[0])];
    }

    value_.assign(T, -1);
    grad_.assign(T, -1);
    std::vector<bool> wants_grad(T, false);
    for (size_t t = 0; t < T; ++t)
        if (train && (g.tensor(int(t)).requires_grad || int(t) == g.output())) wants_grad[size_t(root[t])] = true;
    for (size_t t = 0; t < T; ++t) {
        if (root[t] != int(t)) continue;
        value_[t] = buffer(numel(g.tensor(int(t)).shape) * elem());
        if (wants_grad[t]) grad_[t] = buffer(numel(g.tensor(int(t)).shape) * elem(), Region::grads);
    }

    params.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
        const Node& n = nodes[i];
        bool lib = std::holds_alternative<Conv2d>(n.op) || std::holds_alternative<Linear>(n.op);
        std::vector<ParamSpec> specs = g.params(n);
        for (size_t j = 0; j < specs.size(); ++j) {
            Param p;
            p.count = numel(specs[j].shape);
            p.library = lib && j == 0;
            p.master = buffer(p.count * 4);
            p.copy = p.library && dt != DType::fp32 ? buffer(p.count * elem()) : p.master;
            if (train && specs[j].learned) p.grad = buffer(p.count * (p.library ? elem() : 4), Region::grads);
            if (train && specs[j].learned && o.momentum != 0) p.velocity = buffer(p.count * 4);
            params[i].push_back(p);
        }
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        if (folded_into[i] >= 0) {
            int conv = folded_into[i];
            fold_bias[size_t(conv)] = buffer(std::get<Conv2d>(nodes[size_t(conv)].op).K * 4);
        }
}

int Plan::buffer(int64_t b, Region r) {
    bytes.push_back(b);
    region.push_back(r);
    return int(bytes.size()) - 1;
}

int64_t Plan::place(std::vector<size_t>& offsets, size_t& grads_begin, size_t& grads_end) const {
    offsets.assign(bytes.size(), 0);
    size_t at = 0;
    for (Region r : {Region::main, Region::grads}) {
        if (r == Region::grads) grads_begin = at;
        for (size_t b = 0; b < bytes.size(); ++b)
            if (region[b] == r) offsets[b] = at, at += aligned(bytes[b]);
        if (r == Region::grads) grads_end = at;
    }
    return int64_t(at + aligned(workspace_bytes));
}

// ---- descriptors ----

cudnnDataType_t cudnn_type(DType t) {
    switch (t) {
        case DType::fp16: return CUDNN_DATA_HALF;
        case DType::bf16: return CUDNN_DATA_BFLOAT16;
        default: return CUDNN_DATA_FLOAT;
    }
}

cudaDataType_t blas_type(DType t) {
    switch (t) {
        case DType::fp16: return CUDA_R_16F;
        case DType::bf16: return CUDA_R_16BF;
        default: return CUDA_R_32F;
    }
}

// fp32 data with CUBLAS_COMPUTE_32F is true fp32: cuBLAS rounds through TF32 only when asked
// (the TF32 math mode, which ridge never sets, or the _FAST_TF32 compute type). tf32 asks; fp16 and
// bf16 inputs accumulate in fp32.
cublasComputeType_t blas_compute(Precision p) {
    return p == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

void gemm(const Dev& d, const Plan& p, const Gemm& g, const void* A, const void* B, void* C, bool accumulate) {
    const float one = 1, zero = 0;
    cudaDataType_t t = blas_type(p.dt);
    RIDGE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
        d.blas, g.ta, g.tb, checked_int(g.m, "m"), checked_int(g.n, "n"), checked_int(g.k, "k"), &one, A, t,
        checked_int(g.lda, "lda"), g.sa, B, t, checked_int(g.ldb, "ldb"), g.sb, accumulate ? &one : &zero, C, t,
        checked_int(g.ldc, "ldc"), g.sc, checked_int(g.batch, "batch"), blas_compute(p.precision),
        CUBLAS_GEMM_DEFAULT));
}

int checked_int(int64_t v, const char* what) {
    if (v > INT_MAX) throw std::invalid_argument(cat("cudnn: ", what, " ", v, " exceeds the int cuDNN takes"));
    return int(v);
}

TensorDesc::~TensorDesc() {
    if (d) cudnnDestroyTensorDescriptor(d);
}

void TensorDesc::set(DType t, int64_t n, int64_t c, int64_t h, int64_t w) {
    if (!d) RIDGE_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
    RIDGE_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, cudnn_type(t), checked_int(n, "n"),
                                                 checked_int(c, "c"), checked_int(h, "h"), checked_int(w, "w")));
}

Dims4 dims4(const Shape& s) {
    Dims4 d;
    if (!s.empty()) d.n = s[0];
    if (s.size() > 1) d.c = s[1];
    if (s.size() > 2) d.h = s[2];
    for (size_t i = 3; i < s.size(); ++i) d.w *= s[i];
    return d;
}

}  // namespace ridge::cudnn
