// `ridge bench` as a user runs it, on small inputs so it stays quick: the output's structure and
// its arithmetic (throughput and GFLOP/s from the medians and the analytic counts), the ledger,
// the memory check and every error path. Times themselves are not checked: no timed tests.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "bench/omp_wait.h"
#include "engine/dsl.h"
#include "bench/ledger.h"
#include "bench/ledger_schema.h"
#include "bench/stats.h"
#include <oneapi/dnnl/dnnl.hpp>
#include "cli.h"
#include "json.h"
#include "roofline/probes/cuda/probes.h"
#include "skip.h"

using namespace clitest;

TEST_CASE("quartiles interpolate between order statistics") {
    ridge::bench::Stats s = ridge::bench::summarize({5, 1, 4, 2, 3});  // sorted 1 2 3 4 5
    CHECK(s.median == 3);
    CHECK(s.q1 == 2);
    CHECK(s.q3 == 4);
    CHECK(s.min == 1);
    CHECK(s.max == 5);
    ridge::bench::Stats t = ridge::bench::summarize({10, 20, 30, 40});  // positions 0.75, 1.5, 2.25
    CHECK(t.q1 == doctest::Approx(17.5));
    CHECK(t.median == doctest::Approx(25));
    CHECK(t.q3 == doctest::Approx(32.5));
    CHECK(t.noisy());  // IQR 15 > 10% of 25
    CHECK(!ridge::bench::summarize({100, 101, 102, 103}).noisy());
}

namespace {

// An executor whose clock is a script: step i of forward, backward and update takes the times
// given, as a device clock would report them (StepTimes' forward/backward/update >= 0), and with
// layer timing on each layer's phases take theirs. Nothing is computed.
class ScriptedExecutor final : public ridge::Executor {
public:
    struct Step {
        double fwd, bwd, update, loss;
        std::vector<ridge::LayerTime> layers;
    };
    ScriptedExecutor(std::vector<Step> script) : script_(std::move(script)) {}
    std::string name() const override { return "scripted"; }
    int64_t planned_bytes() const override { return 1234; }
    void prepare() override {}
    void load(const ridge::Weights&) override {}
    void set_input(const ridge::HostTensor&, const std::vector<int32_t>&) override {}
    void forward() override {
        const Step& s = script_.at(size_t(step_++));
        t_.forward = s.fwd;
        t_.backward = t_.update = 0;
        t_.loss = s.loss;
        if (timing_) t_.layers = s.layers;
    }
    float backward() override {
        t_.backward = script_.at(size_t(step_ - 1)).bwd;
        return 2.5f;
    }
    void update(float) override { t_.update = script_.at(size_t(step_ - 1)).update; }
    ridge::HostTensor output() const override { return {}; }
    ridge::Weights weights() const override { return {}; }
    ridge::Weights gradients() const override { return {}; }
    ridge::HostTensor input_gradient() const override { return {}; }
    void time_layers(bool on) override { timing_ = on; }
    const ridge::StepTimes& step_times() const override { return t_; }

private:
    std::vector<Step> script_;
    int step_ = 0;
    bool timing_ = false;
    ridge::StepTimes t_;
};

}  // namespace

TEST_CASE("idle OpenMP threads spin briefly only while nothing else waits to run") {
    CHECK(std::string(ridge::bench::spin_count(0)) == "2000");
    CHECK(std::string(ridge::bench::spin_count(1)) == "0");
    CHECK(std::string(ridge::bench::spin_count(7)) == "0");
    // A task runnable in a few samples only is not load; one in most of them is.
    CHECK(ridge::bench::typical({0, 1, 0, 0, 0, 2, 0, 0, 0}) == 0);
    CHECK(ridge::bench::typical({1, 1, 0, 1, 2, 1, 1, 0, 1}) == 1);
    CHECK(ridge::bench::typical({}) == -1);
    // A thread of this process kept busy is another runnable task in every sample.
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        while (!stop.load(std::memory_order_relaxed)) {
        }
    });
    int others = ridge::bench::others_runnable();
    stop = true;
    busy.join();
    CHECK(others >= 1);
}

