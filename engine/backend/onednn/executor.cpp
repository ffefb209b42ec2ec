// The oneDNN CPU executor.
//
// Construction plans the whole run (plan.h): one primitive descriptor per layer and direction,
// with the layouts the primitives ask for (format_tag::any), so activations stay in the blocked
// layout of the convolutions from the first conv to the classifier and are reordered only where a
// layer needs another (a linear, a permute, the graph's output). Fused inference folds each
// batchnorm into its conv and runs activations and residual sums as post-ops (fusion.h); unfused,
// every graph layer is its own primitive, so per-layer times map onto the analytic layers.
// prepare() allocates one arena for everything, placed by lifetime, and compiles the primitives
// once; forward(), backward() and update() then only execute them on one in-order stream.
//
// Threads: a layer whose work one core does in under a threshold runs on one thread, the rest on
// all of them. Every multi-threaded step ends in a barrier, where a thread the scheduler has set
// aside holds up the others for a time slice; on an idle machine that costs the OpenMP fork and
// join (microseconds), so only small layers stay on one thread (serial_shared: mobilenet_v3_small's
// inference at batch 1 took 0.80 to 0.83 ms with it, 0.84 to 1.4 ms at 30 us, load average 7.5,
// where ONNX Runtime took 1.0 to 1.2 ms; at batch 16 mobilenet_v2 did not tell 30 us, 100 us and
// 1 ms apart). On an idle machine inference draws the line at serial_idle, 20 us: squeeze-excitation's
// inner products (16 x 672 -> 168: 3.6 MFLOP) then run on both cores, 25 us where one took 35 to 65,
// and in 4 alternated rounds at batch 1 mobilenet_v3_small took 0.88 against 1.13 to 1.35 ms,
// regnet_y_400mf 4.98 against 5.04 to 7.6, mobilenet_v3_large, efficientnet_b0, mnasnet1_0 and
// squeezenet1_1 level; at batch 16 all of them level (3 rounds). Training primitives
// also synchronize inside (oneDNN's batchnorm and weight gradients spin on barriers of their own),
// and on a machine whose load average, when the executor is made, exceeds twice its cores those
// spins cost slices of milliseconds: mobilenet_v3_small's training step at batch 8, two threads,
// load average 10 to 11, took 2.4 to 2.8 s with serial_idle, 1.7 to 2.4 s at 300 us, 0.7 to 1.1 s
// at 1 ms and 0.22 to 0.26 s at serial_busy (3 ms), which training then uses. Inference has no
// such spins and keeps serial_shared there (mobilenet_v2 at batch 16: 0.16 to 0.26 s against 0.19
// to 0.38 s at 3 ms). Idle training draws the line at serial_idle too: with the last one-thread
// steps held (run()) the team is mostly awake at a many-thread step, and on the 2-core Zen 4 VM
// (training steps, batch 1, 3 alternated rounds against serial_shared) mobilenet_v3_small took
// 5.3-5.4 against 6.2-8.7 ms, efficientnet_b0 23.9-24.2 against 25.5-27.1, shufflenet_v2 9.3-9.5
// against 9.9-10.1, convnext_tiny 154-156 against 156-158 (its 7x7 depthwise convs on 768
// channels of 7x7 now run on both cores: 0.03 against 0.06-0.08 ms), resnet18 and densenet121
// level; at batch 8 six small nets 0.95x to 1.0x. The CLI also sets how idle OpenMP threads wait
// (bench/omp_wait.h).
#include <omp.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "engine/analysis.h"
#include "engine/backend/fold.h"
#include "engine/backend/onednn/onednn.h"
#include "engine/backend/onednn/ops.h"
#include "engine/backend/onednn/step_info.h"
#include "kernels/cpu/kernel.h"
#include "kernels/simd/team.h"

