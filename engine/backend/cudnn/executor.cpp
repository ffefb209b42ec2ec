// The GPU executor: cuDNN for convolutions, batchnorm, pooling, the activations it has and
// softmax; cuBLAS for linear layers and attention's products; the hand-written kernels of
// kernels/cuda for the rest, the loss and SGD (ops.h lists which op runs where).
//
// Construction plans every buffer (plan.h) without touching a device, so planned_bytes() is exact
// before anything is allocated: one arena holds tensors, gradients, weights, saved statistics,
// the cuBLAS workspace and a fixed convolution workspace (algorithms needing more are not
// chosen). prepare() allocates the arena, creates the handles and searches every convolution's
// algorithms (cudnnFind, remembered per shape). forward(), backward() and update() then only
// launch on one stream; each ends by waiting for it, and the device time of the call, measured
// with events, is in step_times(). With ExecOptions::cuda_graph each pass is captured once into a
// CUDA graph and replayed. With time_layers(true) every step is bracketed by events instead.
//
// Fused (inference) folds each batchnorm into the conv before it; unfused runs every layer.
// Precision: fp32 (no TF32 anywhere), tf32 (convolutions and GEMMs round inputs to TF32), fp16
// and bf16 (16-bit activations, gradients and weight copies, fp32 master weights and
// accumulation; fp16 with a static loss scale, plan.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "engine/backend/cudnn/cudnn.h"
#include "engine/backend/fold.h"
#include "engine/backend/cudnn/ops.h"
#include "engine/overloaded.h"

namespace ridge {
namespace cudnn {

// Every op of the variant is listed, with no catch-all: an op added without a GPU layer does not
// compile, rather than running as nothing.
std::unique_ptr<LayerRun> make_layer(Plan& p, int node) {
    const Op& op = p.g.nodes()[size_t(node)].op;
    return std::visit(
        overloaded{[&](const Conv2d& o) { return conv2d_layer(p, node, o); },
                   [&](const Linear& o) { return linear_layer(p, node, o); },
                   [&](const Matmul& o) { return matmul_layer(p, node, o); },
                   [&](const BatchNorm& o) { return batchnorm_layer(p, node, o); },
                   [&](const LayerNorm& o) { return layernorm_layer(p, node, o); },
                   [&](const Activation& o) { return activation_layer(p, node, o); },
                   [&](const Pool2d& o) { return pool_layer(p, node, o); },
                   [&](const AdaptiveAvgPool2d& o) { return pool_layer(p, node, o); },
                   [&](const Softmax& o) { return softmax_layer(p, node, o); },
                   [&](const Add&) { return elementwise_layer(p, node); },
                   [&](const Mul&) { return elementwise_layer(p, node); },
                   [&](const Scale&) { return elementwise_layer(p, node); },
                   [&](const LayerScale&) { return elementwise_layer(p, node); },
                   [&](const PosEmbedding& o) { return embedding_layer(p, node, o); },
                   [&](const Concat&) { return layout_layer(p, node); },
                   [&](const ChannelShuffle&) { return layout_layer(p, node); },
                   [&](const Permute&) { return layout_layer(p, node); },
                   [&](const Slice&) { return layout_layer(p, node); },
                   [&](const Select&) { return layout_layer(p, node); },
                   [&](const ClassToken& o) { return embedding_layer(p, node, o); },
                   [&](const Flatten&) { return alias_layer(p, node); },
                   [&](const Reshape&) { return alias_layer(p, node); },
                   [&](const Dropout&) { return alias_layer(p, node); },
                   [&](const StochasticDepth&) { return alias_layer(p, node); }},
        op);
}

namespace {

// cuDNN's legacy convolutions get at most this much scratch; the search skips algorithms that
// want more (some FFT and Winograd variants on large layers), so planned memory stays exact.
constexpr int64_t conv_workspace = int64_t(256) << 20;
// cuBLAS needs a workspace set by the caller to run inside a captured CUDA graph; 32 MiB is the
// size NVIDIA documents for Hopper.
constexpr int64_t blas_workspace = int64_t(32) << 20;

// fp32 host data to and from the storage type, rounded to nearest even as the device does.
void to_storage(const float* x, int64_t n, DType t, char* out) {
    if (t == DType::fp32) std::memcpy(out, x, size_t(n) * 4);
    for (int64_t i = 0; t == DType::fp16 && i < n; ++i) reinterpret_cast<__half*>(out)[i] = __float2half_rn(x[i]);
    for (int64_t i = 0; t == DType::bf16 && i < n; ++i) reinterpret_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16_rn(x[i]);
}

std::vector<char> to_storage(const float* x, int64_t n, DType t) {
    std::vector<char> out(size_t(n * dtype_bytes(t)));
    to_storage(x, n, t, out.data());
    return out;
}

void from_storage(const char* x, int64_t n, DType t, float scale, float* y) {
    for (int64_t i = 0; i < n; ++i) {
        float v = t == DType::fp32   ? reinterpret_cast<const float*>(x)[i]
                  : t == DType::fp16 ? __half2float(reinterpret_cast<const __half*>(x)[i])
                                 : __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(x)[i]);
        y[i] = v * scale;
    }
}

using Phase = StepPhase;

struct Step {
    int node;
    Phase phase;
    std::function<void()> run;
    cudaEvent_t start = nullptr, stop = nullptr;  // created when layers are timed
    StepInfo info = {};
};

class CudnnExecutor final : public Executor {
public:
    CudnnExecutor(const Graph& g, const ExecOptions& o);
    ~CudnnExecutor() override;