TEST_CASE("step times: the medians of forward + backward, forward, backward and update, warm-up left out") {
    using namespace ridge;
    auto g = std::make_unique<Graph>("two_layers");
    g->input({2, 3}) | linear(4) | relu();
    // Two warm-up steps of 100 s that must not count, then 5 timed steps (seconds):
    //   fwd    1    2    3    4   10
    //   bwd    5    1    4    2    3
    //   step   6    3    7    6   13   sorted 3 6 6 7 13: median 6, min 3, q1 6, q3 7
    //   update 0.5 0.1 0.3 0.2 0.4  median 0.3
    std::vector<ScriptedExecutor::Step> whole = {{100, 100, 100, 0, {}}, {100, 100, 100, 0, {}}};
    const double f[] = {1, 2, 3, 4, 10}, b[] = {5, 1, 4, 2, 3}, u[] = {0.5, 0.1, 0.3, 0.2, 0.4};
    for (int i = 0; i < 5; ++i) whole.push_back({f[i], b[i], u[i], 0, {}});
    // The layer pass warms up once, then times 5 steps; layer 0 (linear) and layer 1 (relu):
    //   linear fwd 1 2 3 4 5 (median 3), dgrad 0 (its input needs none), wgrad 9 8 7 6 5 (7)
    //   relu   fwd 2 2 2 9 9 (median 2), dgrad 1 3 5 7 9 (5); loss 4 4 4 4 100 (4)
    std::vector<ScriptedExecutor::Step> layers = {{0, 0, 0, 999, {{999, 999, 999}, {999, 999, 999}}}};
    for (int i = 0; i < 5; ++i)
        layers.push_back({0, 0, 0, i < 4 ? 4.0 : 100.0,
                          {{double(i + 1), 0, double(9 - i)}, {i < 3 ? 2.0 : 9.0, double(2 * i + 1), 0}}});
    bench::BenchPlan plan;
    plan.mode = Mode::train;
    plan.warmup = 2;
    plan.repeat = 5;
    bench::BenchJob job{std::move(g), std::make_unique<ScriptedExecutor>(whole),
                      std::make_unique<ScriptedExecutor>(layers)};
    bench::BenchResult r = bench::run_job(job, plan, [](const std::string&, int, int) {});
    CHECK(r.planned_bytes == 1234);
    CHECK(r.step.median == 6);
    CHECK(r.step.min == 3);
    CHECK(r.step.max == 13);
    CHECK(r.step.iqr() == 1);
    CHECK(r.fwd.median == 3);
    CHECK(r.bwd.median == 3);
    CHECK(r.update.median == doctest::Approx(0.3));
    CHECK(r.loss == 2.5f);
    REQUIRE(r.layers.size() == 2);
    CHECK(r.layers[0].fwd.median == 3);
    CHECK(r.layers[0].dgrad.median == 0);
    CHECK(r.layers[0].wgrad.median == 7);
    CHECK(r.layers[1].fwd.median == 2);
    CHECK(r.layers[1].dgrad.median == 5);
    CHECK(r.loss_time.median == 4);
}

namespace {
// resnet18 at 32x32 through oneDNN, and once through the plain reference kernels: the cases check
// bench's figures and formats, which do not depend on the executor. The reference kernels run
// sanitized at -Og (CI's second build): a training run there took 14.8 s, 1.8 s through oneDNN.
const std::string small = "bench resnet18 --res 32 --backend onednn --warmup 1 --repeat 3 --quiet";
const std::string small_reference = "bench resnet18 --res 32 --backend reference --warmup 1 --repeat 3 --quiet";
}