namespace ridge {
namespace onednn {

void plan_forward(Plan& p, const Layer& l) {
    std::visit([&](const auto& op) { forward(p, l, op); }, l.n.op);
}

void plan_backward(Plan& p, const Layer& l) {
    std::visit([&](const auto& op) { backward(p, l, op); }, l.n.op);
}

namespace {

// One core's time for a layer's work is estimated at rates a small layer reaches (oneDNN's jit
// kernels on one AVX2 or AVX-512 core, data from L2).
constexpr double core_flops = 50e9, core_bytes_per_s = 20e9;
constexpr double serial_idle = 20e-6, serial_shared = 100e-6, serial_busy = 3e-3;

// How much of the one-thread work before a many-thread step runs in a held team (run()), in
// threads_for's estimate: about twice what waking a sleeping thread takes (27 us median on the
// 2-core Zen 4 VM), so the wake hides behind it, and no more: a spinning thread holds a core that
// other work on the machine may want, and while it does, that work takes its slices from the main
// thread instead (holding whole runs, small nets' steps were up to 1.3x slower, see run()).
constexpr double held_tail = 50e-6;

// A step that reads a tensor of this many bytes or more runs on at least the threads that wrote
// it, each reading what its own core holds. One thread reading a map two had written pulled the
// other core's half over, and the next step on two threads wrote it back from the other core:
// efficientnet_b0 at batch 1 on the 2-core Zen 5, features.6's gates (1152 x 7 x 7, in place)
// took 19-20 us on 2 threads after their pool's one (the second thread's half alone 15 of them,
// the first's 1.5), 5 with every step on one, and 5.8-5.9 with the pool on both (two alternated
// runs; its pool 10 -> 12-14 us). In the per-layer pass at batch 1, flagged layers: efficientnet_b0
// 22 -> 8 (with channel_means' split), mobilenet_v3_large 9 -> 5, regnet_y_400mf 10 -> 6,
// densenet121 30 -> 5; whole steps level within the host's noise (4 alternated rounds). Not on a
// shared machine, where fewer threads wait less on descheduled team-mates (serial_seconds).
constexpr int64_t follow_bytes = int64_t(64) << 10;

// The 1-minute load average over the cores oneDNN may use above 2: the machine is shared.
bool machine_shared() {
    double load = 0;
    if (FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &load) != 1) load = 0;
        std::fclose(f);
    }
    return load > 2.0 * omp_get_num_procs();
}

double serial_seconds(bool train, bool shared) {
    if (shared) return train ? serial_busy : serial_shared;
    return serial_idle;
}

double core_seconds(double flops, double bytes) { return flops / core_flops + bytes / core_bytes_per_s; }

int threads_for(int most, double serial, double flops, double bytes) {
    return core_seconds(flops, bytes) < serial ? 1 : most;
}

// The plan sized the scratchpad and checked every argument against the descriptor it made; a
// primitive the cache returns for that descriptor must be of the same implementation, or it may
// need buffers nobody planned (see canonical() in plan.cpp). Refuse rather than run it.
void check_same_implementation(const dnnl::primitive& prim, const dnnl::primitive_desc_base& planned,
                               const std::string& where) {
    const_dnnl_primitive_desc_t made = nullptr;
    const char* impl = nullptr;
    RIDGE_DNNL_CHECK(dnnl_primitive_get_primitive_desc(prim.get(), &made));
    RIDGE_DNNL_CHECK(dnnl_primitive_desc_query(made, dnnl_query_impl_info_str, 0, &impl));
    const dnnl_memory_desc_t* scratch = dnnl_primitive_desc_query_md(made, dnnl_query_scratchpad_md, 0);
    size_t made_scratch = scratch ? dnnl_memory_desc_get_size(scratch) : 0;
    size_t planned_scratch = planned.scratchpad_desc().get_size();
    if (std::string(impl) != planned.impl_info_str() || made_scratch != planned_scratch)
        throw std::logic_error(cat("onednn: ", where, ": planned a ", planned.impl_info_str(), " primitive with ",
                                   planned_scratch, " scratchpad bytes, oneDNN's cache returned a ", impl,
                                   " one with ", made_scratch));
}

class OnednnExecutor final : public Executor {
public:
    OnednnExecutor(const Graph& g, const ExecOptions& o);
    ~OnednnExecutor() override {
        if (arena_) munmap(arena_, arena_mapped_);
    }