    std::string name() const override { return "cudnn"; }
    int64_t planned_bytes() const override { return arena_bytes_; }
    void prepare() override;
    void load(const Weights& w) override;
    void set_input(const HostTensor& x, const std::vector<int32_t>& labels) override;
    void forward() override;
    float backward() override;
    void update(float lr) override;
    HostTensor output() const override;
    Weights weights() const override;
    Weights gradients() const override;
    HostTensor input_gradient() const override;
    void time_layers(bool on) override { timing_ = on; }
    const StepTimes& step_times() const override { return times_; }
    std::string algorithm(int node) const override {
        return prepared_ ? layers_[size_t(node)]->algorithm() : std::string();
    }
    std::vector<StepInfo> steps() const override;
    void observe(StepObserver* o) override { observer_ = o; }

private:
    void build_steps();
    void prepare_staging();
    void build_passes();
    // Runs a pass: captured into a graph and replayed, or step by step, timed or not. Returns the
    // device time of the whole pass.
    double run(std::vector<Step>& steps, cudaGraphExec_t& graph);
    void write(int buffer, const float* src, int64_t n, DType t) const;
    void read(int buffer, int64_t n, DType t, float scale, float* dst) const;
    void copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) const;
    HostTensor read_tensor(int buffer, const Shape& s, DType t, float scale) const {
        HostTensor h(s);
        read(buffer, h.size(), t, scale, h.data());
        return h;
    }

    const Graph& g_;
    ExecOptions o_;
    Plan plan_;
    std::vector<std::unique_ptr<LayerRun>> layers_;
    int labels_ = -1, row_loss_ = -1, loss_ = -1, blas_ws_ = -1;
    int64_t arena_bytes_ = 0;
    std::vector<size_t> offsets_;
    size_t grads_begin_ = 0, grads_end_ = 0;

    bool prepared_ = false, timing_ = false, has_input_ = false;
    Dev dev_;
    cudaEvent_t begin_ = nullptr, end_ = nullptr;
    std::vector<Step> fwd_, bwd_, upd_;
    cudaGraphExec_t fwd_graph_ = nullptr, bwd_graph_ = nullptr, upd_graph_ = nullptr;
    float lr_ = 0, graph_lr_ = NAN;
    Weights loaded_;
    StepTimes times_;
    StepObserver* observer_ = nullptr;

