#include "train/run.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <numeric>

#include "roofline/probes/cuda/probes.h"
#include "netdefs/zoo.h"
#include "roofline/roofline.h"

namespace ridge::train {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Usage {
    double user = 0, sys = 0;
    int64_t max_rss = 0;
};
Usage usage() {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    auto s = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) * 1e-6; };
    return {s(r.ru_utime), s(r.ru_stime), int64_t(r.ru_maxrss) * 1024};  // ru_maxrss is in KiB on Linux
}

int64_t argmax_row(const float* z, int64_t K) { return int64_t(std::max_element(z, z + K) - z); }

}  // namespace

Session::Session(const Config& c, const data::Dataset* data) : c_(c), data_(data) {
    classes_ = data ? int64_t(data->train.classes.size()) : c.classes;
    g_ = std::make_unique<Graph>(build(*find_net(c.net), c.batch, c.height, c.width, classes_));
    an_ = analyze(*g_, DType::fp32);
    ExecOptions o{.mode = Mode::train,
                  .fused = true,
                  .threads = c.threads,
                  .precision = c.precision,
                  .momentum = c.momentum,
                  .weight_decay = c.weight_decay};
    ex_ = make_executor(c.backend, *g_, o);
    const Shape shape = g_->input_shape();
    if (data) {
        train_src_ = std::make_unique<data::TrainFolderSource>(data->train, shape, c.seed);
        if (!data->val.samples.empty()) val_src_ = std::make_unique<data::ValFolderSource>(data->val, shape);
    } else {
        train_src_ = std::make_unique<data::SyntheticSource>(shape, classes_, c.seed);
    }
}

Session::~Session() = default;

// PyTorch's DataLoader keeps prefetch_factor (2) batches per worker in flight; one more slot
// is the batch the compute holds.
int Session::loader_depth() const { return 2 * c_.workers + 1; }

int64_t Session::host_bytes() const {
    int64_t batch = numel(g_->input_shape()) * 4 + c_.batch * 4;
    // One more batch on a GPU: the executor's pinned staging buffer.
    int64_t slots = (c_.workers == 0 ? 1 : loader_depth()) + (c_.device == "cuda" ? 1 : 0);
    // Each worker also holds a decoded image and its resampling rows: a 4000 x 3000 photo is
    // 36 MB of RGB, allowed for per worker (ImageNet's are far smaller).
    int64_t per_worker = data_ ? int64_t(4000) * 3000 * 3 + int64_t(4000) * 3 * 4 * 2 : 0;
    return slots * batch + std::max(c_.workers, 1) * per_worker + 2 * an_.totals.param_bytes +
           numel(g_->tensor(g_->output()).shape) * 4;
}

int64_t Session::train_flops_per_step() const { return an_.totals.fwd_flops + an_.totals.bwd_flops(); }
int64_t Session::train_bytes_per_step() const { return an_.totals.fwd_traffic_bytes + an_.totals.bwd_traffic_bytes; }