    std::string name() const override { return "onednn"; }
    int64_t planned_bytes() const override { return int64_t(arena_bytes_); }
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
    std::vector<StepInfo> steps() const override;
    void observe(StepObserver* o) override { observer_ = o; }

private:
    // A step ready to run: a primitive with its arguments as the C API takes them (the C++
    // execute() builds that array from a map on every call), or a kernel with its addresses; its
    // layer, phase and threads are those of its StepInfo.
    struct Compiled {
        dnnl::primitive prim;
        std::vector<dnnl_exec_arg_t> args;
        Kernel kernel;
        std::vector<float*> ptrs;
        StepInfo info;
        size_t held_to = 0;  // first of a held stretch: the index past its end (run())
    };

    void plan_layers();
    void plan_loss();
    void plan_update();
    std::vector<Compiled> compile(const std::vector<Step>& steps);
    void run(std::vector<Compiled>& steps);
    void run_step(Compiled& s);
    double serial_estimate(const Compiled& s) const;
    void set_threads() const { omp_set_num_threads(threads_); }
    void write(int mem, const float* src) const;  // plain host data into a memory of any layout
    HostTensor read(int mem, const Shape& shape) const;

    const Graph& g_;
    ExecOptions o_;
    Fusion fusion_;
    Plan plan_;
    int threads_;
    std::vector<Counts> work_;  // per layer: its analytic FLOPs and bytes, which set its threads
    const bool shared_ = o_.shared ? *o_.shared : machine_shared();  // read once, when the executor is made
    double serial_ = serial_seconds(o_.mode == Mode::train, shared_);
    int threads_for(double flops, double bytes) const { return onednn::threads_for(threads_, serial_, flops, bytes); }
    // The threads a step reading tensor t runs on at least: those that wrote it (wrote_on, by
    // layer) where t is follow_bytes or more, on a machine not shared with other work; else 1.
    int follow(const std::vector<int>& wrote_on, int t) const {
        const int from = g_.tensor(t).producer;
        if (shared_ || from < 0 || numel(g_.tensor(t).shape) * 4 < follow_bytes) return 1;
        return wrote_on[size_t(from)];
    }
    int output_ = -1;  // the graph's output, plain
    size_t arena_bytes_ = 0;
    std::vector<size_t> offsets_;
    std::vector<int> velocities_;  // SGD velocity memories (training with momentum)

    bool prepared_ = false;
    char* arena_ = nullptr;
    size_t arena_mapped_ = 0;
    dnnl::stream stream_;
    std::vector<dnnl::memory> memories_;
    std::vector<Compiled> fwd_, bwd_, upd_, prep_;