    // The input batch and its labels reach the device through one pinned host buffer: a copy
    // from pageable memory is staged by the driver through its own pinned bounce buffer and
    // blocks the host, one from pinned memory is DMA the host does not wait for. The copies run
    // on their own stream; the next forward() waits for `staged_` on the compute stream, so the
    // copy overlaps whatever the compute stream still does (a training loop sets the next batch
    // before the update: train/run.cpp).
    char* staging_ = nullptr;
    size_t input_bytes_ = 0, labels_bytes_ = 0;
    cudaStream_t copy_ = nullptr;
    cudaEvent_t staged_ = nullptr, inputs_free_ = nullptr;
};

CudnnExecutor::CudnnExecutor(const Graph& g, const ExecOptions& o) : g_(g), o_(o), plan_(g, o) {
    if (g.nodes().empty()) throw std::invalid_argument(cat("cudnn: graph ", g.model(), " has no layers"));
    for (const Node& n : g.nodes())
        for (int id : n.inputs)
            if (id != 0 && g.tensor(id).producer < 0)
                throw std::invalid_argument(cat("cudnn: ", g.model(), ": layer ", n.name, " reads a second graph input"));
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        try {
            layers_.push_back(make_layer(plan_, int(i)));
        } catch (const std::exception& e) {
            throw std::runtime_error(cat("cudnn: ", describe(g, int(i)), ": ", e.what()));
        }
    }
    const int64_t N = g.input_shape()[0];
    if (plan_.train) {
        labels_ = plan_.buffer(N * 4);
        row_loss_ = plan_.buffer(N * 4);
        loss_ = plan_.buffer(4);
    }
    blas_ws_ = plan_.buffer(blas_workspace);
    bool conv = false;
    for (const Node& n : g.nodes()) conv = conv || std::holds_alternative<Conv2d>(n.op);
    plan_.workspace_bytes = conv ? conv_workspace : 0;
    arena_bytes_ = plan_.place(offsets_, grads_begin_, grads_end_);
    times_.layers.assign(g.nodes().size(), {});
}

CudnnExecutor::~CudnnExecutor() {
    for (auto* steps : {&fwd_, &bwd_, &upd_})
        for (Step& s : *steps) {
            if (s.start) cudaEventDestroy(s.start);
            if (s.stop) cudaEventDestroy(s.stop);
        }
    for (cudaGraphExec_t gr : {fwd_graph_, bwd_graph_, upd_graph_})
        if (gr) cudaGraphExecDestroy(gr);
    if (begin_) cudaEventDestroy(begin_);
    if (end_) cudaEventDestroy(end_);
    if (copy_) cudaStreamSynchronize(copy_);
    if (staged_) cudaEventDestroy(staged_);
    if (inputs_free_) cudaEventDestroy(inputs_free_);
    if (staging_) cudaFreeHost(staging_);
    if (copy_) cudaStreamDestroy(copy_);
    layers_.clear();  // their descriptors go before the handles
    if (dev_.dnn) cudnnDestroy(dev_.dnn);
    if (dev_.blas) cublasDestroy(dev_.blas);
    if (dev_.arena) cudaFree(dev_.arena);
    if (dev_.s) cudaStreamDestroy(dev_.s);
}

