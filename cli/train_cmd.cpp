#include "cli/train_cmd.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <cmath>
#include <ctime>
#include <fstream>
#include <iterator>
#include <iostream>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "bench/format.h"
#include "bench/ledger.h"
#include "cli/net_arg.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "train/ledger.h"
#include "train/run.h"

namespace ridge::cli {

using bench::append_csv_row, bench::available_memory_bytes, bench::capture_env, bench::command_line, bench::fits_in,
    bench::fixed, bench::hardware_threads, bench::host_name, bench::Json, bench::shell_quoted, bench::UsageError,
    bench::write_output;

const Command train_cmd{
    "train",
    "NET (--data DIR | --synthetic) [options]",
    "Trains NET for a fixed number of iterations and logs the run. --data DIR reads the ImageFolder\n"
    "layout DIR/train/<class>/*.jpg|*.jpeg|*.png (and DIR/val/<class>/... with --val); classes are the\n"
    "sorted folder names and the classifier gets that many outputs. Training images get\n"
    "RandomResizedCrop and a random horizontal flip, validation images a resize and center crop,\n"
    "both ImageNet's normalization; --workers threads decode and transform batches ahead of the\n"
    "compute. --synthetic draws random images and labels in memory (1000 classes). Each step is\n"
    "forward, softmax cross-entropy, backward and SGD with momentum and weight decay.\n"
    "Per run it prints a summary and appends a row to LOG_DIR/metrics.csv (the configuration, elapsed\n"
    "time, images/s, step median and IQR, the share of time spent waiting for data, first and last\n"
    "loss, CPU time and peak RSS, GFLOP/s and its fraction of this machine's measured roofline, and the\n"
    "environment), and rewrites LOG_DIR/env_info.md. Ctrl-C stops after the current step and appends\n"
    "nothing for the unfinished run. --device cuda without a CUDA device exits with status 3.",
    1,
    {{"--data", "DIR", "image folder with train/ (and val/) class folders"},
     {"--synthetic", "", "random images and labels instead of --data"},
     {"--batch", "N", "batch size (default 32)"},
     {"--res", "H|HxW", "input resolution (default: the net's own, e.g. 224)"},
     {"--iters", "N", "measured iterations per run (default 100)"},
     {"--warmup-iters", "N", "iterations before the measured ones (default 10)"},
     {"--workers", "N", "data loader threads (default 2; 0 loads in the training thread)"},
     {"--worker-nice", "N", "the loader threads' niceness above the compute's, 0 to 19 (default 0)"},
     {"--device", "D", "cpu (default) or cuda"},
     {"--backend", "B", "cpu: onednn (default when built) or reference; cuda: cudnn"},
     {"--precision", "P", "fp32 (default), or on cuda tf32, fp16 or bf16"},
     {"--lr", "X", "learning rate (default 0.1)"},
     {"--momentum", "X", "SGD momentum (default 0.9)"},
     {"--weight-decay", "X", "SGD weight decay (default 1e-4)"},
     {"--val", "", "after each run, top-1 accuracy on DIR/val"},
     {"--runs", "R", "repeat the whole run R times (default 3), then mean and spread"},
     {"--label", "NAME", "rows are labelled NAME_run1..R (default: the net's name)"},
     {"--log-dir", "DIR", "where metrics.csv and env_info.md go (default logs)"},
     {"--seed", "S", "seed of weights, shuffling, crops and synthetic data (default 1)"},
     {"--threads", "T", "compute threads (default: every core this process may use)"},
     {"--format", "F", "table (default) or json"},
     {"--quiet", "", "no progress line"}}};

namespace {

constexpr int64_t max_iters = 100000000, max_workers = 256, max_runs = 1000, max_threads = 4096;

std::atomic<bool> interrupted{false};

void on_sigint(int) {
    interrupted.store(true);
    // A second Ctrl-C ends the process at once.
    signal(SIGINT, SIG_DFL);
}

double number(const Args& a, std::string_view name, double fallback, double lo, double hi, bool lo_open) {
    if (!a.has(name)) return fallback;
    std::string s = a.get(name, "");
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    bool ok =
        ec == std::errc() && end == s.data() + s.size() && std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
    if (!ok)
        throw UsageError(cat("ridge train: ", name, " must be a number ", lo_open ? "above " : "from ", lo, " to ", hi,
                             ", got '", s, "'"));
    return v;
}

std::string utc_now() {
    std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return buf;
}

void check_label(const std::string& label) {
    if (label.empty()) throw UsageError("ridge train: --label must not be empty");
    for (char c : label)
        if (c == ',' || c == '"' || c == '\n' || c == '\r' || (unsigned char)c < 0x20)
            throw UsageError(
                cat("ridge train: --label may not contain a comma, a quote or a line break (it is a CSV "
                    "key), got '",
                    std::string_view(label).substr(0, label.find_first_of("\r\n")), "...'"));
}

std::string gb(double bytes) { return fixed(bytes / 1e9, 1) + " GB"; }
std::string pct(double f) { return fixed(100 * f, 1) + "%"; }

struct ProgressLine {
    bool on;
    std::string prefix;
    void operator()(const std::string& stage, int64_t done, int64_t total) const {
        if (!on) return;
        std::cerr << "\r\033[K" << prefix << stage << " " << done << "/" << total << std::flush;
    }
    void clear() const {
        if (on) std::cerr << "\r\033[K" << std::flush;
    }
};

std::string summary_line(const train::RunRecord& r) {
    const train::Result& x = r.result;
    const train::Config& c = r.config;
    std::string s = cat(r.label, ": ", c.iters, " iterations of ", c.batch, " in ", fixed(x.elapsed_s, 2), " s, ",
                        fixed(x.images_per_s, 1), " images/s, step ", fixed(x.step.median * 1e3, 1), " ms (IQR ",
                        fixed(x.step.iqr() * 1e3, 1), "), data wait ", pct(x.data_wait_share), ", loss ",
                        fixed(x.first_loss, 3), " -> ", fixed(x.last_loss, 3), " (last ", train::Result::tail_steps,
                        " steps' mean ", fixed(x.tail_loss, 3), "), ", fixed(x.gflops, 1), " GFLOP/s");
    if (x.roof_gflops > 0) s += cat(" (", pct(x.roof_fraction), " of the ", fixed(x.roof_gflops, 0), " GFLOP/s roof)");
    if (x.val_top1 >= 0) s += cat(", val top-1 ", pct(x.val_top1), " of ", x.val_images);
    s += cat(", CPU ", fixed(x.user_s, 1), " s user ", fixed(x.sys_s, 1), " s sys, peak RSS ",
             gb(double(x.peak_rss_bytes)));
    if (x.peak_device_bytes >= 0) s += cat(", device peak ", gb(double(x.peak_device_bytes)));
    return s;
}

void record_json(Json& j, const train::RunRecord& r) {
    const train::Result& x = r.result;
    j.begin_object()
        .field("label", r.label)
        .field("run", r.run)
        .field("elapsed_s", x.elapsed_s)
        .field("images_per_s", x.images_per_s)
        .field("step_median_ms", x.step.median * 1e3)
        .field("step_iqr_ms", x.step.iqr() * 1e3)
        .field("data_wait_share", x.data_wait_share)
        .field("first_loss", x.first_loss)
        .field("last_loss", x.last_loss)
        .field("tail_loss", x.tail_loss)
        .field("gflops", x.gflops)
        .field("roof_gflops", x.roof_gflops)
        .field("roof_fraction", x.roof_fraction)
        .field("wall_s", x.wall_s)
        .field("user_s", x.user_s)
        .field("sys_s", x.sys_s)
        .field("peak_rss_bytes", x.peak_rss_bytes)
        .field("undecodable", x.undecodable);
    if (x.peak_device_bytes >= 0) j.field("peak_device_bytes", x.peak_device_bytes);
    if (x.val_top1 >= 0) j.field("val_top1", x.val_top1).field("val_images", x.val_images);
    j.end_object();
}

}  // namespace

int run_train(const Args& a, const std::vector<std::string>& argv) {
    const std::string started = utc_now();
    // From here on Ctrl-C is noted, not fatal: checked before each run and after every step.
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);