Result Session::run(const std::atomic<bool>& interrupt, const Progress& progress) {
    Result r;
    const bool gpu = c_.device == "cuda";
    const auto run_start = Clock::now();
    const Usage u0 = usage();
    ex_->prepare();
    ex_->load(init_weights(*g_, c_.seed));
    int64_t device_total = 0, device_min_free = -1;
    if (gpu) device_total = probe::gpu::device_info().mem_bytes;
    auto sample_device = [&] {
        if (!gpu) return;
        int64_t f = probe::gpu::free_memory_bytes();
        device_min_free = device_min_free < 0 ? f : std::min(device_min_free, f);
    };

    const int64_t total = c_.warmup + c_.iters;
    std::vector<double> steps;
    std::deque<double> tail;  // the last Result::tail_steps losses
    steps.reserve(size_t(c_.iters));
    Clock::time_point measured_start = run_start;
    double waited_before = 0;
    {
        data::Loader loader(*train_src_, 0, total, c_.workers, loader_depth(), c_.worker_nice);
        auto set_next = [&] {
            const data::Batch& b = loader.next();
            ex_->set_input(b.x, b.labels);
        };
        // Each step sets the next batch between its backward and its update: nothing reads the
        // input after the backward, and on a GPU the batch's copy then overlaps the update. Step
        // i's time therefore holds the wait for batch i + 1 (and the first warm-up step's batch 0).
        for (int64_t i = 0; i < total; ++i) {
            if (i == c_.warmup) {
                measured_start = Clock::now();
                waited_before = loader.waited();
            }
            const auto t0 = Clock::now();
            if (i == 0) set_next();
            ex_->forward();
            const float loss = ex_->backward();
            if (i + 1 < total) set_next();
            ex_->update(c_.lr);
            if (i >= c_.warmup) steps.push_back(since(t0));
            if (i == 0) {
                r.first_loss = loss;
                sample_device();  // after the first step every buffer and library workspace exists
            }
            r.last_loss = loss;
            tail.push_back(loss);
            if (tail.size() > size_t(Result::tail_steps)) tail.pop_front();
            r.tail_loss = std::accumulate(tail.begin(), tail.end(), 0.0) / double(tail.size());
            r.steps_done = i + 1;
            progress(i < c_.warmup ? "warm-up" : "steps", i < c_.warmup ? i + 1 : i + 1 - c_.warmup,
                     i < c_.warmup ? c_.warmup : c_.iters);
            if (interrupt.load()) {
                r.interrupted = true;
                return r;
            }
        }
        r.elapsed_s = since(measured_start);
        r.data_wait_share = r.elapsed_s > 0 ? (loader.waited() - waited_before) / r.elapsed_s : 0;
    }
    sample_device();
    r.step = bench::summarize(steps);
    r.images_per_s = double(c_.iters * c_.batch) / r.elapsed_s;
    const double flops = double(train_flops_per_step()), bytes = double(train_bytes_per_step());
    r.gflops = flops * double(c_.iters) / r.elapsed_s / 1e9;
    if (c_.peak_flops > 0 && c_.bytes_per_s > 0 && bytes > 0) {
        r.roof_gflops = roofline::attainable(c_.peak_flops, c_.bytes_per_s, flops / bytes) / 1e9;
        r.roof_fraction = r.gflops / r.roof_gflops;
    }

    if (val_src_) {
        // The executor runs batchnorm on batch statistics and keeps no running statistics
        // (executor.h), so validation is the training-mode forward of each batch of N images.
        const int64_t batches = val_src_->batches(), K = classes_;
        data::Loader loader(*val_src_, 0, batches, c_.workers, loader_depth(), c_.worker_nice);
        int64_t correct = 0;
        for (int64_t b = 0; b < batches; ++b) {
            const data::Batch& batch = loader.next();
            ex_->set_input(batch.x, batch.labels);
            ex_->forward();
            HostTensor out = ex_->output();
            for (int i = 0; i < batch.valid; ++i)
                correct += argmax_row(out.data() + int64_t(i) * K, K) == batch.labels[size_t(i)];
            r.val_images += batch.valid;
            progress("validation", b + 1, batches);
            if (interrupt.load()) {
                r.interrupted = true;
                return r;
            }
        }
        r.val_top1 = double(correct) / double(r.val_images);
    }

    const Usage u1 = usage();
    r.wall_s = since(run_start);
    r.user_s = u1.user - u0.user;
    r.sys_s = u1.sys - u0.sys;
    r.peak_rss_bytes = u1.max_rss;
    if (gpu && device_min_free >= 0) r.peak_device_bytes = device_total - device_min_free;
    if (auto* t = dynamic_cast<const data::TrainFolderSource*>(train_src_.get())) {
        r.undecodable = t->undecodable().count();
        r.undecodable_first = t->undecodable().first();
    }
    if (val_src_) {
        r.undecodable += val_src_->undecodable().count();
        if (r.undecodable_first.empty()) r.undecodable_first = val_src_->undecodable().first();
    }
    return r;
}

}  // namespace ridge::train