// Under OMP_PROC_BIND libgomp binds the first thread to one place before main runs, and ridge
// runs itself again (omp_wait.h) on that thread's mask: it had counted one CPU there and run every
// step on one thread. By default it takes every CPU the process may use, with the spin it picks
// (ridge runs itself again) or one the user set (it does not).
TEST_CASE("bench's default threads are every CPU the process may use, under OMP_PROC_BIND too") {
    const int cpus = ridge::bench::hardware_threads();
    if (cpus < 2) MESSAGE("one CPU here: a count of one cannot be told from the bug this guards against");
    setenv("OMP_PROC_BIND", "true", 1);
    for (const char* spin : {"", "2000"}) {
        CAPTURE(spin);
        if (*spin) setenv("GOMP_SPINCOUNT", spin, 1);
        Run r = clitest::ridge(small + " --batch 1 --format json --no-layers --no-ledger");
        unsetenv("GOMP_SPINCOUNT");
        REQUIRE_MESSAGE(r.code == 0, r.err);
        CHECK(testjson::parse(r.out)["threads"].i64() == cpus);
    }
    unsetenv("OMP_PROC_BIND");
}

TEST_CASE("bench json: one object per batch with the documented fields; derived figures follow from the medians") {
    fs::path ledger = scratch() / "json_ledger.csv";
    Run r = clitest::ridge(small + " --batch 1,2 --format json --ledger '" + ledger.string() + "'");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    testjson::Value j = testjson::parse(r.out);
    REQUIRE(j.items.size() == 2);
    testjson::Value summary = testjson::parse(clitest::ridge("summary resnet18 --res 32 --batch 2 --format json").out);
    for (size_t b = 0; b < 2; ++b) {
        const testjson::Value& o = j.items[b];
        for (const char* k : {"model", "device", "batch", "mode", "threads", "median_ms", "min_ms", "iqr_ms",
                              "images_per_s", "gflops", "env", "layers"})
            CHECK_MESSAGE(o.has(k), k);
        CHECK(o["model"].text == "resnet18");
        CHECK(o["batch"].i64() == int64_t(b + 1));
        CHECK(o["mode"].text == "infer");
        double med = o["median_ms"].num();
        CHECK(med > 0);
        CHECK(o["images_per_s"].num() == doctest::Approx(double(b + 1) / (med / 1e3)).epsilon(1e-4));
        CHECK(o["gflops"].num() == doctest::Approx(double(o["flops"].i64()) / (med / 1e3) / 1e9).epsilon(1e-4));
        for (const char* k : {"cpu", "cores", "threads", "compiler", "onednn", "git", "date", "load_average"})
            CHECK_MESSAGE(o["env"].has(k), k);
        // ridge runs itself again with a short spin or none for idle OpenMP threads
        // (bench/omp_wait.h), unless the caller chose how they wait
        if (!std::getenv("GOMP_SPINCOUNT") && !std::getenv("OMP_WAIT_POLICY")) {
            const std::string& w = o["env"]["omp_wait"].text;
            CHECK_MESSAGE((w == "GOMP_SPINCOUNT=0" || w == "GOMP_SPINCOUNT=2000"), w);
        }
        const auto& layers = o["layers"].items;
        REQUIRE(layers.size() == summary["layers"].items.size());
        int64_t flops = 0;
        for (size_t i = 0; i < layers.size(); ++i) {
            CHECK(layers[i]["name"].text == summary["layers"].items[i]["name"].text);
            flops += layers[i]["fwd_flops"].i64();
        }
        CHECK(flops == o["flops"].i64());
    }
    CHECK(j.items[1]["flops"].i64() == summary["totals"]["fwd_flops"].i64());
    std::string led = slurp(ledger);
    CHECK(lines(led) == 3);  // header and a row per batch
    CHECK(led.substr(0, led.find('\n')) == ridge::bench::ledger_header());
    ridge::bench::LedgerFile f = ridge::bench::parse_ledger(led, ledger.string());
    REQUIRE(f.rows.size() == 2);
    for (size_t b = 0; b < 2; ++b) {
        const ridge::bench::LedgerRecord& row = f.rows[b];
        const testjson::Value& o = j.items[b];
        CHECK(row.get("kind") == "bench");
        CHECK(row.get("device") == "cpu");
        CHECK(row.get("precision") == "fp32");
        CHECK(row.get("net") == "resnet18");
        CHECK(row.get("mode") == "infer");
        CHECK(row.get("batch") == std::to_string(b + 1));
        CHECK(row.get("height") == "32");
        CHECK(row.get("iters") == "3");
        CHECK(row.get("flops_per_step") == std::to_string(o["flops"].i64()));
        CHECK(std::stod(row.get("step_median_ms")) == doctest::Approx(o["median_ms"].num()).epsilon(1e-5));
        CHECK(std::stod(row.get("images_per_s")) == doctest::Approx(o["images_per_s"].num()).epsilon(1e-5));
        // Training-run columns do not apply to a bench row.
        for (const char* empty : {"label", "workers", "elapsed_s", "roof_fraction", "update_ms"})
            CHECK_MESSAGE(row.get(empty).empty(), empty);
        CHECK(!row.get("host").empty());
        CHECK(row.get("command").find("bench resnet18") != std::string::npos);
    }
}

