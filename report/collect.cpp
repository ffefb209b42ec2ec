#include "report/collect.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "bench/format.h"
#include "engine/backend/executor.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "netdefs/zoo.h"
#include "roofline/cpu_clocks.h"
#include "train/ledger.h"
#include "profile/gpu.h"
#include "profile/perf_events.h"

namespace ridge::report {

namespace {

Graph build_net(const std::string& net, int64_t N) {
    const ZooEntry& e = *find_net(net);
    return build(e, N, e.default_res, e.default_res);
}

Ceilings cpu_ceilings(const StudyPlan& plan, const std::vector<roofline::Chip>& chips,
                      const std::vector<roofline::CpuClock>& clocks) {
    probe::CpuCeilings m = probe::measure_cpu({plan.quick_ceilings, plan.threads});
    Ceilings c;
    c.device = "cpu";
    c.name = cat(m.cpu.model_name, " (", m.threads, " cores)");
    c.peak_flops = m.fma.gflops * 1e9;
    c.isa = m.fma.isa;
    c.bytes_per_s = m.stream.triad * 1e9;
    c.measured_clock_ghz = m.measured_clock_ghz;
    // The vendor's figure is cores x max boost x FMA width. A VM often names no model and reports
    // the base clock while the cores run faster: then the line is a lower bound and says so.
    std::optional<double> reported;
    if (m.cpu.reported_mhz) reported = *m.cpu.reported_mhz / 1e3;
    if (auto clock = roofline::datasheet_clock(clocks, m.cpu.model_name, reported)) {
        c.datasheet_peak_flops = m.theoretical_gflops(clock->ghz) * 1e9;
        c.datasheet_basis = clock->why;
        c.datasheet_lower_bound = clock->lower_bound;
    }
    if (const roofline::Chip* chip = roofline::find_chip(chips, m.cpu.model_name))
        c.datasheet_bytes_per_s = chip->bandwidth_bytes();
    return c;
}

Ceilings cuda_ceilings(const StudyPlan& plan, const std::vector<roofline::Chip>& chips) {
    probe::gpu::GpuCeilings m = probe::gpu::measure(plan.quick_ceilings);
    Ceilings c;
    c.device = "cuda";
    c.name = m.dev.name;
    c.peak_flops = m.fp32_gflops * 1e9;
    c.isa = "CUDA cores";
    c.bytes_per_s = m.dram_read_gbs * 1e9;
    c.measured_clock_ghz = m.measured_clock_mhz / 1e3;
    c.datasheet_peak_flops = m.fp32_theoretical_gflops(m.dev.clock_mhz) * 1e9;
    c.datasheet_bytes_per_s = m.dram_datasheet_gbs() * 1e9;
    c.datasheet_basis = cat("the driver's peak clock ", bench::fixed(m.dev.clock_mhz / 1e3, 2), " GHz");
    if (const roofline::Chip* chip = roofline::find_chip(chips, m.dev.name)) {
        if (auto p = chip->peak_flops(roofline::Precision::fp32)) {
            c.datasheet_peak_flops = p;
            c.datasheet_basis = cat("the chip database's ", chip->name);
        }
        if (auto b = chip->bandwidth_bytes()) c.datasheet_bytes_per_s = b;
    }
    return c;
}

struct Config {
    std::string device, backend, net;
    Mode mode;
    int64_t batch;
    bool layers;
};

std::string describe(const Config& c) {
    return cat(c.device, " ", c.net, " ", c.mode == Mode::train ? "train" : "infer", " batch ", c.batch);
}

std::string gb(int64_t bytes) { return bench::fixed(double(bytes) / 1e9, 1) + " GB"; }

int threads_of(const StudyPlan& plan) { return plan.threads > 0 ? plan.threads : bench::hardware_threads(); }

std::string backend_of(const std::string& device) {
    return device == "cpu" ? cpu_backends().front() : gpu_backends().front();
}

// The note that says why the GPU is not studied, or "" when it is.
std::string cuda_left_out(const StudyPlan& plan) {
    if (!plan.cuda) return "cuda: not studied (--device all adds the GPU when there is one)";
    if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) return "cuda: " + why;
    if (gpu_backends().empty()) return "cuda: this build has no GPU executor (cuDNN was not found at configure time)";
    return "";
}

// Every device, then every net: the inference batches and the training step. The layer pass runs
// once per device and net, on the training step or else on the largest inference batch.
std::vector<Config> configs_of(const StudyPlan& plan, const std::vector<std::string>& devices) {
    std::vector<Config> configs;
    for (const std::string& d : devices) {
        std::string backend = backend_of(d);
        for (const std::string& net : plan.nets) {
            bool layer_net = net == plan.layer_net;
            for (int64_t b : plan.batches)
                configs.push_back({d, backend, net, Mode::infer, b, layer_net && plan.train_batch == 0 && b == plan.batches.back()});
            if (plan.train_batch > 0) configs.push_back({d, backend, net, Mode::train, plan.train_batch, layer_net});
        }
    }
    return configs;
}

Run run_of(const Config& c, bench::BenchResult r) {
    Run run;
    run.device = c.device;
    run.backend = c.backend;
    run.net = c.net;
    run.mode = c.mode;
    run.batch = c.batch;
    run.a = std::move(r.analysis);
    run.step = r.step;
    run.fwd = r.fwd;
    run.bwd = r.bwd;
    run.layers = std::move(r.layers);
    return run;
}

// Times one configuration; nothing, and a note, when it would not fit in memory.
std::optional<Run> time_config(const Config& c, const StudyPlan& plan, int64_t host_available, const std::string& head,
                               const StudyProgress& progress, std::vector<std::string>& notes) {
    bench::BenchPlan bp;
    bp.backend = c.backend;
    bp.mode = c.mode;
    bp.threads = threads_of(plan);
    bp.warmup = plan.warmup;
    bp.repeat = plan.repeat;
    bp.layers = c.layers;
    Graph g = build_net(c.net, c.batch);
    int64_t host = bench::host_copy_bytes(g);
    bench::BenchJob job = bench::plan_job(std::move(g), bp);
    // On the GPU the executor's plan lives on the device; the host keeps only the copies.
    bool gpu = c.device == "cuda";
    int64_t need = gpu ? job.planned_bytes() : job.planned_bytes() + host;
    int64_t available = gpu ? probe::gpu::free_memory_bytes() : host_available;
    if (!bench::fits_in(need, available) || (gpu && !bench::fits_in(host, host_available))) {
        notes.push_back(cat(describe(c), ": needs ", gb(need), ", ", gb(available), " available: left out"));
        return std::nullopt;
    }
    progress(head, "");
    bench::BenchResult r = bench::run_job(job, bp, [&](const std::string& stage, int done, int total) {
        progress(head, cat(stage, " ", done, "/", total));
    });
    return run_of(c, std::move(r));
}

// The layer net's counts per layer on device d; nothing when its counters cannot be read, the net
// does not fit or nothing was measured. Counting is one step per counter pass; time is measured
// by the benchmarks, so one timed repeat suffices.
std::optional<profile::Profile> count_layers(const StudyPlan& plan, const std::string& d, int64_t host_available,
                                             const StudyProgress& progress) {
    std::string why;
    std::unique_ptr<profile::CounterSource> src =
        d == "cpu" ? profile::open_cpu_counters(&why) : profile::open_gpu_counters(&why);
    if (!src) return std::nullopt;
    bool train = plan.train_batch > 0;
    int64_t N = train ? plan.train_batch : plan.batches.back();
    Graph g = build_net(plan.layer_net, N);
    ExecOptions o{.mode = train ? Mode::train : Mode::infer, .fused = false, .threads = threads_of(plan)};
    std::string backend = backend_of(d);
    std::unique_ptr<Executor> ex = make_executor(backend, g, o);
    int64_t need = d == "cpu" ? ex->planned_bytes() + bench::host_copy_bytes(g) : bench::host_copy_bytes(g);
    if (!bench::fits_in(need, host_available)) return std::nullopt;
    progress(cat("counting FLOPs per layer: ", d, " ", plan.layer_net, " ", train ? "train" : "infer", " batch ", N), "");
    profile::ProfileOptions po;
    po.mode = o.mode;
    po.warmup = 1;
    po.repeat = 1;
    profile::Profile p = profile::run_profile(*ex, g, src.get(), po);
    if (!p.measured) return std::nullopt;
    p.model = plan.layer_net;
    p.device = d;
    p.backend = backend;
    p.threads = d == "cpu" ? o.threads : 0;
    return p;
}

}  // namespace

