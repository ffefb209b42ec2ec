#pragma once
// What every backend (reference, oneDNN, cuDNN) offers a bench or a test: run a built graph
// forward for inference, or a training step (forward, loss, backward, update), with the time of
// each layer's phases.
//
// Semantics shared by all backends, so their results agree element by element:
// - infer: batchnorm uses its running statistics; train: batch statistics (biased variance), and
//   the running statistics are not updated (per-channel scalar work the cost model leaves out).
// - Dropout and stochastic depth are the identity in both modes, so a step is reproducible.
// - Epsilon is 1e-5 for batchnorm and layernorm. GELU is the exact (erf) form.
// - The loss is softmax cross-entropy of the graph's output (N, classes) against the labels,
//   averaged over the batch; backward starts from its gradient.
// - update() is SGD over the learned tensors in torch.optim.SGD's convention (no dampening, not
//   Nesterov), with ExecOptions' momentum m and weight decay wd, every learned tensor decayed
//   (biases and normalization scales too, as PyTorch's default): g = dw + wd * w;
//   v = m * v + g; w -= lr * v. The velocity v starts at zero at each load(); with m = 0 none is
//   kept and the step is w -= lr * g; the defaults (0, 0) give plain w -= lr * dw.
// - Precision: fp32 everywhere on the CPU. On the GPU, tf32 rounds the inputs of convolutions and
//   matrix products to 10 mantissa bits; fp16 and bf16 store activations, gradients and a copy of
//   the weights in 16 bits, keep fp32 master weights for update(), and accumulate every sum in fp32.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/backend/weights.h"

namespace ridge {

enum class Mode { infer, train };

enum class Precision { fp32, tf32, fp16, bf16 };
std::string_view precision_name(Precision p);
std::optional<Precision> parse_precision(std::string_view s);

struct ExecOptions {
    Mode mode = Mode::infer;
    // Fused runs what the library fuses as one primitive (a conv with its folded batchnorm, ReLU
    // and residual sum). Unfused runs one primitive per graph layer, so per-layer times map
    // one-to-one onto the analytic layers.
    bool fused = true;
    int threads = 0;  // 0: every core
    Precision precision = Precision::fp32;  // CPU executors refuse anything else
    // GPU: forward (and in training the whole step, loss and backward) is captured once into a
    // CUDA graph and replayed, so a small batch is not bound by kernel launches. Per-layer timing
    // needs events between the layers and runs without it.
    bool cuda_graph = false;
    // CPU: 3x3 stride-1 convolutions may run oneDNN's Winograd kernels (AVX-512 only; forward and
    // backward), which multiply less than the counted FLOPs and round differently from a direct
    // convolution (about 1e-6 of the output's scale). False keeps every convolution direct.
    bool winograd = true;
    // Training: the SGD update's momentum and weight decay (see update() above). A non-zero
    // momentum adds a velocity buffer the size of the learned tensors to planned_bytes().
    float momentum = 0, weight_decay = 0;
    // CPU: whether the machine is shared with other work, which changes how steps take threads (no
    // team held awake between steps, no small step following its writer's threads). Unset: the
    // 1-minute load average above twice the cores, read when the executor is made.
    std::optional<bool> shared = std::nullopt;
};

// The phase of a pass a step is charged to.
enum class StepPhase { fwd, dgrad, wgrad, loss, update };
std::string_view step_phase_name(StepPhase p);

// Seconds one layer spent in each phase during the last step timed with time_layers(true).
// In fused mode a fused group's time is given to its first layer and the others read 0.
struct LayerTime {
    double fwd = 0, dgrad = 0, wgrad = 0;
};

struct StepTimes {
    std::vector<LayerTime> layers;  // indexed like Graph::nodes()
    double loss = 0;                // softmax cross-entropy forward and its gradient
    // Device time of the last forward(), backward() and update() as a whole, from events on the
    // device's stream (GPU executors); negative where the executor has no device clock.
    double forward = -1, backward = -1, update = -1;