    const ZooEntry& e = net_arg(a);
    train::Config c;
    c.net = std::string(e.name);
    c.device = a.choice("--device", "cpu", {"cpu", "cuda"});
    const bool gpu = c.device == "cuda";
    std::string precision = a.choice("--precision", "fp32", {"fp32", "tf32", "fp16", "bf16"});
    c.precision = *parse_precision(precision);
    if (!gpu && c.precision != Precision::fp32)
        throw UsageError(
            cat("ridge train: --precision ", precision, " needs --device cuda; the CPU backends compute in fp32"));
    const bool synthetic = a.has("--synthetic");
    if (synthetic == a.has("--data")) throw UsageError("ridge train: give either --data DIR or --synthetic");
    const bool val = a.has("--val");
    if (val && synthetic) throw UsageError("ridge train: --val needs --data DIR (a val/ folder of class folders)");
    c.batch = a.positive("--batch", 32, max_batch);
    c.iters = a.positive("--iters", 100, max_iters);
    c.warmup = a.non_negative("--warmup-iters", 10, max_iters);
    c.workers = int(a.non_negative("--workers", 2, max_workers));
    c.worker_nice = int(a.non_negative("--worker-nice", 0, 19));
    c.lr = float(number(a, "--lr", 0.1, 0, 1e6, true));
    c.momentum = float(number(a, "--momentum", 0.9, 0, 1, false));
    if (c.momentum >= 1) throw UsageError("ridge train: --momentum must be below 1");
    c.weight_decay = float(number(a, "--weight-decay", 1e-4, 0, 1e6, false));
    const int runs = int(a.positive("--runs", 3, max_runs));
    c.seed = uint64_t(a.positive("--seed", 1, int64_t(1) << 62));
    c.threads = int(a.positive("--threads", hardware_threads(), max_threads));
    const std::string fmt = a.choice("--format", "table", {"table", "json"});
    const std::string label = a.get("--label", c.net);
    check_label(label);
    const std::string log_dir = a.get("--log-dir", "logs");
    if (log_dir.empty()) throw UsageError("ridge train: --log-dir must not be empty");
    const std::string ledger = log_dir + "/metrics.csv";
    const std::string data_dir = a.get("--data", "");
    if (a.has("--data") && data_dir.empty()) throw UsageError("ridge train: --data must name a folder");

