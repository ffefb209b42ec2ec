#include "cli/report_cmd.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "bench/format.h"
#include "bench/spawn.h"
#include "cli/net_arg.h"
#include "report/collect.h"
#include "report/csv.h"
#include "report/figures.h"
#include "report/folder.h"
#include "report/markdown.h"
#include "roofline/probes/cuda/probes.h"

namespace fs = std::filesystem;

namespace ridge::cli {

using bench::command_line, bench::fixed, bench::hardware_threads, bench::host_name, bench::run_program,
    bench::RunOptions, bench::UsageError, bench::write_output;

namespace {

// --quick: enough nets for a rank correlation and both ends of the intensity range (VGG's
// convolutions, MobileNet's depthwise layers), at two batches, in a few minutes on 2 cores.
const std::vector<std::string> quick_nets = {"alexnet",       "vgg11",           "resnet18", "resnet50",
                                             "mobilenet_v2",  "squeezenet1_1",   "shufflenet_v2_x1_0"};
const std::vector<std::string> full_nets = {
    "alexnet",  "vgg11",        "vgg16",           "resnet18",      "resnet50",        "resnet101",
    "densenet121", "mobilenet_v2", "mobilenet_v3_large", "squeezenet1_1", "shufflenet_v2_x1_0",
    "efficientnet_b0", "regnet_y_400mf", "vit_b_16"};

struct Scope {
    std::string name;
    std::vector<std::string> nets;
    std::vector<int64_t> batches;
    int64_t train_batch;
    int warmup, repeat;
};
const Scope quick_scope{"quick", quick_nets, {1, 8}, 8, 2, 5};
const Scope full_scope{"full", full_nets, {1, 64, 256}, 64, 3, 10};

// On a terminal one line, rewritten as repeats complete; in a log one line per step.
struct ProgressLine {
    bool on, tty;
    void show(const std::string& step, const std::string& detail) const {
        if (!on) return;
        if (tty)
            std::cerr << "\r\033[K" << "ridge report " << step << (detail.empty() ? "" : ": " + detail) << std::flush;
        else if (detail.empty())
            std::cerr << "ridge report " << step << "\n";
    }
    void clear() const {
        if (on && tty) std::cerr << "\r\033[K" << std::flush;
    }
};

}  // namespace

const Command report_cmd{
    "report", "[options]",
    "The whole study, from one command: the analytic counts of several nets, this machine's measured\n"
    "ceilings, their benchmarks (inference at each batch, a training step, one net layer by layer),\n"
    "every figure (gnuplot, PNG and SVG) and report.md embedding them with the key tables, in\n"
    "results/<host>/ (written beside it and renamed into place when complete). A folder already\n"
    "there is replaced only if ridge report wrote it (it holds .ridge-report) or it is empty. The\n"
    "training runs of `ridge train`'s ledger (--train-log) join the report as a table and, for this\n"
    "host, as points on the measured-runs roofline.\n"
    "--quick (the default): 7 nets, batch 1 and 8, training at 8; a few minutes on 2 cores.\n"
    "--full: 14 nets, batch 1, 64 and 256, training at 64, the GPU too when there is one; about two\n"
    "hours on a 2-core CPU.\n"
    "Needs gnuplot (make deps installs gnuplot-nox).",
    0,
    {{"--device", "D", "cpu, cuda or all (cpu, and cuda when there is a GPU); default: quick cpu, full all"},
     {"--nets", "A,B,..", "nets to study (default: the scope's)"},
     {"--batches", "N,..", "inference batches (default: quick 1,8; full 1,64,256)"},
     {"--train-batch", "N", "the training step's batch, 0 for none (default: quick 8; full 64)"},
     {"--layer-net", "NET", "the net timed layer by layer (default: resnet18, else the first net)"},
     {"--quick", "", "a short study (the default)"},
     {"--full", "", "the whole study"},
     {"--warmup", "N", "warm-up steps per configuration (default: quick 2; full 3)"},
     {"--repeat", "N", "timed steps per configuration (default: quick 5; full 10)"},
     {"--threads", "N", "CPU threads (default: every core)"},
     {"--precision", "P", "the chips figures' peaks: fp32 (default), fp64, tf32, fp16, bf16, fp8, int8"},
     {"--out", "DIR", "where to write (default: results/<host>)"},
     {"--train-log", "FILE", "`ridge train`'s ledger whose runs join the report (default logs/metrics.csv)"},
     {"--quiet", "", "no progress line"}}};

int run_report(const Args& a) {
    if (a.has("--quick") && a.has("--full")) throw UsageError("ridge report: --quick and --full exclude each other");
    const Scope& scope = a.has("--full") ? full_scope : quick_scope;
    // The quick study is the CPU job `make` runs; the full one takes the GPU too when there is one.
    std::string device = a.choice("--device", scope.name == "full" ? "all" : "cpu", {"cpu", "cuda", "all"});

    report::StudyPlan plan;
    plan.cpu = device != "cuda";
    plan.cuda = device != "cpu";
    plan.nets = a.has("--nets") ? a.list("--nets") : scope.nets;
    for (const std::string& n : plan.nets) net_named("report", n);
    for (size_t i = 0; i < plan.nets.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (plan.nets[i] == plan.nets[j]) throw UsageError(cat("ridge report: --nets names ", plan.nets[i], " twice"));
    plan.batches = a.positive_list("--batches", scope.batches, max_batch);
    plan.train_batch = a.non_negative("--train-batch", scope.train_batch, max_batch);
    plan.layer_net = a.get("--layer-net", "");
    if (plan.layer_net.empty()) {
        bool has_resnet18 = std::find(plan.nets.begin(), plan.nets.end(), "resnet18") != plan.nets.end();
        plan.layer_net = has_resnet18 ? "resnet18" : plan.nets.front();
    } else if (std::find(plan.nets.begin(), plan.nets.end(), plan.layer_net) == plan.nets.end()) {
        net_named("report", plan.layer_net);
        throw UsageError(cat("ridge report: --layer-net ", plan.layer_net, " is not one of the studied nets (--nets)"));
    }
    plan.warmup = int(a.non_negative("--warmup", scope.warmup, 1000));
    plan.repeat = int(a.positive("--repeat", scope.repeat, 1000));
    plan.threads = int(a.positive("--threads", hardware_threads(), 4096));
    plan.quick_ceilings = scope.name == "quick";
    plan.chips_precision =
        *roofline::parse_precision(a.choice("--precision", "fp32", {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"}));
    fs::path out = report::check_destination(a.get("--out", "results/" + host_name()));
    plan.train_log = a.get("--train-log", "logs/metrics.csv");
    if (plan.train_log.empty()) throw UsageError("ridge report: --train-log must name a file");

    // Refused before anything is measured: a study that cannot draw its figures is not one.
    RunOptions silent;
    silent.shown = RunOptions::Shown::nothing;
    if (run_program({"gnuplot", "--version"}, silent) != 0) {
        std::cerr << "ridge report: gnuplot is not installed (Debian: apt install gnuplot-nox; `make deps` does it)\n";
        return 1;
    }
    if (device == "cuda") {
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge report: " << why << "\n";
            return 3;
        }
    }
    // Made now, so that a place ridge cannot write is refused before the study rather than after.
    report::ReportFolder folder(out);

    auto start = std::chrono::steady_clock::now();
    ProgressLine line{!a.has("--quiet"), ::isatty(2) != 0};
    auto progress = [&](const std::string& step, const std::string& detail) { line.show(step, detail); };
    report::Study study = report::collect(plan, progress);
    line.clear();

    std::vector<report::Figure> figures = report::write_figure_data(study, (folder.dir() / "data").string());
    progress("drawing the figures", "");
    int not_drawn = report::draw_figures(folder.dir().string(), figures, plan.threads);

    std::string command = "ridge report";
    for (const auto& [k, v] : a.opt) command += " " + k + (v.empty() ? "" : " " + v);
    report::ReportInfo info{command, scope.name,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
    line.clear();
    write_output((folder.dir() / "report.md").string(), report::report_markdown(study, figures, info));
    write_output((folder.dir() / "runs.csv").string(), report::runs_csv(study));
    write_output((folder.dir() / "layers.csv").string(), report::layers_csv(study));
    write_output((folder.dir() / "ledger.csv").string(), report::ledger_csv(study, command_line(command)));
    for (const auto& [name, text] : report::counts_csvs(study)) write_output((folder.dir() / name).string(), text);
    try {
        folder.commit();
    } catch (const report::NotPlaced& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }

    int drawn = 0;
    for (const report::Figure& f : figures) drawn += f.missing.empty();
    std::cout << "ridge report: " << (out / "report.md").string() << ": " << study.runs.size() << " runs, " << drawn
              << " figures";
    if (drawn < int(figures.size())) std::cout << " (" << figures.size() - drawn << " left out, see the report)";
    std::cout << ", " << fixed(info.seconds / 60, 1) << " min\n";
    for (const std::string& n : study.notes) std::cout << "  left out: " << n << "\n";
    if (not_drawn > 0) {
        std::cerr << "ridge report: gnuplot did not draw " << not_drawn << " of the figures (its messages are above); report.md lists them as left out\n";
        return 1;
    }
    return 0;
}

}  // namespace ridge::cli