std::vector<TrainRun> read_train_runs(const std::string& path, std::vector<std::string>& notes) {
    std::vector<TrainRun> runs;
    if (path.empty()) return runs;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        notes.push_back(cat("training runs: ", path, " does not exist (`ridge train` writes it)"));
        return runs;
    }
    train::LedgerTable t;
    try {
        t = train::read_ledger(path);
    } catch (const std::runtime_error& e) {
        notes.push_back(cat("training runs: ", e.what()));
        return runs;
    }
    auto d = [](const std::string& v) { return v.empty() ? 0.0 : std::stod(v); };
    auto i = [](const std::string& v) { return v.empty() ? int64_t(0) : int64_t(std::stoll(v)); };
    for (size_t r = 0; r < t.rows.size(); ++r) {
        TrainRun x;
        x.label = t.at(r, "label");
        x.date = t.at(r, "date");
        x.host = t.at(r, "host");
        x.device = t.at(r, "device");
        x.backend = t.at(r, "backend");
        x.net = t.at(r, "net");
        x.data = t.at(r, "data");
        x.batch = i(t.at(r, "batch"));
        x.height = i(t.at(r, "height"));
        x.width = i(t.at(r, "width"));
        x.workers = i(t.at(r, "workers"));
        x.iters = i(t.at(r, "iters"));
        x.images_per_s = d(t.at(r, "images_per_s"));
        x.step_median_s = d(t.at(r, "step_median_ms")) / 1e3;
        x.data_wait_share = d(t.at(r, "data_wait_share"));
        x.achieved_flops = d(t.at(r, "gflops")) * 1e9;
        x.flops_per_step = i(t.at(r, "flops_per_step"));
        x.bytes_per_step = i(t.at(r, "bytes_per_step"));
        x.roof_fraction = d(t.at(r, "roof_fraction"));
        x.first_loss = d(t.at(r, "first_loss"));
        x.last_loss = d(t.at(r, "last_loss"));
        x.val_top1 = t.at(r, "val_top1").empty() ? -1 : d(t.at(r, "val_top1"));
        runs.push_back(std::move(x));
    }
    if (runs.empty()) notes.push_back(cat("training runs: ", path, " has no rows"));
    return runs;
}