    // A timed step's seconds onto its layer's phase, or the loss's (node -1); an update is no
    // layer's forward or gradient and is not kept per layer.
    void charge(int node, StepPhase phase, double seconds) {
        if (node < 0) {
            loss += seconds;
            return;
        }
        LayerTime& t = layers[size_t(node)];
        if (phase == StepPhase::fwd) t.fwd += seconds;
        if (phase == StepPhase::dgrad) t.dgrad += seconds;
        if (phase == StepPhase::wgrad) t.wgrad += seconds;
    }
};

// One step of a pass as an executor runs it (a library primitive or ridge's own kernel), for
// profilers: the layer and phase it is charged to, what ran, and the layouts it touched.
struct StepArg {
    std::string name;             // the library's name for it: "src", "weights", "diff_dst", ...
    std::vector<int64_t> dims;    // the tensor's logical shape
    std::vector<int64_t> padded;  // as laid out: a blocked layout rounds a blocked dimension up
    std::string layout;           // ridge's name of the layout ("acdb", "aBcd16b", a view's strides after it); may be empty
};

struct StepInfo {
    int node = -1;  // the layer charged; -1: the loss
    StepPhase phase = StepPhase::fwd;
    std::string primitive;  // the library's kind ("convolution", "reorder", ...); "kernel": ridge's code
    std::string impl;       // the implementation that runs it ("brg:avx512_core", "jit:avx2", "ref:any")
    std::vector<StepArg> args;
    bool held = false;  // a one-thread step run while the rest of the team spins (onednn executor.cpp, run())
    int threads = 0;    // the CPU threads it runs on (onednn); 0 where the library decides (cudnn)
};

// Whether a step only moves a tensor between layouts: the library's reorder, or the copies the
// oneDNN executor runs in its place between plain and channel blocks or within one layout
// (onednn/plan.cpp's reorder_into). Such a step is charged to the layer that needed the layout,
// beside its own work.
inline bool layout_move(const StepInfo& s) {
    return s.primitive == "reorder" || s.impl == "ridge:plain_to_blocked" || s.impl == "ridge:blocked_to_plain" ||
           s.impl == "ridge:copy";
}

// Called around every step while set: before() just ahead of it, after() once it has finished
// (the executor waits for it). Profilers bracket counters with these.
class StepObserver {
public:
    virtual ~StepObserver() = default;
    virtual void before(const StepInfo& s) = 0;
    virtual void after(const StepInfo& s) = 0;
};

class Executor {
public:
    virtual ~Executor() = default;
    virtual std::string name() const = 0;  // "reference", "onednn", "cudnn"

    // Construction plans and allocates nothing; planned_bytes() is what prepare() will allocate
    // (weights, activations, gradients, workspaces), so a caller can refuse a run that will not fit.
    virtual int64_t planned_bytes() const = 0;
    virtual void prepare() = 0;

    virtual void load(const Weights& w) = 0;
    virtual void set_input(const HostTensor& x, const std::vector<int32_t>& labels) = 0;

    virtual void forward() = 0;    // infer: inference forward; train: keeps what backward needs
    virtual float backward() = 0;  // train only, after forward(): the loss, and every gradient
    virtual void update(float lr) = 0;

    virtual HostTensor output() const = 0;          // the graph's output, (N, classes) for a net
    virtual Weights weights() const = 0;            // as loaded, or after update()
    virtual Weights gradients() const = 0;          // learned tensors only; others empty
    virtual HostTensor input_gradient() const = 0;  // when the graph's input requires a gradient

    // With timing on, each layer phase is timed on its own (a clock read around each primitive).
    virtual void time_layers(bool on) = 0;
    virtual const StepTimes& step_times() const = 0;

    // The algorithm a library chose for a layer, where it chose by measurement (cuDNN's
    // convolutions: "fwd IMPLICIT_PRECOMP_GEMM, dgrad ..., wgrad ..."); empty elsewhere. Valid after
    // prepare().
    virtual std::string algorithm(int /*node*/) const { return {}; }

    // Every step of forward() and backward(), in the order they run; empty where the executor
    // does not describe its steps. Valid after prepare().
    virtual std::vector<StepInfo> steps() const { return {}; }
    // Sets (or, with null, clears) the observer called around each step of later passes.
    virtual void observe(StepObserver* /*o*/) {}
};

// Backends compiled into this build, in order of preference for the CPU: "onednn", "reference".
std::vector<std::string> cpu_backends();
// Backends for a CUDA device compiled into this build: "cudnn", or none.
std::vector<std::string> gpu_backends();
// Throws std::invalid_argument naming the backends there are when `backend` is not one of them,
// and when a CPU backend is asked for a precision other than fp32.
std::unique_ptr<Executor> make_executor(std::string_view backend, const Graph& g, const ExecOptions& o);

}  // namespace ridge