    Weights loaded_;
    std::vector<int32_t> labels_;
    float loss_ = 0, lr_ = 0;
    bool timing_ = false;
    StepTimes times_;
    StepObserver* observer_ = nullptr;
};

OnednnExecutor::OnednnExecutor(const Graph& g, const ExecOptions& o)
    : g_(g), o_(o), fusion_(find_groups(g, o)), plan_(g, o), threads_(plan_.threads) {
    if (g.nodes().empty()) throw std::invalid_argument(cat("onednn: graph ", g.model(), " has no layers"));
    // A spinning thread must not take the core a held step runs on, and a team is held (run())
    // only where idle threads spin anyway: a held thread spins for the held steps' time, which may
    // exceed OpenMP's own spin.
    plan_.teams_held = !shared_ && threads_ > 1 && simd::team_may_spin(threads_);
    for (const LayerCost& c : analyze(g, DType::fp32).layers) work_.push_back(c.c);
    plan_.last_read = last_reader(g, fusion_);
    plan_.scale_folds = fusion_.scales;
    plan_.matmul_scales = fusion_.matmul_scales;
    plan_.value[0] = plan_.mem(plain(dims_of(g.input_shape())), true);
    plan_layers();
    if (plan_.train) {
        plan_loss();
        for (int i = int(g.nodes().size()) - 1; i >= 0; --i) {
            int gi = fusion_.group_of[size_t(i)];
            const Group* gr = gi >= 0 ? &fusion_.groups[size_t(gi)] : nullptr;
            if (gr && gr->lead != i) continue;
            Layer l{i, g.nodes()[size_t(i)], gr};
            bool work = op_has_params(l.n.op);
            for (int t : l.n.inputs) work = work || plan_.needs_grad(t);
            const std::vector<int> members = gr ? gr->nodes : std::vector<int>{i};
            if (work && plan_.dy(l.y(g)) >= 0) {  // else no gradient reaches it, or it has none to give
                plan_.at(&plan_.bwd, i, Phase::dgrad);
                double flops = 0, bytes = 0;
                for (int m : members)
                    flops += double(work_[size_t(m)].bwd_flops()), bytes += double(work_[size_t(m)].bwd_traffic_bytes);
                plan_.use_threads(threads_for(flops, bytes));
                try {
                    plan_backward(plan_, l);
                } catch (const std::exception& e) {
                    throw std::runtime_error(cat("onednn: backward of ", describe(g, i), ": ", e.what()));
                }
            }
            // Nothing reads the gradients of the group's outputs after this (Plan::finished).
            for (int m : members) plan_.finished(g.nodes()[size_t(m)].output);
        }
        if (g.tensor(0).requires_grad && plan_.dy(0) >= 0) plan_.pin(plan_.dy(0));
        plan_update();
    }
    set_threads();
    arena_bytes_ = plan_.place(offsets_);
}

void OnednnExecutor::plan_layers() {
    std::vector<int> wrote_on(g_.nodes().size(), 1);  // the threads of the steps that wrote a layer's output
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
        int gi = fusion_.group_of[i];
        const Group* gr = gi >= 0 ? &fusion_.groups[size_t(gi)] : nullptr;
        if (gr && gr->last != int(i)) continue;  // a group runs where its last member is
        int lead = gr ? gr->lead : int(i);
        plan_.at(&plan_.fwd, lead, Phase::fwd);
        double flops = 0, bytes = 0;
        const std::vector<int> members = gr ? gr->nodes : std::vector<int>{lead};
        for (int m : members)
            flops += double(work_[size_t(m)].fwd_flops), bytes += double(work_[size_t(m)].fwd_traffic_bytes);
        int threads = threads_for(flops, bytes);
        for (int m : members)
            for (int t : g_.nodes()[size_t(m)].inputs) threads = std::max(threads, follow(wrote_on, t));
        plan_.use_threads(threads);
        const size_t first = plan_.fwd.size();
        try {
            plan_forward(plan_, {lead, g_.nodes()[size_t(lead)], gr});
        } catch (const std::exception& e) {
            throw std::runtime_error(cat("onednn: ", describe(g_, lead), ": ", e.what()));
        }
        // The threads its steps run on, which an op may have set apart from the estimate (a
        // batchnorm in training takes every thread, few rows of an inner product may take one); a
        // layer without a step of its own (a view) passes on what wrote its input.
        if (plan_.fwd.size() > first) {
            threads = 0;
            for (size_t j = first; j < plan_.fwd.size(); ++j) threads = std::max(threads, plan_.fwd[j].threads);
        }
        for (int m : members) wrote_on[size_t(m)] = threads;
    }
    plan_.at(&plan_.fwd, int(g_.nodes().size()) - 1, Phase::fwd);
    int64_t out_bytes = numel(g_.tensor(g_.output()).shape) * 4;
    plan_.use_threads(std::max(threads_for(0, 2.0 * double(out_bytes)), follow(wrote_on, g_.output())));
    output_ = plan_.value_as(g_.output(), plain(dims_of(g_.tensor(g_.output()).shape)));
    plan_.pin(output_);
}