void CudnnExecutor::prepare() {
    if (prepared_) return;
    RIDGE_CUDA_CHECK(cudaSetDevice(0));
    RIDGE_CUDA_CHECK(cudaStreamCreateWithFlags(&dev_.s, cudaStreamNonBlocking));
    RIDGE_CUDNN_CHECK(cudnnCreate(&dev_.dnn));
    RIDGE_CUDNN_CHECK(cudnnSetStream(dev_.dnn, dev_.s));
    RIDGE_CUBLAS_CHECK(cublasCreate(&dev_.blas));
    RIDGE_CUBLAS_CHECK(cublasSetStream(dev_.blas, dev_.s));
    void* arena = nullptr;
    cudaError_t e = cudaMalloc(&arena, size_t(std::max<int64_t>(arena_bytes_, 1)));
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw gpu::CudaError(cat("cudnn: cannot allocate ", arena_bytes_, " bytes on the device for ", g_.model(), ": ",
                                 cudaGetErrorString(e)));
    }
    dev_.arena = static_cast<char*>(arena);
    dev_.offsets = &offsets_;
    dev_.ws = plan_.workspace_bytes > 0 ? dev_.arena + (arena_bytes_ - plan_.workspace_bytes) : nullptr;
    dev_.ws_bytes = size_t(plan_.workspace_bytes);
    // Zeroed once: the algorithm searches below run on these buffers before load() fills them.
    // Every memset and copy goes on dev_.s (the input's staged copy on copy_, ordered by events):
    // a non-blocking stream is not ordered after the legacy default stream, and on a busy H200 a
    // cudaMemset there landed after the input's copy and zeroed it (test_cudnn's op table, three
    // processes at once: outputs all zero).
    RIDGE_CUDA_CHECK(cudaMemsetAsync(dev_.arena, 0, size_t(arena_bytes_), dev_.s));
    RIDGE_CUDA_CHECK(cudaStreamSynchronize(dev_.s));
    RIDGE_CUBLAS_CHECK(cublasSetWorkspace(dev_.blas, dev_.at(blas_ws_), size_t(blas_workspace)));
    RIDGE_CUDA_CHECK(cudaEventCreate(&begin_));
    RIDGE_CUDA_CHECK(cudaEventCreate(&end_));
    prepare_staging();
    for (size_t i = 0; i < layers_.size(); ++i) {
        try {
            layers_[i]->setup(dev_);
        } catch (const std::exception& ex) {
            throw std::runtime_error(cat("cudnn: setting up ", describe(g_, int(i)), ": ", ex.what()));
        }
    }
    build_steps();
    prepared_ = true;
}

void CudnnExecutor::prepare_staging() {
    input_bytes_ = size_t(numel(g_.input_shape()) * dtype_bytes(plan_.dt));
    labels_bytes_ = plan_.train ? size_t(g_.input_shape()[0]) * 4 : 0;
    RIDGE_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    RIDGE_CUDA_CHECK(cudaEventCreateWithFlags(&staged_, cudaEventDisableTiming));
    RIDGE_CUDA_CHECK(cudaEventCreateWithFlags(&inputs_free_, cudaEventDisableTiming));
    void* host = nullptr;
    cudaError_t e = cudaHostAlloc(&host, input_bytes_ + labels_bytes_, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw gpu::CudaError(cat("cudnn: cannot pin ", input_bytes_ + labels_bytes_, " bytes of host memory for ",
                                 g_.model(), "'s input: ", cudaGetErrorString(e)));
    }
    staging_ = static_cast<char*>(host);
}

void CudnnExecutor::build_steps() {
    build_passes();
    // What a profiler reads of each step: cuDNN's chosen algorithms where the layer searched them.
    for (auto* pass : {&fwd_, &bwd_, &upd_})
        for (Step& s : *pass) {
            s.info.node = s.node;
            s.info.phase = s.phase;
            s.info.primitive = s.node < 0 ? "kernel" : std::string(op_kind(g_.nodes()[size_t(s.node)].op));
            s.info.impl = s.node < 0 ? "ridge" : layers_[size_t(s.node)]->algorithm();
        }
}

void CudnnExecutor::build_passes() {
    const auto& nodes = g_.nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
        LayerRun* l = layers_[i].get();
        fwd_.push_back({int(i), Phase::fwd, [this, l] { l->forward(dev_); }});
    }
    if (!plan_.train) return;
    bwd_.push_back({-1, Phase::loss, [this] {
                        RIDGE_CUDA_CHECK(cudaMemsetAsync(dev_.arena + grads_begin_, 0, grads_end_ - grads_begin_, dev_.s));
                        const Shape& ys = g_.tensor(g_.output()).shape;
                        int64_t N = ys[0], K = numel(ys) / N;
                        gpu::softmax_cross_entropy(plan_.dt, dev_.at(plan_.value(g_.output())),
                                                   static_cast<const int32_t*>(dev_.at(labels_)),
                                                   dev_.at(plan_.grad(g_.output())), dev_.f(row_loss_), dev_.f(loss_),
                                                   N, K, plan_.loss_scale, dev_.s);
                    }});
    for (size_t i = nodes.size(); i-- > 0;) {
        if (!plan_.needs_grad(nodes[i].output)) continue;  // nothing before it, nor it, learns
        LayerRun* l = layers_[i].get();
        if (l->has_dgrad()) bwd_.push_back({int(i), Phase::dgrad, [this, l] { l->dgrad(dev_); }});
        if (l->has_wgrad()) bwd_.push_back({int(i), Phase::wgrad, [this, l] { l->wgrad(dev_); }});
    }
    for (size_t i = 0; i < nodes.size(); ++i)
        for (const Param& q : plan_.params[i]) {
            if (q.grad < 0) continue;
            upd_.push_back({int(i), Phase::update, [this, q] {
                                DType gt = q.library ? plan_.dt : DType::fp32;
                                void* copy = q.copy != q.master ? dev_.at(q.copy) : nullptr;
                                gpu::SgdStep step{lr_, o_.momentum, o_.weight_decay, 1.0f / plan_.loss_scale};
                                gpu::sgd(dev_.f(q.master), gt, dev_.at(q.grad), dev_.f(q.velocity), plan_.dt, copy,
                                         q.count, step, dev_.s);
                            }});
        }
}

