// `ridge profile`'s attribution, driven by scripted counts: which layer and phase each range is
// charged to, the totals per type and for the net, the ratios and every fact of the why column,
// as exact integers worked out by hand below. Then the same through run_profile() on the oneDNN
// executor with a fake counter source, to check the ranges line up with the executor's steps.
// Nothing here reads a clock's value.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "engine/dsl.h"
#include "profile/expected.h"
#include "profile/profile.h"

using namespace ridge;
using namespace ridge::profile;

namespace {

// x (2,3,8,8) -> conv 3x3 pad 1 to 4 channels -> bn -> relu -> global average pool -> fc 10.
Graph tiny() {
    Graph g("tiny");
    Tensor x = g.input({2, 3, 8, 8});
    (void)(x | named("conv", conv(4, 3, {.pad = 1})) | named("bn", bn()) | named("relu", relu()) |
           named("pool", adaptive_avgpool(1)) | named("flat", flatten()) | named("fc", linear(10)));
    return g;
}

int node(const Graph& g, const std::string& name) {
    for (size_t i = 0; i < g.nodes().size(); ++i)
        if (g.nodes()[i].name == name) return int(i);
    FAIL("no layer " << name);
    return -1;
}

StepInfo step(int n, StepPhase ph, std::string primitive, std::string impl, std::vector<StepArg> args = {}) {
    StepInfo s;
    s.node = n;
    s.phase = ph;
    s.primitive = std::move(primitive);
    s.impl = std::move(impl);
    s.args = std::move(args);
    return s;
}

// s on `threads` CPU threads; held: a one-thread step the rest of the team spins through.
StepInfo on(StepInfo s, int threads, bool held = false) {
    s.threads = threads;
    s.held = held;
    return s;
}

const Row& row(const Profile& p, const std::string& name, const std::string& phase) {
    for (const Row& r : p.rows)
        if (r.name == name && (r.with_wgrad ? "dgrad+wgrad" : std::string(step_phase_name(r.phase))) == phase) return r;
    FAIL("no row " << name << " " << phase);
    return p.rows.front();
}

bool has_fact(const Row& r, const std::string& part) {
    return std::any_of(r.why.begin(), r.why.end(), [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string facts(const Row& r) {
    std::string s;
    for (const auto& w : r.why) s += w + " | ";
    return s;
}

}  // namespace

TEST_CASE("taps inside the input, counted by hand") {
    // 8 wide, 3-tap window, pad 1: the two edge positions lose one tap each: 3*8 - 2.
    CHECK(taps_inside(8, 8, 3, 1, 1, 1) == 22);
    // resnet's conv1, 224 -> 112, 7 taps, stride 2, pad 3: p=0 loses 3, p=1 loses 1, p=111 loses 2.
    CHECK(taps_inside(224, 112, 7, 2, 3, 1) == 112 * 7 - 6);
    // A 1x1 stride-2 window never leaves the input.
    CHECK(taps_inside(56, 28, 1, 2, 0, 1) == 28);
    // 5 wide, 3 taps dilated by 2, pad 2: positions 0..4 keep 2, 2, 3, 2, 2.
    CHECK(taps_inside(5, 5, 3, 1, 2, 2) == 11);
    // One pixel, padded by 2 on each side, 3 outputs: each window holds the pixel once.
    CHECK(taps_inside(1, 3, 3, 1, 2, 1) == 3);
}

TEST_CASE("expected FLOPs: a direct convolution skips the zero padding, im2col + GEMM does not") {
    Graph g = tiny();
    int c = node(g, "conv");
    // MACs 2*4*8*8*3*3*3 = 13824, fwd 27648; inside the input 2*4*3*22*22 multiply-adds.
    std::optional<Expected> direct = expected_flops(g, c, StepPhase::fwd, "jit:avx2", 27648);
    REQUIRE(direct);
    CHECK(direct->flops == 2 * 2 * 4 * 3 * 22 * 22);
    CHECK(direct->why.find("16.0% of the MACs multiply zero padding") != std::string::npos);  // 1 - 484/576
    std::optional<Expected> gemm = expected_flops(g, c, StepPhase::fwd, "gemm:jit", 27648);
    REQUIRE(gemm);
    CHECK(gemm->flops == 27648);
    CHECK(!expected_flops(g, node(g, "fc"), StepPhase::fwd, "brgemm:avx512_core", 2 * 2 * 10 * 4 + 2 * 10));

    // kernels/simd ("ridge"): its depthwise kernels skip the padding, its grouped-by-4 conv does not.
    Graph d("dw");
    (void)(d.input({1, 8, 5, 5}) | named("dw", conv(8, 3, {.pad = 1, .groups = 8})) |
           named("g4", conv(8, 3, {.pad = 1, .groups = 2})));
    // 8 channels, 5x5 outputs, 3x3 taps: 1800 multiply-adds, 8 * 13 * 13 of them inside the map.
    std::optional<Expected> dw = expected_flops(d, node(d, "dw"), StepPhase::dgrad, "ridge,jit:uni", 3600);
    REQUIRE(dw);
    CHECK(dw->flops == 2 * 8 * 13 * 13);
    std::optional<Expected> g4 = expected_flops(d, node(d, "g4"), StepPhase::fwd, "ridge", 4 * 3600);
    REQUIRE(g4);
    CHECK(g4->flops == 4 * 3600);
}

TEST_CASE("attribution: rows per layer and phase, totals, ratios and the why column") {
    Graph g = tiny();
    Analysis a = analyze(g, DType::fp32);
    const int conv_n = node(g, "conv"), bn_n = node(g, "bn"), relu_n = node(g, "relu"), pool_n = node(g, "pool"),
              fc_n = node(g, "fc");
    StepArg w{"weights", {4, 3, 3, 3}, {16, 3, 3, 3}, "Abcd16a"};
    StepArg dw{"diff_weights", {4, 3, 3, 3}, {16, 3, 3, 3}, "Abcd16a"};
    // What a oneDNN training step of this net could look like: the input reordered for the conv,
    // batchnorm's backward writing both gradients, a reference pooling backward, the loss kernel.
    std::vector<StepInfo> steps = {
        step(conv_n, StepPhase::fwd, "reorder", "simple:any"),
        step(conv_n, StepPhase::fwd, "convolution", "jit:avx2", {w}),
        step(bn_n, StepPhase::fwd, "batch_normalization", "bnorm_jit:avx2"),
        step(relu_n, StepPhase::fwd, "eltwise", "jit:avx2"),
        step(pool_n, StepPhase::fwd, "pooling", "jit:avx2"),
        step(fc_n, StepPhase::fwd, "inner_product", "brgemm:avx2"),
        step(-1, StepPhase::loss, "kernel", "ridge"),
        step(fc_n, StepPhase::dgrad, "inner_product", "brgemm_bwd_d:avx2"),
        step(fc_n, StepPhase::wgrad, "inner_product", "brgemm_bwd_w:avx2"),
        step(pool_n, StepPhase::dgrad, "pooling", "ref:any"),
        step(relu_n, StepPhase::dgrad, "eltwise", "jit:avx2"),
        step(bn_n, StepPhase::dgrad, "batch_normalization", "bnorm_jit:avx2",
             {{"diff_src", {2, 4, 8, 8}, {2, 8, 8, 8}, "aBcd8b"}, {"diff_scale", {4}, {4}, "a"}}),
        step(conv_n, StepPhase::wgrad, "convolution", "jit:avx2", {dw}),
    };
    std::vector<Counter> counters = {{"ev.fma", "fma", Measure::flops, 2},
                                     {"ev.add", "add", Measure::flops, 1},
                                     {"ev.f64", "fp64 all", Measure::breakdown, 1},
                                     {"ev.dram", "dram read", Measure::dram_read, 64}};
    // Per step: fma count, add count, fp64 FLOPs, DRAM lines.
    std::vector<std::vector<int64_t>> counts = {
        {0, 0, 0, 3},           // reorder
        {11616, 0, 0, 10},      // conv fwd: 2*11616 = 23232, the direct kernel's expectation
        {1024, 0, 0, 4},        // bn fwd: 2048 = 4 per output element (the model: 2)
        {0, 0, 0, 2},           // relu fwd: nothing the counters count
        {0, 64, 0, 1},          // pool fwd: 64 adds
        {80, 20, 0, 1},         // fc fwd: 180 = 2*2*10*4 + 2*10
        {0, 500, 400, 0},       // loss
        {80, 0, 0, 1},          // fc dgrad: 160
        {80, 20, 0, 1},         // fc wgrad: 180
        {0, 512, 0, 1},         // pool dgrad
        {0, 512, 0, 2},         // relu dgrad
        {2560, 0, 0, 5},        // bn dgrad+wgrad: 5120 = 5+5 per element
        {11616, 0, 0, 9},       // conv wgrad
    };
    PhaseTimes times;
    times.layers.assign(g.nodes().size(), {});
    times.layers[size_t(conv_n)] = {0.25, 0, 0.5};
    times.layers[size_t(bn_n)] = {0.125, 0.0625, 0.03125};
    times.loss = 0.75;

    Profile p;
    p.mode = Mode::train;
    attribute(p, g, a, steps, counters, counts, times);
    REQUIRE(p.measured);

    SUBCASE("one row per layer phase that ran or that the model counts") {
        // conv: fwd, wgrad (its input needs no gradient); bn: fwd, dgrad+wgrad; relu, pool: fwd,
        // dgrad; flat: fwd (nothing to do backward); fc: fwd, dgrad, wgrad; the loss.
        std::vector<std::string> names;
        for (const Row& r : p.rows) names.push_back(r.name + ":" + (r.with_wgrad ? "dgrad+wgrad" : std::string(step_phase_name(r.phase))));
        CHECK(names == std::vector<std::string>{"conv:fwd", "conv:wgrad", "bn:fwd", "bn:dgrad+wgrad", "relu:fwd",
                                                "relu:dgrad", "pool:fwd", "pool:dgrad", "flat:fwd", "fc:fwd",
                                                "fc:dgrad", "fc:wgrad", "loss:loss"});
    }

    SUBCASE("a convolution: its reorder charged to it, the padding it skips, the layout's padding") {
        const Row& f = row(p, "conv", "fwd");
        CHECK(f.steps == 2);
        CHECK(f.impl == "jit:avx2");
        CHECK(f.analytic_flops == 27648);
        CHECK(f.expected_flops == 23232);
        CHECK(f.analytic_bytes == a.layers[size_t(conv_n)].c.fwd_traffic_bytes);
        REQUIRE(f.measured);
        CHECK(f.measured->flops == 23232);
        CHECK(f.measured->dram_read == (3 + 10) * 64);
        CHECK(f.measured->dram_write == -1);
        CHECK(f.seconds == 0.25);
        CHECK_MESSAGE(has_fact(f, "also ran: reorder simple:any (no FLOPs)"), facts(f));
        CHECK_MESSAGE(has_fact(f, "16.0% of the MACs multiply zero padding, which a direct kernel skips"), facts(f));
        CHECK_MESSAGE(has_fact(f, "counted/expected 1.00"), facts(f));
        CHECK_MESSAGE(has_fact(f, "weights K padded 4->16"), facts(f));
        const Row& w = row(p, "conv", "wgrad");
        CHECK(w.analytic_flops == 27648);
        // No dgrad row: the backward traffic sits on wgrad.
        CHECK(w.analytic_bytes == a.layers[size_t(conv_n)].c.bwd_traffic_bytes);
        CHECK(w.seconds == 0.5);
        CHECK_MESSAGE(has_fact(w, "diff_weights K padded 4->16"), facts(w));
    }

    SUBCASE("batchnorm: per element arithmetic, and one backward step for both gradients") {
        const Row& f = row(p, "bn", "fwd");
        CHECK(f.analytic_flops == 2 * 512);  // 2 per element of (2,4,8,8)
        CHECK(f.measured->flops == 2048);
        CHECK(ratio(f.measured->flops, f.analytic_flops) == 2.0);
        CHECK_MESSAGE(has_fact(f, "per output element the model counts 2.00 FLOPs, the counters 4.00 (fma 4.00)"), facts(f));
        const Row& b = row(p, "bn", "dgrad+wgrad");
        CHECK(b.with_wgrad);
        CHECK(b.analytic_flops == 5 * 512 + 5 * 512);
        CHECK(b.measured->flops == 5120);
        CHECK(b.seconds == 0.0625 + 0.03125);
        CHECK_MESSAGE(has_fact(b, "one step computes the data and the weight gradients"), facts(b));
        CHECK_MESSAGE(has_fact(b, "diff_src C padded 4->8"), facts(b));
        CHECK_MESSAGE(!has_fact(b, "per output element"), facts(b));  // no gap to explain
    }

    SUBCASE("what the counters do not see, a reference implementation, ridge's own kernel") {
        const Row& r = row(p, "relu", "fwd");
        CHECK(r.measured->flops == 0);
        CHECK_MESSAGE(has_fact(r, "the counters saw 0 FLOPs: its operations are not of the kinds they count"), facts(r));
        const Row& pd = row(p, "pool", "dgrad");
        CHECK(pd.impl == "ref:any");
        CHECK_MESSAGE(has_fact(pd, "oneDNN's reference implementation"), facts(pd));
        const Row& l = row(p, "loss", "loss");
        CHECK(l.layer == -1);
        CHECK(l.analytic_flops == 0);
        CHECK(l.measured->flops == 500);
        CHECK(l.seconds == 0.75);
        CHECK_MESSAGE(has_fact(l, "ridge's own kernel, not a library's"), facts(l));
        CHECK_MESSAGE(has_fact(l, "the model counts no FLOPs here"), facts(l));
        CHECK_MESSAGE(has_fact(l, "100% of counted FLOPs in fp64"), facts(l));  // 400 of a 400 breakdown
        const Row& flat = row(p, "flat", "fwd");
        CHECK(flat.steps == 0);
        CHECK(flat.measured->flops == 0);
    }

    SUBCASE("a linear layer matches the model: nothing to explain") {
        const Row& f = row(p, "fc", "fwd");
        CHECK(f.analytic_flops == 180);
        CHECK(f.measured->flops == 180);
        CHECK(f.expected_flops == 180);
        CHECK(f.why.empty());
        CHECK(row(p, "fc", "dgrad").analytic_flops == 160);
    }

    SUBCASE("totals per layer type and for the net are the sums of their rows") {
        int64_t analytic = 0, measured = 0, dram = 0;
        double seconds = 0;
        for (const Row& r : p.rows) {
            analytic += r.analytic_flops;
            measured += r.measured->flops;
            dram += r.measured->dram_read;
            seconds += r.seconds;
        }
        CHECK(p.total.rows == 13);
        CHECK(p.total.analytic_flops == analytic);
        CHECK(p.total.measured->flops == measured);
        // Every range is charged to exactly one row: the net's count is the sum over all ranges.
        CHECK(measured == 2 * (11616 + 1024 + 80 + 80 + 80 + 2560 + 11616) + 64 + 20 + 500 + 20 + 512 + 512);
        CHECK(dram == 40 * 64);
        CHECK(p.total.measured->dram_read == dram);
        CHECK(p.total.seconds == seconds);
        const Total* convs = nullptr;
        for (const Total& t : p.by_type)
            if (t.kind == "conv2d") convs = &t;
        REQUIRE(convs);
        CHECK(convs->rows == 2);
        CHECK(convs->analytic_flops == 2 * 27648);
        CHECK(convs->expected_flops == 2 * 23232);
        CHECK(convs->measured->flops == 2 * 23232);
        CHECK(convs->measured->counts == std::vector<int64_t>{2 * 11616, 0, 0, 3 + 10 + 9});
        int64_t by_type = 0;
        for (const Total& t : p.by_type) by_type += t.measured->flops;
        CHECK(by_type == measured);
    }
}

TEST_CASE("attribution without counts: implementations and times only") {
    Graph g = tiny();
    Profile p;
    p.mode = Mode::infer;
    std::vector<StepInfo> steps = {step(0, StepPhase::fwd, "convolution", "gemm:jit")};
    PhaseTimes t;
    t.layers.assign(g.nodes().size(), {0.5, 0, 0});
    attribute(p, g, analyze(g, DType::fp32), steps, {}, {}, t);
    CHECK(!p.measured);
    REQUIRE(p.rows.size() == g.nodes().size());  // inference: one forward row per layer
    CHECK(p.rows[0].impl == "gemm:jit");
    CHECK(!p.rows[0].measured);
    CHECK(has_fact(p.rows[0], "of the MACs multiply zero padding (counted: not a direct kernel)"));
    CHECK(p.rows[0].expected_flops == p.rows[0].analytic_flops);
    CHECK(p.total.seconds == 0.5 * double(g.nodes().size()));
    CHECK(!p.total.measured);
}

// The oneDNN executor gives a small step one thread (executor.cpp, threads_for) and may hold the
// team across it; the why column says so where a layer's main step ran on fewer threads than the
// most any step took, and only there: a reorder beside the main step does not count, nor do steps
// of a library that picks its own (threads 0).
TEST_CASE("the why column names a layer's threads where they are fewer than the run's most") {
    Graph g = tiny();
    const int conv_n = node(g, "conv"), relu_n = node(g, "relu"), pool_n = node(g, "pool"), fc_n = node(g, "fc");
    std::vector<StepInfo> steps = {
        on(step(conv_n, StepPhase::fwd, "convolution", "jit:avx2"), 2),
        on(step(relu_n, StepPhase::fwd, "reorder", "jit:uni"), 1),
        on(step(relu_n, StepPhase::fwd, "eltwise", "jit:avx2"), 2),
        on(step(pool_n, StepPhase::fwd, "pooling", "jit:avx2"), 1, true),
        on(step(fc_n, StepPhase::fwd, "inner_product", "brgemm:avx2"), 1),
    };
    Profile p;
    attribute(p, g, analyze(g, DType::fp32), steps, {}, {}, PhaseTimes{});
    CHECK_MESSAGE(!has_fact(row(p, "conv", "fwd"), "threads"), facts(row(p, "conv", "fwd")));
    CHECK_MESSAGE(!has_fact(row(p, "relu", "fwd"), "threads"), facts(row(p, "relu", "fwd")));
    CHECK_MESSAGE(has_fact(row(p, "pool", "fwd"), "on 1 of 2 threads: too little work to pay for waking more; held"),
                  facts(row(p, "pool", "fwd")));
    const Row& fc = row(p, "fc", "fwd");
    CHECK_MESSAGE(has_fact(fc, "on 1 of 2 threads"), facts(fc));
    CHECK_MESSAGE(!has_fact(fc, "held"), facts(fc));

    for (StepInfo& s : steps) s.threads = 0;  // cuDNN's steps
    Profile gpu;
    attribute(gpu, g, analyze(g, DType::fp32), steps, {}, {}, PhaseTimes{});
    for (const Row& r : gpu.rows) CHECK_MESSAGE(!has_fact(r, "threads"), r.name, ": ", facts(r));
}

// ridge's copies between plain and channel blocks run where oneDNN's reorders ran: a layout move
// charged to the layer that needs the layout, never its main step. A profile once took the copy
// before a conv as the conv's step: its row named the copy, its one thread and "ridge's own kernel".
TEST_CASE("a layout copy of ridge's before a layer's own step is not its main step") {
    Graph g = tiny();
    const int conv_n = node(g, "conv"), relu_n = node(g, "relu");
    std::vector<StepInfo> steps = {
        on(step(conv_n, StepPhase::fwd, "kernel", "ridge:plain_to_blocked"), 1),
        on(step(conv_n, StepPhase::fwd, "convolution", "brgconv:avx512_core"), 2),
        on(step(relu_n, StepPhase::fwd, "kernel", "ridge:blocked_to_plain"), 1),
        on(step(relu_n, StepPhase::fwd, "eltwise", "jit:avx512_core"), 2),
    };
    Profile p;
    attribute(p, g, analyze(g, DType::fp32), steps, {}, {}, PhaseTimes{});
    for (auto [name, impl] : {std::pair{"conv", "brgconv:avx512_core"}, std::pair{"relu", "jit:avx512_core"}}) {
        CAPTURE(name);
        const Row& r = row(p, name, "fwd");
        CHECK(r.steps == 2);
        CHECK(r.impl == impl);
        CHECK_MESSAGE(!has_fact(r, "ridge's own kernel"), facts(r));
        CHECK_MESSAGE(!has_fact(r, "threads"), facts(r));
    }
}

TEST_CASE("attribution refuses counts that do not line up with the steps") {
    Graph g = tiny();
    Profile p;
    std::vector<StepInfo> steps = {step(0, StepPhase::fwd, "convolution", "jit:avx2")};
    std::vector<Counter> c = {{"x", "x", Measure::flops, 1}};
    CHECK_THROWS_AS(attribute(p, g, analyze(g, DType::fp32), steps, c, {{1}, {2}}, PhaseTimes{}), std::logic_error);
}

#ifdef RIDGE_HAVE_ONEDNN
namespace {

// Scripted counts: in pass k, counter k of range r reads (r + 1) * (k + 1). Records what the
// profiler asked for.
class Scripted final : public CounterSource {
public:
    std::string describe() const override { return "scripted"; }
    const std::vector<Counter>& counters() const override { return counters_; }
    int passes() const override { return 2; }
    void prepare(size_t ranges) override { prepared = ranges; }
    void begin_pass(int pass) override {
        pass_ = pass;
        range_ = 0;
        ++passes_begun;
    }
    void begin_range(std::string_view name) override {
        CHECK(!open_);
        open_ = true;
        names.emplace_back(name);
    }
    void end_range() override {
        CHECK(open_);
        open_ = false;
        if (results_.size() <= range_) results_.resize(range_ + 1, std::vector<int64_t>(2, 0));
        results_[range_][size_t(pass_)] = int64_t(range_ + 1) * (pass_ + 1);
        ++range_;
    }
    void end_pass() override { ranges_per_pass.push_back(range_); }
    std::vector<std::vector<int64_t>> results() override { return results_; }

    size_t prepared = 0;
    int passes_begun = 0;
    std::vector<size_t> ranges_per_pass;
    std::vector<std::string> names;

private:
    std::vector<Counter> counters_ = {{"a", "a", Measure::flops, 1}, {"b", "b", Measure::flops, 1}};
    int pass_ = 0;
    size_t range_ = 0;
    bool open_ = false;
    std::vector<std::vector<int64_t>> results_;
};

}  // namespace

TEST_CASE("run_profile on the oneDNN executor: a range per step, every range charged once") {
    Graph g = tiny();
    ExecOptions o{.mode = Mode::train, .fused = false, .threads = 1};
    std::unique_ptr<Executor> ex = make_executor("onednn", g, o);
    Scripted src;
    ProfileOptions po;
    po.mode = Mode::train;
    po.warmup = 1;
    po.repeat = 1;
    int evictions = 0;
    po.before_step = [&] { ++evictions; };
    Profile p = run_profile(*ex, g, &src, po);
    std::vector<StepInfo> steps = ex->steps();
    const size_t S = steps.size();
    REQUIRE(S > g.nodes().size());
    CHECK(src.prepared == S);
    CHECK(src.passes_begun == 2);
    CHECK(src.ranges_per_pass == std::vector<size_t>{S, S});
    // The eviction runs before every step of the timed repeat and of each counting pass.
    CHECK(evictions == int(3 * S));
    CHECK(src.names.front() == "0:fwd");
    REQUIRE(p.measured);
    // Range r counts (r+1) in pass 0 and 2(r+1) in pass 1: each row holds 3 x the sum of its ranges'
    // ordinals, worked out here from the executor's own list of steps.
    std::map<std::pair<int, StepPhase>, int64_t> by;
    for (size_t r = 0; r < S; ++r) by[{steps[r].node, steps[r].phase}] += 3 * int64_t(r + 1);
    int64_t total = 0;
    for (const Row& r : p.rows) {
        CAPTURE(r.name);
        int64_t want = by[{r.layer, r.phase}] + (r.with_wgrad ? by[{r.layer, StepPhase::wgrad}] : 0);
        CHECK(r.measured->flops == want);
        total += r.measured->flops;
    }
    CHECK(total == 3 * int64_t(S) * int64_t(S + 1) / 2);
    CHECK(p.total.measured->flops == total);
    CHECK(p.source == "scripted");
    // Every row names the implementation oneDNN chose.
    for (const Row& r : p.rows)
        if (r.steps > 0) CHECK_MESSAGE(!r.impl.empty(), r.name);
}
#endif