// Softmax cross-entropy of the output read as (N, classes), by the reference kernel: a few
// thousand elements, and the same code the reference executor runs.
void OnednnExecutor::plan_loss() {
    const Shape& ys = g_.tensor(g_.output()).shape;
    Shape logits = {ys[0], numel(ys) / ys[0]};
    plan_.at(&plan_.bwd, -1, Phase::loss);
    plan_.use_threads(1);  // the reference kernel is serial
    int dlogits = plan_.contribution(g_.output(), plain(dims_of(ys)));
    plan_.kernel("softmax_cross_entropy",
                 [this, logits](const std::vector<float*>& a) {
                     loss_ = ref::softmax_cross_entropy({a[0], logits}, labels_, {a[1], logits});
                 },
                 {output_, dlogits});
}

// SGD (executor.h) over each learned tensor in the layout its primitive chose (a gradient in
// another layout is reordered first); the velocity takes the weight's layout. Padding of blocked
// layouts is zero in all three and stays so: 0 = m * 0 + (0 + wd * 0).
void OnednnExecutor::plan_update() {
    const bool velocity = o_.momentum != 0;
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
        const Node& n = g_.nodes()[i];
        std::vector<ParamSpec> specs = g_.params(n);
        for (size_t j = 0; j < specs.size(); ++j) {
            if (!specs[j].learned || j >= plan_.param[i].size() || j >= plan_.dparam[i].size()) continue;
            int w = plan_.param[i][j], dw = plan_.dparam[i][j];
            if (w < 0 || dw < 0) continue;
            plan_.at(&plan_.upd, int(i), Phase::update);
            int64_t count = int64_t(plan_.md(w).get_size() / sizeof(float));
            // Weight decay and momentum read w, dW and v and write w and v: 3 to 4 FLOPs and 12 to 20
            // bytes an element.
            plan_.use_threads(velocity ? threads_for(4.0 * double(count), 20.0 * double(count))
                                       : threads_for(3.0 * double(count), 12.0 * double(count)));
            dw = plan_.as(dw, plan_.md(w));
            if (!velocity) {
                plan_.kernel("sgd",
                             [this, count](const std::vector<float*>& a) {
                                 float* w = a[0];
                                 const float* d = a[1];
                                 const float lr = lr_, wd = o_.weight_decay;
#pragma omp parallel for schedule(static)
                                 for (int64_t k = 0; k < count; ++k) w[k] -= lr * (d[k] + wd * w[k]);
                             },
                             {w, dw});
                continue;
            }
            int v = plan_.mem(plan_.md(w), true);
            velocities_.push_back(v);
            plan_.kernel("sgd_momentum",
                         [this, count](const std::vector<float*>& a) {
                             float* w = a[0];
                             const float* d = a[1];
                             float* v = a[2];
                             const float lr = lr_, m = o_.momentum, wd = o_.weight_decay;
#pragma omp parallel for schedule(static)
                             for (int64_t k = 0; k < count; ++k) {
                                 v[k] = m * v[k] + (d[k] + wd * w[k]);
                                 w[k] -= lr * v[k];
                             }
                         },
                         {w, dw, v});
        }
    }
}