std::vector<StepInfo> CudnnExecutor::steps() const {
    std::vector<StepInfo> all;
    for (const auto* pass : {&fwd_, &bwd_})
        for (const Step& s : *pass) all.push_back(s.info);
    return all;
}

double CudnnExecutor::run(std::vector<Step>& steps, cudaGraphExec_t& graph) {
    RIDGE_CUDA_CHECK(cudaEventRecord(begin_, dev_.s));
    auto each = [&](bool timed) {
        for (Step& s : steps) {
            try {
                if (timed) {
                    if (!s.start) {
                        RIDGE_CUDA_CHECK(cudaEventCreate(&s.start));
                        RIDGE_CUDA_CHECK(cudaEventCreate(&s.stop));
                    }
                    RIDGE_CUDA_CHECK(cudaEventRecord(s.start, dev_.s));
                }
                if (observer_) observer_->before(s.info);
                s.run();
                if (timed) RIDGE_CUDA_CHECK(cudaEventRecord(s.stop, dev_.s));
                if (observer_) {
                    RIDGE_CUDA_CHECK(cudaStreamSynchronize(dev_.s));
                    observer_->after(s.info);
                }
            } catch (const std::exception& e) {
                throw std::runtime_error(cat("cudnn: running ", describe(g_, s.node), ": ", e.what()));
            }
        }
    };
    if (timing_ || observer_) {
        each(timing_);
    } else if (o_.cuda_graph) {
        if (!graph) {
            cudaGraph_t captured = nullptr;
            RIDGE_CUDA_CHECK(cudaStreamBeginCapture(dev_.s, cudaStreamCaptureModeThreadLocal));
            try {
                each(false);
            } catch (...) {
                cudaStreamEndCapture(dev_.s, &captured);
                if (captured) cudaGraphDestroy(captured);
                throw;
            }
            RIDGE_CUDA_CHECK(cudaStreamEndCapture(dev_.s, &captured));
            cudaError_t e = cudaGraphInstantiate(&graph, captured, 0);
            cudaGraphDestroy(captured);
            RIDGE_CUDA_CHECK(e);
        }
        RIDGE_CUDA_CHECK(cudaGraphLaunch(graph, dev_.s));
    } else {
        each(false);
    }
    RIDGE_CUDA_CHECK(cudaEventRecord(end_, dev_.s));
    RIDGE_CUDA_CHECK(cudaStreamSynchronize(dev_.s));
    float ms = 0;
    RIDGE_CUDA_CHECK(cudaEventElapsedTime(&ms, begin_, end_));
    if (timing_) {
        for (Step& s : steps) {
            float t = 0;
            RIDGE_CUDA_CHECK(cudaEventElapsedTime(&t, s.start, s.stop));
            times_.charge(s.node, s.info.phase, t * 1e-3);
        }
    }
    return ms * 1e-3;
}

// On dev_.s, as everything the executor runs (prepare() says why), and finished on return.
void CudnnExecutor::copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) const {
    RIDGE_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, dev_.s));
    RIDGE_CUDA_CHECK(cudaStreamSynchronize(dev_.s));
}

void CudnnExecutor::write(int buffer, const float* src, int64_t n, DType t) const {
    std::vector<char> bytes = to_storage(src, n, t);
    copy(dev_.at(buffer), bytes.data(), bytes.size(), cudaMemcpyHostToDevice);
}