    if (gpu) {
        // Exit 3, as bench and roofline measure: scripts can tell a missing device from a typing mistake.
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge train: " << why << "\n";
            return 3;
        }
        if (gpu_backends().empty()) {
            std::cerr
                << "ridge train: this build has no GPU executor (cmake found no cuDNN; configure with CUDNN_ROOT)\n";
            return 3;
        }
    }
    std::vector<std::string> backends = gpu ? gpu_backends() : cpu_backends();
    std::vector<std::string_view> names(backends.begin(), backends.end());
    c.backend = a.choice("--backend", backends.front(), names);
    if (!gpu && c.threads > hardware_threads())
        std::cerr << "ridge train: warning: " << c.threads << " threads on " << hardware_threads()
                  << " cores; threads will share cores\n";
    {
        Graph probe_shape = build_for(a, e, 1);  // --res refused here with the net's minimum
        c.height = probe_shape.input_shape()[2];
        c.width = probe_shape.input_shape()[3];
    }

    try {
        train::check_ledger(ledger, train::ledger_header());
    } catch (const std::runtime_error& err) {
        throw UsageError(cat("ridge train: ", err.what()));
    }
    data::Dataset dataset;
    if (!synthetic) {
        try {
            dataset = data::scan_dataset(data_dir, val);
        } catch (const data::DataError& err) {
            throw UsageError(cat("ridge train: ", err.what()));
        }
    }

    // Planned before anything is loaded: the executor's arena, the loader's batches, the host copies.
    train::Session session(c, synthetic ? nullptr : &dataset);
    const int64_t host_need = session.host_bytes();
    const int64_t avail = available_memory_bytes();
    const int64_t need = gpu ? host_need : session.planned_bytes() + host_need;
    if (gpu) {
        int64_t device_free = probe::gpu::free_memory_bytes();
        if (session.planned_bytes() > device_free)
            throw UsageError(cat("ridge train: ", c.net, " at batch ", c.batch, " in ", precision, " needs ",
                                 gb(double(session.planned_bytes())), " on the device (planned by the ",
                                 session.backend(), " executor); the GPU has ", gb(double(device_free)), " free"));
    }
    if (!fits_in(need, avail))
        throw UsageError(cat("ridge train: ", c.net, " at batch ", c.batch, " needs ", gb(double(need)), " (",
                             gb(double(gpu ? 0 : session.planned_bytes())), " planned by the ", session.backend(),
                             " executor, ", gb(double(host_need)),
                             " for the loader's batches and host copies); this machine has ", gb(double(avail)),
                             " available and ridge keeps a tenth of it free"));

    // This machine's roofline, measured once per command, before any run loads the cores.
    if (gpu) {
        probe::gpu::GpuCeilings m = probe::gpu::measure(true);
        c.peak_flops = m.peak_gflops(precision_name(c.precision)) * 1e9;
        c.bytes_per_s = m.dram_read_gbs * 1e9;
    } else {
        probe::CpuInfo cpu = probe::cpu_info();
        int cores = std::max<int>(1, int(cpu.core_cpus.size()));
        c.peak_flops = probe::measure_fma(cpu, cores, 0.01, 15).gflops * 1e9;
        c.bytes_per_s = probe::measure_stream(cpu, cores, 0, 4).triad * 1e9;
    }
    session.set_roofline(c.peak_flops, c.bytes_per_s);

    train::RunRecord rec;
    rec.runs = runs;
    rec.started = started;
    rec.host = host_name();
    rec.data = synthetic ? "synthetic" : data_dir;
    rec.train_images = synthetic ? 0 : int64_t(dataset.train.samples.size());
    std::string typed = "ridge train";
    for (const std::string& arg : argv) typed += " " + shell_quoted(arg);
    rec.command = command_line(typed);
    rec.config = c;
    rec.backend = session.backend();
    rec.classes = session.classes();
    rec.planned_bytes = session.planned_bytes();
    rec.predicted_train_bytes = session.analysis().totals.train_memory_bytes;
    rec.flops_per_step = session.train_flops_per_step();
    rec.bytes_per_step = session.train_bytes_per_step();
    rec.env = capture_env(c.threads, gpu);

    if (fmt == "table")
        std::cout << cat(c.net, " train on ", c.device, " (", rec.backend, ", ",
                         gpu ? precision : cat(c.threads, " threads"), "), batch ", c.batch, ", ", c.height, "x",
                         c.width, ", ", rec.classes, " classes, ",
                         synthetic ? "synthetic data" : cat(rec.train_images, " images in ", data_dir, "/train"), ", ",
                         c.workers, " workers; SGD lr ", c.lr, " momentum ", c.momentum, " weight decay ",
                         c.weight_decay, "; ", c.warmup, " warm-up + ", c.iters, " iterations x ", runs, " runs\n")
                  << cat(rec.env.cpu, ", ", rec.env.cores, " cores, oneDNN ", rec.env.onednn, " (", rec.env.onednn_isa,
                         "), git ", rec.env.git, "; roofline ", fixed(c.peak_flops / 1e9, 0), " GFLOP/s, ",
                         fixed(c.bytes_per_s / 1e9, 1), " GB/s\n")
                  << std::flush;

    ProgressLine line{!a.has("--quiet") && ::isatty(2) != 0, ""};
    std::vector<train::RunRecord> done;
    for (int k = 1; k <= runs; ++k) {
        rec.run = k;
        rec.label = cat(label, "_run", k);
        if (interrupted.load()) {
            std::cerr << "ridge train: interrupted before " << rec.label << "; nothing appended for it"
                      << (done.empty() ? "" : cat(" (", done.size(), " finished runs are in ", ledger, ")")) << "\n";
            return 130;
        }
        line.prefix = cat("ridge train ", rec.label, ": ");
        try {
            rec.result = session.run(interrupted, line);
        } catch (const data::DataError& err) {
            line.clear();
            throw UsageError(cat("ridge train: ", err.what()));
        }
        line.clear();
        if (rec.result.interrupted) {
            std::cerr << "ridge train: interrupted in " << rec.label << " after step " << rec.result.steps_done
                      << " of " << c.warmup + c.iters << "; nothing appended for it"
                      << (done.empty() ? "" : cat(" (", done.size(), " finished runs are in ", ledger, ")")) << "\n";
            return 130;
        }
        rec.date = utc_now();
        try {
            append_csv_row(ledger, train::ledger_header(), train::ledger_row(rec), [&](const std::string& text) {
                write_output(log_dir + "/env_info.md", train::env_info_page(rec, text));
            });
        } catch (const UsageError&) {
            throw;  // the ledger's and the page's own messages, each naming its file
        } catch (const std::runtime_error& err) {
            throw UsageError(cat("ridge train: ", err.what()));
        }
        done.push_back(rec);
        if (fmt == "table") {
            std::cout << summary_line(rec) << "\n" << std::flush;
            if (!std::isfinite(rec.result.last_loss))
                std::cerr << "ridge train: warning: the loss is not finite; lower --lr\n";
        }
    }

    double mean = 0, sd = 0, lo = 1e300, hi = 0;
    for (const auto& r : done) mean += r.result.images_per_s / double(done.size());
    for (const auto& r : done) {
        sd += (r.result.images_per_s - mean) * (r.result.images_per_s - mean);
        lo = std::min(lo, r.result.images_per_s);
        hi = std::max(hi, r.result.images_per_s);
    }
    sd = done.size() > 1 ? std::sqrt(sd / double(done.size() - 1)) : 0;
    const int64_t skipped = done.back().result.undecodable;
    if (fmt == "table") {
        std::cout << cat("images/s over ", done.size(), " runs: mean ", fixed(mean, 2), ", standard deviation ",
                         fixed(sd, 2), " (", fixed(mean > 0 ? 100 * sd / mean : 0, 1), "%), min ", fixed(lo, 2),
                         ", max ", fixed(hi, 2), "\n");
        if (skipped > 0)
            std::cout << cat(skipped, " files could not be decoded and were skipped (first: ",
                             done.back().result.undecodable_first, ")\n");
        std::cout << cat("appended ", done.size(), " rows to ", ledger, "; environment in ", log_dir, "/env_info.md\n");
    } else {
        Json j;
        j.begin_object()
            .field("net", c.net)
            .field("device", c.device)
            .field("backend", rec.backend)
            .field("batch", c.batch)
            .array("resolution", {c.height, c.width})
            .field("classes", rec.classes)
            .field("data", rec.data)
            .field("workers", c.workers)
            .field("iters", c.iters)
            .field("warmup_iters", c.warmup)
            .field("roof_peak_gflops", c.peak_flops / 1e9)
            .field("roof_bandwidth_gbs", c.bytes_per_s / 1e9)
            .field("undecodable", skipped)
            .field("mean_images_per_s", mean)
            .field("sd_images_per_s", sd)
            .field("ledger", ledger);
        j.begin_array("runs");
        for (const auto& r : done) record_json(j, r);
        j.end_array().end_object();
        std::cout << j.str();
    }
    return 0;
}

}  // namespace ridge::cli