void OnednnExecutor::prepare() {
    if (prepared_) return;
    set_threads();
    if (arena_) {  // an earlier prepare() that threw after mapping
        munmap(arena_, arena_mapped_);
        arena_ = nullptr;
        memories_.clear();
    }
    // Fresh anonymous pages read as zero, so the padding of blocked layouts starts as zero, as oneDNN
    // expects, without a memset: one would fault in every page at once, the unused included
    // (test_onednn's planning of the zoo touched 40 GB so, 29 s of page faults on a 2-core Zen 4
    // VM). Huge pages where the kernel's policy is madvise: a 2 MiB page takes one fault and one
    // TLB entry for 512 small ones. Both are advice; the arena is correct without them.
    arena_mapped_ = (std::max<size_t>(arena_bytes_, 1) + 4095) / 4096 * 4096;
    void* p = mmap(nullptr, arena_mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::runtime_error(cat("onednn: cannot allocate ", arena_bytes_, " bytes for ", g_.model()));
    arena_ = static_cast<char*>(p);
    madvise(arena_, arena_mapped_, MADV_HUGEPAGE);
    stream_ = dnnl::stream(plan_.eng);
    memories_.reserve(plan_.mems.size());
    for (const Mem& m : plan_.mems)
        memories_.emplace_back(m.md, plan_.eng, arena_ + offsets_[size_t(m.buffer)] + m.offset);
    fwd_ = compile(plan_.fwd);
    bwd_ = compile(plan_.bwd);
    upd_ = compile(plan_.upd);
    prep_ = compile(plan_.prep);
    times_.layers.assign(g_.nodes().size(), {});
    prepared_ = true;
}

std::vector<OnednnExecutor::Compiled> OnednnExecutor::compile(const std::vector<Step>& steps) {
    std::vector<Compiled> out;
    for (const Step& s : steps) {
        Compiled c{{}, {}, s.kernel, {}, describe_step(plan_, s)};
        if (s.pd) {
            omp_set_num_threads(s.threads);
            try {
                c.prim = dnnl::primitive(s.pd.get());
            } catch (const dnnl::error& e) {
                throw std::runtime_error(cat("onednn: compiling ", describe(g_, s.node), ": ", e.what()));
            }
            check_same_implementation(c.prim, s.pd, describe(g_, s.node));
            for (const auto& [arg, m] : s.args) c.args.push_back({arg, memories_[size_t(m)].get()});
        } else {
            for (const auto& [i, m] : s.args)
                c.ptrs.push_back(static_cast<float*>(memories_[size_t(m)].get_data_handle()));
        }
        out.push_back(std::move(c));
    }
    // Each run of one-thread steps before a many-thread one is held from where about held_tail
    // of its estimated work is left.
    for (size_t end = 1; plan_.teams_held && end < out.size(); ++end) {
        if (out[end].info.threads == 1 || out[end - 1].info.threads != 1) continue;
        size_t from = end;
        for (double left = 0; from > 0 && out[from - 1].info.threads == 1 && left < held_tail; --from)
            left += serial_estimate(out[from - 1]);
        out[from].held_to = end;
        for (size_t j = from; j < end; ++j) out[j].info.held = true;
    }
    set_threads();
    return out;
}

// One core's time for a step, at the rates threads_for assumes: its layer's forward work, or its
// whole backward work for either gradient (a reorder charged to the layer counts as the layer).
double OnednnExecutor::serial_estimate(const Compiled& s) const {
    if (s.info.node < 0) return 0;
    const Counts& c = work_[size_t(s.info.node)];
    if (s.info.phase == Phase::fwd) return core_seconds(double(c.fwd_flops), double(c.fwd_traffic_bytes));
    return core_seconds(double(c.bwd_flops()), double(c.bwd_traffic_bytes));
}

void OnednnExecutor::run_step(Compiled& s) {
    using clock = std::chrono::steady_clock;
    if (observer_) observer_->before(s.info);
    auto t0 = clock::now();
    try {
        if (s.kernel)
            s.kernel(s.ptrs);
        else
            RIDGE_DNNL_CHECK(dnnl_primitive_execute(s.prim.get(), stream_.get(), int(s.args.size()), s.args.data()));
    } catch (const std::exception& e) {
        throw std::runtime_error(cat("onednn: running ", describe(g_, s.info.node), ": ", e.what()));
    }
    if (!timing_ && !observer_) return;
    stream_.wait();
    auto t1 = clock::now();
    // Before any arithmetic of ridge's own, which a counter range would otherwise include.
    if (observer_) observer_->after(s.info);
    if (timing_) times_.charge(s.info.node, s.info.phase, std::chrono::duration<double>(t1 - t0).count());
}

// The last one-thread steps before a many-thread one (held_tail of work) run on the main thread
// inside a team whose other threads spin until they end, so the many-thread step finds them
// awake. Left to OpenMP they spin a little and sleep, and that step waits for them to be woken:
// 27 us median on the 2-core Zen 4 VM (a sleeping thread's start after 100 us of one-thread
// work), more than many a small layer's whole bound. The main thread does not wait for a
// sleeping thread to join the team, so the wake-up overlaps the held steps. Only where OpenMP
// would spin as well (simd::idle_threads_spin, an idle machine). regnet_y_400mf's training step
// at batch 8: its squeeze-excitations' forward 2.1-2.4 -> 1.5-1.8 ms (all runs held, 3 alternated
// pairs), its block4 inner products' forward 40-60 -> 14-25 us (with linear.cpp's prefetch).
// Holding whole runs instead of their tails made small nets slower in a survey of the zoo
// (training at batch 8, alternated with f07c617: mobilenet_v3_small 1.26x, shufflenet_v2 1.31x,
// 14 layers flagged each); with the tails, 7 small nets in 3 alternated pairs: training at batch
// 8 0.985x in the geometric mean, flags 33 -> 4 (regnet_y_400mf 8-13 -> 1); inference at batch 1
// 1.00x.
void OnednnExecutor::run(std::vector<Compiled>& steps) {
    int threads = threads_;
    for (size_t i = 0; i < steps.size();) {
        Compiled& s = steps[i];
        if (s.info.threads != threads) omp_set_num_threads(threads = s.info.threads);
        if (!s.held_to) {
            run_step(s);
            ++i;
            continue;
        }
        std::atomic<bool> done{false};
        std::exception_ptr failed;
#pragma omp parallel num_threads(threads_)
        {
            if (omp_get_thread_num() == 0) {
                try {  // an exception must not leave the parallel region
                    for (size_t j = i; j < s.held_to; ++j) run_step(steps[j]);
                } catch (...) {
                    failed = std::current_exception();
                }
                done.store(true, std::memory_order_release);
            } else {
                while (!done.load(std::memory_order_acquire)) simd::relax();
            }
        }
        if (failed) std::rethrow_exception(failed);
        i = s.held_to;
    }
    stream_.wait();
    if (threads != threads_) set_threads();
}

std::vector<StepInfo> OnednnExecutor::steps() const {
    std::vector<StepInfo> all;
    for (const auto* pass : {&fwd_, &bwd_})
        for (const Compiled& c : *pass) all.push_back(c.info);
    return all;
}

void OnednnExecutor::write(int mem, const float* src) const {
    dnnl::memory dst = memories_[size_t(mem)];  // a handle: the same memory
    dnnl::memory user(plain(dst.get_desc().dims()), plan_.eng, const_cast<float*>(src));
    dnnl::stream s(plan_.eng);
    dnnl::reorder(user, dst).execute(s, user, dst);
    s.wait();
}

HostTensor OnednnExecutor::read(int mem, const Shape& shape) const {
    HostTensor t(shape);
    dnnl::memory src = memories_[size_t(mem)];
    Dims dims = src.get_desc().dims();
    if (numel(dims) != t.size())
        throw std::logic_error(cat("onednn: reading ", numel(dims), " elements into a tensor ", to_string(shape)));
    dnnl::memory user(plain(dims), plan_.eng, t.data());
    dnnl::stream s(plan_.eng);
    dnnl::reorder(src, user).execute(s, src, user);
    s.wait();
    return t;
}

void OnednnExecutor::load(const Weights& w) {
    prepare();
    set_threads();
    if (w.size() != g_.nodes().size())
        throw std::invalid_argument(
            cat("onednn: weights for ", w.size(), " layers, ", g_.model(), " has ", g_.nodes().size()));
    loaded_ = w;
    std::vector<bool> folded(g_.nodes().size(), false);
    for (const Plan::Fold& f : plan_.folds) folded[size_t(f.conv)] = true;
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
        if (folded[i]) continue;
        for (size_t j = 0; j < plan_.param[i].size(); ++j) {
            int m = plan_.param[i][j];
            if (m < 0) continue;
            if (j >= w[i].size() || w[i][j].size() != numel(plan_.md(m).dims()))
                throw std::invalid_argument(cat("onednn: ", describe(g_, int(i)), ": tensor ", j, " has ",
                                                j < w[i].size() ? w[i][j].size() : 0, " elements, expected ",
                                                numel(plan_.md(m).dims())));
        }
        std::vector<HostTensor> scaled;  // the layer's tensors with the scales folded into it
        for (const ScaleFold& f : plan_.scale_folds)
            if (f.linear == int(i)) scaled = fold_scale(scaled.empty() ? w[i] : std::move(scaled), f);
        const std::vector<HostTensor>& t = scaled.empty() ? w[i] : scaled;
        for (size_t j = 0; j < plan_.param[i].size(); ++j)
            if (plan_.param[i][j] >= 0) write(plan_.param[i][j], t[j].data());
    }
    for (const Plan::Fold& f : plan_.folds) {
        FoldedConv c = fold_batchnorm(w[size_t(f.conv)], w[size_t(f.bn)]);
        write(plan_.param[size_t(f.conv)][0], c.weight.data());
        write(plan_.param[size_t(f.conv)][1], c.bias.data());
    }
    for (Compiled& s : prep_) s.kernel(s.ptrs);
    for (int v : velocities_) std::memset(memories_[size_t(v)].get_data_handle(), 0, plan_.md(v).get_size());
}

