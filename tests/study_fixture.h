#pragma once
// A small study for the figure tests: the real analyses of five nets (pure arithmetic, no
// executor runs) with invented, deterministic times, so every figure has data in a few
// milliseconds. The times follow a simple roofline-like model (FLOPs at one rate plus bytes at
// another, per device) so the figures look like a real study; no test compares against them.
#include "netdefs/zoo.h"
#include "report/study.h"

namespace fixture {

using namespace ridge;
using namespace ridge::report;

inline bench::Stats stats_around(double seconds) {
    return bench::summarize({seconds * 0.98, seconds, seconds * 1.01, seconds * 1.03});
}

inline double model_seconds(const Run& r) {
    bool gpu = r.device == "cuda";
    double flops_rate = gpu ? 2.0e13 : 1.2e11, bytes_rate = gpu ? 1.5e12 : 2.0e10;
    double launch = gpu ? 4e-6 * double(r.a.layers.size()) : 0;
    return double(r.flops()) / flops_rate + double(r.bytes()) / bytes_rate + launch;
}

inline Run make_run(const std::string& device, const std::string& net, Mode mode, int64_t batch, bool layers) {
    const ZooEntry& e = *find_net(net);
    Run r;
    r.device = device;
    r.backend = device == "cuda" ? "cudnn" : "onednn";
    r.net = net;
    r.mode = mode;
    r.batch = batch;
    r.a = analyze(build(e, batch, e.default_res, e.default_res), DType::fp32);
    double t = model_seconds(r);
    r.step = stats_around(t);
    if (mode == Mode::train) {
        double f = double(r.a.totals.fwd_flops) / double(r.flops());
        r.fwd = stats_around(t * f);
        r.bwd = stats_around(t * (1 - f));
    }
    if (layers) {
        double rate = device == "cuda" ? 1.0e13 : 0.8e11, bw = device == "cuda" ? 1.0e12 : 1.5e10;
        for (const LayerCost& l : r.a.layers) {
            LayerResult lr;
            lr.fwd = stats_around(double(l.c.fwd_flops) / rate + double(l.c.fwd_traffic_bytes) / bw);
            double bwd_bytes = double(l.c.bwd_traffic_bytes) / 2;
            if (l.c.dgrad_flops || mode == Mode::train)
                lr.dgrad = stats_around(double(l.c.dgrad_flops) / rate + bwd_bytes / bw);
            if (l.c.wgrad_flops) lr.wgrad = stats_around(double(l.c.wgrad_flops) / rate + bwd_bytes / bw);
            r.layers.push_back(lr);
        }
    }
    return r;
}

inline Study study(bool with_gpu) {
    Study s;
    s.host = "fixture";
    s.env.cpu = "Fixture CPU";
    s.env.cores = 2;
    s.env.threads = 2;
    s.chips = roofline::load_chips(roofline::default_chips_path());
    // A CPU that hides its model, as a VM does: its datasheet line is a lower bound.
    s.ceilings.push_back({"cpu", "Fixture CPU (2 cores)", 2.0e11, 4.0e10, 1.6e11, std::nullopt,
                          "the reported 2.5 GHz (a lower bound: 'Fixture CPU' names no model in roofline/cpu_clocks.csv)", true,
                          3.125, "avx512"});
    if (with_gpu)
        s.ceilings.push_back({"cuda", "NVIDIA H100 80GB HBM3", 5.0e13, 3.0e12, 6.7e13, 3.35e12,
                              "the chip database's NVIDIA H100 SXM5 80GB", false, 1.98, "CUDA cores"});
    else
        s.notes.push_back("cuda: no CUDA device is available");
    s.nets = {"resnet18", "mobilenet_v2", "squeezenet1_1", "alexnet", "vgg11"};
    s.batches = {1, 4, 16};
    s.train_batch = 4;
    s.layer_net = "resnet18";
    for (const std::string& n : s.nets) {
        const ZooEntry& e = *find_net(n);
        for (int64_t b : {int64_t(1), s.large_batch})
            s.counts.push_back({n, b, analyze(build(e, b, e.default_res, e.default_res), DType::fp32)});
    }
    std::vector<std::string> devices = {"cpu"};
    if (with_gpu) devices.push_back("cuda");
    for (const std::string& d : devices)
        for (const std::string& n : s.nets) {
            for (int64_t b : s.batches) s.runs.push_back(make_run(d, n, Mode::infer, b, false));
            s.runs.push_back(make_run(d, n, Mode::train, s.train_batch, n == s.layer_net && d == "cpu"));
        }
    return s;
}

}  // namespace fixture
