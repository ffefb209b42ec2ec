#pragma once
// Gathers a Study: the analyses (milliseconds), this machine's ceilings (the probes), then every
// benchmark of the plan, one configuration after another.
#include <functional>

#include "report/study.h"

namespace ridge::report {

struct StudyPlan {
    bool cpu = true, cuda = false;
    std::vector<std::string> nets;
    std::vector<int64_t> batches;  // inference
    int64_t train_batch = 8;       // 0: no training step
    std::string layer_net;         // timed layer by layer in training (or inference without it)
    int warmup = 2, repeat = 5;
    bool quick_ceilings = true;
    int threads = 0;               // 0: every core
    std::string chips_path;        // empty: the database of this source tree
    roofline::Precision chips_precision = roofline::Precision::fp32;  // of the chips figures
    std::string train_log = "logs/metrics.csv";  // `ridge train`'s ledger; empty: not read
};

// The runs of a `ridge train` ledger; a note in `notes` when there is none or it cannot be read.
std::vector<TrainRun> read_train_runs(const std::string& path, std::vector<std::string>& notes);

// Progress: `step` names what runs now ("[3/21] cpu resnet18 infer batch 8"), first with an empty
// `detail`, then with how far its repeats are ("steps 2/5").
using StudyProgress = std::function<void(const std::string& step, const std::string& detail)>;

// Configurations that would not fit in memory are left out with a note, not run; a missing
// device leaves a note too. Throws what the probes and executors throw on a real failure.
Study collect(const StudyPlan& plan, const StudyProgress& progress);

}  // namespace ridge::report