void OnednnExecutor::set_input(const HostTensor& x, const std::vector<int32_t>& labels) {
    prepare();
    if (x.shape != g_.input_shape())
        throw std::invalid_argument(
            cat("onednn: input ", to_string(x.shape), ", ", g_.model(), " takes ", to_string(g_.input_shape())));
    std::memcpy(memories_[size_t(plan_.value[0])].get_data_handle(), x.data(), size_t(x.size()) * sizeof(float));
    labels_ = labels;
}

void OnednnExecutor::forward() {
    prepare();
    set_threads();
    if (timing_) times_.layers.assign(g_.nodes().size(), {}), times_.loss = 0;
    run(fwd_);
}

float OnednnExecutor::backward() {
    if (!plan_.train) throw std::logic_error("onednn: backward() needs an executor made with Mode::train");
    const Shape& ys = g_.tensor(g_.output()).shape;
    if (int64_t(labels_.size()) != ys[0])
        throw std::invalid_argument(cat("onednn: ", labels_.size(), " labels for a batch of ", ys[0]));
    set_threads();
    run(bwd_);
    return loss_;
}

void OnednnExecutor::update(float lr) {
    if (!plan_.train) throw std::logic_error("onednn: update() needs an executor made with Mode::train");
    set_threads();
    lr_ = lr;
    run(upd_);
}