void CudnnExecutor::read(int buffer, int64_t n, DType t, float scale, float* dst) const {
    std::vector<char> bytes(size_t(n * dtype_bytes(t)));
    copy(bytes.data(), dev_.at(buffer), bytes.size(), cudaMemcpyDeviceToHost);
    from_storage(bytes.data(), n, t, scale, dst);
}

void CudnnExecutor::load(const Weights& w) {
    prepare();
    const auto& nodes = g_.nodes();
    if (w.size() != nodes.size())
        throw std::invalid_argument(cat("cudnn: weights for ", w.size(), " layers, ", g_.model(), " has ", nodes.size()));
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto& q = plan_.params[i];
        if (w[i].size() != q.size())
            throw std::invalid_argument(cat("cudnn: ", describe(g_, int(i)), " has ", q.size(), " tensors, the weights give ",
                                            w[i].size()));
        for (size_t j = 0; j < q.size(); ++j) {
            if (w[i][j].size() != q[j].count)
                throw std::invalid_argument(cat("cudnn: ", describe(g_, int(i)), ": tensor ", j, " has ", w[i][j].size(),
                                                " elements, expected ", q[j].count));
            write(q[j].master, w[i][j].data(), q[j].count, DType::fp32);
            if (q[j].copy != q[j].master) write(q[j].copy, w[i][j].data(), q[j].count, plan_.dt);
        }
    }
    for (size_t bn = 0; bn < nodes.size(); ++bn) {
        int conv = plan_.folded_into[bn];
        if (conv < 0) continue;
        FoldedConv c = fold_batchnorm(w[size_t(conv)], w[bn]);
        const Param& q = plan_.params[size_t(conv)][0];
        write(q.master, c.weight.data(), q.count, DType::fp32);
        if (q.copy != q.master) write(q.copy, c.weight.data(), q.count, plan_.dt);
        write(plan_.fold_bias[size_t(conv)], c.bias.data(), c.bias.size(), DType::fp32);
        // The conv's own bias, if it has one, is inside the folded bias: the layer adds only that.
    }
    // The SGD velocity starts at zero with every load (executor.h).
    for (const auto& layer : plan_.params)
        for (const Param& q : layer)
            if (q.velocity >= 0) RIDGE_CUDA_CHECK(cudaMemsetAsync(dev_.at(q.velocity), 0, size_t(q.count) * 4, dev_.s));
    RIDGE_CUDA_CHECK(cudaStreamSynchronize(dev_.s));
    loaded_ = w;
}

void CudnnExecutor::set_input(const HostTensor& x, const std::vector<int32_t>& labels) {
    prepare();
    if (x.shape != g_.input_shape())
        throw std::invalid_argument(
            cat("cudnn: input ", to_string(x.shape), ", ", g_.model(), " takes ", to_string(g_.input_shape())));
    const Shape& ys = g_.tensor(g_.output()).shape;
    if (plan_.train) {
        if (int64_t(labels.size()) != x.shape[0])
            throw std::invalid_argument(cat("cudnn: ", labels.size(), " labels for a batch of ", x.shape[0]));
        for (int32_t l : labels)
            if (l < 0 || l >= numel(ys) / ys[0])
                throw std::invalid_argument(cat("cudnn: label ", l, " outside [0, ", numel(ys) / ys[0], ")"));
    }
    // The previous batch may still be on its way out of the staging buffer. (An event never
    // recorded counts as complete, for this wait and forward()'s.)
    RIDGE_CUDA_CHECK(cudaEventSynchronize(staged_));
    to_storage(x.data(), x.size(), plan_.dt, staging_);
    if (plan_.train) std::memcpy(staging_ + input_bytes_, labels.data(), labels_bytes_);
    // The copies overwrite what work already queued on the compute stream may still read (the
    // last backward reads the input), so they start after it.
    RIDGE_CUDA_CHECK(cudaEventRecord(inputs_free_, dev_.s));
    RIDGE_CUDA_CHECK(cudaStreamWaitEvent(copy_, inputs_free_, 0));
    RIDGE_CUDA_CHECK(cudaMemcpyAsync(dev_.at(plan_.value(0)), staging_, input_bytes_, cudaMemcpyHostToDevice, copy_));
    if (plan_.train)
        RIDGE_CUDA_CHECK(cudaMemcpyAsync(dev_.at(labels_), staging_ + input_bytes_, labels_bytes_,
                                         cudaMemcpyHostToDevice, copy_));
    RIDGE_CUDA_CHECK(cudaEventRecord(staged_, copy_));
    has_input_ = true;
}