namespace {

// What the study is before anything is measured: the plan's parameters, the chip database, the
// training runs and the analytic counts of every net.
Study planned_study(const StudyPlan& plan, std::vector<roofline::Chip> chips) {
    Study s;
    s.host = bench::host_name();
    s.chips = std::move(chips);
    s.chips_precision = plan.chips_precision;
    s.nets = plan.nets;
    s.batches = plan.batches;
    s.warmup = plan.warmup;
    s.repeat = plan.repeat;
    s.train_batch = plan.train_batch;
    s.layer_net = plan.layer_net;
    s.train_log = plan.train_log;
    s.train_runs = read_train_runs(plan.train_log, s.notes);
    for (const std::string& net : plan.nets)
        for (int64_t b : {int64_t(1), s.large_batch}) s.counts.push_back({net, b, analyze(build_net(net, b), DType::fp32)});
    return s;
}

}  // namespace

Study collect(const StudyPlan& plan, const StudyProgress& progress) {
    std::string chips_path = plan.chips_path.empty() ? roofline::default_chips_path() : plan.chips_path;
    std::vector<roofline::Chip> chips = roofline::load_chips(chips_path);
    std::vector<roofline::CpuClock> clocks = roofline::load_cpu_clocks(roofline::cpu_clocks_path(chips_path));
    Study s = planned_study(plan, std::move(chips));

    std::vector<std::string> devices;
    if (plan.cpu) {
        progress("measuring this CPU's ceilings", "");
        s.ceilings.push_back(cpu_ceilings(plan, s.chips, clocks));
        devices.push_back("cpu");
    }
    if (std::string note = cuda_left_out(plan); !note.empty()) {
        s.notes.push_back(note);
    } else {
        progress("measuring the GPU's ceilings", "");
        s.ceilings.push_back(cuda_ceilings(plan, s.chips));
        devices.push_back("cuda");
    }
    bool gpu = std::find(devices.begin(), devices.end(), "cuda") != devices.end();
    s.env = bench::capture_env(threads_of(plan), gpu);

    int64_t host_available = bench::available_memory_bytes();
    std::vector<Config> configs = configs_of(plan, devices);
    for (size_t i = 0; i < configs.size(); ++i) {
        std::string head = cat("[", i + 1, "/", configs.size(), "] ", describe(configs[i]));
        if (std::optional<Run> run = time_config(configs[i], plan, host_available, head, progress, s.notes))
            s.runs.push_back(std::move(*run));
    }
    if (!plan.layer_net.empty())
        for (const std::string& d : devices)
            if (std::optional<profile::Profile> p = count_layers(plan, d, host_available, progress))
                s.profiles.push_back(std::move(*p));
    return s;
}

}  // namespace ridge::report
