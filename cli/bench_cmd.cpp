#include "cli/bench_cmd.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <iostream>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "bench/format.h"
#include "bench/ledger.h"
#include "bench/ledger_schema.h"
#include "cli/net_arg.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "roofline/roofline.h"

namespace ridge::cli {

using bench::append_csv_rows, bench::BenchJob, bench::BenchPlan, bench::BenchResult, bench::capture_env,
    bench::check_csv_ledger, bench::check_output, bench::Column, bench::command_line, bench::csv_cell, bench::Env,
    bench::fits_in, bench::fixed, bench::hardware_threads, bench::host_copy_bytes, bench::host_name, bench::Json,
    bench::LayerResult, bench::ledger_header, bench::ledger_num, bench::LedgerRow, bench::memory_budget,
    bench::MemoryBudget, bench::plan_job, bench::run_job, bench::same_file, bench::set_environment, bench::si,
    bench::table_header, bench::table_row, bench::UsageError, bench::write_output;

const Command bench_cmd{
    "bench", "NET [options]",
    "Runs NET and times it: for each batch the median, min and interquartile range of whole steps\n"
    "(after warm-up), images/s and GFLOP/s from the analytic FLOPs; then every layer's forward,\n"
    "dgrad and wgrad on the unfused executor (one primitive per layer), beside its analytic FLOPs\n"
    "and bytes. train: a step is forward, softmax cross-entropy on random labels and backward; the\n"
    "SGD update is timed apart. Weights, input and labels are seeded random numbers.\n"
    "Each layer's forward, dgrad and wgrad is set against its roofline bound, max(FLOPs / peak,\n"
    "bytes / bandwidth) of its analytic counts (a backward phase: its own FLOPs, the whole backward's\n"
    "bytes) at this machine's ceilings (measured by the quick probes before the run, 2 to 10 s, or\n"
    "given with --roof), and flagged slow when it takes over 4x the bound and over 20 us. The peak\n"
    "is the CPU's fp32 FMA peak; on cuda that of --precision (tf32, fp16, bf16: the tensor cores).\n"
    "The oneDNN executor runs 3x3 stride-1 convs as Winograd (oneDNN's kernels on AVX-512, forward\n"
    "and backward; below it ridge's, in inference and for training's gradients), which multiplies 2\n"
    "to 4 times less than the FLOPs counted: such layers, and whole steps, can run faster than the\n"
    "FMA peak allows a direct conv; --no-winograd times every conv direct.\n"
    "Before allocating, the memory the executors plan is compared with what this process may\n"
    "allocate (the least of MemAvailable, its cgroup's memory limit and ulimit -v, less a tenth kept\n"
    "free); a batch that will not fit is refused up front, as is an output that cannot be written.\n"
    "Every run appends one row per batch to the ledger (CSV) with the environment, under a lock, so\n"
    "concurrent runs keep every row.\n"
    "--device cuda runs the cudnn executor (cuDNN, cuBLAS and ridge's CUDA kernels), times with CUDA\n"
    "events, checks the planned device memory against what the GPU has free, and reports each\n"
    "convolution's algorithm; without a CUDA device it exits with status 3.",
    1,
    {{"--device", "D", "cpu (default) or cuda"},
     {"--backend", "B", "cpu: onednn (default when built) or reference (the plain kernels; slow); cuda: cudnn"},
     {"--precision", "P", "fp32 (default), or on cuda tf32, fp16 or bf16 (fp32 accumulation)"},
     {"--cuda-graph", "", "cuda: replay the timed steps as CUDA graphs (not the per-layer pass)"},
     {"--no-winograd", "", "cpu: every conv direct (by default 3x3 stride-1 convs run as Winograd, above)"},
     {"--batch", "N[,N...]", "batch sizes (default 1)"},
     {"--res", "H|HxW", "input resolution (default: the net's own, e.g. 224)"},
     {"--mode", "M", "infer (default) or train"},
     {"--threads", "T", "threads (default: every core this process may use)"},
     {"--warmup", "W", "untimed steps first (default 3)"},
     {"--repeat", "R", "timed steps (default 20), also for the per-layer pass"},
     {"--no-layers", "", "skip the per-layer pass"},
     {"--roof", "GFLOPS,GBS", "the FMA peak and the bandwidth the layers' bounds use (default: quick probes)"},
     {"--seed", "S", "seed of weights, input and labels (default 1)"},
     {"--format", "F", "table (default), csv (a row per layer and batch) or json"},
     {"--out", "FILE", "write to FILE (atomically) instead of stdout"},
     {"--json", "FILE", "also write the JSON to FILE (atomically), whatever --format says"},
     {"--ledger", "FILE", "append to FILE (default results/ledger.csv)"},
     {"--no-ledger", "", "do not append to the ledger"},
     {"--quiet", "", "no progress line"}}};

namespace {

constexpr int max_repeat = 100000, max_threads = 4096;

std::string gb(int64_t bytes) { return fixed(double(bytes) / 1e9, 1) + " GB"; }
std::string ms(double s) { return fixed(s * 1e3, s < 0.01 ? 3 : 2); }
double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// The ceilings the per-layer bounds are computed at, and where they came from.
struct Roof {
    double peak_flops = 0, bytes_per_s = 0;
    std::string source;
};

struct Run {
    std::string model, device, backend;
    Mode mode;
    Precision precision = Precision::fp32;
    int64_t H, W;
    BenchPlan plan;
    Env env;
    Roof roof;  // with the per-layer pass
};

int64_t flops_of(const BenchResult& r, Mode m) {
    const Totals& t = r.analysis.totals;
    return m == Mode::train ? t.fwd_flops + t.bwd_flops() : t.fwd_flops;
}
int64_t batch_of(const BenchResult& r) { return r.analysis.input[0]; }
double images_per_s(const BenchResult& r) { return ratio(double(batch_of(r)), r.step.median); }
double gflops(const BenchResult& r, Mode m) { return ratio(double(flops_of(r, m)), r.step.median) / 1e9; }
double bwd_fwd_time(const BenchResult& r) { return ratio(r.bwd.median, r.fwd.median); }
double bwd_fwd_flops(const BenchResult& r) {
    return ratio(double(r.analysis.totals.bwd_flops()), double(r.analysis.totals.fwd_flops));
}
double layers_sum(const BenchResult& r) {
    double s = r.loss_time.median;
    for (const auto& l : r.layers) s += l.fwd.median + l.dgrad.median + l.wgrad.median;
    return s;
}

bool on_gpu(const Run& run) { return run.device == "cuda"; }

// A layer's phases against their roofline bounds. The analysis counts the backward's traffic as
// one figure, so dgrad and wgrad are each bounded by their own FLOPs and the whole backward's
// bytes: a memory-bound phase's bound is at most that much too generous.
struct LayerVerdict {
    roofline::Verdict fwd, dgrad, wgrad;
    bool slow() const { return fwd.slow || dgrad.slow || wgrad.slow; }
};

LayerVerdict verdict(const Run& run, const LayerCost& a, const LayerResult& l) {
    const Roof& r = run.roof;
    LayerVerdict v;
    v.fwd = roofline::judge(l.fwd.median, double(a.c.fwd_flops), double(a.c.fwd_traffic_bytes), r.peak_flops,
                            r.bytes_per_s);
    if (run.mode == Mode::train) {
        double bytes = double(a.c.bwd_traffic_bytes);
        v.dgrad = roofline::judge(l.dgrad.median, double(a.c.dgrad_flops), bytes, r.peak_flops, r.bytes_per_s);
        v.wgrad = roofline::judge(l.wgrad.median, double(a.c.wgrad_flops), bytes, r.peak_flops, r.bytes_per_s);
    }
    return v;
}

// "fwd 37x", "wgrad 5.2x", several, or empty; ">20us" where the work moves nothing.
std::string slow_text(const LayerVerdict& v) {
    std::string s;
    for (auto [phase, p] : {std::pair{"fwd", v.fwd}, {"dgrad", v.dgrad}, {"wgrad", v.wgrad}}) {
        if (!p.slow) continue;
        s += cat(s.empty() ? "" : ", ", phase, " ", p.ratio > 0 ? fixed(p.ratio, p.ratio < 10 ? 1 : 0) + "x" : ">20us");
    }
    return s;
}

int slow_layers(const Run& run, const BenchResult& r) {
    int n = 0;
    for (size_t i = 0; i < r.layers.size(); ++i) n += verdict(run, r.analysis.layers[i], r.layers[i]).slow();
    return n;
}

std::string roof_line(const Run& run, const BenchResult& r) {
    return cat("slow: ", slow_layers(run, r), " of ", r.layers.size(), " layers over ", fixed(roofline::slow_factor, 0),
               "x their roofline bound and over ", fixed(roofline::slow_floor_seconds * 1e6, 0), " us; bounds at ",
               fixed(run.roof.peak_flops / 1e9, 1), " GFLOP/s and ", fixed(run.roof.bytes_per_s / 1e9, 1), " GB/s (",
               run.roof.source, ")\n");
}

std::string title(const Run& run) {
    std::string how = on_gpu(run) ? cat(precision_name(run.precision), run.plan.cuda_graph ? ", CUDA graphs" : "")
                                  : cat(run.plan.threads, run.plan.threads == 1 ? " thread" : " threads",
                                        run.backend == "onednn" && !run.plan.winograd ? ", no Winograd" : "");
    return cat(run.model, " ", run.mode == Mode::train ? "train" : "infer", " on ", run.device, " (", run.backend, ", ",
               how, "), ", run.H, "x", run.W, ", warm-up ", run.plan.warmup, ", repeat ", run.plan.repeat);
}

std::string env_line(const Env& e) {
    std::string s = cat(e.cpu, ", ", e.cores, " cores",
                        e.clock_mhz > 0 ? cat(", ", fixed(e.clock_mhz, 0), " MHz reported") : "",
                        e.load_average >= 0 ? cat(", load average ", fixed(e.load_average, 1)) : "", ", ", e.compiler,
                        ", oneDNN ", e.onednn, ", git ", e.git, ", ", e.date);
    if (e.gpu)
        s += cat("\n", e.gpu_name, ", ", e.gpu_sms, " SMs, ", fixed(e.gpu_clock_mhz, 0), " MHz, ",
                 fixed(e.gpu_mem_clock_mhz, 0), " MHz memory, ", gb(e.gpu_mem_bytes), ", driver ", e.driver, ", CUDA ",
                 e.cuda_runtime, ", cuDNN ", e.cudnn, ", cuBLAS ", e.cublas);
    return s;
}

std::string table(const Run& run, const std::vector<BenchResult>& rs) {
    bool train = run.mode == Mode::train;
    std::string s = title(run) + "\n" + env_line(run.env) + "\n\n";
    std::vector<Column> cols = {{"batch", 5}, {"median ms", 10}, {"min ms", 9}, {"IQR ms", 8}, {"images/s", 9},
                                {"GFLOP/s", 8}};
    if (train)
        cols.insert(cols.end(), {{"fwd ms", 9}, {"bwd ms", 9}, {"bwd/fwd time", 12}, {"bwd/fwd FLOPs", 13},
                                 {"update ms", 9}});
    s += table_header(cols);
    for (const auto& r : rs) {
        std::vector<std::string> c = {std::to_string(batch_of(r)), ms(r.step.median), ms(r.step.min), ms(r.step.iqr()),
                                      fixed(images_per_s(r), 1), fixed(gflops(r, run.mode), 1)};
        if (train)
            c.insert(c.end(), {ms(r.fwd.median), ms(r.bwd.median), fixed(bwd_fwd_time(r), 2),
                               fixed(bwd_fwd_flops(r), 2), ms(r.update.median)});
        s += table_row(cols, c);
    }
    for (const auto& r : rs) {
        if (r.layers.empty()) continue;
        s += cat("\nbatch ", batch_of(r), ", per layer (unfused, median of ", run.plan.repeat, "; sum ",
                 ms(layers_sum(r)), " ms", train ? cat(" incl. loss ", ms(r.loss_time.median), " ms") : "", ")\n");
        std::vector<Column> lc = {{"layer", 24, true}, {"type", 11, true}, {"fwd ms", 8}, {"fwd FLOP", 8},
                                  {"GFLOP/s", 7}, {"fwd MB", 7}};
        if (train) lc.insert(lc.end(), {{"dgrad ms", 8}, {"wgrad ms", 8}, {"bwd/fwd t", 9}, {"bwd/fwd F", 9}});
        lc.push_back({"slow", train ? 24 : 10, true});
        if (on_gpu(run)) lc.push_back({"algo", 24, true});
        s += table_header(lc);
        for (size_t i = 0; i < r.layers.size(); ++i) {
            const LayerCost& a = r.analysis.layers[i];
            const LayerResult& l = r.layers[i];
            std::vector<std::string> c = {a.name, a.kind, ms(l.fwd.median), si(double(a.c.fwd_flops)),
                                          fixed(ratio(double(a.c.fwd_flops), l.fwd.median) / 1e9, 1),
                                          fixed(double(a.c.fwd_traffic_bytes) / 1e6, 2)};
            if (train)
                c.insert(c.end(), {ms(l.dgrad.median), ms(l.wgrad.median),
                                   fixed(ratio(l.dgrad.median + l.wgrad.median, l.fwd.median), 2),
                                   fixed(ratio(double(a.c.bwd_flops()), double(a.c.fwd_flops)), 2)});
            c.push_back(slow_text(verdict(run, a, l)));
            if (on_gpu(run)) c.push_back(i < r.algo.size() ? r.algo[i] : "");
            s += table_row(lc, c);
        }
        s += roof_line(run, r);
    }
    return s;
}

void env_json(Json& j, const Env& e) {
    j.begin_object("env")
        .field("cpu", e.cpu)
        .field("cores", e.cores)
        .field("threads", e.threads)
        .field("clock_mhz", e.clock_mhz)
        .field("load_average", e.load_average)
        .field("omp_wait", e.omp_wait)
        .field("compiler", e.compiler)
        .field("onednn", e.onednn)
        .field("git", e.git)
        .field("date", e.date);
    if (e.gpu)
        j.field("gpu", e.gpu_name)
            .field("gpu_sms", e.gpu_sms)
            .field("gpu_clock_mhz", e.gpu_clock_mhz)
            .field("gpu_memory_clock_mhz", e.gpu_mem_clock_mhz)
            .field("gpu_memory_bytes", e.gpu_mem_bytes)
            .field("driver", e.driver)
            .field("cuda_runtime", e.cuda_runtime)
            .field("cudnn", e.cudnn)
            .field("cublas", e.cublas);
    j.end_object();
}

void result_json(Json& j, const Run& run, const BenchResult& r) {
    bool train = run.mode == Mode::train;
    j.begin_object()
        .field("model", run.model)
        .field("device", run.device)
        .field("backend", run.backend)
        .field("batch", batch_of(r))
        .field("mode", train ? "train" : "infer")
        .field("threads", run.plan.threads)
        .array("resolution", {run.H, run.W})
        .field("warmup", run.plan.warmup)
        .field("repeat", run.plan.repeat)
        .field("median_ms", r.step.median * 1e3)
        .field("min_ms", r.step.min * 1e3)
        .field("iqr_ms", r.step.iqr() * 1e3)
        .field("max_ms", r.step.max * 1e3)
        .field("images_per_s", images_per_s(r))
        .field("gflops", gflops(r, run.mode))
        .field("flops", flops_of(r, run.mode))
        .field("planned_bytes", r.planned_bytes);
    if (on_gpu(run)) j.field("precision", precision_name(run.precision)).field("cuda_graph", run.plan.cuda_graph);
    if (run.backend == "onednn") j.boolean("winograd", run.plan.winograd);
    if (train)
        j.field("fwd_ms", r.fwd.median * 1e3)
            .field("bwd_ms", r.bwd.median * 1e3)
            .field("update_ms", r.update.median * 1e3)
            .field("bwd_fwd_time", bwd_fwd_time(r))
            .field("bwd_fwd_flops", bwd_fwd_flops(r))
            .field("loss", double(r.loss));
    env_json(j, run.env);
    j.begin_array("layers");
    for (size_t i = 0; i < r.layers.size(); ++i) {
        const LayerCost& a = r.analysis.layers[i];
        const LayerResult& l = r.layers[i];
        j.begin_object()
            .field("name", a.name)
            .field("type", a.kind)
            .field("fwd_ms", l.fwd.median * 1e3)
            .field("fwd_flops", a.c.fwd_flops)
            .field("fwd_bytes", a.c.fwd_traffic_bytes)
            .field("fwd_gflops", ratio(double(a.c.fwd_flops), l.fwd.median) / 1e9);
        if (train)
            j.field("dgrad_ms", l.dgrad.median * 1e3)
                .field("wgrad_ms", l.wgrad.median * 1e3)
                .field("dgrad_flops", a.c.dgrad_flops)
                .field("wgrad_flops", a.c.wgrad_flops)
                .field("bwd_bytes", a.c.bwd_traffic_bytes)
                .field("bwd_fwd_time", ratio(l.dgrad.median + l.wgrad.median, l.fwd.median))
                .field("bwd_fwd_flops", ratio(double(a.c.bwd_flops()), double(a.c.fwd_flops)));
        if (on_gpu(run)) j.field("algo", i < r.algo.size() ? r.algo[i] : "");
        LayerVerdict v = verdict(run, a, l);
        j.field("fwd_bound_ms", v.fwd.bound_seconds * 1e3).field("fwd_vs_bound", v.fwd.ratio);
        if (train)
            j.field("dgrad_bound_ms", v.dgrad.bound_seconds * 1e3)
                .field("dgrad_vs_bound", v.dgrad.ratio)
                .field("wgrad_bound_ms", v.wgrad.bound_seconds * 1e3)
                .field("wgrad_vs_bound", v.wgrad.ratio);
        j.boolean("slow", v.slow());
        j.end_object();
    }
    j.end_array();
    if (!r.layers.empty()) {
        j.field("layers_sum_ms", layers_sum(r) * 1e3);
        if (train) j.field("loss_ms", r.loss_time.median * 1e3);
        j.begin_object("roof")
            .field("peak_gflops", run.roof.peak_flops / 1e9)
            .field("bandwidth_gbs", run.roof.bytes_per_s / 1e9)
            .field("source", run.roof.source)
            .end_object();
        j.field("slow_layers", slow_layers(run, r));
    }
    j.end_object();
}

std::string json(const Run& run, const std::vector<BenchResult>& rs) {
    Json j;
    if (rs.size() == 1) {
        result_json(j, run, rs[0]);
        return j.str();
    }
    j.begin_array();
    for (const auto& r : rs) result_json(j, run, r);
    j.end_array();
    return j.str();
}

// Long format: a row per layer and batch, each carrying its run's keys and whole-step figures.
std::string csv(const Run& run, const std::vector<BenchResult>& rs) {
    std::string s =
        "model,device,backend,mode,batch,threads,median_ms,min_ms,iqr_ms,images_per_s,gflops,layer,type,fwd_ms,"
        "dgrad_ms,wgrad_ms,fwd_flops,dgrad_flops,wgrad_flops,fwd_bytes,bwd_bytes,fwd_bound_ms,dgrad_bound_ms,wgrad_bound_ms,slow\n";
    for (const auto& r : rs) {
        std::string head = cat(run.model, ",", run.device, ",", run.backend, ",", run.mode == Mode::train ? "train" : "infer",
                               ",", batch_of(r), ",", run.plan.threads, ",", r.step.median * 1e3, ",", r.step.min * 1e3,
                               ",", r.step.iqr() * 1e3, ",", images_per_s(r), ",", gflops(r, run.mode));
        if (r.layers.empty()) s += head + ",,,,,,,,,,,,,,\n";
        for (size_t i = 0; i < r.layers.size(); ++i) {
            const LayerCost& a = r.analysis.layers[i];
            const LayerResult& l = r.layers[i];
            s += cat(head, ",", csv_cell(a.name), ",", a.kind, ",", l.fwd.median * 1e3, ",", l.dgrad.median * 1e3, ",",
                     l.wgrad.median * 1e3, ",", a.c.fwd_flops, ",", a.c.dgrad_flops, ",", a.c.wgrad_flops, ",",
                     a.c.fwd_traffic_bytes, ",", a.c.bwd_traffic_bytes);
            LayerVerdict v = verdict(run, a, l);
            s += cat(",", v.fwd.bound_seconds * 1e3, ",", v.dgrad.bound_seconds * 1e3, ",", v.wgrad.bound_seconds * 1e3,
                     ",", int(v.slow()), "\n");
        }
    }
    return s;
}

// Rows in the one ledger schema (bench/ledger_schema.h): a row per batch, the environment on each.
std::vector<std::string> ledger_rows(const Run& run, const std::vector<BenchResult>& rs, const std::string& command) {
    std::vector<std::string> rows;
    bool train = run.mode == Mode::train;
    for (const auto& r : rs) {
        const Totals& t = r.analysis.totals;
        LedgerRow row;
        set_environment(row, run.env, host_name());
        row.set("kind", "bench")
            .set("date", run.env.date)
            .set("device", run.device)
            .set("backend", run.backend)
            .set("precision", std::string(precision_name(run.precision)))
            .set("cuda_graph", on_gpu(run) ? std::to_string(int(run.plan.cuda_graph)) : "")
            .set("winograd", run.backend == "onednn" ? std::to_string(int(run.plan.winograd)) : "")
            .set("net", run.model)
            .set("mode", train ? "train" : "infer")
            .set("batch", std::to_string(batch_of(r)))
            .set("height", std::to_string(run.H))
            .set("width", std::to_string(run.W))
            .set("threads", on_gpu(run) ? "" : std::to_string(run.plan.threads))
            .set("warmup_iters", std::to_string(run.plan.warmup))
            .set("iters", std::to_string(run.plan.repeat))
            .set("seed", std::to_string(run.plan.seed))
            .set("images_per_s", ledger_num(images_per_s(r)))
            .set("step_median_ms", ledger_num(r.step.median * 1e3))
            .set("step_min_ms", ledger_num(r.step.min * 1e3))
            .set("step_iqr_ms", ledger_num(r.step.iqr() * 1e3))
            .set("bwd_fwd_time", train ? ledger_num(bwd_fwd_time(r)) : "")
            .set("update_ms", train ? ledger_num(r.update.median * 1e3) : "")
            .set("planned_bytes", std::to_string(r.planned_bytes))
            .set("flops_per_step", std::to_string(flops_of(r, run.mode)))
            .set("bytes_per_step", std::to_string(train ? t.fwd_traffic_bytes + t.bwd_traffic_bytes : t.fwd_traffic_bytes))
            .set("gflops", ledger_num(gflops(r, run.mode)))
            .set("command", command);
        rows.push_back(row.csv());
    }
    return rows;
}

// --roof GFLOPS,GBS: two positive numbers, checked before any work.
std::optional<Roof> roof_arg(const Args& a) {
    if (!a.has("--roof")) return std::nullopt;
    std::string v = a.get("--roof", "");
    size_t comma = v.find(',');
    auto number = [](const std::string& s) {
        size_t used = 0;
        double x = 0;
        try {
            x = std::stod(s, &used);
        } catch (const std::exception&) {
            return 0.0;
        }
        return used == s.size() && std::isfinite(x) && x > 0 ? x : 0.0;
    };
    double peak = comma == std::string::npos ? 0 : number(v.substr(0, comma));
    double bw = comma == std::string::npos ? 0 : number(v.substr(comma + 1));
    if (peak <= 0 || bw <= 0)
        throw UsageError(cat("ridge bench: --roof must be two positive numbers, GFLOP/s and GB/s (e.g. 494,50), not '", v,
                             "'"));
    return Roof{peak * 1e9, bw * 1e9, "given by --roof"};
}

// This machine's ceilings by the quick probes: on the CPU the fp32 FMA peak (each core timed by its
// own CPU time, so other load does not lower it) and the STREAM triad (wall-clock, which load
// lowers); on the GPU the peak of the run's precision and the DRAM read bandwidth.
Roof measure_roof(bool gpu, Precision precision, int threads) {
    if (gpu) {
        probe::gpu::GpuCeilings g = probe::gpu::measure(true);
        std::string_view p = precision_name(precision);
        const bool tensor = p != "fp32" && g.peak_gflops(p) != g.fp32_gflops;
        return {g.peak_gflops(p) * 1e9, g.dram_read_gbs * 1e9,
                cat(tensor ? cat(p, " on the tensor cores") : std::string("fp32 FMA"),
                    " and DRAM read, quick GPU probes just now")};
    }
    probe::CpuInfo cpu = probe::cpu_info();
    int t = std::clamp(threads, 1, std::max<int>(1, int(cpu.core_cpus.size())));
    probe::FmaResult fma = probe::measure_fma(cpu, t, 0.01, 15);
    probe::StreamResult stream = probe::measure_stream(cpu, t, 0, 4);
    return {fma.gflops * 1e9, stream.triad * 1e9,
            cat("fp32 FMA and STREAM triad on ", t, t == 1 ? " core" : " cores", ", quick probes just now")};
}

// Every file the run will write, checked before anything is planned or timed, so a run is never
// lost to a destination that was wrong from the start. A file named twice would lose what the
// first write put there; an output on the ledger would replace the ledger's history.
void check_destinations(const Args& a, const std::string& ledger, const std::string& header) {
    std::vector<std::pair<std::string, std::string>> files;  // option, path
    for (const char* opt : {"--out", "--json"})
        if (std::string p = a.get(opt, ""); !p.empty() && p != "-") files.emplace_back(opt, p);
    if (!ledger.empty()) files.emplace_back("--ledger", ledger);
    for (size_t i = 0; i < files.size(); ++i)
        for (size_t j = i + 1; j < files.size(); ++j)
            if (same_file(files[i].second, files[j].second))
                throw UsageError(cat("ridge bench: ", files[i].first, " '", files[i].second, "' and ", files[j].first,
                                     " '", files[j].second, "' are the same file",
                                     files[j].first == "--ledger" ? "; writing one would replace the ledger's rows" : ""));
    for (const auto& [opt, path] : files) {
        if (opt == "--ledger") check_csv_ledger(path, header);
        else check_output(path);
    }
}

// One line, rewritten in place on a terminal; nothing when stderr is a file or --quiet.
struct ProgressLine {
    bool on;
    std::string prefix;
    void operator()(const std::string& stage, int done, int total) const {
        if (!on) return;
        std::cerr << "\r\033[K" << prefix << stage << " " << done << "/" << total << std::flush;
    }
    void clear() const {
        if (on) std::cerr << "\r\033[K" << std::flush;
    }
};

// --precision and --cuda-graph, which only the GPU executor takes.
Precision precision_arg(const Args& a, bool gpu) {
    std::string precision = a.choice("--precision", "fp32", {"fp32", "tf32", "fp16", "bf16"});
    Precision p = *parse_precision(precision);
    if (!gpu && p != Precision::fp32)
        throw UsageError(cat("ridge bench: --precision ", precision, " needs --device cuda; the CPU backends compute in fp32"));
    if (!gpu && a.has("--cuda-graph")) throw UsageError("ridge bench: --cuda-graph needs --device cuda");
    if (gpu && a.has("--no-winograd"))
        throw UsageError("ridge bench: --no-winograd is for the CPU's oneDNN executor; cuDNN picks its own algorithms");
    return p;
}

// Why --device cuda cannot run here, or "" when it can.
std::string gpu_missing() {
    if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) return why;
    if (gpu_backends().empty()) return "this build has no GPU executor (cmake found no cuDNN; configure with CUDNN_ROOT)";
    return "";
}

BenchPlan plan_arg(const Args& a, const Run& run) {
    BenchPlan plan;
    plan.backend = run.backend;
    plan.mode = run.mode;
    plan.precision = run.precision;
    plan.cuda_graph = a.has("--cuda-graph");
    plan.winograd = !a.has("--no-winograd");
    plan.threads = int(a.positive("--threads", hardware_threads(), max_threads));
    plan.warmup = int(a.non_negative("--warmup", 3, max_repeat));
    plan.repeat = int(a.positive("--repeat", 20, max_repeat));
    plan.layers = !a.has("--no-layers");
    plan.seed = uint64_t(a.positive("--seed", 1, int64_t(1) << 62));
    return plan;
}

// The ledger the rows are appended to; empty with --no-ledger.
std::string ledger_arg(const Args& a) {
    std::string ledger = a.has("--no-ledger") ? "" : a.get("--ledger", "results/ledger.csv");
    if (a.has("--no-ledger") && a.has("--ledger")) throw UsageError("ridge bench: --ledger and --no-ledger exclude each other");
    return ledger;
}

// Refuses a batch whose planned memory is more than the device has free (GPU) or than this process
// may allocate: host is the seeded copies' bytes, which the host keeps either way.
void check_fits(const Run& run, int64_t N, int64_t planned, int64_t host, const MemoryBudget& budget,
                int64_t device_free) {
    const bool gpu = on_gpu(run);
    int64_t need = gpu ? host : planned + host;
    if (gpu && planned > device_free)
        throw UsageError(cat("ridge bench: ", run.model, " ", run.mode == Mode::train ? "train" : "infer",
                             " at batch ", N, " in ", precision_name(run.precision), " needs ", gb(planned),
                             " on the device (planned by the ", run.backend, " executor); the GPU has ",
                             gb(device_free), " free"));
    if (!fits_in(need, budget.bytes))
        throw UsageError(cat("ridge bench: ", run.model, " ", run.mode == Mode::train ? "train" : "infer",
                             " at batch ", N, " needs ", gb(need), " (", gb(planned), " planned by the ",
                             run.backend, " executor, ", gb(host), " of host copies); ", gb(budget.bytes),
                             " is available (", budget.limit,
                             budget.limit != "MemAvailable" && budget.mem_available >= 0
                                 ? cat("; MemAvailable ", gb(budget.mem_available))
                                 : std::string(),
                             ") and ridge keeps a tenth of it free"));
}

// Every batch is planned before any runs, so a batch that will not fit is refused up front.
std::vector<BenchJob> plan_jobs(const Args& a, const ZooEntry& e, const std::vector<int64_t>& batches,
                                const Run& run) {
    std::vector<BenchJob> jobs;
    MemoryBudget budget = memory_budget();
    // The device's free memory against the arena the executor plans. cuDNN's and cuBLAS's own
    // allocations (handles, kernels) are not in the plan: a run that only just fits may still fail.
    int64_t device_free = on_gpu(run) ? probe::gpu::free_memory_bytes() : -1;
    for (int64_t N : batches) {
        Graph g = build_for(a, e, N);
        int64_t host = host_copy_bytes(g);
        BenchJob job = plan_job(std::move(g), run.plan);
        check_fits(run, N, job.planned_bytes(), host, budget, device_free);
        jobs.push_back(std::move(job));
    }
    return jobs;
}

void warn_if_doubtful(const Run& run, const BenchResult& r) {
    if (r.step.noisy())
        std::cerr << "ridge bench: warning: " << run.model << " batch " << batch_of(r) << ": the interquartile range is "
                  << fixed(100 * r.step.iqr() / r.step.median, 0)
                  << "% of the median; the machine may be busy (more --repeat helps)\n";
    if (run.mode == Mode::train && !std::isfinite(r.loss))
        std::cerr << "ridge bench: warning: " << run.model << " batch " << batch_of(r)
                  << ": the loss is not finite; times may include denormal or NaN arithmetic\n";
}

std::vector<BenchResult> run_jobs(std::vector<BenchJob>& jobs, const Run& run, bool show_progress) {
    ProgressLine line{show_progress, ""};
    std::vector<BenchResult> results;
    for (BenchJob& job : jobs) {
        line.prefix = cat("ridge bench ", run.model, " batch ", job.g->input_shape()[0], ": ");
        results.push_back(run_job(job, run.plan, line));
        line.clear();
        warn_if_doubtful(run, results.back());
    }
    return results;
}

void write_results(const Args& a, const Run& run, const std::vector<BenchResult>& results, const std::string& fmt,
                   const std::string& ledger, const std::string& header) {
    std::string text = fmt == "csv" ? csv(run, results) : fmt == "json" ? json(run, results) : table(run, results);
    write_output(a.get("--out", ""), text);
    if (a.has("--json")) write_output(a.get("--json", ""), json(run, results));
    if (!ledger.empty()) append_csv_rows(ledger, header, ledger_rows(run, results, command_line("ridge bench " + run.model)));
}

}  // namespace