void CudnnExecutor::forward() {
    if (!has_input_) throw std::logic_error(cat("cudnn: ", g_.model(), ": forward() before set_input()"));
    if (timing_) times_.layers.assign(g_.nodes().size(), {}), times_.loss = 0;
    // Outside the timed (and captured) pass: a step's device time excludes the input's copy.
    RIDGE_CUDA_CHECK(cudaStreamWaitEvent(dev_.s, staged_, 0));
    times_.forward = run(fwd_, fwd_graph_);
}

float CudnnExecutor::backward() {
    if (!plan_.train) throw std::logic_error("cudnn: backward() needs an executor made with Mode::train");
    times_.backward = run(bwd_, bwd_graph_);
    float loss = 0;
    copy(&loss, dev_.at(loss_), sizeof loss, cudaMemcpyDeviceToHost);
    return loss;
}

void CudnnExecutor::update(float lr) {
    if (!plan_.train) throw std::logic_error("cudnn: update() needs an executor made with Mode::train");
    lr_ = lr;
    // A captured update holds the rate it was captured with.
    if (upd_graph_ && graph_lr_ != lr) {
        cudaGraphExecDestroy(upd_graph_);
        upd_graph_ = nullptr;
    }
    graph_lr_ = lr;
    times_.update = run(upd_, upd_graph_);
}

HostTensor CudnnExecutor::output() const {
    if (!prepared_) return {};
    return read_tensor(plan_.value(g_.output()), g_.tensor(g_.output()).shape, plan_.dt, 1.0f);
}

Weights CudnnExecutor::weights() const {
    Weights w = loaded_;
    if (!plan_.train) return w;
    for (size_t i = 0; i < w.size(); ++i)
        for (size_t j = 0; j < w[i].size(); ++j) w[i][j] = read_tensor(plan_.params[i][j].master, w[i][j].shape, DType::fp32, 1);
    return w;
}

Weights CudnnExecutor::gradients() const {
    Weights d(g_.nodes().size());
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
        std::vector<ParamSpec> specs = g_.params(g_.nodes()[i]);
        for (size_t j = 0; j < specs.size(); ++j) {
            const Param& q = plan_.params[i][j];
            if (!specs[j].learned)
                d[i].emplace_back();
            else if (q.grad < 0 || !prepared_)
                d[i].emplace_back(specs[j].shape);
            else
                d[i].push_back(read_tensor(q.grad, specs[j].shape, q.library ? plan_.dt : DType::fp32, 1.0f / plan_.loss_scale));
        }
    }
    return d;
}

HostTensor CudnnExecutor::input_gradient() const {
    if (!g_.tensor(0).requires_grad || !plan_.train) return {};
    if (!prepared_ || plan_.grad(0) < 0) return HostTensor(g_.input_shape());
    return read_tensor(plan_.grad(0), g_.input_shape(), plan_.dt, 1.0f / plan_.loss_scale);
}

}  // namespace
}  // namespace cudnn

std::unique_ptr<Executor> make_cudnn_executor(const Graph& g, const ExecOptions& o) {
    return std::make_unique<cudnn::CudnnExecutor>(g, o);
}

std::string cudnn_version() {
    size_t v = cudnnGetVersion();  // major * 10000 + minor * 100 + patch since cuDNN 9
    return cat(v / 10000, ".", (v % 10000) / 100, ".", v % 100);
}

std::string cublas_version() {
    int major = 0, minor = 0, patch = 0;
    RIDGE_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
    RIDGE_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
    RIDGE_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
    return cat(major, ".", minor, ".", patch);
}

}  // namespace ridge