TEST_CASE("bench train: forward and backward halves, the update apart, per-layer dgrad and wgrad") {
    Run r = clitest::ridge(small + " --mode train --batch 2 --format json --no-ledger");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    testjson::Value o = testjson::parse(r.out);
    CHECK(o["mode"].text == "train");
    for (const char* k : {"fwd_ms", "bwd_ms", "update_ms", "bwd_fwd_time", "bwd_fwd_flops", "loss", "loss_ms"})
        CHECK_MESSAGE(o.has(k), k);
    // The ratio printed is the one of the two medians printed (their sum need not be the step's
    // median: each is a median of its own samples; "step times: arithmetic" checks how they are made).
    // JSON prints 6 significant digits (5e-6 relative each): the ratio of two printed values and the
    // printed ratio agree to 1.5e-5.
    CHECK(o["bwd_fwd_time"].num() == doctest::Approx(o["bwd_ms"].num() / o["fwd_ms"].num()).epsilon(1.5e-5));
    CHECK(std::isfinite(o["loss"].num()));
    CHECK(o["loss"].num() > 0);
    testjson::Value s = testjson::parse(clitest::ridge("summary resnet18 --res 32 --batch 2 --format json").out);
    const auto& t = s["totals"];
    int64_t fwd = t["fwd_flops"].i64(), bwd = t["dgrad_flops"].i64() + t["wgrad_flops"].i64();
    CHECK(o["flops"].i64() == fwd + bwd);
    CHECK(o["bwd_fwd_flops"].num() == doctest::Approx(double(bwd) / double(fwd)).epsilon(1e-4));
    const auto& first = o["layers"].items.at(0);  // conv1: no dgrad, the input needs no gradient
    CHECK(first["name"].text == "conv1");
    CHECK(first["dgrad_flops"].i64() == 0);
    CHECK(first["wgrad_flops"].i64() > 0);
}