HostTensor OnednnExecutor::output() const { return read(output_, g_.tensor(g_.output()).shape); }

Weights OnednnExecutor::weights() const {
    Weights w = loaded_;
    if (!plan_.train) return w;
    for (size_t i = 0; i < w.size(); ++i)
        for (size_t j = 0; j < w[i].size() && j < plan_.param[i].size(); ++j)
            if (plan_.param[i][j] >= 0) w[i][j] = read(plan_.param[i][j], w[i][j].shape);
    return w;
}

Weights OnednnExecutor::gradients() const {
    Weights d(g_.nodes().size());
    for (size_t i = 0; i < g_.nodes().size(); ++i) {
        const Node& n = g_.nodes()[i];
        std::vector<ParamSpec> specs = g_.params(n);
        for (size_t j = 0; j < specs.size(); ++j) {
            int m = j < plan_.dparam[i].size() ? plan_.dparam[i][j] : -1;
            if (!specs[j].learned)
                d[i].emplace_back();
            else if (m < 0)
                d[i].emplace_back(specs[j].shape);
            else
                d[i].push_back(read(m, specs[j].shape));
        }
    }
    return d;
}

HostTensor OnednnExecutor::input_gradient() const {
    if (!g_.tensor(0).requires_grad || !plan_.train) return {};
    if (plan_.dy(0) < 0) return HostTensor(g_.input_shape());
    return read(plan_.dy(0), g_.input_shape());
}

}  // namespace
}  // namespace onednn

std::unique_ptr<Executor> make_onednn_executor(const Graph& g, const ExecOptions& o) {
    return std::make_unique<onednn::OnednnExecutor>(g, o);
}

}  // namespace ridge