int run_bench(const Args& a) {
    const ZooEntry& e = net_arg(a);
    Run run;
    run.model = std::string(e.name);
    run.device = a.choice("--device", "cpu", {"cpu", "cuda"});
    const bool gpu = on_gpu(run);
    run.precision = precision_arg(a, gpu);
    if (std::string why = gpu ? gpu_missing() : ""; !why.empty()) {
        // Exit 3, as roofline measure: scripts can tell a missing device from a typing mistake.
        std::cerr << "ridge bench: " << why << "\n";
        return 3;
    }
    std::vector<std::string> backends = gpu ? gpu_backends() : cpu_backends();
    std::vector<std::string_view> names(backends.begin(), backends.end());
    run.backend = a.choice("--backend", backends.front(), names);
    std::vector<int64_t> batches = a.positive_list("--batch", {1}, max_batch);
    run.mode = a.choice("--mode", "infer", {"infer", "train"}) == "train" ? Mode::train : Mode::infer;
    std::string fmt = a.choice("--format", "table", {"table", "csv", "json"});
    run.plan = plan_arg(a, run);
    std::string ledger = ledger_arg(a);
    std::optional<Roof> roof = roof_arg(a);
    const std::string header = ledger_header();
    check_destinations(a, ledger, header);
    if (!gpu && run.plan.threads > hardware_threads())
        std::cerr << "ridge bench: warning: " << run.plan.threads << " threads on " << hardware_threads()
                  << " cores; threads will share cores\n";

    std::vector<BenchJob> jobs = plan_jobs(a, e, batches, run);
    // Every batch has the same resolution: the net's own or --res.
    run.H = jobs.front().g->input_shape()[2];
    run.W = jobs.front().g->input_shape()[3];
    // Before the runs, so the probes and the runs do not share the cores.
    if (run.plan.layers) run.roof = roof ? *roof : measure_roof(gpu, run.precision, run.plan.threads);
    run.env = capture_env(run.plan.threads, gpu);
    std::vector<BenchResult> results = run_jobs(jobs, run, !a.has("--quiet") && ::isatty(2) != 0);
    write_results(a, run, results, fmt, ledger, header);
    return 0;
}

}  // namespace ridge::cli