TEST_CASE("bench --roof: every phase's bound from the given ceilings, slow where over 4x it and 20 us") {
    // 100 GFLOP/s and 10 GB/s: the bounds follow from each layer's own counts in the same JSON.
    Run r = clitest::ridge(small + " --mode train --batch 2 --format json --no-ledger --roof 100,10");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    testjson::Value o = testjson::parse(r.out);
    CHECK(o["roof"]["peak_gflops"].num() == 100);
    CHECK(o["roof"]["bandwidth_gbs"].num() == 10);
    CHECK(o["roof"]["source"].text == "given by --roof");
    auto bound_ms = [](double flops, double bytes) { return std::max(flops / 100e9, bytes / 10e9) * 1e3; };
    auto slow = [](double ms, double bound) { return ms > 4 * bound && ms > 0.02; };
    int64_t n_slow = 0;
    for (const testjson::Value& l : o["layers"].items) {
        INFO(l["name"].text);
        double bwd_bytes = l["bwd_bytes"].num();
        double fb = bound_ms(l["fwd_flops"].num(), l["fwd_bytes"].num());
        double db = bound_ms(l["dgrad_flops"].num(), bwd_bytes), wb = bound_ms(l["wgrad_flops"].num(), bwd_bytes);
        CHECK(l["fwd_bound_ms"].num() == doctest::Approx(fb).epsilon(1e-5));
        CHECK(l["dgrad_bound_ms"].num() == doctest::Approx(db).epsilon(1e-5));
        CHECK(l["wgrad_bound_ms"].num() == doctest::Approx(wb).epsilon(1e-5));
        if (fb > 0) CHECK(l["fwd_vs_bound"].num() == doctest::Approx(l["fwd_ms"].num() / fb).epsilon(1e-4));
        if (wb > 0) CHECK(l["wgrad_vs_bound"].num() == doctest::Approx(l["wgrad_ms"].num() / wb).epsilon(1e-4));
        bool expect = slow(l["fwd_ms"].num(), fb) || slow(l["dgrad_ms"].num(), db) || slow(l["wgrad_ms"].num(), wb);
        CHECK(l["slow"].b == expect);
        CHECK(l["slow"].kind == testjson::Value::Kind::boolean);
        n_slow += expect;
    }
    CHECK(o["slow_layers"].i64() == n_slow);
    Run t = clitest::ridge(small + " --batch 1 --no-ledger --roof 100,10");
    REQUIRE_MESSAGE(t.code == 0, t.err);
    CHECK(t.out.find("layers over 4x their roofline bound and over 20 us; bounds at 100.0 GFLOP/s and 10.0 GB/s "
                     "(given by --roof)") != std::string::npos);
    Run c = clitest::ridge(small + " --batch 1 --format csv --no-ledger --roof 100,10");
    CHECK(c.out.find("fwd_bytes,bwd_bytes,fwd_bound_ms,dgrad_bound_ms,wgrad_bound_ms,slow\n") != std::string::npos);
}

// The tables' shape is what this case checks, so its per-layer runs take fixed ceilings: measuring
// the machine runs STREAM on arrays sized from the last-level cache, three of 2 GB on a guest told
// of its host's 508 MiB L3. The JSON cases above keep the measured ceilings.
TEST_CASE("bench table and csv") {
    Run t = clitest::ridge(small_reference + " --batch 1 --no-ledger --roof 100,10");
    REQUIRE_MESSAGE(t.code == 0, t.err);
    CHECK(t.out.find("resnet18 infer on cpu (reference") != std::string::npos);
    CHECK(t.out.find("per layer") != std::string::npos);
    CHECK(t.out.find("layer4.1.conv2") != std::string::npos);
    Run c = clitest::ridge(small + " --batch 1,2 --format csv --no-layers --no-ledger");
    REQUIRE_MESSAGE(c.code == 0, c.err);
    CHECK(lines(c.out) == 3);
    Run l = clitest::ridge(small + " --batch 1 --format csv --no-ledger --roof 100,10");
    testjson::Value s = testjson::parse(clitest::ridge("summary resnet18 --res 32 --format json").out);
    CHECK(lines(l.out) == 1 + int(s["layers"].items.size()));
}

TEST_CASE("bench refuses what it cannot do, in one line, writing nothing") {
    fs::path out = scratch() / "never.json";
    check_usage_error("bench nosuchnet", "unknown net 'nosuchnet'");
    check_usage_error("bench resnet18 --batch 1,x", "--batch must be positive integers separated by commas");
    check_usage_error("bench resnet18 --batch 2,2", "--batch lists 2 twice");
    check_usage_error("bench resnet18 --batch 0", "--batch must be positive integers");
    check_usage_error("bench resnet18 --mode fly", "unknown mode 'fly'");
    check_usage_error("bench resnet18 --backend cudnn", "unknown backend 'cudnn'");
    check_usage_error("bench resnet18 --device tpu", "unknown device 'tpu'");
    check_usage_error("bench resnet18 --threads 0", "--threads must be a positive integer");
    check_usage_error("bench resnet18 --warmup -1", "--warmup must be a non-negative integer");
    check_usage_error("bench googlenet --res 8", "below googlenet's minimum resolution of 15x15");
    check_usage_error("bench resnet18 --no-ledger --ledger x.csv", "exclude each other");
    check_usage_error("bench resnet18 --roof 100", "--roof must be two positive numbers");
    check_usage_error("bench resnet18 --roof 0,10", "--roof must be two positive numbers");
    check_usage_error("bench resnet18 --roof 100,10x", "--roof must be two positive numbers");
    // Far beyond any machine's memory: refused with both numbers before anything is allocated.
    check_usage_error("bench vgg16 --mode train --batch 4096 --out '" + out.string() + "'", "available");
    CHECK(!fs::exists(out));
    Run r = clitest::ridge("bench vgg16 --mode train --batch 1,4096 --no-ledger");
    CHECK(r.code == 2);
    CHECK(r.err.find("at batch 4096 needs") != std::string::npos);
    CHECK(r.out.empty());  // refused before batch 1 ran
}

