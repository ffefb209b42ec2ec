#pragma once
// A training run: a zoo net trained for a fixed number of iterations on batches from the loader
// (an image folder or synthetic data), through an executor with SGD (momentum, weight decay),
// timed the way a performance study needs: the measured iterations' elapsed time and step
// times, the share of it the compute waited for data, the process's CPU time and peak memory,
// achieved FLOP/s against the machine's measured roofline, and (with a validation folder) top-1.
#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "bench/stats.h"
#include "engine/analysis.h"
#include "engine/backend/executor.h"
#include "train/data/folder.h"
#include "train/data/sources.h"

namespace ridge::train {

struct Config {
    std::string net;
    int64_t batch = 32, height = 224, width = 224;
    int64_t iters = 100, warmup = 10;
    int workers = 2;
    int worker_nice = 0;  // the loader threads' niceness relative to compute
    std::string device = "cpu", backend;
    Precision precision = Precision::fp32;
    float lr = 0.1f, momentum = 0.9f, weight_decay = 1e-4f;
    int threads = 0;         // compute threads; 0: every core
    uint64_t seed = 1;       // weights, shuffling, crops, synthetic images
    int64_t classes = 1000;  // synthetic data's; a folder's come from its class folders
    // The machine's measured roofline (fp32 FMA peak, STREAM triad), for the fraction reached.
    double peak_flops = 0, bytes_per_s = 0;
};

// Figures of one run.
struct Result {
    bool interrupted = false;
    int64_t steps_done = 0;  // warm-up included
    double elapsed_s = 0;    // the measured iterations, monotonic clock
    double images_per_s = 0;
    bench::Stats step;                           // seconds per measured iteration: batch, forward, backward, update
    double data_wait_share = 0;                // of elapsed_s, spent waiting for the loader
    double first_loss = 0, last_loss = 0;      // the run's first step (untrained) and last step
    // The mean loss of the last tail_steps steps (fewer if the run had fewer): one batch's loss
    // swings with the batch (resnet18 on test_train's patterns: 0.02 to 1.9 at the 40th step,
    // seed to seed), the mean over ten much less.
    static constexpr int tail_steps = 10;
    double tail_loss = 0;
    double wall_s = 0, user_s = 0, sys_s = 0;  // the whole run: warm-up, measured, validation
    int64_t peak_rss_bytes = 0;                // the process's high-water mark so far (getrusage)
    int64_t peak_device_bytes = -1;            // GPU: device memory in use at its highest (-1 on the CPU)
    double gflops = 0;                         // analytic training FLOPs of the measured steps / elapsed
    double roof_gflops = 0;                    // attainable at the step's intensity on the measured roofline
    double roof_fraction = 0;
    int64_t undecodable = 0;        // distinct files skipped so far (training and validation)
    std::string undecodable_first;  // "path: reason" of the first
    int64_t val_images = 0;
    double val_top1 = -1;  // fraction; -1 without validation
};

using Progress = std::function<void(const std::string& stage, int64_t done, int64_t total)>;

// A planned session: the net built for the data's classes, its analysis, the executor planned
// (nothing allocated), so the caller can check memory before anything is loaded. run() then
// allocates on first use and trains from fresh seeded weights each time.
class Session {
public:
    // data: null for synthetic data.
    Session(const Config& c, const data::Dataset* data);
    ~Session();

    const Graph& graph() const { return *g_; }
    const Analysis& analysis() const { return an_; }
    int64_t classes() const { return classes_; }
    int64_t planned_bytes() const { return ex_->planned_bytes(); }
    std::string backend() const { return ex_->name(); }
    // Host memory beside the executor's plan: the loader's batch slots, the weights built on
    // the host and the copy the executor keeps, a validation batch's output.
    int64_t host_bytes() const;
    int loader_depth() const;
    int64_t train_flops_per_step() const;  // forward + backward, analytic
    int64_t train_bytes_per_step() const;  // minimum traffic of both
    // The machine's measured roofline, once measured (after the memory check, before the runs).
    void set_roofline(double peak_flops, double bytes_per_s) {
        c_.peak_flops = peak_flops, c_.bytes_per_s = bytes_per_s;
    }

    // interrupt: checked after every step; when set, the run stops there and reports
    // interrupted. Throws data::DataError when no training image decodes.
    Result run(const std::atomic<bool>& interrupt, const Progress& progress);

private:
    Config c_;
    const data::Dataset* data_;
    int64_t classes_;
    std::unique_ptr<Graph> g_;
    Analysis an_;
    std::unique_ptr<Executor> ex_;
    std::unique_ptr<data::Source> train_src_;
    std::unique_ptr<data::ValFolderSource> val_src_;
};

}  // namespace ridge::train
