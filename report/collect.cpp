#include "report/collect.h"

#include <algorithm>

#include "bench/format.h"
#include "engine/backend/executor.h"
#include "kernels/cpu/probes.h"
#include "kernels/cuda/probes.h"
#include "netdefs/zoo.h"
#include "profile/gpu.h"
#include "profile/perf_events.h"

namespace ridge::report {

namespace {

Graph build_net(const std::string& net, int64_t N) {
    const ZooEntry& e = *find_net(net);
    return build(e, N, e.default_res, e.default_res);
}

Ceilings cpu_ceilings(const StudyPlan& plan, const std::vector<roofline::Chip>& chips) {
    probe::CpuCeilings m = probe::measure_cpu({plan.quick_ceilings, plan.threads});
    Ceilings c;
    c.device = "cpu";
    c.name = cat(m.cpu.model_name, " (", m.threads, " cores)");
    c.peak_flops = m.fma.gflops * 1e9;
    c.isa = m.fma.isa;
    c.bytes_per_s = m.stream.triad * 1e9;
    // The vendor's figure is the reported (base) clock times the FMA width; a VM often reports the
    // base clock while the cores run faster, which the measured peak then exceeds.
    if (m.cpu.reported_mhz) c.datasheet_peak_flops = m.theoretical_gflops(*m.cpu.reported_mhz / 1e3) * 1e9;
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
    c.datasheet_peak_flops = m.fp32_theoretical_gflops(m.dev.clock_mhz) * 1e9;
    c.datasheet_bytes_per_s = m.dram_datasheet_gbs() * 1e9;
    if (const roofline::Chip* chip = roofline::find_chip(chips, m.dev.name)) {
        if (auto p = chip->peak_flops(roofline::Precision::fp32)) c.datasheet_peak_flops = p;
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

std::string gb(int64_t bytes) { return cli::fixed(double(bytes) / 1e9, 1) + " GB"; }

}  // namespace

Study collect(const StudyPlan& plan, const StudyProgress& progress) {
    Study s;
    s.host = cli::host_name();
    s.chips = roofline::load_chips(plan.chips_path.empty() ? roofline::default_chips_path() : plan.chips_path);
    s.nets = plan.nets;
    s.batches = plan.batches;
    s.train_batch = plan.train_batch;
    s.layer_net = plan.layer_net;
    for (const std::string& net : plan.nets)
        for (int64_t b : {int64_t(1), s.large_batch}) s.counts.push_back({net, b, analyze(build_net(net, b), DType::fp32)});

    std::vector<std::string> devices;
    if (plan.cpu) {
        progress("measuring this CPU's ceilings", "");
        s.ceilings.push_back(cpu_ceilings(plan, s.chips));
        devices.push_back("cpu");
    }
    if (!plan.cuda) s.notes.push_back("cuda: not studied (--device all adds the GPU when there is one)");
    if (plan.cuda) {
        std::string why = probe::gpu::unavailable_reason();
        std::vector<std::string> gpu = gpu_backends();
        if (!why.empty()) {
            s.notes.push_back("cuda: " + why);
        } else if (gpu.empty()) {
            s.notes.push_back("cuda: this build has no GPU executor (cuDNN was not found at configure time)");
        } else {
            progress("measuring the GPU's ceilings", "");
            s.ceilings.push_back(cuda_ceilings(plan, s.chips));
            devices.push_back("cuda");
        }
    }

    bool gpu = std::find(devices.begin(), devices.end(), "cuda") != devices.end();
    s.env = cli::capture_env(plan.threads > 0 ? plan.threads : cli::hardware_threads(), gpu);

    std::vector<Config> configs;
    for (const std::string& d : devices) {
        std::string backend = d == "cpu" ? cpu_backends().front() : gpu_backends().front();
        for (const std::string& net : plan.nets) {
            bool layer_net = net == plan.layer_net;
            for (int64_t b : plan.batches)
                configs.push_back({d, backend, net, Mode::infer, b, layer_net && plan.train_batch == 0 && b == plan.batches.back()});
            if (plan.train_batch > 0) configs.push_back({d, backend, net, Mode::train, plan.train_batch, layer_net});
        }
    }

    int64_t host_available = cli::available_memory_bytes();
    for (size_t i = 0; i < configs.size(); ++i) {
        const Config& c = configs[i];
        std::string head = cat("[", i + 1, "/", configs.size(), "] ", describe(c));
        cli::BenchPlan bp;
        bp.backend = c.backend;
        bp.mode = c.mode;
        bp.threads = plan.threads > 0 ? plan.threads : cli::hardware_threads();
        bp.warmup = plan.warmup;
        bp.repeat = plan.repeat;
        bp.layers = c.layers;
        Graph g = build_net(c.net, c.batch);
        int64_t host = cli::host_copy_bytes(g);
        cli::BenchJob job = cli::plan_job(std::move(g), bp);
        // On the GPU the executor's plan lives on the device; the host keeps only the copies.
        bool gpu = c.device == "cuda";
        int64_t need = gpu ? job.planned_bytes() : job.planned_bytes() + host;
        int64_t available = gpu ? probe::gpu::free_memory_bytes() : host_available;
        if (!cli::fits_in(need, available) || (gpu && !cli::fits_in(host, host_available))) {
            s.notes.push_back(cat(describe(c), ": needs ", gb(need), ", ", gb(available),
                                       " available: left out"));
            continue;
        }
        progress(head, "");
        cli::BenchResult r = cli::run_job(job, bp, [&](const std::string& stage, int done, int total) {
            progress(head, cat(stage, " ", done, "/", total));
        });
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
        s.runs.push_back(std::move(run));
    }

    // The layer net's counts per layer, on each device whose counters can be read. Counting is
    // one step per counter pass; time is already measured above, so one timed repeat suffices.
    for (const std::string& d : devices) {
        if (plan.layer_net.empty()) break;
        std::string why;
        std::unique_ptr<profile::CounterSource> src =
            d == "cpu" ? profile::open_cpu_counters(&why) : profile::open_gpu_counters(&why);
        if (!src) continue;
        bool train = plan.train_batch > 0;
        int64_t N = train ? plan.train_batch : plan.batches.back();
        Graph g = build_net(plan.layer_net, N);
        ExecOptions o{.mode = train ? Mode::train : Mode::infer, .fused = false,
                      .threads = plan.threads > 0 ? plan.threads : cli::hardware_threads()};
        std::string backend = d == "cpu" ? cpu_backends().front() : gpu_backends().front();
        std::unique_ptr<Executor> ex = make_executor(backend, g, o);
        int64_t need = d == "cpu" ? ex->planned_bytes() + cli::host_copy_bytes(g) : cli::host_copy_bytes(g);
        if (!cli::fits_in(need, host_available)) continue;
        progress(cat("counting FLOPs per layer: ", d, " ", plan.layer_net, " ", train ? "train" : "infer", " batch ", N), "");
        profile::ProfileOptions po;
        po.mode = o.mode;
        po.warmup = 1;
        po.repeat = 1;
        profile::Profile p = profile::run_profile(*ex, g, src.get(), po);
        if (!p.measured) continue;
        p.model = plan.layer_net;
        p.device = d;
        p.backend = backend;
        p.threads = d == "cpu" ? o.threads : 0;
        s.profiles.push_back(std::move(p));
    }
    return s;
}

}  // namespace ridge::report