TEST_CASE("bench --device cuda without a CUDA device: one line, exit 3 [may skip]") {
    if (ridge::probe::gpu::unavailable_reason().empty())
        return testskip::skip("a GPU is here; test_cudnn and scripts/gpu-check.sh cover it");
    Run r = clitest::ridge("bench resnet18 --device cuda --precision bf16");
    CHECK(r.code == 3);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find("no CUDA device is available") != std::string::npos);
    CHECK(r.out.empty());
}

TEST_CASE("bench --precision: fp32 on the CPU, anything else needs --device cuda") {
    check_usage_error("bench resnet18 --precision fp16", "--precision fp16 needs --device cuda");
    check_usage_error("bench resnet18 --precision bf16 --device cpu", "needs --device cuda");
    check_usage_error("bench resnet18 --precision fp64", "unknown precision 'fp64'");
    check_usage_error("bench resnet18 --cuda-graph", "--cuda-graph needs --device cuda");
    Run r = clitest::ridge(small + " --precision fp32 --no-layers --no-ledger --format json");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(!testjson::parse(r.out).has("precision"));  // the CPU output is unchanged
}

TEST_CASE("bench --help") {
    Run r = clitest::ridge("bench --help");
    CHECK(r.code == 0);
    for (const char* k : {"--batch", "--mode", "--threads", "--warmup", "--repeat", "--format", "--ledger"})
        CHECK_MESSAGE(r.out.find(k) != std::string::npos, k);
}

TEST_CASE("bench --no-winograd: every conv direct, and the JSON and the ledger say which ran") {
    check_usage_error("bench resnet18 --device cuda --no-winograd", "--no-winograd is for the CPU's oneDNN executor");
    // The plan reaches the executors: oneDNN has Winograd kernels on AVX-512 only. 512 -> 512 at 7x7
    // is 231 MFLOP of direct work, which inference runs as Winograd on so small a map (conv2d.cpp's
    // winograd_pays); its 4 tiles of 4x4 are too few for kernels/simd's below AVX-512.
    const bool avx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
    for (bool winograd : {true, false}) {
        CAPTURE(winograd);
        ridge::Graph g("wino");
        g.input({1, 512, 7, 7}) | ridge::conv(512, 3, {.pad = 1});
        ridge::bench::BenchPlan plan{.backend = "onednn", .winograd = winograd};
        ridge::bench::BenchJob job = ridge::bench::plan_job(std::move(g), plan);
        for (ridge::Executor* ex : {job.fused.get(), job.unfused.get()}) {
            ex->prepare();
            bool wino = false;
            for (const ridge::StepInfo& s : ex->steps()) wino |= s.impl.find("wino") != std::string::npos;
            CHECK(wino == (winograd && avx512));
        }
        fs::path ledger = scratch() / (winograd ? "wino_on.csv" : "wino_off.csv");
        Run r = clitest::ridge(ridge::cat("bench resnet18 --res 32 --warmup 0 --repeat 1 --no-layers --quiet --format json",
                                   winograd ? "" : " --no-winograd", " --ledger '", ledger.string(), "'"));
        REQUIRE_MESSAGE(r.code == 0, r.err);
        CHECK(testjson::parse(r.out)["winograd"].b == winograd);
        ridge::bench::LedgerFile f = ridge::bench::read_ledger_file(ledger.string());
        REQUIRE(f.rows.size() == 1);
        CHECK(f.rows[0].get("winograd") == (winograd ? "1" : "0"));
    }
}
