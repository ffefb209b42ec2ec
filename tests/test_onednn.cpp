// The oneDNN executor against the reference executor: every case of the op table (op_cases.h:
// each op alone and each fused group, forward, input and weight gradients and the SGD update, at
// the table's oneDNN tolerance), small whole nets in fused and unfused inference and in training,
// every zoo net's inference, fused and unfused, and every zoo net's plan free of oneDNN's slow
// reference primitives.
//
// Tolerance: 1e-4 (max_rel_diff: relative above 1, absolute below) for every output, as for the
// table's cases (op_cases.h says why); whole nets' gradients as their test case explains
// (batchnorm in training makes some of them ill-conditioned).
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "cpu_features.h"
#include "engine/analysis.h"
#include "engine/backend/executor.h"
#include "engine/backend/onednn/plan.h"
#include "engine/dsl.h"
#include "exec_compare.h"
#include "kernels/simd/simd.h"
#include "netdefs/zoo.h"
#include "op_cases.h"

using namespace ridge;
using namespace exec_compare;

namespace {

// oneDNN in fused and unfused inference and in training (unfused and fused), against the reference;
// the update is checked as w - lr * dw of oneDNN's own gradient. grads: the tolerance of every
// gradient, element by element; none checks inference alone.
void check_against_reference(const Graph& g, double tol, std::optional<double> grads) {
    Inputs in = inputs(g, 11);
    Result ref_infer = run("reference", g, Mode::infer, false, in);
    for (bool fused : {false, true}) {
        Result r = run("onednn", g, Mode::infer, fused, in);
        check_close(r.out, ref_infer.out, tol, cat(g.model(), fused ? " fused" : " unfused", " inference output"));
    }
    if (!grads) return;
    Result ref = run("reference", g, Mode::train, false, in);
    for (bool fused : {false, true}) {
        std::string mode = cat(g.model(), fused ? " fused" : " unfused", " training ");
        Result r = run("onednn", g, Mode::train, fused, in);
        check_close(r.out, ref.out, tol, mode + "output");
        CHECK(std::abs(r.loss - ref.loss) <= tol * std::max(1.0f, std::abs(ref.loss)));
        check_close(g, r.grads, ref.grads, *grads, mode + "gradient");
        if (g.tensor(0).requires_grad) check_close(r.dx, ref.dx, *grads, mode + "input gradient");
        check_close(g, r.after, sgd_step(in.w, r.grads), 1e-6, mode + "updated weights");
    }
}

// The primitive of each step the oneDNN executor plans for layers of type Op, in plan order
// ("kernel" for kernels/simd's, "reorder" for any layout_move), of one phase or of all. The loss's
// step is charged to no layer (node -1).
template <class Op>
std::vector<std::string> step_kinds(const Graph& g, Mode mode, std::optional<StepPhase> phase = {}) {
    auto ex = make_executor("onednn", g, {.mode = mode});
    ex->prepare();
    std::vector<std::string> kinds;
    for (const StepInfo& s : ex->steps())
        if (s.node >= 0 && (!phase || s.phase == *phase) &&
            std::holds_alternative<Op>(g.nodes()[size_t(s.node)].op))
            kinds.push_back(layout_move(s) ? "reorder" : s.primitive);
    return kinds;
}

// The implementations of the steps planned for one layer's phase, in plan order, space-separated.
std::string step_impls(const Executor& ex, int node, StepPhase phase) {
    std::string impls;
    for (const StepInfo& s : ex.steps())
        if (s.node == node && s.phase == phase) impls += (impls.empty() ? "" : " ") + s.impl;
    return impls;
}

}  // namespace

// Every case of the op table (op_cases.h) at its oneDNN tolerance, in the modes it states; a case
// the table says oneDNN cannot run must be refused with the reason it gives.
TEST_CASE("every case of the op table matches the reference") {
    for (const op_cases::OpCase& c : op_cases::all()) {
        SUBCASE(c.name.c_str()) {
            INFO(c.name, ": ", c.what);
            Graph g = c.graph();
            if (const op_cases::Refusal* r = c.refusal("onednn"))
                CHECK_THROWS_WITH(make_executor("onednn", g, {}), doctest::Contains(r->why.c_str()));
            else
                check_against_reference(g, c.tol.onednn, c.train ? std::optional(c.tol.onednn) : std::nullopt);
        }
    }
}

TEST_CASE("the AVX-512 paths are for ISAs with AVX-512's bits, not for ISAs above it in the enum") {
    using dnnl::cpu_isa;
    for (cpu_isa isa : {cpu_isa::sse41, cpu_isa::avx, cpu_isa::avx2, cpu_isa::avx2_vnni, cpu_isa::avx512_mic,
                        cpu_isa::avx512_mic_4ops})
        CHECK_FALSE(onednn::has_avx512_core(isa));
    for (cpu_isa isa :
         {cpu_isa::avx512_core, cpu_isa::avx512_core_vnni, cpu_isa::avx512_core_bf16, cpu_isa::avx512_core_amx})
        CHECK(onednn::has_avx512_core(isa));
    // Here: the CPU's own features, under the cap test_onednn_<isa> runs with.
    const std::string cap = std::getenv("ONEDNN_MAX_CPU_ISA") ? std::getenv("ONEDNN_MAX_CPU_ISA") : "";
    const bool capped = !cap.empty() && cap != "ALL";
    CHECK(onednn::avx512_core_here() == (cpu_has_avx512_core() && (!capped || cap.starts_with("AVX512_CORE"))));
}

TEST_CASE("layouts oneDNN calls equal get one descriptor") {
    using onednn::canonical;
    using Md = dnnl::memory::desc;
    const auto f32 = dnnl::memory::data_type::f32;
    auto strides = [](const Md& m) {
        const auto& b = m.data.format_desc.blocking;
        return std::vector<int64_t>(b.strides, b.strides + m.data.ndims);
    };
    SUBCASE("plain and channels-last over a (1,232,1,1) tensor") {
        Md nchw({1, 232, 1, 1}, f32, dnnl::memory::format_tag::nchw), nhwc({1, 232, 1, 1}, f32, dnnl::memory::format_tag::nhwc);
        CHECK(strides(nchw) != strides(nhwc));
        CHECK(strides(canonical(nchw)) == strides(canonical(nhwc)));
        CHECK(strides(canonical(nchw)) == std::vector<int64_t>{232, 1, 232, 232});
        CHECK(canonical(nchw).get_size() == nchw.get_size());
    }
    SUBCASE("dimensions larger than 1 keep their strides, and so does a padded channel dimension") {
        Md x({1, 3, 4, 1}, f32, dnnl::memory::format_tag::nChw8c);
        Md c = canonical(x);
        const auto before = strides(x), after = strides(c);
        CHECK(after[1] == before[1]);  // C = 3 is padded to 8: not a size-1 dimension for oneDNN
        CHECK(after[2] == before[2]);
        CHECK(after[0] == 32);  // the whole extent: 8 padded channels x 4 rows
        CHECK(after[3] == 32);
        CHECK(c.get_size() == x.get_size());
        CHECK(c == x);
    }
    SUBCASE("a view into a larger buffer keeps its extent") {
        Md whole({1, 8, 2, 2}, f32, dnnl::memory::format_tag::nchw);
        Md half = whole.submemory_desc({1, 4, 2, 2}, {0, 4, 0, 0});
        CHECK(canonical(half).get_size() == half.get_size());
    }
}


namespace {

// A two-layer ViT as torchvision builds its encoder (netdefs/vit.cpp), small enough for the
// reference executor: patches, class token, position embedding, pre-norm attention and MLP.
Graph mini_vit(int64_t N = 2) {
    Graph g("mini_vit");
    Tensor x = g.input({N, 3, 32, 32});
    const int64_t D = 32, heads = 4;
    x = x | conv(D, 8, {.stride = 8, .bias = true}) | flatten(2) | permute({0, 2, 1}) | class_token() | pos_embedding();
    for (int i = 0; i < 2; ++i) {
        Scope s(x, cat("layer", i));
        Tensor h = x | ln();
        Tensor qkv = h | linear(3 * D) | reshape({0, 0, 3, heads, -1}) | permute({0, 2, 3, 1, 4});
        Tensor q = qkv | select(1, 0) | scale(1.0 / std::sqrt(double(D / heads)));
        Tensor attn = matmul(q, qkv | select(1, 1), true) | softmax() | dropout(0.0);
        Tensor o = matmul(attn, qkv | select(1, 2)) | permute({0, 2, 1, 3}) | reshape({0, 0, -1}) | linear(D);
        x = add(o | dropout(0.0), x);
        x = add(x, x | ln() | linear(2 * D) | gelu() | linear(D));
    }
    x | ln() | select(1, 0) | linear(10);
    return g;
}

// A permutation of a channels-last map is a view of it (layout.cpp), so the map must outlive every
// reader of the permutation: here a residual sum that could run in place over x, x's last reader
// by the graph's own storage, comes before the permutation is read again.
Graph permuted_view_outlives_sum() {
    Graph g("permuted_view");
    Tensor x = g.input({2, 16, 8, 8}) | conv(32, 1, {.bias = true});
    Tensor t = x | permute({0, 2, 3, 1});
    Tensor s = add(x | conv(32, 1) | conv(32, 3, {.pad = 1}), x);
    add(t | permute({0, 3, 1, 2}), s) | adaptive_avgpool(1) | flatten() | linear(10);
    return g;
}

}  // namespace

TEST_CASE("small whole nets match the reference in inference and training") {
    // At 64x64 the last stages are 2x2, so a batchnorm in training normalizes 8 values per channel:
    // enough to keep resnet18's gradients as well conditioned as its forward.
    SUBCASE("resnet18") { check_against_reference(build(*find_net("resnet18"), 2, 64, 64), 1e-4, 2e-4); }
    SUBCASE("vit") { check_against_reference(mini_vit(), 1e-4, 2e-4); }
    SUBCASE("a permutation read after an in-place sum over its input") {
        check_against_reference(permuted_view_outlives_sum(), 1e-4, 2e-4);
    }
    // MobileNetV2 and EfficientNet-B0 at random initialization are not: moving every weight of the
    // reference by one part in 1e7 moves single gradients of layers many batchnorms deep by more
    // than their size. Their inference is compared here, element by element; their training step
    // tensor by tensor against the double reference, within the float32 spread measured for each
    // tensor (exec_compare.h, check_against_f64), fused and unfused.
    // Each in a subcase of its own: doctest reruns the case once per subcase, and code outside them
    // on every pass (this loop ran three times, 50 s of the sanitized test_onednn_ops).
    for (const char* net : {"mobilenet_v2", "efficientnet_b0"}) {
        SUBCASE(net) {
            Graph g = build(*find_net(net), 2, 64, 64);
            check_against_reference(g, 1e-4, std::nullopt);
            F64Summary s = check_against_f64(g, inputs(g, 11), {{"onednn", false}, {"onednn", true}}, true);
            MESSAGE(std::string(net), ": worst (error - floor) / spread ", s.worst_ratio, " (", s.worst, "), eta ",
                    s.eta, ", relative error admitted: median ", s.median_allowed);
        }
    }
}

TEST_CASE("every zoo net's inference matches the reference at its smallest resolution, fused and unfused") {
#ifdef RIDGE_SANITIZED
    // Sanitized, every weight is generated and copied through instrumented code: the whole zoo
    // took 390 s of the sanitizer job on 2 loaded cores, mostly in the nets with the most weights.
    // Those (vgg*, wide_resnet*, resnet101/152, alexnet, efficientnet_b7, vit_b_16) repeat layer
    // kinds the smaller nets cover, so the sanitized build checks the nets up to 30M parameters and
    // says which it left out; the Release build checks all 31.
    constexpr int64_t max_params = 30'000'000;
#else
    constexpr int64_t max_params = std::numeric_limits<int64_t>::max();
#endif
    std::string left_out;
    for (const ZooEntry& e : zoo()) {
        int64_t r = min_resolution(e);
        Graph g = build(e, 1, r, r);
        if (analyze(g, DType::fp32).totals.params > max_params) {
            left_out += cat(left_out.empty() ? "" : ", ", e.name);
            continue;
        }
        Inputs in = inputs(g, 3);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (bool fused : {true, false})
            check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4,
                        cat(e.name, fused ? " fused" : " unfused", " at ", r, "x", r));
    }
    if (!left_out.empty()) MESSAGE("sanitized build: left out the nets above 30M parameters: " << left_out);
}

TEST_CASE("per-layer times: one per layer unfused, a fused group's on its first layer") {
    Graph g = build(*find_net("resnet18"), 1, 64, 64);
    Inputs in = inputs(g, 5);
    const size_t conv1 = size_t(g.find("conv1") - g.nodes().data()), bn1 = size_t(g.find("bn1") - g.nodes().data());
    for (bool fused : {false, true}) {
        CAPTURE(fused);
        auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = fused});
        CHECK(ex->planned_bytes() > 0);
        ex->prepare();
        ex->load(in.w);
        ex->set_input(in.x, in.labels);
        ex->time_layers(true);
        ex->forward();
        const StepTimes& t = ex->step_times();
        REQUIRE(t.layers.size() == g.nodes().size());
        CHECK(t.layers[conv1].fwd > 0);
        CHECK((t.layers[bn1].fwd > 0) == !fused);
        for (size_t i = 0; i < g.nodes().size(); ++i)
            if (!fused && std::holds_alternative<Conv2d>(g.nodes()[i].op)) CHECK(t.layers[i].fwd > 0);
    }
    auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
    ex->prepare();
    ex->load(in.w);
    ex->set_input(in.x, in.labels);
    ex->time_layers(true);
    ex->forward();
    ex->backward();
    const StepTimes& t = ex->step_times();
    CHECK(t.loss > 0);
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        if (!std::holds_alternative<Conv2d>(g.nodes()[i].op)) continue;
        INFO(g.nodes()[i].name);
        CHECK(t.layers[i].wgrad > 0);
        CHECK((t.layers[i].dgrad > 0) == (i != conv1));  // the image needs no gradient
    }
}

// Which convs run as Winograd; the op table's conv_wino cases (their maps past the 729 output
// positions from which one image's inference takes it) and the small nets' training check their
// numbers. oneDNN 2.6 has Winograd kernels on AVX-512 only; below it kernels/simd's take them ("k").
TEST_CASE("3x3 stride-1 convs with 9CK / (C + K) of 128 or more run as Winograd: oneDNN's on AVX-512, backward too") {
    Graph g("wino");
    g.input({2, 16, 20, 20}) | conv(64, 3, {.pad = 1}) | conv(64, 3, {.pad = 1}) |
        conv(64, 3, {.stride = 2, .pad = 1}) | conv(64, 3, {.pad = 1, .dilation = 2}) |
        conv(64, 3, {.pad = 1, .groups = 2}) | conv(64, 1);
    // 16 -> 64: 115 (the reorders eat the gain); 64 -> 64: 288; then strided, dilated, grouped, 1x1.
    // The Winograd conv has 2x20x20 = 800 output positions, enough for inference and training.
    const std::string expected = "dwdddd";
    const bool avx512 = onednn::avx512_core_here();
    // Per node and phase, "w" for a Winograd conv, "d" for a direct one, "-" for none.
    auto convs = [](ExecOptions o, StepPhase phase, const Graph& net) {
        auto ex = make_executor("onednn", net, o);
        ex->prepare();
        std::string kinds(net.nodes().size(), '-');
        for (const StepInfo& s : ex->steps())
            if (s.phase == phase && s.primitive == "convolution")
                kinds[size_t(s.node)] = s.impl.find("wino") != std::string::npos ? 'w' : 'd';
            else if (s.phase == phase && s.primitive == "kernel" && !layout_move(s) &&
                     std::holds_alternative<Conv2d>(net.nodes()[size_t(s.node)].op))
                kinds[size_t(s.node)] = 'k';
        return kinds;
    };
    // Below AVX-512 they run as kernels/simd's winograd3x3 ("k") from 9CK / (C + K) of 64 on, the 16
    // -> 64 conv too: in inference, and in training the gradients, the forward staying direct.
    const std::string wino = avx512 ? expected : "kkdddd", none = "dddddd";
    for (bool fused : {true, false}) {
        CHECK(convs({.mode = Mode::infer, .fused = fused}, StepPhase::fwd, g) == wino);
        CHECK(convs({.mode = Mode::train, .fused = fused}, StepPhase::fwd, g) == (avx512 ? expected : none));
    }
    // The image needs no gradient: the first conv has no data gradient.
    CHECK(convs({.mode = Mode::train}, StepPhase::dgrad, g) == "-" + wino.substr(1));
    CHECK(convs({.mode = Mode::train}, StepPhase::wgrad, g) == wino);
    for (Mode mode : {Mode::infer, Mode::train})
        CHECK(convs({.mode = mode, .winograd = false}, StepPhase::fwd, g) == none);

    // Training transforms the weights on every step: on AVX-512 one image of 15x15 (225 output
    // positions) stays direct there, 16x16 (256) and more is Winograd. Inference, whose weights
    // are transformed once, takes Winograd from 729 output positions (27x27), or below them for
    // 200 MFLOP of direct work on channel counts that are powers of two (conv2d.cpp's
    // winograd_pays): 64 -> 64 at 26x26 is 50 MFLOP, 512 -> 512 at 7x7 231. Below AVX-512
    // kernels/simd's run the 64 -> 64 convs in inference and the gradients in training (16 tiles
    // or more); 7x7 is 4 tiles, direct.
    struct OneImage {
        int64_t channels, side;
        const char *infer, *train;  // on AVX-512
    };
    for (const OneImage& c : {OneImage{64, 15, "d", "d"}, OneImage{64, 16, "d", "w"}, OneImage{64, 26, "d", "w"},
                              OneImage{64, 27, "w", "w"}, OneImage{512, 7, "w", "d"}}) {
        CAPTURE(c.channels);
        CAPTURE(c.side);
        Graph one("wino_one_image");
        one.input({1, c.channels, c.side, c.side}) | conv(c.channels, 3, {.pad = 1});
        const bool tiles = c.side > 7;
        CHECK(convs({.mode = Mode::infer}, StepPhase::fwd, one) == (avx512 ? c.infer : tiles ? "k" : "d"));
        CHECK(convs({.mode = Mode::train}, StepPhase::fwd, one) == (avx512 ? c.train : "d"));
        CHECK(convs({.mode = Mode::train}, StepPhase::wgrad, one) == (avx512 ? c.train : tiles ? "k" : "d"));
    }
    // On fewer than 729 positions, channel counts other than powers of two stay direct however
    // much work (alexnet's conv3, 192 -> 384 at 13x13: 224 MFLOP); on 27x27 they take Winograd.
    for (int64_t side : {13, 27}) {
        Graph one("wino_not_power_of_two");
        one.input({1, 192, side, side}) | conv(384, 3, {.pad = 1});
        CHECK(convs({.mode = Mode::infer}, StepPhase::fwd, one) == (avx512 ? side == 27 ? "w" : "d" : "k"));
    }
}

// Below AVX-512 (this host, or under the AVX2 cap) winograd3x3 runs in inference with what the
// fusion gives it: a folded batchnorm, a residual sum and a ReLU; in training, the forward direct,
// as its data gradient and winograd3x3_wgrad. A map of fewer than 16 tiles stays direct, and so does
// every conv without Winograd (ExecOptions::winograd). Fused and unfused, the output and in
// training every gradient match the reference. (The kernels' layouts and post-ops are checked
// against sums below.)
TEST_CASE("winograd3x3 runs below AVX-512 with its folded batchnorm, residual sum and ReLU, and trains") {
    const bool avx512 = onednn::avx512_core_here();
    Graph g("wino_block");
    Tensor a = g.input({2, 4, 10, 9}) | conv(64, 3, {.pad = 1}) | bn() | relu();
    Tensor b = a | conv(64, 3, {.pad = 1}) | bn() | relu() | conv(64, 3, {.pad = 1}) | bn();
    Tensor c = add(b, a) | relu() | conv(40, 3, {.pad = 1}) | conv(64, 3, {.pad = 1});
    add(c | conv(64, 3, {.pad = 1}), c) | conv(64, 3, {.pad = Padding(0, 2, 1, 1)}) | maxpool(2) |
        conv(64, 3, {.pad = 1});
    // Convs: 4 -> 64 (direct: 9CK / (C + K) 34), two of 64 -> 64 (the second with the sum), 64 ->
    // 40, 40 -> 64, one whose residual is its own input (copied into its output first), one padded
    // 0 above and 2 below, and 64 -> 64 on a 5x4 map of 2 x 1 tiles an image (4 in all: direct).
    check_against_reference(g, 1e-4, 2e-4);
    std::vector<std::string> kinds = step_kinds<Conv2d>(g, Mode::infer, StepPhase::fwd);
    const std::string k = avx512 ? "convolution" : "kernel";
    // The first conv reads the plain image; the residual's copy is charged to its conv, the output's
    // reorder into plain to the last.
    CHECK(kinds == std::vector<std::string>{"convolution", k, k, k, k, "reorder", k, k, "convolution", "reorder"});
    // 8 -> 8 channels (9CK / (C + K) 36) stay direct.
    Graph narrow("wino_narrow");
    narrow.input({2, 8, 12, 12}) | conv(8, 3, {.pad = 1});
    CHECK(step_kinds<Conv2d>(narrow, Mode::infer, StepPhase::fwd)[0] != "kernel");
    auto direct = make_executor("onednn", g, {.mode = Mode::infer, .winograd = false});
    direct->prepare();
    for (const StepInfo& s : direct->steps())
        if (std::holds_alternative<Conv2d>(g.nodes()[size_t(s.node)].op) && !layout_move(s))
            CHECK(s.primitive != "kernel");
    // In training the forward stays direct; each Winograd conv's data gradient runs two kernels (the
    // weights' transform and the conv), its weight gradient one; the first conv has no data gradient,
    // and below AVX-512 its weight gradient is image_conv_wgrad (jit:avx2 reads the image plain).
    const int64_t wino = avx512 ? 0 : 6;
    auto trained = make_executor("onednn", g, {.mode = Mode::train});
    trained->prepare();
    std::string first_src;
    for (const StepInfo& s : trained->steps())
        if (s.node == 0 && s.phase == StepPhase::fwd && s.primitive == "convolution") first_src = s.args[0].layout;
    if (!avx512) CHECK(first_src == "abcd");
    const int64_t image = avx512 ? 0 : 1;
    for (auto [phase, per] : {std::pair{StepPhase::fwd, 0}, {StepPhase::dgrad, 2}, {StepPhase::wgrad, 1}}) {
        std::vector<std::string> train = step_kinds<Conv2d>(g, Mode::train, phase);
        CAPTURE(int(phase));
        const int64_t direct = phase == StepPhase::fwd ? 8 : phase == StepPhase::dgrad ? 7 - wino : 8 - wino - image;
        CHECK(std::count(train.begin(), train.end(), "convolution") == direct);
        CHECK(std::count(train.begin(), train.end(), "kernel") == per * wino + (phase == StepPhase::wgrad ? image : 0));
    }
}

// Grouped 3x3 stride-1 convs whose groups' 9CK / (C + K) reach 64 (16, 24 and 32 channels a
// group: 72, 108 and 144) infer as winograd3x3 below AVX-512, with their folded batchnorm, a
// residual sum and a ReLU, in their neighbours' layout. Groups of 8 (36) stay grouped_conv3x3, and
// 16 -> 8 a group (48; the whole conv's 9CK / (C + K) is 288) oneDNN's convolution. In training no
// grouped conv runs Winograd in any phase. The outputs and gradients match the reference.
// (test_simd_kernels checks the grouped kernel's layouts and post-ops against sums.)
TEST_CASE("grouped 3x3 convs of 16, 24 and 32 channels a group infer as winograd3x3 below AVX-512") {
    const bool avx512 = onednn::avx512_core_here();
    Graph g("wino_grouped");
    Tensor a = g.input({2, 8, 12, 12}) | conv(96, 1) | bn() | relu();
    Tensor b = a | conv(96, 3, {.pad = 1, .groups = 4}) | bn() | relu() | conv(96, 3, {.pad = 1, .groups = 6}) | bn();
    add(b, a) | relu() | conv(96, 3, {.pad = 1, .groups = 3}) | conv(96, 3, {.pad = 1, .groups = 12}) |
        conv(48, 3, {.pad = 1, .groups = 6}) | conv(32, 1);
    check_against_reference(g, 1e-4, 2e-4);
    // The grouped convs' steps of a phase, as the primitive or a kernel's impl (which names it).
    auto grouped = [&](Mode mode, StepPhase phase) {
        std::vector<std::string> kinds;
        auto ex = make_executor("onednn", g, {.mode = mode});
        ex->prepare();
        for (const StepInfo& s : ex->steps()) {
            if (s.node < 0 || s.phase != phase) continue;
            const Node& n = g.nodes()[size_t(s.node)];
            const auto* c = std::get_if<Conv2d>(&n.op);
            if (c && c->G > 1) kinds.push_back(s.primitive == "kernel" ? s.impl : s.primitive);
        }
        return kinds;
    };
    const std::vector<std::string> infer = grouped(Mode::infer, StepPhase::fwd);
    std::string listed;
    for (const std::string& k : infer) listed += k + " ";
    INFO("inference: ", listed);
    if (avx512) {
        CHECK(std::count(infer.begin(), infer.end(), "ridge:winograd3x3") == 0);
    } else {
        CHECK(infer == std::vector<std::string>{"ridge:winograd3x3", "ridge:winograd3x3", "ridge:winograd3x3",
                                                "ridge:grouped_conv3x3", "convolution"});
    }
    for (StepPhase phase : {StepPhase::fwd, StepPhase::dgrad, StepPhase::wgrad}) {
        CAPTURE(int(phase));
        const std::vector<std::string> train = grouped(Mode::train, phase);
        CHECK(!train.empty());
        for (const std::string& k : train) CHECK(k.find("winograd") == std::string::npos);
    }
}

// Which depthwise convs run as a post-op of the 1x1 conv before them (fusion.h); the op table's
// pw_dw cases check their numbers. Per node, "f" for a conv step that also runs a depthwise conv
// (it has dw_weights), "c" for a conv step alone, "-" for none.
TEST_CASE("a 1x1 conv's chain takes the depthwise 3x3 conv after it where the expanded tensor has 8 MiB or more") {
    auto convs = [](const Graph& g, ExecOptions o) {
        auto ex = make_executor("onednn", g, o);
        ex->prepare();
        std::string kinds(g.nodes().size(), '-');
        for (const StepInfo& s : ex->steps()) {
            if (s.phase != StepPhase::fwd || s.primitive != "convolution") continue;
            bool dw = false;
            for (const StepArg& a : s.args) dw = dw || a.name == "dw_weights";
            // oneDNN's reference fusion runs the two convs in turn, slower than apart.
            if (dw) CHECK_MESSAGE(s.impl.rfind("ref", 0) != 0, g.model(), ": ", s.impl);
            kinds[size_t(s.node)] = dw ? 'f' : 'c';
        }
        return kinds;
    };
    auto block = [](int64_t H, int64_t K, int stride) {
        Graph g(cat("pw_dw_", H, "_", K, "_", stride));
        g.input({2, 8, H, H}) | conv(K, 1) | bn() | relu6() | conv(K, 3, {.stride = stride, .pad = 1, .groups = int(K)}) |
            bn() | relu6() | conv(8, 1);
        return g;
    };
    // 2x256x64x64 floats: 8 MiB exactly. Nodes: conv bn relu6 conv bn relu6 conv.
    const bool avx512 = onednn::avx512_core_here();
    for (int stride : {1, 2}) {
        CHECK(convs(block(64, 256, stride), {.mode = Mode::infer}) == "f-----c");
        CHECK(convs(block(64, 255, stride), {.mode = Mode::infer}) == "c--c--c");
        CHECK(convs(block(64, 256, stride), {.mode = Mode::infer, .fused = false}) == "c--c--c");
        CHECK(convs(block(64, 256, stride), {.mode = Mode::train}) == "c--c--c");
        // 72 channels: 4.5 blocks of 16, which oneDNN's AVX-512 kernel does not fuse, while its
        // AVX2 one, in blocks of 8, does. Planned apart where the fusion would be the reference.
        CHECK(convs(block(121, 72, stride), {.mode = Mode::infer}) == (avx512 ? "c--c--c" : "f-----c"));
    }
    // Not a depthwise 3x3 with padding 1: 5x5, padding 0, dilated; nor after a 3x3 or a summing conv.
    auto after = [](const char* name, auto dw) {
        Graph g(name);
        dw(g.input({2, 8, 64, 64}) | conv(256, 1) | relu());
        return g;
    };
    CHECK(convs(after("dw5", [](Tensor t) { return t | conv(256, 5, {.pad = 2, .groups = 256}); }), {}) == "c-c");
    CHECK(convs(after("dw_p0", [](Tensor t) { return t | conv(256, 3, {.groups = 256}); }), {}) == "c-c");
    CHECK(convs(after("dw_dil", [](Tensor t) { return t | conv(256, 3, {.pad = 2, .dilation = 2, .groups = 256}); }),
                {}) == "c-c");
    CHECK(convs(after("dw_ok", [](Tensor t) { return t | conv(256, 3, {.pad = 1, .groups = 256}); }), {}) == "f--");
    Graph summed("summed");
    Tensor x = summed.input({2, 256, 64, 64});
    add(x | conv(256, 1), x) | conv(256, 3, {.pad = 1, .groups = 256});
    CHECK(convs(summed, {}) == "c-c");
    // A SiLU over a map runs after its conv, in place (fusion.cpp), which ends the chain.
    CHECK(convs(after("silu_between", [](Tensor t) { return t | silu() | conv(256, 3, {.pad = 1, .groups = 256}); }),
                {}) == "c--c");
    // The op table's cases, which check the numbers, do run fused.
    for (const op_cases::OpCase& c : op_cases::all()) {
        if (c.name.rfind("pw_dw", 0) != 0) continue;
        // On AVX-512 at batch 2, pw_dw_after_nhwc's first conv writes channels-last: apart.
        const bool fuses = c.name == "pw_dw_bias_after_unbiased"
                               ? false
                               : (c.name != "pw_dw_apart" && c.name != "pw_dw_after_nhwc") || !avx512;
        CHECK_MESSAGE((convs(c.graph(), {}).find('f') != std::string::npos) == fuses, c.name);
    }
    Graph wide("after_3x3");
    wide.input({2, 4, 64, 64}) | conv(256, 3, {.pad = 1}) | conv(256, 3, {.pad = 1, .groups = 256});
    CHECK(convs(wide, {}) == "cc");
}

namespace {
int nhwc_convs(const Executor& ex) {
    int n = 0;
    for (const StepInfo& s : ex.steps()) n += s.primitive == "convolution" && s.args[0].layout == "acdb";
    return n;
}
}  // namespace

// At batch 2 and more on AVX-512, inference convs run nChw16c from the image on (conv2d.cpp):
// every conv after the first reads nChw16c in place, and the numbers match the reference. The zoo's
// other checks run batch 1, where channels-last stays but for SqueezeNet, the ResNets and the VGGs.
TEST_CASE("at batch 8 on AVX-512 inference convs keep nChw16c from the image on, and match the reference") {
    const bool avx512 = onednn::avx512_core_here();
    for (const char* net : {"mobilenet_v2", "mnasnet1_0", "squeezenet1_1", "resnet18", "shufflenet_v2_x1_0",
                            "mobilenet_v3_small", "regnet_y_400mf", "googlenet"}) {
        const ZooEntry& e = *find_net(net);
        const int64_t r = std::max<int64_t>(64, min_resolution(e));
        Graph g = build(e, 8, r, r);
        Inputs in = inputs(g, 4);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (bool fused : {true, false})
            check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4,
                        cat(net, fused ? " fused" : " unfused", " at batch 8"));
        // The last four have convs that leave nChw16c on purpose (a shuffle's plain halves, a
        // squeeze-excitation's inner products, grouped convs' own blockings, concatenations).
        const bool kept_throughout = std::string(net) == "mobilenet_v2" || std::string(net) == "mnasnet1_0" ||
                                     std::string(net) == "squeezenet1_1" || std::string(net) == "resnet18";
        if (!avx512 || !kept_throughout) continue;
        auto ex = make_executor("onednn", g, {.mode = Mode::infer});
        ex->prepare();
        int convs = 0;
        for (const StepInfo& s : ex->steps()) {
            // The pooled 1x1 map in whole channel blocks is plain rows: its flatten is a view
            // (squeezenet1_1's 1000 classes pad their last block: a copy of 16 KB).
            const Node& n = g.nodes()[size_t(s.node)];
            if (std::holds_alternative<Flatten>(n.op))
                CHECK_MESSAGE(g.tensor(n.inputs[0]).shape[1] % 16 != 0, std::string(net), ": a flatten copies");
            if (s.primitive != "convolution") continue;
            const std::string want = convs++ == 0 ? "abcd" : "aBcd16b";
            CHECK_MESSAGE(s.args[0].layout == want, net, ": node ", s.node, " reads ", s.args[0].layout);
        }
        // The batch-1 plan stays channels-last, but for SqueezeNet's fires and the stacks of
        // ungrouped 1x1 and 3x3 convs (conv2d.cpp's blocked_one_image).
        Graph one = build(e, 1, r, r);
        auto ex1 = make_executor("onednn", one, {.mode = Mode::infer});
        ex1->prepare();
        const bool blocked_one = std::string(net) == "squeezenet1_1" || std::string(net) == "resnet18";
        CHECK_MESSAGE((nhwc_convs(*ex1) > 0) == !blocked_one, net, " at batch 1");
        // One image of as many pixels as two of 224x224 (efficientnet_b7's 600x600) runs nChw16c.
        Graph big = build(e, 1, 320, 320);
        auto exb = make_executor("onednn", big, {.mode = Mode::infer});
        exb->prepare();
        int first = 0, blocked = 0;
        for (const StepInfo& s : exb->steps()) {
            if (s.primitive != "convolution") continue;
            first += first == 0 && s.args[0].layout == "abcd";
            blocked += s.args[0].layout == "aBcd16b";
        }
        CHECK_MESSAGE(first == 1, net, " at 320x320 reads the plain image");
        CHECK_MESSAGE(blocked > 0, net, " at 320x320");
        CHECK_MESSAGE(nhwc_convs(*exb) == 0, net, " at 320x320");
    }
}

// The ResNets' 3x3 stride-2 conv onto 14 columns runs channels-last between two reorders in
// inference at batch 4 and more on AVX-512 (conv2d.cpp's channels_last_between_reorders): it reads
// acdb, a reorder brings its output back, and the conv after it reads nChw16c in place. Not at
// batch 2, onto 13 columns, with a residual sum, nor in training; the numbers match the reference.
TEST_CASE("a 3x3 stride-2 conv onto 14 columns runs channels-last between reorders in inference") {
    const bool avx512 = onednn::avx512_core_here();
    // Nodes: conv (on the image) bn relu conv (the strided one) bn relu conv.
    auto net = [](int64_t N, int64_t H) {
        Graph g(cat("strided_", N, "_", H));
        g.input({N, 3, H, H}) | conv(32, 3, {.pad = 1}) | bn() | relu() | conv(48, 3, {.stride = 2, .pad = 1}) | bn() |
            relu() | conv(16, 1);
        return g;
    };
    // The conv steps a plan runs for one node.
    auto conv_steps = [](const Graph& g, ExecOptions o, int node) {
        auto ex = make_executor("onednn", g, o);
        ex->prepare();
        std::vector<StepInfo> steps;
        for (const StepInfo& s : ex->steps())
            if (s.node == node && s.primitive == "convolution") steps.push_back(s);
        return steps;
    };
    // The layouts the strided conv and the conv after it read, and the reorders charged to it.
    auto plan = [](const Graph& g, ExecOptions o) {
        auto ex = make_executor("onednn", g, o);
        ex->prepare();
        std::string convs;
        int moves = 0;
        for (const StepInfo& s : ex->steps()) {
            if (s.phase != StepPhase::fwd || s.node < 3) continue;
            if (s.primitive == "convolution") convs += s.args[0].layout + " ";
            moves += s.node == 3 && layout_move(s);
        }
        return cat(convs, moves);
    };
    const std::string taken = avx512 ? "acdb aBcd16b 2" : "aBcd8b aBcd8b 0";
    const std::string blocked = avx512 ? "aBcd16b aBcd16b 0" : "aBcd8b aBcd8b 0";
    CHECK(plan(net(4, 28), {.mode = Mode::infer}) == taken);
    CHECK(plan(net(4, 28), {.mode = Mode::infer, .fused = false}) == taken);
    CHECK(plan(net(2, 28), {.mode = Mode::infer}) == blocked);
    CHECK(plan(net(4, 26), {.mode = Mode::infer}) == blocked);
    for (int64_t N : {4, 2}) {
        Graph g = net(N, 28);
        Inputs in = inputs(g, 5);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (bool fused : {true, false})
            check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4,
                        cat(g.model(), fused ? " fused" : " unfused"));
    }
    const std::vector<StepInfo> trained = conv_steps(net(4, 28), {.mode = Mode::train}, 3);
    CHECK(trained.size() == 3);  // forward, data and weight gradients
    for (const StepInfo& s : trained)
        for (const StepArg& a : s.args) CHECK_MESSAGE(a.layout != "acdb", a.name);
    // Nodes: conv relu conv (3x3, stride 2) conv (1x1, stride 2) add relu. Fusion gives the sum to
    // the first conv that reads into the add, here the strided 3x3 one.
    Graph summed("strided_summed");
    Tensor x = summed.input({4, 3, 28, 28}) | conv(32, 3, {.pad = 1}) | relu();
    Tensor branch = x | conv(32, 3, {.stride = 2, .pad = 1});
    add(branch, x | conv(32, 1, {.stride = 2})) | relu();
    const std::vector<StepInfo> strided = conv_steps(summed, {.mode = Mode::infer}, 2);
    REQUIRE(strided.size() == 1);
    CHECK(strided[0].args[0].layout == (avx512 ? "aBcd16b" : "aBcd8b"));
}

// On one image, a concatenation of channels in nChw16c (AVX-512, where SqueezeNet-like nets run it:
// conv2d.cpp's blocked_one_image) or nChw8c (below) whose inputs fill whole blocks is written in place
// by the convs that produce them (layout.cpp's concat_in_place): its layer has no step, and the
// numbers match the reference. A concatenation one of whose inputs another layer reads too, a
// batch of two, and training copy.
TEST_CASE("on one image the convs before a concatenation of whole channel blocks write it in place") {
    auto fire = [](Tensor x, int64_t squeeze, int64_t expand) {
        Tensor q = x | conv(squeeze, 1) | relu();
        return concat({q | conv(expand, 1) | relu(), q | conv(expand, 3, {.pad = 1}) | relu()});
    };
    auto fires = [&](int64_t batch) {
        Graph g("fires");
        Tensor x = g.input({batch, 3, 15, 15}) | conv(32, 3, {.pad = 1}) | relu();
        Tensor b = fire(fire(x, 16, 32) | maxpool(2), 16, 16);
        Tensor c = b | conv(32, 1) | relu();
        add(concat({c, b | conv(16, 3, {.pad = 1})}) | conv(32, 1), c);
        return g;
    };
    // Per concatenation in graph order, its forward steps in the plan but reorders (the graph's
    // output is reordered into plain rows, charged to its last layer).
    auto concat_steps = [](const Graph& g, ExecOptions o) {
        auto ex = make_executor("onednn", g, o);
        ex->prepare();
        std::vector<int> steps;
        for (size_t n = 0; n < g.nodes().size(); ++n) {
            if (!std::holds_alternative<Concat>(g.nodes()[n].op)) continue;
            steps.push_back(0);
            for (const StepInfo& s : ex->steps())
                steps.back() += s.node == int(n) && s.phase == StepPhase::fwd && !layout_move(s);
        }
        return steps;
    };
    Graph one = fires(1);
    check_against_reference(one, 1e-4, 2e-4);
    check_against_reference(fires(2), 1e-4, std::nullopt);
    CHECK(concat_steps(one, {.mode = Mode::infer}) == std::vector<int>{0, 0, 1});
    CHECK(concat_steps(fires(2), {.mode = Mode::infer}) == std::vector<int>{1, 1, 1});
    CHECK(concat_steps(one, {.mode = Mode::train}) == std::vector<int>{1, 1, 1});
    // Every conv wrote channel blocks, and the arena is smaller by the copies not made.
    auto ex = make_executor("onednn", one, {.mode = Mode::infer});
    ex->prepare();
    const std::string block = onednn::avx512_core_here() ? "aBcd16b" : "aBcd8b";
    for (const StepInfo& s : ex->steps())
        for (const StepArg& a : s.args)
            if (s.primitive == "convolution" && a.name == "dst") CHECK_MESSAGE(a.layout == block, "node ", s.node);
    // Concatenations of one input twice and of a concatenation written in place (whose buffer
    // holds its pieces' memories too) copy; one whose input is a dropout after the conv (fused into
    // the conv's group, which writes the dropout's output) and one that is the graph's output are
    // written in place. The numbers of each against the reference.
    auto small = [](const char* name, int body) {
        Graph g(name);
        Tensor x = g.input({1, 3, 9, 9}) | conv(16, 3, {.pad = 1}) | relu();
        Tensor a = x | conv(16, 1), b = x | conv(32, 3, {.pad = 1});
        if (body == 0) concat({a, a, b}) | conv(16, 1);
        if (body == 1) concat({a | dropout(0.5), b}) | conv(16, 1);
        if (body == 2) concat({concat({a, b}), x | conv(16, 1)}) | conv(16, 1);
        if (body == 3) concat({a, b});
        // A dropout's output whose input another layer reads after a ReLU has run in place over
        // the concatenation: moved into it, that input would reach the add rectified.
        if (body == 4) add(concat({a | dropout(0.5), b}) | relu() | conv(16, 1), a);
        return g;
    };
    const std::vector<std::vector<int>> want = {{1}, {0}, {0, 1}, {0}, {1}};
    for (int body = 0; body < 5; ++body) {
        CAPTURE(body);
        Graph g = small("concat_copies", body);
        check_against_reference(g, 1e-4, std::nullopt);
        CHECK(concat_steps(g, {.mode = Mode::infer}) == want[size_t(body)]);
    }
    // SqueezeNet's eight fires on one image of 224x224: no concatenation copies. (At its smallest
    // resolution the last fires' maps are 1x1, where the 1x1 expands are inner products writing rows.)
    Graph net = build(*find_net("squeezenet1_1"), 1, 224, 224);
    CHECK(concat_steps(net, {.mode = Mode::infer}) == std::vector<int>(8, 0));
}

// A conv that reads the image and whose output a flatten reads (vit's patch conv) writes channels-last
// even at batch 8 on AVX-512: its rows of tokens are then a view, where nChw16c needed a copy.
TEST_CASE("at batch 8 a patch conv read by a flatten writes channels-last, and the flatten is a view") {
    Graph g = mini_vit(8);
    Inputs in = inputs(g, 4);
    Result ref = run("reference", g, Mode::infer, false, in);
    for (bool fused : {true, false}) {
        check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4, fused ? "fused" : "unfused");
        auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = fused});
        ex->prepare();
        int convs = 0;
        for (const StepInfo& s : ex->steps()) {
            const Node& n = g.nodes()[size_t(s.node)];
            CHECK_MESSAGE(!std::holds_alternative<Flatten>(n.op), "a step for the flatten: ", s.primitive);
            if (s.primitive != "convolution") continue;
            ++convs;
            CHECK(s.args.back().name == "dst");
            CHECK_MESSAGE(s.args.back().layout == "acdb", "the patch conv writes ", s.args.back().layout);
        }
        CHECK(convs == 1);
    }
}

// Fused inference folds attention's 1/sqrt(d) into in_proj's q rows (fold.h), fused training
// into the q k^T matmul as its output scale, and that of both its gradients (fusion.h's
// MatmulScale): either way the scale has no step, forward or backward, and the matmul reads q
// where in_proj wrote it. Unfused it runs as a layer. The small whole nets' case checks the fused
// outputs and gradients against the reference.
TEST_CASE("fused, attention's scale folds into in_proj or the matmul, and runs no step") {
    Graph g = mini_vit(2);
    auto scale_steps = [&](Mode mode, bool fused, StepPhase phase) {
        auto ex = make_executor("onednn", g, {.mode = mode, .fused = fused});
        ex->prepare();
        int n = 0;
        for (const StepInfo& s : ex->steps())
            n += s.phase == phase && s.node >= 0 && std::holds_alternative<Scale>(g.nodes()[size_t(s.node)].op);
        return n;
    };
    CHECK(scale_steps(Mode::infer, true, StepPhase::fwd) == 0);
    CHECK(scale_steps(Mode::infer, false, StepPhase::fwd) == 2);
    CHECK(scale_steps(Mode::train, true, StepPhase::fwd) == 0);
    CHECK(scale_steps(Mode::train, true, StepPhase::dgrad) == 0);
    CHECK(scale_steps(Mode::train, false, StepPhase::fwd) == 2);
    CHECK(scale_steps(Mode::train, false, StepPhase::dgrad) == 2);
}

// A scale on each operand of one matmul, one on a tensor another layer reads too: the matmul
// applies their product, forward and in both gradients, and the scales' input collects the
// gradients of all its readers. A scale the graph's output is, or one two layers read, runs.
TEST_CASE("scales read only by a matmul fold into it, in inference and training") {
    Graph g("scaled_matmul");
    Tensor x = g.input({2, 3, 6, 4}, true) | linear(4);
    Tensor a = x | scale(0.5), b = x | permute({0, 1, 3, 2}) | scale(-3.0);
    Tensor y = matmul(a, b);
    add(y | linear(4), matmul(y, x | scale(2.0) | relu()));
    check_against_reference(g, 1e-5, 1e-5);
    CHECK(step_kinds<Scale>(g, Mode::infer) == std::vector<std::string>{"eltwise"});
    CHECK(step_kinds<Scale>(g, Mode::train) == std::vector<std::string>{"eltwise", "eltwise"});
}

// In training, attention's q, k and v gradients are written by the matmuls' and the scale's backward
// into their regions of the packed in_proj gradient (layout.cpp): the selects have no step, and
// neither has the permutation back to the in_proj rows. The small whole nets' case checks the
// gradients against the reference.
TEST_CASE("in training the q, k and v selects' gradients are regions of one buffer, with no copies") {
    Graph g = mini_vit(8);
    auto ex = make_executor("onednn", g, {.mode = Mode::train});
    ex->prepare();
    int selects = 0;
    for (const Node& n : g.nodes()) selects += std::holds_alternative<Select>(n.op);
    REQUIRE(selects == 7);  // q, k, v in each of the two blocks, and the class token
    int select_steps = 0, permute_steps = 0;
    for (const StepInfo& s : ex->steps()) {
        if (s.phase != StepPhase::dgrad || s.node < 0) continue;
        const Node& n = g.nodes()[size_t(s.node)];
        select_steps += std::holds_alternative<Select>(n.op);
        const auto* perm = std::get_if<Permute>(&n.op);
        permute_steps += perm && perm->order.size() == 5;
    }
    CHECK(select_steps == 2);  // the class token's: zeroes the rest of its tensor, then copies
    CHECK(permute_steps == 0);
}

// An adaptive average pool to its input's size is one copy into plain nchw (pool.cpp), after which
// the classifier's flatten is a view. In training at one or two images from channel blocks the
// channels fill (linear.cpp's classifier_reads_map), neither copies: the linear reads the map as
// it lies, through a dropout as alexnet's does, with weights (K,C,H,W) in its blocks; elsewhere in
// training at one or two rows its weights are plain (K,C) rows. So does inference on AVX-512 from
// nChw16c (up to 16 images, linear_panels). 24 channels do not fill a block of 16 (AVX-512) but
// fill three of 8 (AVX2).
TEST_CASE("an identity adaptive pool before a flatten is a copy into plain rows, or none where the linear reads the map") {
    int maps = 0, copies = 0;
    for (int64_t N : {1, 2, 3, 8})
        for (int64_t K : {64, 24})
            for (bool drop : {false, true}) {
                Graph g("classifier");
                Tensor rows = g.input({N, 3, 32, 32}, true) | conv(K, 3, {.pad = 1}) | relu() | maxpool(2) |
                              adaptive_avgpool(16) | flatten();
                (drop ? rows | dropout(0.5) : rows) | linear(10);
                Inputs in = inputs(g, 4);
                for (Mode mode : {Mode::infer, Mode::train}) {
                    const bool train = mode == Mode::train;
                    Result ref = run("reference", g, mode, false, in);
                    for (bool fused : {true, false}) {
                        const std::string what = cat("batch ", N, ", ", K, " channels", drop ? ", dropout" : "",
                                                     train ? ", train" : ", infer", fused ? ", fused" : "");
                        Result r = run("onednn", g, mode, fused, in);
                        check_close(r.out, ref.out, 1e-4, what);
                        if (train) {
                            check_close(g, r.grads, ref.grads, 1e-4, what);
                            check_close(r.dx, ref.dx, 1e-4, what);
                            check_close(g, r.after, sgd_step(in.w, r.grads), 1e-6, what + ", updated weights");
                        }
                        auto ex = make_executor("onednn", g, {.mode = mode, .fused = fused});
                        ex->prepare();
                        std::string map_layout;  // the maxpool's output
                        for (const StepInfo& s : ex->steps())
                            if (s.node >= 0 && s.phase == StepPhase::fwd &&
                                std::holds_alternative<Pool2d>(g.nodes()[size_t(s.node)].op))
                                map_layout = s.args.back().layout;
                        const int64_t block = map_layout == "aBcd16b" ? 16 : map_layout == "aBcd8b" ? 8 : 0;
                        const bool map = (train && N <= 2 && block > 0 && K % block == 0) ||
                                         (!train && onednn::avx512_core_here() && block == 16 && K % 16 == 0);
                        (map ? maps : copies) += 1;
                        int pool_fwd = 0, pool_bwd = 0, linear_fwd = 0;
                        for (const StepInfo& s : ex->steps()) {
                            if (s.node < 0) continue;  // the loss
                            const Op& op = g.nodes()[size_t(s.node)].op;
                            INFO(what, ", map in ", map_layout);
                            CHECK_MESSAGE(!std::holds_alternative<Flatten>(op), "a step for the flatten");
                            if (std::holds_alternative<Linear>(op) && s.phase == StepPhase::fwd) {
                                ++linear_fwd;
                                CHECK(s.args[0].layout == (map ? map_layout : "ab"));
                                if (map) CHECK(s.args[1].layout == (train ? map_layout : "ABcd16b16a"));
                                if (train && N <= 2 && !map) CHECK(s.args[1].layout == "ab");
                            }
                            if (!std::holds_alternative<AdaptiveAvgPool2d>(op)) continue;
                            // Forward: a copy into plain rows; backward: the gradient reordered into
                            // the maxpool's layout.
                            CHECK(layout_move(s));
                            if (s.phase == StepPhase::fwd) {
                                ++pool_fwd;
                                CHECK(s.args.back().layout == "abcd");
                            } else {
                                ++pool_bwd;
                                CHECK(s.args.front().layout == "abcd");
                            }
                        }
                        CHECK(linear_fwd == 1);
                        CHECK(pool_fwd == (map ? 0 : 1));
                        CHECK(pool_bwd == (train && !map ? 1 : 0));
                    }
                }
            }
    CHECK(maps > 0);
    CHECK(copies > 0);
}

// Flattens the classifier rule must leave to the copy, in training at one and two images (an
// independent review found both threw): one that does not make a row of each image, and a map
// held channels-last with C of 16, which channel_block reports as a block of 16.
TEST_CASE("a flatten that is not one row an image, or of a channels-last map, still copies") {
    for (int64_t N : {1, 2}) {
        Graph g1("rows_of_rows");
        g1.input({N, 3, 8, 8}, true) | conv(16, 3, {.pad = 1}) | relu() | maxpool(2) | flatten(0, 2) | linear(5) |
            reshape({N, -1});
        Graph g2("channels_last");
        g2.input({N, 3, 8, 8}, true) | conv(16, 3, {.pad = 1}) | permute({0, 2, 3, 1}) | ln() |
            permute({0, 3, 1, 2}) | flatten() | linear(10);
        for (Graph* g : {&g1, &g2}) {
            INFO(g->model(), ", batch ", N);
            check_against_reference(*g, 1e-4, 1e-4);
        }
    }
}

// A linear layer in inference on up to 64 rows below AVX-512, 16 with it (a classifier at batch 1
// to 64 or 16), is kernels/simd's linear_panels over weights in panels of 16 rows, its bias and
// ReLU applied in the kernel; below AVX-512 on 65 rows and more it is linear_gemm over the same
// panels. With another activation, or with AVX-512 on 17 rows or more, it stays oneDNN's. 300
// inputs leave a tail of columns and 1000 outputs a partial panel.
TEST_CASE("a linear on few rows streams its weights in panels of 16 rows, its bias and relu in the kernel") {
    const bool wide = onednn::avx512_core_here();
    for (int64_t N : {1, 2, 16, 17, 65}) {
        Graph g("classifier");
        g.input({N, 300}) | linear(1000) | relu() | dropout(0.5) | linear(1000, false) | linear(10) | hardswish();
        Inputs in = inputs(g, 6);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (bool fused : {true, false}) {
            check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4, cat("batch ", N));
            auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = fused});
            ex->prepare();
            int rows = 0, relus = 0;
            for (const StepInfo& s : ex->steps()) {
                const Op& op = g.nodes()[size_t(s.node)].op;
                relus += std::holds_alternative<Activation>(op);
                if (!std::holds_alternative<Linear>(op) || s.primitive != "kernel") continue;
                ++rows;
                CHECK(s.args[1].layout == "AB16b16a");
                CHECK(s.impl == (N > 64 ? "ridge:linear_gemm" : "ridge:linear_panels"));
            }
            // The first two linears, and unfused the third, whose hardswish runs apart.
            const bool panels = !wide || N <= 16;
            CHECK_MESSAGE(rows == (!panels ? 0 : fused ? 2 : 3), "batch ", N, fused ? " fused" : " unfused");
            if (fused) CHECK_MESSAGE(relus == 0, "batch ", N, ": an activation step of its own");
        }
    }
}

// Below AVX-512 a linear whose group is a GELU alone (vit's and convnext's fc1) runs kernels/simd's
// product and then oneDNN's GELU over its output in place, two steps of the linear's node and none
// of the GELU's, whatever its inputs, with or without a bias, on rows or on tokens (N, T, C):
// linear_panels up to 64 rows, linear_gemm from 65. With AVX-512, and where the GELU is not alone
// (a ReLU or a second GELU after it), it stays oneDNN's (inner product or matmul) with its post-ops.
TEST_CASE("a linear followed by a GELU runs kernels/simd's product, then the GELU in place") {
    const bool wide = onednn::avx512_core_here();
    struct Case {
        Shape x;
        bool bias = true;
        int after = 0;  // a second activation: 1 a ReLU, 2 a GELU
    };
    std::vector<Case> cases;
    for (int64_t C : {600, 96})
        for (int64_t N : {1, 40, 65, 136}) cases.push_back({{N, C}});
    cases.push_back({{40, 96}, false});
    cases.push_back({{136, 96}, false});
    cases.push_back({{2, 50, 96}});  // 100 tokens
    cases.push_back({{40, 96}, true, 1});
    cases.push_back({{136, 96}, true, 1});
    cases.push_back({{40, 96}, true, 2});
    cases.push_back({{136, 96}, true, 2});
    for (const Case& c : cases) {
        const int64_t rows = numel(c.x) / c.x.back();
        CAPTURE(c.x);
        CAPTURE(c.bias);
        CAPTURE(c.after);
        const bool routed = !wide && c.after == 0;
        const std::string kernel = rows > 64 ? "ridge:linear_gemm" : "ridge:linear_panels";
        Graph g("mlp");
        Tensor h = g.input(c.x) | linear(1000, c.bias) | gelu();
        if (c.after == 1) h = h | relu();
        if (c.after == 2) h = h | gelu();
        h | linear(10);
        Inputs in = inputs(g, 7);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (bool fused : {true, false}) check_close(run("onednn", g, Mode::infer, fused, in).out, ref.out, 1e-4, "");
        auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = true});
        ex->prepare();
        int product = 0, gelu_after = 0, activation_steps = 0;
        for (const StepInfo& s : ex->steps()) {
            if (s.node < 0) continue;
            const Op& op = g.nodes()[size_t(s.node)].op;
            activation_steps += std::holds_alternative<Activation>(op);
            if (s.node != 0) continue;
            product += s.impl == kernel;
            gelu_after += product == 1 && s.primitive == "eltwise";
        }
        CHECK(product == (routed ? 1 : 0));
        CHECK(gelu_after == (routed ? 1 : 0));
        CHECK_MESSAGE(activation_steps == 0, "an activation has a step of its own");
    }
}

// The reference takes ReLU of NaN as 0 (x > 0 ? x : 0); so do the hand kernels that fuse one:
// linear_panels (a hostile review found NaN kept there, where oneDNN's inner product at batch 2
// gave 0) and grouped_conv3x3 where the plan runs it (oneDNN's own jit convs keep NaN through a
// ReLU post-op, so a grouped conv left to oneDNN is not compared).
TEST_CASE("a NaN through a ReLU fused into linear_panels or grouped_conv3x3 gives 0, as in the reference") {
    auto check = [](Graph& g, size_t at, bool compare) {
        Inputs in = inputs(g, 5);
        in.x.data()[at] = std::numeric_limits<float>::quiet_NaN();
        Result ref = run("reference", g, Mode::infer, false, in);
        Result r = run("onednn", g, Mode::infer, true, in);
        int64_t nan = 0;
        for (float v : ref.out.v) nan += std::isnan(v);
        REQUIRE(nan == 0);
        if (compare) check_close(r.out, ref.out, 1e-4, g.model());
    };
    Graph lin("classifier");
    lin.input({1, 20}) | linear(19) | relu();
    check(lin, 0, true);
    Graph rows("classifier");
    rows.input({3, 20}) | linear(19) | relu();
    check(rows, 25, true);  // row 1's NaN: linear_panels' block of three below AVX-512
    for (int64_t N : {1, 2}) {
        Graph g("grouped");
        g.input({N, 8, 5, 6}) | conv(32, 1) | conv(32, 3, {.pad = 1, .groups = 8}) | relu();
        auto ex = make_executor("onednn", g, {.mode = Mode::infer});
        ex->prepare();
        bool kernel = false;
        for (const StepInfo& s : ex->steps()) kernel = kernel || s.primitive == "kernel";
        check(g, 3, kernel);
    }
    // The kernel alone, on NaNs of either sign (the sign a NaN has after a conv depends on the
    // instructions that carried it), with groups of 4 and of 8 (whose ReLU is a vector compare): one
    // 16-channel block of 3x3 positions, weights 1/2.
    for (int64_t width : {4, 8})
        for (float nan : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN()}) {
            const simd::GroupedConv3x3 d{1, 16, 3, 3, 3, 3, 1, 16, width};
            std::vector<float> x(16 * 9, 1.0f), w(size_t(16 * width * 9), 0.5f), b(16, 0.0f), y(16 * 9, -1.0f);
            std::vector<float> scratch(simd::grouped_conv3x3_scratch(d, 1));
            x[4 * 16 + 5] = nan;  // the centre, channel 5
            simd::grouped_conv3x3(x.data(), w.data(), b.data(), true, y.data(), scratch.data(), d, 1);
            for (int64_t s = 0; s < 9; ++s)
                for (int64_t k = 0; k < 16; ++k) {
                    const float taps = float((2 + (s / 3 == 1)) * (2 + (s % 3 == 1)));
                    const float want = k / width == 5 / width ? 0.0f : 0.5f * float(width) * taps;
                    CHECK_MESSAGE(y[size_t(s * 16 + k)] == want, "width ", width, " position ", s, " channel ", k,
                                  " NaN sign ", std::signbit(nan));
                }
        }
}

// Softmax along the last dimension of a plain tensor runs kernels/simd's softmax_forward, in
// inference and training; along another dimension oneDNN's primitive.
TEST_CASE("softmax along the last dimension runs kernels/simd's forward, along another oneDNN's") {
    Graph g("attention");
    g.input({2, 3, 70}) | softmax() | scale(100.0) | softmax(1);
    check_against_reference(g, 1e-4, 1e-4);
    for (Mode mode : {Mode::infer, Mode::train})
        CHECK(step_kinds<Softmax>(g, mode, StepPhase::fwd) == std::vector<std::string>{"kernel", "softmax"});
}

// Squeeze-excitation's global pool of a blocked map writes plain rows (kernels/simd channel_means),
// which its inner product reads in place: no reorder between, in inference and training. With 76
// channels the last block is padded (nChw16c or nChw8c); 64 fill theirs.
TEST_CASE("a global pool of channel blocks, padded or not, writes plain rows for the inner product after it") {
    for (int64_t C : {76, 64}) {
        CAPTURE(C);
        Graph g("se");
        Tensor h = g.input({2, 3, 14, 14}) | conv(C, 3, {.pad = 1}) | relu();
        mul(h | adaptive_avgpool(1) | conv(19, 1, {.bias = true}) | relu() | conv(C, 1, {.bias = true}) | sigmoid(),
            h) |
            conv(16, 1);
        check_against_reference(g, 1e-4, 2e-4);
        int blocked = 0;
        for (Mode mode : {Mode::infer, Mode::train}) {
            auto ex = make_executor("onednn", g, {.mode = mode});
            ex->prepare();
            for (const StepInfo& s : ex->steps()) {
                if (s.phase != StepPhase::fwd) continue;
                const Op& op = g.nodes()[size_t(s.node)].op;
                if (std::holds_alternative<AdaptiveAvgPool2d>(op) && s.args[0].layout.rfind("aBcd", 0) == 0) {
                    ++blocked;
                    CHECK(s.primitive == "kernel");
                    // No channel blocks (a blocked layout names its blocked dimension in capitals).
                    CHECK_MESSAGE(s.args.back().layout.find('B') == std::string::npos, s.args.back().layout);
                }
                const auto* c = std::get_if<Conv2d>(&op);
                CHECK_MESSAGE(!(c && c->K == 19 && layout_move(s)), "the pooled vector is reordered");
            }
        }
        CHECK(blocked >= 1);  // inference at batch 2 runs nChw16c on AVX-512; AVX2 picks nChw8c
    }
}

// A ReLU of at most 65536 elements runs kernels/simd's kernels, forward and backward (oneDNN's
// primitive cost more than the work, activation.cpp), a larger one oneDNN's eltwise; the op table's
// relu cases and relu_large check their numbers.
TEST_CASE("small ReLUs run kernels/simd, large ones oneDNN's eltwise, in inference and training") {
    for (int64_t H : {4, 64}) {
        CAPTURE(H);
        Graph g("relu");
        g.input({2, 3, H, H}) | conv(10, 1) | relu();  // the conv's weights want a gradient
        const std::string want = H == 4 ? "kernel" : "eltwise";
        // The unfused executor, as ridge bench's per-layer pass: fused inference runs the ReLU as the
        // conv's post-op. Reorders charged to the ReLU (the graph's output) are left out.
        for (Mode mode : {Mode::infer, Mode::train}) {
            auto ex = make_executor("onednn", g, {.mode = mode, .fused = false});
            ex->prepare();
            std::vector<std::string> ran;
            for (const StepInfo& s : ex->steps())
                if (s.node >= 0 && std::holds_alternative<Activation>(g.nodes()[size_t(s.node)].op) &&
                    !layout_move(s))
                    ran.push_back(s.primitive);
            CHECK(ran == std::vector<std::string>(mode == Mode::train ? 2 : 1, want));
        }
    }
}

// norm.cpp's small_batchnorm: in training, a batchnorm of at most 2^17 elements (padding counted)
// runs kernels/simd's batchnorm_forward and batchnorm_backward, the ReLU after it fused in either;
// a larger one oneDNN's primitive. The op table's cases check their numbers.
TEST_CASE("in training small batchnorms run kernels/simd, large ones oneDNN's, a ReLU fused into either") {
    for (int64_t H : {8, 64}) {
        CAPTURE(H);
        Graph g("bn");
        g.input({2, 3, H, H}) | conv(20, 1) | bn() | relu();  // 20 channels: the last block padded
        const int bn = 1;
        const std::string want = H == 8 ? "kernel" : "batch_normalization";
        auto ex = make_executor("onednn", g, {.mode = Mode::train});
        ex->prepare();
        std::vector<std::string> ran;
        for (const StepInfo& s : ex->steps()) {
            if (layout_move(s)) continue;  // the graph's output into plain, charged to the ReLU
            CHECK(s.node != bn + 1);                 // fused
            if (s.node != bn) continue;
            ran.push_back(s.primitive);
            if (s.phase != StepPhase::fwd) {
                // One step computes both gradients, as the profile tells by the arguments' names.
                std::vector<std::string> names;
                for (const StepArg& a : s.args) names.push_back(a.name);
                for (const char* name : {"diff_src", "diff_scale", "diff_shift"})
                    CHECK_MESSAGE(std::count(names.begin(), names.end(), name) == 1, name);
            }
        }
        CHECK(ran == std::vector<std::string>(2, want));
    }
}

// With AVX-512 a batchnorm on nChw8c (after the grouped convs oneDNN runs with its AVX2 kernels,
// regnet_x's groups of 24) runs kernels/simd beyond the small maps (norm.cpp's
// block8_unit_floats) while one 8-channel block over the batch holds at most 2^16 floats and there
// are as many blocks as threads: its lines read whole in pairs of positions on an even map, a
// position at a time on an odd one. A larger map, and below AVX-512 any large one, stays oneDNN's.
// The numbers against the reference.
TEST_CASE("in training a large batchnorm on nChw8c runs kernels/simd with AVX-512 where a block fits L2") {
    const bool wide = onednn::avx512_core_here();
    for (int64_t H : {64, 63, 96}) {  // a block over the batch: 65536, 63504 and 147456 floats
        CAPTURE(H);
        Graph g("bn8");
        g.input({2, 48, H, H}) | conv(48, 3, {.pad = 1, .groups = 2}) | bn() | relu();  // 6 blocks of 8
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .threads = 2});
        ex->prepare();
        std::vector<std::string> ran, layouts;
        for (const StepInfo& s : ex->steps()) {
            if (s.node != 1 || layout_move(s)) continue;
            ran.push_back(s.primitive);
            for (const StepArg& a : s.args)
                if (a.name == "src") layouts.push_back(a.layout);
        }
        REQUIRE(layouts.size() == 2);
        INFO("the batchnorm's input: ", layouts[0]);
        if (wide) CHECK(layouts[0] == "aBcd8b");  // else the case tests nothing
        const bool simd = wide && layouts[0] == "aBcd8b" && H < 96;
        CHECK(ran == std::vector<std::string>(2, simd ? "kernel" : "batch_normalization"));
        if (H < 96) check_against_reference(g, 1e-4, 1e-4);
    }
}

TEST_CASE("inference returns the weights as loaded (not the folded ones) and has no backward") {
    Graph g = build(*find_net("mobilenet_v3_small"), 1, 32, 32);
    Inputs in = inputs(g, 9);
    auto infer = make_executor("onednn", g, {.mode = Mode::infer});
    infer->load(in.w);
    check_close(g, infer->weights(), in.w, 0, "inference weights");
    CHECK_THROWS_AS(infer->backward(), std::logic_error);
}

// resnext50's first stage trains its grouped convs of 4 on kernels/simd in the layout of their
// neighbours, nChw16c on AVX-512 and nChw8c below it (conv2d.cpp: oneDNN's weight gradient took 10x
// its bound in nChw16c; on the 2-core Zen 3 its three phases took 18.8, 31.6 and 38.5 ms against
// bounds of 1.5 to 2.2): forward, data and weight gradient are kernels, and nothing is reordered
// for them. The op table's grouped4_train checks their numbers.
TEST_CASE("grouped convs of 4 channels infer and train on kernels/simd in their neighbours' layout") {
    Graph g("grouped4_stage");
    g.input({4, 16, 12, 12}) | conv(64, 1) | bn() | relu() | conv(64, 3, {.pad = 1, .groups = 16}) | bn() | relu() |
        conv(64, 1);
    const int grouped = 3;
    auto ex = make_executor("onednn", g, {.mode = Mode::train});
    ex->prepare();
    std::map<StepPhase, std::vector<std::string>> steps;
    for (const StepInfo& s : ex->steps())
        if (s.node == grouped && s.phase != StepPhase::update) steps[s.phase].push_back(s.primitive);
    for (StepPhase phase : {StepPhase::fwd, StepPhase::dgrad, StepPhase::wgrad}) {
        const std::vector<std::string>& s = steps[phase];
        INFO("phase ", int(phase), ": ", s.size(), " steps, the first ", s.empty() ? "-" : s[0]);
        CHECK(s == std::vector<std::string>{"kernel"});
    }
    // Inference runs it too, with no reorder around it.
    auto infer = make_executor("onednn", g, {.mode = Mode::infer});
    infer->prepare();
    std::vector<std::string> at_grouped;
    for (const StepInfo& s : infer->steps())
        if (s.node == grouped) at_grouped.push_back(s.primitive);
    CHECK(at_grouped == std::vector<std::string>{"kernel"});
    check_against_reference(g, 1e-4, {});
}

// Grouped convs of 8 channels run kernels/simd's grouped_conv3x3 at stride 2 on AVX-512
// (conv2d.cpp: oneDNN wants nChw8c there): in inference in nChw16c at batch 2, and channels-last at
// batch 1 where C is a multiple of 256 (elsewhere oneDNN's channels-last kernel is faster); in
// training in the nChw16c of their neighbours, with their gradients kernels too. Nothing is
// reordered for them. At stride 1 they run its 16-lane planar form in inference from batch 2, in
// nChw16c, and stay oneDNN's convolutions at batch 1 and in training. Below AVX-512 stride 1 runs
// the kernel's planar form (in training with oneDNN's gradients), stride 2 oneDNN's. In inference
// at stride 2 the map is 28 wide: on fewer than 14 output columns oneDNN's kernel stays (the test
// below). The op table's grouped8_* cases check the numbers.
TEST_CASE("grouped convs of 8 channels run kernels/simd where it pays, by stride, batch and mode") {
    const bool avx512 = onednn::avx512_core_here();
    for (int64_t C : {32, 256})
        for (int64_t N : {1, 2})
            for (int64_t stride : {1, 2})
                for (Mode mode : {Mode::infer, Mode::train}) {
                    CAPTURE(C);
                    CAPTURE(N);
                    CAPTURE(stride);
                    CAPTURE(int(mode));
                    Graph g("grouped8");
                    g.input({N, 3, 12, stride == 2 && mode == Mode::infer ? 28 : 12}) | conv(C, 1) | bn() | relu() |
                        conv(C, 3, {.stride = stride, .pad = 1, .groups = C / 8}) | bn() | relu() | conv(16, 1);
                    auto ex = make_executor("onednn", g, {.mode = mode});
                    ex->prepare();
                    const int grouped = 3;
                    // The forward's steps as primitive:layout, and where the grouped conv's are.
                    std::vector<std::string> all;
                    std::vector<int> nodes;
                    std::vector<size_t> at;
                    for (const StepInfo& s : ex->steps()) {
                        if (s.phase != StepPhase::fwd) continue;
                        if (s.node == grouped) at.push_back(all.size());
                        all.push_back(s.primitive + ":" + (s.args.empty() ? "" : s.args[0].layout));
                        nodes.push_back(s.node);
                    }
                    std::string ran;
                    for (const std::string& a : all) ran += a + " ";
                    INFO("forward steps: ", ran);
                    REQUIRE(!at.empty());
                    const bool train = mode == Mode::train;
                    // The grouped conv's steps in a backward phase, as their primitives.
                    auto primitives_of = [&](StepPhase phase) {
                        std::vector<std::string> steps;
                        for (const StepInfo& s : ex->steps())
                            if (s.node == grouped && s.phase == phase) steps.push_back(s.primitive);
                        return steps;
                    };
                    if (avx512 && stride == 2 && (train || N == 2 || C % 256 == 0)) {
                        // Between the 1x1 conv's batchnorm and its own, in their layout: nChw16c in
                        // training and from batch 2 in inference (the first conv reads the image),
                        // channels-last at batch 1.
                        REQUIRE(at.size() == 1);
                        REQUIRE(at[0] > 0);
                        REQUIRE(at[0] + 1 < all.size());
                        // In training the neighbours are the batchnorms (nodes 1 and 4), which on
                        // maps this small run kernels/simd's batchnorm, not oneDNN's.
                        const std::string layout = N == 1 && !train ? "acdb" : "aBcd16b";
                        if (train) {
                            CHECK(nodes[at[0] - 1] == 1);
                            CHECK(nodes[at[0] + 1] == 4);
                            // A kernel, not a reorder charged to the batchnorm's node.
                            CHECK(all[at[0] - 1] == "kernel:" + layout);
                            CHECK(all[at[0] + 1] == "kernel:" + layout);
                        } else {
                            CHECK(all[at[0] - 1].rfind("convolution:", 0) == 0);
                            CHECK(all[at[0] + 1].rfind("convolution:", 0) == 0);
                        }
                        CHECK(all[at[0]] == "kernel:" + layout);
                        CHECK(all[at[0] + 1].substr(all[at[0] + 1].find(':')) == ":" + layout);
                        if (train)
                            for (StepPhase phase : {StepPhase::dgrad, StepPhase::wgrad}) {
                                CAPTURE(int(phase));
                                CHECK(primitives_of(phase) == std::vector<std::string>{"kernel"});
                            }
                    } else if (avx512 && stride == 1 && !train && N == 2) {
                        REQUIRE(at.size() == 1);
                        REQUIRE(at[0] > 0);
                        REQUIRE(at[0] + 1 < all.size());
                        CHECK(all[at[0] - 1].rfind("convolution:", 0) == 0);
                        CHECK(all[at[0]] == "kernel:aBcd16b");
                        CHECK(all[at[0] + 1] == "convolution:aBcd16b");
                    } else if (!avx512 && stride == 1) {
                        // Below AVX-512 at stride 1: the planar form, in nChw8c between the two
                        // convs (in training between the batchnorms, kernels/simd's on these small
                        // maps), its gradients in training oneDNN's convolutions, the data
                        // gradient after a reorder of the plain weights.
                        REQUIRE(at.size() == 1);
                        REQUIRE(at[0] > 0);
                        REQUIRE(at[0] + 1 < all.size());
                        const std::string before = train ? "kernel:aBcd8b" : "convolution:aBcd8b";
                        CHECK(all[at[0] - 1] == before);
                        CHECK(all[at[0]] == "kernel:aBcd8b");
                        CHECK(all[at[0] + 1] == before);
                        if (train)
                            for (StepPhase phase : {StepPhase::dgrad, StepPhase::wgrad}) {
                                const std::vector<std::string> steps = primitives_of(phase);
                                CAPTURE(int(phase));
                                REQUIRE(!steps.empty());
                                CHECK(steps.back() == "convolution");
                                CHECK(std::count(steps.begin(), steps.end(), "convolution") == 1);
                                CHECK(std::count(steps.begin(), steps.end(), "reorder") == steps.size() - 1);
                            }
                    } else {
                        int convs = 0;
                        for (size_t i : at) convs += all[i].rfind("convolution:", 0) == 0;
                        CHECK(convs == 1);
                    }
                }
}

// With AVX-512, grouped convs of 24 channels a group run kernels/simd's 16-lane planar form in
// inference from batch 2 where the map is at least 56 wide at stride 1, 14 at stride 2 (conv2d.cpp:
// oneDNN's brgconv won on smaller maps, and at batch 1 and in training); groups of whole 16-channel
// blocks (16, 32, 64) stay oneDNN's jit kernel; below AVX-512 none does (at stride 1 they run
// ridge's Winograd kernel in inference). Groups of 8 at stride 1 take it on any map, 40 channels
// leaving the last block half padding. The first three graphs are the op table's grouped24_wide,
// grouped24_stride2_wide and grouped8_wide_padded, which check the numbers. Groups of 8 at stride
// 2 take the kernel's strip form with AVX-512, 40 channels too (grouped8_stride2_padded), on 14
// output columns and more.
TEST_CASE("grouped convs of 8 and 24 channels a group run kernels/simd's 16-lane form where it pays") {
    const bool avx512 = onednn::avx512_core_here();
    struct Case {
        int64_t C, width, stride, H, W, N;
        Mode mode;
        bool kernel;  // with AVX-512
    };
    for (const Case c :
         {Case{96, 24, 1, 5, 56, 2, Mode::infer, true}, Case{96, 24, 2, 7, 29, 2, Mode::infer, true},
          Case{40, 8, 1, 5, 20, 2, Mode::infer, true}, Case{96, 24, 2, 7, 14, 2, Mode::infer, true},
          Case{96, 24, 1, 5, 28, 2, Mode::infer, false}, Case{96, 24, 2, 7, 13, 2, Mode::infer, false},
          Case{96, 24, 1, 5, 56, 1, Mode::infer, false}, Case{96, 24, 1, 5, 56, 2, Mode::train, false},
          Case{96, 16, 1, 5, 56, 2, Mode::infer, false}, Case{96, 16, 2, 7, 28, 2, Mode::infer, false},
          Case{192, 64, 1, 5, 56, 2, Mode::infer, false}, Case{40, 8, 2, 7, 29, 2, Mode::infer, true},
          Case{40, 8, 2, 7, 26, 2, Mode::infer, false}, Case{48, 8, 2, 7, 26, 2, Mode::infer, false}}) {
        CAPTURE(c.C);
        CAPTURE(c.width);
        CAPTURE(c.stride);
        CAPTURE(c.W);
        CAPTURE(c.N);
        CAPTURE(int(c.mode));
        Graph g("grouped_wide");
        g.input({c.N, 3, c.H, c.W}) | conv(c.C, 1) | bn() | relu() |
            conv(c.C, 3, {.stride = c.stride, .pad = 1, .groups = c.C / c.width}) | bn() | relu() | conv(16, 1);
        auto ex = make_executor("onednn", g, {.mode = c.mode});
        ex->prepare();
        int grouped = 0, steps = 0;
        std::string ran;
        for (const StepInfo& s : ex->steps()) {
            if (s.phase != StepPhase::fwd) continue;
            if (s.node == 3) grouped += s.impl == "ridge:grouped_conv3x3", ++steps;
            ran += s.impl + ":" + (s.args.empty() ? "" : s.args[0].layout) + " ";
        }
        INFO("forward steps: ", ran);
        CHECK(steps >= 1);  // oneDNN may reorder the input first, a step charged to the conv
        // Below AVX-512 groups of 8 at stride 1 run the kernel too, as its 8-lane planar form.
        CHECK(grouped == ((avx512 || (c.width == 8 && c.stride == 1)) && c.kernel ? 1 : 0));
    }
}

// In inference a conv on a channels-last input reads and writes channels-last where oneDNN has
// such a kernel (conv2d.cpp), except below AVX-512 a conv whose kernel is its stride (convnext's
// downsampling), which runs in oneDNN's own nChw8c there. every zoo net's inference (above) checks
// convnext_tiny's numbers.
TEST_CASE("a 2x2 stride-2 conv on a channels-last input keeps it in inference on AVX-512, nChw8c below") {
    const bool avx512 = onednn::avx512_core_here();
    for (int64_t N : {1, 2}) {
        CAPTURE(N);
        Graph g("patches");
        g.input({N, 8, 10, 32}) | linear(32) | permute({0, 3, 1, 2}) | conv(64, 2, {.stride = 2, .bias = true}) |
            conv(64, 3, {.pad = 1, .groups = 64});
        const int patches = 2;
        auto ex = make_executor("onednn", g, {.mode = Mode::infer});
        ex->prepare();
        std::vector<std::string> ran;
        for (const StepInfo& s : ex->steps())
            if (s.node == patches && s.phase == StepPhase::fwd) ran.push_back(s.primitive + ":" + s.args[0].layout);
        std::string all;
        for (const std::string& r : ran) all += r + " ";
        INFO("steps: ", all);
        REQUIRE(!ran.empty());
        CHECK(ran.back() == (avx512 ? "convolution:acdb" : "convolution:aBcd8b"));
    }
}

// A depthwise conv whose input is channels-last (convnext's, after the permutation back) keeps
// it in training (conv2d.cpp), where oneDNN's weight gradient is a generic kernel with every
// channel padded to 16 and kernels/simd's depthwise_wgrad reads it instead; at stride 1 its forward
// and data gradient run kernels/simd's depthwise_conv too, the weights in place. The op table's
// conv_dw*_nhwc cases check the numbers.
TEST_CASE("a depthwise conv on a channels-last input trains in channels-last, its weight gradient on kernels/simd") {
    // The op table's two: 7x7 over 32 channels (vectors of 16), 5x5 stride 2 over 24 (of 8); a
    // linear before them so that their data gradient runs, and a permutation after, as in convnext.
    struct Dw {
        int64_t C, H, W, R, stride;
    };
    for (Dw d : {Dw{32, 9, 11, 7, 1}, Dw{24, 10, 9, 5, 2}}) {
        CAPTURE(d.C);
        Graph g("dw_nhwc");
        g.input({2, d.H, d.W, d.C}) | linear(d.C) | permute({0, 3, 1, 2}) |
            conv(d.C, d.R, {.stride = d.stride, .pad = d.R / 2, .groups = d.C, .bias = true}) | permute({0, 2, 3, 1});
        const int dw = 2;
        auto ex = make_executor("onednn", g, {.mode = Mode::train});
        ex->prepare();
        // Per phase, each step as primitive:layout of its first argument, and what ran.
        std::map<StepPhase, std::vector<std::string>> steps;
        for (const StepInfo& s : ex->steps())
            if (s.node == dw) {
                steps[s.phase].push_back(s.primitive + ":" + (s.args.empty() ? "" : s.args[0].layout));
                INFO(s.primitive, " ", s.impl);
                CHECK(s.impl.rfind("ref", 0) != 0);
            }
        // The data gradient reads dy channels-last as it comes. At stride 2 oneDNN runs both, and on
        // AVX-512 the forward's weights (brdgmm_dw's own layout) are reordered for the data gradient
        // first, C x R x S floats; at stride 1 the kernels read the weights as they are.
        const std::string conv = d.stride == 1 ? "kernel:acdb" : "convolution:acdb";
        CHECK(steps[StepPhase::fwd] == std::vector<std::string>{conv});
        const std::vector<std::string>& dgrad = steps[StepPhase::dgrad];
        REQUIRE(!dgrad.empty());
        CHECK(dgrad.back() == conv);
        CHECK(dgrad.size() <= (d.stride == 1 ? 1u : 2u));
        CHECK(steps[StepPhase::wgrad] == std::vector<std::string>{"kernel:acdb"});
    }
}

// Where a residual add reads the conv's input too (convnext's blocks), its gradient has arrived
// from the add when the data gradient runs, channels-last as the next block's permute passes it
// back, and depthwise_conv_dgrad adds into it: one step, no binary add after (the op table's
// conv_dw7_nhwc_residual checks the numbers).
TEST_CASE("a channels-last depthwise conv's data gradient adds into the one a residual add passed back") {
    Graph g("dw_nhwc_residual");
    Tensor t = g.input({2, 9, 11, 32}) | linear(32) | permute({0, 3, 1, 2});
    add(t | conv(32, 7, {.pad = 3, .groups = 32, .bias = true}) | permute({0, 2, 3, 1}) | linear(32) |
            permute({0, 3, 1, 2}),
        t) |
        permute({0, 2, 3, 1}) | linear(32);
    const int dw = 2;
    REQUIRE(std::holds_alternative<Conv2d>(g.nodes()[dw].op));
    auto ex = make_executor("onednn", g, {.mode = Mode::train});
    ex->prepare();
    CHECK(step_impls(*ex, dw, StepPhase::dgrad) == "ridge:depthwise_conv_dgrad");
}

// A depthwise conv oneDNN runs forward in a channel-blocked layout (MobileNet's) takes
// kernels/simd's depthwise_dgrad for its data gradient at stride 1 on a map up to 32 wide, and
// oneDNN's on wider maps or where the padding across is not half the kernel (conv2d.cpp,
// depthwise_dgrad). On a wider map whose gradient a residual add passed back first
// (EfficientNet's features.1 after its first block), kernels/simd's depthwise_conv_dgrad adds
// into it, with no binary add after. The op table's conv_dw5s1_small, conv_dw3s1_small and
// conv_dw7s1_strips (the kernel's), conv_dw3s1_large (oneDNN's) and conv_dw3s1_large_residual,
// graphs of the same form, check the numbers.
TEST_CASE("a depthwise conv's data gradient at stride 1 runs kernels/simd on a blocked map up to 32 wide") {
    struct Dw {
        int64_t C, H, W, R, pad;
        bool kernel;
    };
    for (Dw d : {Dw{20, 9, 10, 5, 2, true}, Dw{40, 7, 7, 3, 1, true}, Dw{24, 28, 32, 3, 1, true},
                 Dw{24, 12, 33, 3, 1, false}, Dw{20, 9, 9, 5, 1, false}}) {
        INFO(d.C, " channels, ", d.H, "x", d.W, ", ", d.R, "x", d.R, " padding ", d.pad);
        Graph g("dw_blocked");
        g.input({2, d.C, d.H, d.W}) | conv(d.C, 1) | conv(d.C, d.R, {.pad = d.pad, .groups = d.C});
        const std::vector<std::string> fwd = step_kinds<Conv2d>(g, Mode::train, StepPhase::fwd);
        CHECK(std::count(fwd.begin(), fwd.end(), "convolution") == 2);  // both convs oneDNN's forward
        const std::vector<std::string> dgrad = step_kinds<Conv2d>(g, Mode::train, StepPhase::dgrad);
        const auto count = [&](const char* kind) { return std::count(dgrad.begin(), dgrad.end(), kind); };
        CHECK(count("kernel") == (d.kernel ? 1 : 0));
        CHECK(count("convolution") == (d.kernel ? 0 : 1));
    }
    Graph g("dw_blocked_residual");
    Tensor y = g.input({2, 24, 12, 34}) | conv(24, 1);
    Tensor dw = y | conv(24, 3, {.pad = 1, .groups = 24});
    add(dw | conv(24, 1), y) | conv(24, 1);
    auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
    ex->prepare();
    CHECK(step_impls(*ex, g.tensor(dw.id()).producer, StepPhase::dgrad) == "ridge:depthwise_conv_dgrad");
}

// At stride 2 a depthwise conv oneDNN runs forward in a channel-blocked layout takes
// kernels/simd's depthwise_dgrad for its data gradient on any map. Where x's gradient arrived
// first in the layout the conv read (a stride-2 unit's input, which a strided 1x1 conv reads too:
// nChw16c with AVX-512) it adds into it, with no copy and no binary add or summing reorder after
// it. Below AVX-512 the 1x1 conv's gradient arrives channels-last while the depthwise conv read an
// nChw8c copy, so dx is summed into it by a reorder as before, and the concatenation's 58-channel
// pieces fill no block, so dy arrives plain and is reordered first. 3x3 and 5x5 (ShuffleNet's,
// EfficientNet's), 58 channels (a padded block), against the reference.
TEST_CASE("a depthwise conv's data gradient at stride 2 runs kernels/simd, adding into what arrived") {
    const bool wide = onednn::avx512_core_here();
    for (int64_t R : {3, 5}) {
        CAPTURE(R);
        Graph g("dw_stride2");
        Tensor y = g.input({2, 8, 13, 12}) | conv(58, 1) | relu();
        Tensor down = y | conv(58, R, {.stride = 2, .pad = R / 2, .groups = 58});
        concat({down, y | conv(58, 1, {.stride = 2})});
        const int dw = g.tensor(down.id()).producer;
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
        ex->prepare();
        std::string steps, sums;  // the depthwise conv's data gradient; binary adds anywhere
        int summed = 0;           // reorders of x's shape in that phase: sums into x's gradient
        for (const StepInfo& s : ex->steps()) {
            if (s.primitive == "binary") sums += g.nodes()[size_t(s.node)].name + " ";
            if (s.node != dw || s.phase != StepPhase::dgrad) continue;
            if (s.primitive == "reorder")
                summed += s.args[0].dims == g.tensor(y.id()).shape;
            else
                steps += s.impl + " ";
        }
        CHECK(steps == "ridge:depthwise_dgrad ");
        CHECK_MESSAGE(sums.empty(), sums);
        CHECK(summed == (wide ? 0 : 1));
        check_against_reference(g, 1e-4, 2e-4);
    }
}

// A strided 1x1 conv beside a block that reads the same x (RegNet's projection, declared before
// the block, so its gradient comes second in the backward): its data gradient is kernels/simd's
// strided1x1_dgrad adding into the gradient that arrived in x's layout, with no binary add after
// it, with AVX-512 (nChw16c; the kernel was not measured below it, where oneDNN's stays).
// Declared after the block (ResNet's downsampling), its
// gradient comes first, and oneDNN's conv writes it. 20 channels (a padded block), strides 2 and
// 3 on a map neither divides, against the reference.
TEST_CASE("a strided 1x1 conv's data gradient adds into what arrived on kernels/simd") {
    const bool wide = onednn::avx512_core_here();
    for (bool first : {true, false})
        for (int64_t stride : {2, 3}) {
            CAPTURE(first);
            CAPTURE(stride);
            Graph g("proj");
            Tensor x = g.input({2, 8, 13, 11}) | conv(20, 1) | relu();
            auto projection = [&] { return x | conv(36, 1, {.stride = stride}); };
            auto block = [&] { return x | conv(36, 1) | relu() | conv(36, 3, {.stride = stride, .pad = 1}); };
            Tensor a = first ? projection() : block();
            Tensor b = first ? block() : projection();
            add(a, b);
            const int proj = g.tensor((first ? a : b).id()).producer;
            auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
            ex->prepare();
            std::string steps;  // the projection's data gradient (dy arrives plain from the graph's output)
            int sums = 0;
            for (const StepInfo& s : ex->steps())
                if (s.node == proj && s.phase == StepPhase::dgrad) {
                    steps += s.impl + " ";
                    sums += s.primitive == "binary";
                }
            CAPTURE(steps);
            const bool ours = steps.find("ridge:strided1x1_dgrad") != std::string::npos;
            CHECK(ours == (first && wide));
            if (ours) CHECK(sums == 0);
            check_against_reference(g, 1e-4, 2e-4);
        }
}

// A grouped conv of 24 channels a group between ReLUs (RegNetX's) runs in nChw8c with AVX-512 while
// its neighbours run in nChw16c: the ReLUs' gradients take dy in the other block through
// kernels/simd's relu_backward_reblocked, with no reorder of dy, against the reference. 48 channels
// (whole blocks) and 72 (a last block of 16 half padding, RegNetX's first stage); below AVX-512
// all is nChw8c and nothing needs it. Over 2^16 elements: smaller ReLUs run kernels/simd's
// elementwise pair.
TEST_CASE("a ReLU's gradient takes dy from the other channel block on kernels/simd") {
    const bool wide = onednn::avx512_core_here();
    for (int64_t C : {48, 72}) {
        CAPTURE(C);
        Graph g("reblocked");
        g.input({2, 8, 28, 27}) | conv(C, 1) | bn() | relu() | conv(C, 3, {.pad = 1, .groups = C / 24}) | bn() |
            relu() | conv(32, 1);
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
        ex->prepare();
        int reblocked = 0;
        for (const StepInfo& s : ex->steps())
            if (s.phase == StepPhase::dgrad && std::holds_alternative<Activation>(g.nodes()[size_t(s.node)].op))
                reblocked += s.impl == "ridge:relu_backward_reblocked";
        if (wide) CHECK(reblocked == 2);
        check_against_reference(g, 1e-4, 2e-4);
    }
}

// A squeeze-excitation gate's gradients (dx = dy * s, ds = sum of dy * x) run in one pass on
// kernels/simd's gate_backward wherever x and dy are channel-blocked: RegNetY's grouped convs of 8
// channels a group run in nChw8c with AVX-512 while the 1x1 conv after the gate runs nChw16c, and
// dy is read in its own block, no reorder (104 channels: a last block of 16 half padding). In one
// blocking it needs two units (an image's block) a thread: one image of 16 channels keeps the two
// kernels. Against the reference, gradients included.
TEST_CASE("a squeeze-excitation gate's gradients run in one pass, dy in either channel block") {
    auto gated = [](Tensor t, int64_t C) {
        Tensor gate = t | adaptive_avgpool(1) | conv(8, 1, {.bias = true}) | relu() | conv(C, 1, {.bias = true}) |
                      sigmoid();
        return mul(gate, t);
    };
    // The steps of the gate's gradient, by implementation (gate_backward's with x's and dy's
    // layouts), and the threads they run on.
    int threads = 0;
    auto gate_steps = [&threads](const Graph& g) {
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false, .threads = 2});
        ex->prepare();
        std::string impls;
        for (const StepInfo& s : ex->steps()) {
            if (s.phase == StepPhase::fwd || s.node < 0) continue;  // node -1: the loss
            if (!std::holds_alternative<Mul>(g.nodes()[size_t(s.node)].op)) continue;
            impls += s.impl;
            if (s.impl == "ridge:gate_backward") impls += cat(":", s.args[0].layout, "/", s.args[1].layout);
            impls += " ";
            threads = s.threads;
        }
        return impls;
    };
    const bool wide = onednn::avx512_core_here();
    for (int64_t C : {48, 104}) {
        CAPTURE(C);
        Graph g("se_reblocked");
        Tensor t = g.input({2, 8, 14, 13}) | conv(C, 1) | bn() | relu() | conv(C, 3, {.pad = 1, .groups = C / 8}) |
                   bn() | relu();
        gated(t, C) | conv(32, 1);
        CHECK(gate_steps(g) == (wide ? "ridge:gate_backward:aBcd8b/aBcd16b " : "ridge:gate_backward:aBcd8b/aBcd8b "));
        check_against_reference(g, 1e-4, 2e-4);
    }
    for (int64_t N : {4, 1}) {
        CAPTURE(N);
        const int64_t C = N == 1 ? 16 : 32, units = N * C / (wide ? 16 : 8);
        Graph g("se_blocked");
        gated(g.input({N, 8, 56, 55}) | conv(C, 1) | relu(), C) | conv(16, 1);
        const std::string steps = gate_steps(g);
        CAPTURE(threads);
        const std::string blocked = wide ? "aBcd16b/aBcd16b " : "aBcd8b/aBcd8b ";
        CHECK(steps == (units < 2 * threads ? "ridge:scale_channels ridge:channel_dots " : "ridge:gate_backward:" + blocked));
        check_against_reference(g, 1e-4, 2e-4);
    }
}

// A residual add's gradient goes to both operands as dy's own buffer (onednn/plan.h's share): the
// add plans no step. Each graph below puts a writer where the other operand still reads that
// buffer, against the reference executor (the input's gradient too): the residual block's first
// conv, whose share a temporary takes in (Plan::contributed); a ReLU on one operand, whose gradient
// would overwrite dy in place; a conv that adds its share into an operand's gradient while the
// other operand's conv has yet to read it; a layernorm that adds its share likewise; a second
// add's share, a concatenation's, a permutation's (viewed into a plain gradient, Plan::pass_view),
// an identity pool's (Plan::pass) and a reference kernel's (Plan::accumulator), each added into a
// copy (Plan::own); and x + x, whose second share doubles dy in place (the add's own root no
// longer holds it). 24 channels leave a block part padding. Dropping own() from
// pass_view, pass, pass_reordered or accumulator fails a graph here (the permutation's, the
// identity pool's and the second add's, the concatenation's, the reference kernel's).
TEST_CASE("a residual add hands dy's buffer to both operands, copying it only for a writer while both read") {
    auto add_steps = [](const Graph& g, const Tensor& sum) {
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
        ex->prepare();
        std::string steps;
        for (const StepInfo& s : ex->steps())
            if (s.node == g.tensor(sum.id()).producer && s.phase == StepPhase::dgrad) steps += s.impl + " ";
        return steps;
    };
    // The add plans no step, and the step's results are the reference's.
    auto shared_and_right = [&](const Graph& g, const Tensor& sum) {
        CHECK(add_steps(g, sum).empty());
        check_against_reference(g, 1e-4, 2e-4);
    };
    // The image through a 1x1 conv and a ReLU: the tensor whose readers the graphs below build.
    auto stem = [](Graph& g, int64_t C, int64_t HW) {
        return g.input({2, 8, HW, HW}, true) | conv(C, 1) | relu();
    };
    // Each subcase over every shape (a SUBCASE inside a loop would run on its first pass only).
    auto shapes = [](const std::function<void(int64_t, int64_t)>& f) {
        for (int64_t C : {24, 32})
            for (int64_t HW : {7, 64}) {
                CAPTURE(C);
                CAPTURE(HW);
                f(C, HW);
            }
    };
    // An operand b whose other reader's gradient (reader(b)) joins the sum's: the sum planned first
    // shares dy with a and b, then the reader adds its share into b's while a's layer is to read dy.
    auto conv_operands = [&](const char* name, int64_t C, int64_t HW, const std::function<Tensor(Tensor)>& reader) {
        Graph g(name);
        Tensor y = stem(g, C, HW);
        Tensor a = y | conv(C, 3, {.pad = 1});
        Tensor b = y | conv(C, 1);
        Tensor c = reader(b);
        Tensor sum = add(a, b);
        add(sum, c) | relu();
        shared_and_right(g, sum);
    };
    auto linear_operands = [&](const char* name, const std::function<Tensor(Tensor)>& reader) {
        Graph g(name);
        Tensor y = g.input({2, 10, 32}, true) | linear(32);
        Tensor a = y | linear(32);
        Tensor b = y | linear(32);
        Tensor c = reader(b);
        Tensor sum = add(a, b);
        add(sum, c) | linear(8);
        shared_and_right(g, sum);
    };
    SUBCASE("a residual block") {
        shapes([&](int64_t C, int64_t HW) {
            Graph g("residual");
            Tensor y = stem(g, C, HW);
            Tensor sum = add(y | conv(C, 3, {.pad = 1}), y);
            sum | relu();
            shared_and_right(g, sum);
        });
    }
    SUBCASE("a ReLU's gradient on one operand while the other's conv is still to read dy") {
        shapes([&](int64_t C, int64_t HW) {
            Graph g("relu_operand");
            Tensor y = stem(g, C, HW);
            Tensor b = y | conv(C, 1);
            Tensor a = y | conv(C, 3, {.pad = 1}) | relu();
            Tensor sum = add(a, b);
            sum | conv(C, 1);
            shared_and_right(g, sum);
        });
    }
    SUBCASE("an operand's other reader adds its share while the other operand's conv is still to read dy") {
        shapes([&](int64_t C, int64_t HW) {
            conv_operands("shared_reader", C, HW, [C](Tensor b) { return b | conv(C, 3, {.pad = 1}); });
        });
    }
    SUBCASE("a layernorm adds its share into an operand's gradient while the other's linear is still to read dy") {
        linear_operands("layernorm_reader", [](Tensor b) { return b | ln() | linear(32); });
    }
    SUBCASE("an operand of two adds, the second's share passed while the first's other operand is to read dy") {
        shapes([&](int64_t C, int64_t HW) {
            Graph g("two_adds");
            Tensor y = stem(g, C, HW);
            Tensor a = y | conv(C, 3, {.pad = 1});
            Tensor b = y | conv(C, 1);
            Tensor other = add(b, y | conv(C, 1));
            Tensor sum = add(a, b);
            add(sum, other) | relu();
            shared_and_right(g, sum);
        });
    }
    SUBCASE("a concatenation of both operands, its share added into one while the other's conv is to read dy") {
        shapes([&](int64_t C, int64_t HW) {
            Graph g("concat_reader");
            Tensor y = stem(g, C, HW);
            Tensor a = y | conv(C, 3, {.pad = 1});
            Tensor b = y | conv(C, 1);
            Tensor both = concat({b, a}, 1);
            Tensor sum = add(a, b);
            add(sum, both | conv(C, 1)) | relu();
            shared_and_right(g, sum);
        });
    }
    SUBCASE("a permutation's share viewed into one operand's plain gradient while the other's linear is to read dy") {
        linear_operands("permute_reader",
                        [](Tensor b) { return b | permute({0, 2, 1}) | linear(10) | permute({0, 2, 1}); });
    }
    SUBCASE("an identity pool's share passed into one operand while the other's conv is to read dy") {
        shapes([&](int64_t C, int64_t HW) {
            conv_operands("identity_pool_reader", C, HW, [HW](Tensor b) { return b | adaptive_avgpool(HW); });
        });
    }
    SUBCASE("a reference kernel's share accumulated into one operand while the other's conv is to read dy") {
        // Adaptive pools of 7 onto 5 (windows of 2 and 3) have no oneDNN kernel: the reference backward
        // adds into the plain gradient Plan::accumulator gives it, which the sum's own pool made plain.
        Graph g("reference_reader");
        Tensor y = stem(g, 16, 7);
        Tensor a = y | conv(16, 3, {.pad = 1});
        Tensor b = y | conv(16, 1);
        Tensor c = b | adaptive_avgpool(5);
        Tensor sum = add(a, b);
        add(sum | adaptive_avgpool(5), c) | relu();
        shared_and_right(g, sum);
    }
    SUBCASE("x + x") {
        shapes([&](int64_t C, int64_t HW) {
            Graph g("doubled");
            Tensor y = stem(g, C, HW);
            Tensor sum = add(y, y);
            sum | conv(C, 1);
            const std::string steps = add_steps(g, sum);
            CAPTURE(steps);
            CHECK(steps.find(' ') + 1 == steps.size());  // one step: the sum into dy itself
            CHECK(steps.find("copy") == std::string::npos);
            check_against_reference(g, 1e-4, 2e-4);
        });
    }
}

// A conv on the image that oneDNN would run as its GEMM convolution (11x11 at stride 4) runs
// image_conv below AVX-512, in fused inference with its batchnorm folded and its ReLU, and in
// training with image_conv_wgrad reading dy in the nChw8c it wrote; on AVX-512 oneDNN's own. The
// results against the reference executor.
TEST_CASE("a conv on the image that oneDNN runs as a GEMM runs image_conv below AVX-512") {
    Graph g("image11");
    g.input({2, 3, 35, 35}) | conv(32, 11, {.stride = 4, .pad = 2}) | bn() | relu() | conv(16, 1);
    check_against_reference(g, 1e-4, 2e-4);
    for (Mode mode : {Mode::infer, Mode::train}) {
        CAPTURE(mode == Mode::train);
        auto ex = make_executor("onednn", g, {.mode = mode});
        ex->prepare();
        std::set<std::string> fwd, wgrad;
        for (const StepInfo& s : ex->steps())
            if (s.node == 0 && s.phase == StepPhase::fwd)
                fwd.insert(s.primitive + ":" + s.impl);
            else if (s.node == 0 && s.phase == StepPhase::wgrad)
                wgrad.insert(s.primitive + ":" + s.impl);
        const bool ours = !onednn::avx512_core_here();
        CHECK(fwd.count("kernel:ridge:image_conv") == (ours ? 1 : 0));
        if (mode == Mode::train) CHECK(wgrad.count("kernel:ridge:image_conv_wgrad") == (ours ? 1 : 0));
        if (mode == Mode::infer) CHECK(fwd.count("kernel:ridge:image_conv_weights") == 0);  // packed once, in prep
    }
}

// Below AVX-512 a conv on the image trains its weight gradient on image_conv_wgrad at stride 1 and
// where oneDNN's forward wrote a plain output; else (a stride-2 stem on a blocked output, or on
// AVX-512) oneDNN's own.
TEST_CASE("a conv on the image computes its weight gradient with image_conv_wgrad where it pays") {
    for (int64_t stride : {1, 2}) {
        CAPTURE(stride);
        Graph g("stem");
        g.input({2, 3, 16, 16}) | conv(16, 3, {.stride = stride, .pad = 1}) | relu() | conv(16, 1);
        auto ex = make_executor("onednn", g, {.mode = Mode::train});
        ex->prepare();
        std::string src_layout, fwd_layout, wgrad_impl;
        for (const StepInfo& s : ex->steps())
            if (s.node == 0 && s.phase == StepPhase::fwd && s.primitive == "convolution" && !s.args.empty())
                src_layout = s.args.front().layout, fwd_layout = s.args.back().layout;
            else if (s.node == 0 && s.phase == StepPhase::wgrad && !layout_move(s))
                wgrad_impl = s.primitive + ":" + s.impl;
        INFO("forward input ", src_layout, ", output ", fwd_layout, ", weight gradient ", wgrad_impl);
        REQUIRE(!fwd_layout.empty());
        const bool avx512 = onednn::avx512_core_here();
        if (!avx512) CHECK(src_layout == "abcd");  // jit:avx2 reads the image plain
        const bool plain = fwd_layout == "abcd";
        if (!avx512 && (stride == 1 || plain))
            CHECK(wgrad_impl == "kernel:ridge:image_conv_wgrad");
        else
            CHECK(wgrad_impl.rfind("convolution:", 0) == 0);
    }
}

// Squeeze-excitation's two 1x1 convs on the pooled map run on kernels/simd's linear_rows
// (conv2d.cpp) on up to 32 rows: in training a squeeze and an expansion, each in forward, data and
// weight gradient; in fused inference a squeeze whose group ends in its SiLU or ReLU and an
// expansion ending in its sigmoid, the activation in the same step. oneDNN's inner product
// remains for more than 32 rows. The op table's se_rows and se_block check their numbers.
TEST_CASE("squeeze-excitation's inner products train on kernels/simd on few rows") {
    auto build_se = [](Graph& g, int64_t N, bool silu_squeeze) {
        Tensor h = g.input({N, 8, 4, 4}) | conv(48, 1);  // nodes: conv, pool, conv, act, conv, sigmoid, mul
        Tensor s = h | adaptive_avgpool(1) | conv(12, 1, {.bias = true});
        s = silu_squeeze ? s | silu() : s | relu();
        mul(s | conv(48, 1, {.bias = true}) | sigmoid(), h);
    };
    auto kinds = [&](int64_t N, Mode mode, bool silu_squeeze) {
        Graph g("se");
        build_se(g, N, silu_squeeze);
        auto ex = make_executor("onednn", g, {.mode = mode});
        ex->prepare();
        std::map<std::pair<int, StepPhase>, std::string> k;
        for (const StepInfo& s : ex->steps())
            if ((s.node == 2 || s.node == 4) && s.phase != StepPhase::update) {
                const bool named = s.primitive == "kernel" && mode == Mode::infer;
                k[{s.node, s.phase}] += (named ? s.impl : s.primitive) + " ";
            }
        return k;
    };
    for (const auto& [at, steps] : kinds(32, Mode::train, false))
        CHECK_MESSAGE(steps == "kernel ", "node ", at.first, " phase ", int(at.second));
    CHECK(kinds(32, Mode::train, false).size() == 6);
    for (const auto& [at, steps] : kinds(33, Mode::train, false)) CHECK(steps.find("inner_product") != std::string::npos);
    // Inference, fused: the squeeze (node 2) with its SiLU or ReLU, and the expansion (node 4) with
    // its sigmoid, on the kernel: linear_panels on several rows (up to 16 with AVX-512), else
    // linear_rows.
    const bool wide = onednn::avx512_core_here();
    for (int64_t N : {1, 16, 17, 32}) {
        CAPTURE(N);
        const bool panels = N > 1 && (!wide || N <= 16);
        const std::string want = panels ? "ridge:linear_panels " : "ridge:linear_rows ";
        for (bool silu : {true, false}) {
            auto k = kinds(N, Mode::infer, silu);
            CHECK(k[{2, StepPhase::fwd}] == want);
            CHECK(k[{4, StepPhase::fwd}] == want);
            CHECK(k.size() == 2);  // no backward
        }
    }
    CHECK(kinds(33, Mode::infer, true)[{2, StepPhase::fwd}] == "inner_product ");
    CHECK(kinds(33, Mode::infer, false)[{4, StepPhase::fwd}] == "inner_product ");
}

// In fused inference a SiLU over a map that a global average pool reads writes the pool's means
// in its own step (activation.cpp's silu_means_forward), and the pool plans none; unfused, and in
// training, the two keep a step each. The op table's se_after_silu cases check the numbers.
TEST_CASE("a SiLU over a map writes the means of the global pool after it, in fused inference only") {
    auto steps = [](int64_t N, Mode mode, bool fused) {
        Graph g("se");
        // nodes: conv, silu, pool, conv, sigmoid, mul
        Tensor h = g.input({N, 8, 4, 4}) | conv(48, 1) | silu();
        mul(h | adaptive_avgpool(1) | conv(48, 1, {.bias = true}) | sigmoid(), h);
        auto ex = make_executor("onednn", g, {.mode = mode, .fused = fused});
        ex->prepare();
        std::map<int, std::string> impl;
        for (const StepInfo& s : ex->steps())
            if ((s.node == 1 || s.node == 2) && s.phase == StepPhase::fwd) impl[s.node] += s.impl + " ";
        return impl;
    };
    for (int64_t N : {1, 3}) {
        CAPTURE(N);
        auto fused = steps(N, Mode::infer, true);
        CHECK(fused[1] == "ridge:silu_channel_means ");
        CHECK(fused.count(2) == 0);
        for (const auto& [mode, on] : {std::pair{Mode::infer, false}, std::pair{Mode::train, true}}) {
            auto apart = steps(N, mode, on);
            CHECK(apart[1].find("silu_channel_means") == std::string::npos);
            CHECK(apart.count(2) == 1);
        }
    }
}

// In inference on AVX-512 a classifier on up to 16 images reads an nChw16c map as its rows: the
// identity pool and the flatten plan no step and linear_panels reads the map (linear.cpp's
// map_rows_forward); on more images, or below AVX-512, the pool copies the map into plain rows.
// The op table's classifier_on_map checks the numbers.
TEST_CASE("a classifier in inference reads a blocked map as its rows on up to 16 images") {
    for (int64_t N : {2, 16, 17}) {
        CAPTURE(N);
        Graph g("classifier");
        // nodes: conv, relu, pool, flatten, linear, relu, linear
        g.input({N, 3, 5, 5}) | conv(48, 3, {.pad = 1}) | relu() | adaptive_avgpool(5) | flatten() | linear(40) |
            relu() | linear(10);
        for (bool fused : {true, false}) {
            auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = fused});
            ex->prepare();
            std::map<int, std::string> impl, read;
            for (const StepInfo& s : ex->steps())
                if (s.phase == StepPhase::fwd) {
                    impl[s.node] += s.impl + " ";
                    if (s.node == 4) read[s.node] = s.args.empty() ? "" : s.args[0].layout;
                }
            const bool map = onednn::avx512_core_here() && N <= 16;
            CHECK(impl.count(2) == !map);
            CHECK(impl.count(3) == 0);
            if (map) {
                CHECK(impl[4] == "ridge:linear_panels ");
                CHECK(read[4] == "aBcd16b");
            }
        }
    }
}

namespace {
// Each concatenation's forward steps in g's inference or training plan, by their implementations.
std::vector<std::string> concat_steps(Graph& g, Mode mode) {
    auto ex = make_executor("onednn", g, {.mode = mode});
    ex->prepare();
    std::vector<std::string> concats;
    for (const Node& n : g.nodes())
        if (std::holds_alternative<Concat>(n.op)) {
            std::string steps;
            for (const StepInfo& s : ex->steps())
                if (&g.nodes()[size_t(s.node)] == &n && s.phase == StepPhase::fwd) steps += s.impl + " ";
            concats.push_back(steps);
        }
    return concats;
}
}  // namespace

// A concatenation of pieces that fill no whole channel block (shufflenet_v2's 58 channels) and
// start in different layouts reads each piece in its own layout in inference, with no reorder
// charged to it: with AVX-512, where every piece is nChw16c or channels-last, into channels-last
// (concat_channels_last), which the shuffle after it keeps (the test after this one), so the next
// concatenation's pieces are channels-last too (concat_affine); else into plain (concat_plain:
// nChw8c pieces below AVX-512, or a plain piece). In training the pieces are reordered to one
// layout first. The op table's concat_blocked_to_plain (this graph) checks the numbers. At batch
// 8 the convs read a 3-channel image, which with AVX-512 they turn into nChw16c; on 8 channels at
// batch 2 they keep channels-last there (concat_affine all along).
TEST_CASE("a concatenation of pieces in several layouts reads them as they lie in inference") {
    const bool wide = onednn::avx512_core_here();
    int plain_concats = 0, row_concats = 0;  // in inference, over the graphs
    for (auto [mode, N] : {std::pair{Mode::infer, 2}, {Mode::infer, 8}, {Mode::train, 2}}) {
        CAPTURE(int(mode));
        CAPTURE(N);
        Graph g("shuffle_units");
        Tensor x = g.input({N, N == 8 ? 3 : 8, 7, 5});
        Tensor y = concat({x | conv(58, 1) | relu(), x | conv(58, 1)}) | channel_shuffle(2);
        Tensor kept = y | slice(1, 0, 58), convolved = y | slice(1, 58, 58) | conv(58, 1);
        concat({kept, convolved}) | channel_shuffle(2);
        const std::vector<std::string> concats = concat_steps(g, mode);
        REQUIRE(concats.size() == 2);
        INFO("steps: ", concats[0], "/ ", concats[1]);
        if (mode == Mode::infer) {
            const bool rows = concats[0] == "ridge:concat_affine " || concats[0] == "ridge:concat_channels_last ";
            CHECK((concats[0] == "ridge:concat_plain " || rows));
            CHECK(concats[1] == (rows ? "ridge:concat_affine " : "ridge:concat_plain "));
            plain_concats += concats[1] == "ridge:concat_plain ";
            row_concats += concats[0] == "ridge:concat_channels_last ";
        } else {
            CHECK(concats[0].find("concat_plain") == std::string::npos);
            CHECK(concats[1].find("concat_plain") == std::string::npos);
        }
    }
    CHECK(row_concats == (wide ? 1 : 0));  // the nChw16c pieces at batch 8
    // The plain image beside a conv's output: plain, on any instruction set.
    Graph g("image_beside_conv");
    Tensor x = g.input({8, 3, 7, 5});
    concat({x | conv(58, 1), x}) | conv(16, 1);
    const std::vector<std::string> concats = concat_steps(g, Mode::infer);
    REQUIRE(concats.size() == 1);
    CHECK(concats[0] == "ridge:concat_plain ");
    CHECK(plain_concats == (wide ? 0 : 2));  // nChw8c pieces
}

namespace {

// ShuffleNet's downsampling unit and a basic unit on 58 channels, then both branches of a stride-2
// unit reading the second shuffle whole (the op table's shuffle_channels_last): that shuffle.
Tensor shuffle_units_downsampled(Tensor x) {
    Tensor y = concat({x | conv(58, 1) | relu(), x | conv(58, 1)}) | channel_shuffle(2);
    Tensor kept = y | slice(1, 0, 58), convolved = y | slice(1, 58, 58) | conv(58, 1) | relu();
    Tensor z = concat({kept, convolved}) | channel_shuffle(2);
    Tensor down = z | conv(116, 3, {.stride = 2, .pad = 1, .groups = 116});
    concat({down, z | conv(116, 1, {.stride = 2})});
    return z;
}

}  // namespace

// At batch 1 with AVX-512 oneDNN's convs around ShuffleNet's shuffles work channels-last, and the
// shuffles permute each position's channels (kernels/simd's shuffle2_channels_last) into
// channels-last halves (the stride-1 unit's split) or a whole map (read by both branches of the
// next stride-2 unit): no step turns the map around to plain nchw and back for the convs. Three
// groups go through oneDNN's reorder from the shuffled view of the channels-last map. The op
// table's shuffle_channels_last and shuffle3_channels_last (these graphs) check the numbers, in
// training too.
TEST_CASE("at batch 1 ShuffleNet's shuffles keep the convs' channels-last layout") {
    if (!onednn::avx512_core_here()) return;  // below it the convs take nChw8c (AVX2) at batch 1
    for (bool fused : {true, false}) {
        CAPTURE(fused);
        Graph g("shuffle_channels_last");
        Tensor x = g.input({1, 8, 9, 7});
        shuffle_units_downsampled(x);
        auto ex = make_executor("onednn", g, {.mode = Mode::infer, .fused = fused});
        ex->prepare();
        int shuffles = 0, convs = 0;
        for (const StepInfo& s : ex->steps()) {
            if (s.node < 0 || s.phase != StepPhase::fwd) continue;
            const Node& n = g.nodes()[size_t(s.node)];
            std::string layouts;
            for (const StepArg& a : s.args) layouts += " " + a.layout;
            CAPTURE(n.name);
            CAPTURE(layouts);
            if (std::holds_alternative<ChannelShuffle>(n.op)) {
                ++shuffles;
                REQUIRE(s.args.size() == 2);
                CHECK(s.impl == "ridge:shuffle2_channels_last");
                CHECK(s.args[0].layout == "acdb");
                CHECK(s.args[1].layout == "acdb");
            }
            if (const auto* c = std::get_if<Conv2d>(&n.op); c && n.inputs[0] != x.id()) {
                ++convs;
                CHECK(s.primitive == "convolution");
                CHECK(s.args[0].layout == "acdb");
            }
        }
        CHECK(shuffles == 3);  // two halves, then the whole map
        CHECK(convs == 3);
    }
    Graph g("shuffle3_channels_last");
    Tensor x = g.input({1, 8, 5, 6});
    Tensor y = concat({x | conv(21, 1), x | conv(15, 1)});
    Tensor cut = y | channel_shuffle(3);
    Tensor a = cut | slice(1, 0, 12), b = cut | slice(1, 12, 24);
    Tensor whole = y | relu() | channel_shuffle(3) | conv(8, 1);
    concat({b | conv(8, 1), a | conv(8, 1), whole});
    auto ex = make_executor("onednn", g, {.mode = Mode::infer});
    ex->prepare();
    int views = 0;
    for (const StepInfo& s : ex->steps()) {
        if (s.node < 0 || !std::holds_alternative<ChannelShuffle>(g.nodes()[size_t(s.node)].op)) continue;
        CAPTURE(s.args[0].layout);
        CHECK(s.primitive == "reorder");
        views += s.args[0].layout.substr(0, 4) == "adcb";  // (N, C/G, G, HW) over channels-last
    }
    CHECK(views == 3);  // two parts, then the whole map
}

// In training at batch 1 (and below AVX-512 in inference) the convs around ShuffleNet's shuffles
// work in channel blocks of the vector width, and 58-channel pieces fill none, so the
// concatenation before a shuffle is plain. The shuffle a stride-2 unit reads whole then writes the
// blocks its two convs read (layout.cpp's shuffle_blocked), and no step of theirs reorders the map:
// the convs read what the shuffle wrote. The op table's shuffle_channels_last (this graph) checks
// the numbers in training.
TEST_CASE("a plain shuffle read whole by convs writes their channel blocks") {
    const bool wide = onednn::avx512_core_here();
    const std::string block = wide ? "aBcd16b" : "aBcd8b";
    Graph g("shuffle_blocked");
    const Tensor z = shuffle_units_downsampled(g.input({1, 8, 9, 7}));
    const int shuffle = g.tensor(z.id()).producer;
    for (Mode mode : {Mode::train, Mode::infer}) {
        if (mode == Mode::infer && wide) continue;  // channels-last there (the test above)
        CAPTURE(int(mode));
        auto ex = make_executor("onednn", g, {.mode = mode, .fused = false});
        ex->prepare();
        int written = 0, read = 0;
        for (const StepInfo& s : ex->steps()) {
            if (s.phase != StepPhase::fwd) continue;
            const Node& n = g.nodes()[size_t(s.node)];
            CAPTURE(n.name);
            if (s.node == shuffle) {
                ++written;
                REQUIRE(s.args.size() == 2);
                CHECK(s.impl == "ridge:shuffle_to_blocked");
                CHECK(s.args[0].layout == "abcd");
                CHECK(s.args[1].layout == block);
            }
            if (std::holds_alternative<Conv2d>(n.op) && n.inputs[0] == z.id()) {
                ++read;
                CHECK(s.primitive == "convolution");
                CHECK(s.args[0].layout == block);
            }
        }
        CHECK(written == 1);
        CHECK(read == 2);  // no other step charged to either conv
    }
}

// In training a basic unit reads the shuffle's halves apart (layout.cpp's partition): the kept
// half goes to the next concatenation and the other to a 1x1 conv, whose data gradient is
// channel-blocked; a stride-2 unit reads the shuffle whole, its two convs' data gradients summed
// in their blocks. Either shuffle's gradient is one step, unshuffle, from the gradients as they
// lie into x's plain gradient, where the blocked ones went through a copy to plain and a reorder
// into the shuffled view. At batch 1 and 8 (on 8 channels and a 3-channel image, where the first
// convs' layouts differ); the op table's shuffle_channels_last and shuffle_whole_blocked (these
// graphs) check the gradients.
TEST_CASE("a channel shuffle's gradient comes back from its halves or whole in one pass") {
    const std::string block = onednn::avx512_core_here() ? "aBcd16b" : "aBcd8b";
    for (auto [N, C] : {std::pair{1, 8}, {8, 3}}) {
        CAPTURE(N);
        Graph g("shuffle_units");
        shuffle_units_downsampled(g.input({N, C, 9, 7}));
        std::vector<int> shuffles;  // the halves', the whole's
        for (size_t n = 0; n < g.nodes().size(); ++n)
            if (std::holds_alternative<ChannelShuffle>(g.nodes()[n].op)) shuffles.push_back(int(n));
        REQUIRE(shuffles.size() == 2);
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .fused = false});
        ex->prepare();
        std::vector<std::string> steps(2);
        for (const StepInfo& s : ex->steps())
            for (size_t i = 0; i < 2; ++i) {
                if (s.node != shuffles[i] || s.phase != StepPhase::dgrad) continue;
                steps[i] += s.impl + " ";
                REQUIRE(s.args.size() == (i == 0 ? 3u : 2u));
                CHECK(s.args[0].layout == "abcd");
                CHECK(s.args.back().layout == block);  // the conv's data gradient; the two summed
            }
        CHECK(steps[0] == "ridge:unshuffle ");
        CHECK(steps[1] == "ridge:unshuffle ");
    }
}

// A batchnorm in inference that stays apart from a conv (every one, unfused) runs kernels/simd's
// concat_affine in its input's layout (norm.cpp), with no reorder around it: 58 channels in plain
// nchw (the graph's input), 32 after a 1x1 conv (channels-last or nChw16c / nChw8c, as oneDNN's
// conv picks; every one is whole blocks), each with a ReLU, on two images against the reference.
// In training, oneDNN's primitive or the small-map kernel stays.
TEST_CASE("batchnorm in inference runs in its input's layout on kernels/simd") {
    auto build_bn = [](Graph& g, bool after_conv) {
        if (after_conv)
            g.input({2, 24, 6, 6}) | conv(32, 1) | bn() | relu();  // the ReLU takes the output's reorder
        else
            g.input({2, 58, 5, 7}) | bn() | relu();
    };
    for (bool after_conv : {false, true}) {
        CAPTURE(after_conv);
        Graph g("bn");
        build_bn(g, after_conv);
        const int bn_node = after_conv ? 1 : 0;
        for (Mode mode : {Mode::infer, Mode::train}) {
            auto ex = make_executor("onednn", g, {.mode = mode, .fused = false});
            ex->prepare();
            std::string steps;
            for (const StepInfo& s : ex->steps())
                if (s.node == bn_node && s.phase == StepPhase::fwd) steps += s.impl + " ";
            CHECK_MESSAGE((steps == "ridge:batchnorm_inference ") == (mode == Mode::infer), steps);
        }
        check_against_reference(g, 1e-5, std::nullopt);
    }
}

// A classifier in training on 3 to 64 rows below AVX-512, where oneDNN's inner product keeps the
// weights C-major (`ba`), runs kernels/simd's linear_rows forward and linear_rows_dgrad on them as
// they lie (linear.cpp: oneDNN's gemm:jit read them at a third of memory speed, and its backward
// data reordered all of them every step); where they are K-major, or on AVX-512, or past 64 rows,
// oneDNN's inner product stays. Which layout oneDNN picks depends on the shape, so the test asks
// it, and needs the C-major case to occur below AVX-512.
TEST_CASE("a classifier on few rows in training runs kernels/simd on oneDNN's C-major weights below AVX-512") {
    const bool wide = onednn::avx512_core_here();
    int c_major = 0;
    for (int64_t M : {3, 8, 64, 65})
        for (int64_t C : {96, 512})
            for (int64_t K : {40, 1000}) {
                CAPTURE(M);
                CAPTURE(C);
                CAPTURE(K);
                Graph g("classifier");
                g.input({M, 24}) | linear(C) | relu() | linear(K);  // node 2: the classifier
                auto ex = make_executor("onednn", g, {.mode = Mode::train});
                ex->prepare();
                std::string layout, fwd, dgrad;
                for (const StepInfo& s : ex->steps()) {
                    if (s.node != 2) continue;
                    if (s.phase == StepPhase::fwd) {
                        fwd += s.impl.rfind("ridge:", 0) == 0 ? s.impl + " " : s.primitive + " ";
                        for (const StepArg& a : s.args)
                            if (a.name == "weights" || (s.primitive == "kernel" && a.name == "arg_1"))
                                layout = a.layout;
                    }
                    if (s.phase == StepPhase::dgrad)
                        dgrad += s.impl.rfind("ridge:", 0) == 0 ? s.impl + " " : s.primitive + " ";
                }
                const bool kernel = !wide && M <= 64 && layout == "ba";
                c_major += kernel;
                INFO("weights ", layout, "; forward: ", fwd, "; data gradient: ", dgrad);
                if (kernel) {
                    CHECK(fwd == "ridge:linear_rows ");
                    CHECK(dgrad == "ridge:linear_rows_dgrad ");
                } else {  // after a reorder of the weights where they are C-major
                    CHECK(fwd == "inner_product ");
                    CHECK((dgrad == "inner_product " || dgrad == "reorder inner_product "));
                }
                if (kernel || M == 8) check_against_reference(g, 1e-4, 1e-4);
            }
    MESSAGE(c_major, " of 16 classifiers ran kernels/simd");
    if (!wide) CHECK(c_major > 0);
}

// In training a linear on many rows (vit's tokens, convnext's positions) runs on oneDNN's matmul
// where the inner product would run brgemm (AVX-512): its data gradient from 384 rows, its forward
// from 1024, the weights reordered from the inner product's layout into the matmul's each step
// where the two differ (linear.cpp's matmul_dgrad and matmul_training_forward), and its weight
// gradient from 1024 rows where both widths are 192 or more (matmul_wgrad: dw = dy^T x, or its
// transpose where C > K, reordered into the weights' layout, and the bias's as column sums); on
// fewer rows or narrower, and below AVX-512 (gemm:jit), the inner product. The numbers against
// the reference, over three steps with their updates, so that a reorder that kept the weights of
// the step before, or a transposed product read the wrong way round, would show.
TEST_CASE("a linear on many rows in training runs oneDNN's matmul where the inner product runs brgemm") {
    const bool wide = onednn::avx512_core_here();
    const std::vector<std::string> products = {"matmul", "inner_product"};
    // The products among the linears' steps in one phase (not the binary add that sums a's two
    // gradients), and how many reorders.
    auto ran = [&](const Graph& g, StepPhase phase, int* reorders = nullptr) {
        std::vector<std::string> kinds = step_kinds<Linear>(g, Mode::train, phase);
        if (reorders) *reorders = int(std::count(kinds.begin(), kinds.end(), "reorder"));
        std::erase_if(kinds, [&](const std::string& k) { return k != products[0] && k != products[1]; });
        return kinds;
    };
    for (auto [T, D] :
         {std::pair<int64_t, int64_t>{512, 33}, {192, 33}, {191, 33}, {512, 200}, {192, 200}, {512, 191}}) {
        CAPTURE(T);  // 2 images: 1024, 384 and 382 rows
        CAPTURE(D);
        // A transformer's MLP with a residual sum (in training each its own layer), 33 wide so that
        // the inner product's weights are laid out unlike the matmul's; 200 wide, D -> D, D -> 256
        // (dy^T x) and 256 -> D (x^T dy) for the weight gradient's three forms; 191 wide, just under
        // its line.
        Graph g("tokens");
        Tensor a = g.input({2, T, D}) | linear(D);
        add(a, a | linear(D == 33 ? 200 : 256) | gelu() | linear(D));
        const std::string fwd = wide && T >= 512 ? "matmul" : "inner_product";
        const std::string dgrad = wide && T >= 192 ? "matmul" : "inner_product";
        const std::string wgrad = wide && T >= 512 && D >= 192 ? "matmul" : "inner_product";
        int reorders = 0;
        CHECK(ran(g, StepPhase::fwd, &reorders) == std::vector<std::string>(3, fwd));
        if (fwd == "matmul" && D == 33) CHECK(reorders > 0);
        CHECK(ran(g, StepPhase::dgrad) == std::vector<std::string>(2, dgrad));
        CHECK(ran(g, StepPhase::wgrad, &reorders) == std::vector<std::string>(3, wgrad));
        if (wgrad == "matmul") CHECK(reorders == 3);
        auto planned = make_executor("onednn", g, {.mode = Mode::train});
        planned->prepare();
        const std::vector<StepInfo> steps = planned->steps();
        CHECK(std::count_if(steps.begin(), steps.end(), [](const StepInfo& s) {
                  return s.phase == StepPhase::wgrad && s.impl == "ridge:column_sums";
              }) == (wgrad == "matmul" ? 3 : 0));
        Inputs in = inputs(g, 13);
        for (bool fused : {false, true}) {
            std::vector<std::unique_ptr<Executor>> ex;
            for (const char* backend : {"onednn", "reference"}) {
                ex.push_back(make_executor(backend, g, {.mode = Mode::train, .fused = fused}));
                ex.back()->prepare();
                ex.back()->load(in.w);
                ex.back()->set_input(in.x, in.labels);
            }
            for (int step = 0; step < 3; ++step) {
                CAPTURE(step);
                for (auto& e : ex) e->forward();
                check_close(ex[0]->output(), ex[1]->output(), 1e-4, "output");
                const float loss0 = ex[0]->backward(), loss1 = ex[1]->backward();
                CHECK(std::abs(loss0 - loss1) <= 1e-4 * std::max(1.0f, std::abs(loss1)));
                check_close(g, ex[0]->gradients(), ex[1]->gradients(), 1e-4, "gradient");
                for (auto& e : ex) e->update(0.1f);
            }
            check_close(g, ex[0]->weights(), ex[1]->weights(), 1e-4, "weights after three steps");
        }
    }
}

// On an idle machine where OpenMP threads spin (GOMP_SPINCOUNT above 0, no passive wait policy),
// the last one-thread steps before a many-thread step run while the rest of the team spins, so
// that step does not wait for a sleeping thread. The squeeze-excitation below has such steps in
// both directions (relu and sigmoid, and in the backward the pool's and the gate's gradients; the
// forward's pool reads the 900 KB map both threads wrote, and runs on both: executor.cpp's
// follow_bytes) and inner products of 183k multiply-adds at
// batch 8, which take both threads only when teams are held (few_rows). Held steps must run
// inside the team, its numbers must match the reference however they run, and with a spin of 0
// nothing is held. A shared machine (ExecOptions::shared; by default a load average above twice
// the cores) holds nothing either: both cases are run, whatever this host's load.
// StepInfo names the threads each step runs with (`ridge profile` reports them): one for a held
// step, OpenMP's count at the step otherwise, and both kinds occur. Inference's inner products on
// a few rows draw a line of their own.
TEST_CASE("one-thread steps before a many-thread one run in a held team, and match the reference") {
    struct Saved {
        const char* name;
        std::optional<std::string> value;
    } saved[] = {{"GOMP_SPINCOUNT", {}}, {"OMP_WAIT_POLICY", {}}};
    for (Saved& v : saved)
        if (const char* e = std::getenv(v.name)) v.value = e;
    unsetenv("OMP_WAIT_POLICY");
    // Inference fuses the ReLU and sigmoid into the inner products; a squeeze to 12 keeps those on
    // one thread (42k multiply-adds), so they are held before the gate's scale on both.
    auto se = [](int64_t squeeze = 52) {
        Graph g("se_held");
        Tensor h = g.input({8, 64, 8, 8}) | conv(440, 1);
        mul(h | adaptive_avgpool(1) | conv(squeeze, 1, {.bias = true}) | relu() | conv(440, 1, {.bias = true}) |
                sigmoid(),
            h) |
            conv(64, 1);
        return g;
    };
    // Every step runs inside an active parallel region exactly when it is marked held.
    struct InTeam : StepObserver {
        int held = 0, mismatched = 0, threads_wrong = 0, one = 0, many = 0;
        void before(const StepInfo& s) override {
            held += s.held;
            mismatched += (omp_in_parallel() != 0) != s.held;
            threads_wrong += s.held ? s.threads != 1 : s.threads != omp_get_max_threads();
            (s.threads == 1 ? one : many) += 1;
        }
        void after(const StepInfo&) override {}
    };
    auto run = [&](Mode m, bool shared = false) {
        Graph g = se(m == Mode::infer ? 12 : 52);
        auto ex = make_executor("onednn", g, {.mode = m, .threads = 2, .shared = shared});
        InTeam t;
        ex->observe(&t);
        const Inputs in = inputs(g, 3);
        ex->load(in.w);
        ex->set_input(in.x, in.labels);
        ex->forward();
        if (m == Mode::train) ex->backward();
        CHECK(t.mismatched == 0);
        CHECK(t.threads_wrong == 0);
        CHECK(t.one > 0);  // the relu and sigmoid
        return t;
    };
    setenv("GOMP_SPINCOUNT", "2000", 1);
    CHECK(run(Mode::train, true).held == 0);
    CHECK(run(Mode::infer, true).held == 0);
    if (omp_get_num_procs() < 2) {
        MESSAGE("one core: no team is held");
        CHECK(run(Mode::train).held == 0);
    } else {
        const InTeam t = run(Mode::train);
        CHECK(t.held >= 4);
        CHECK(t.many > 0);  // the 1x1 convs of 8x64x8x8, on both threads
        CHECK(run(Mode::infer).held >= 1);
        // In inference an inner product on linear_panels' rows (2 to 16 with AVX-512, 32 below) takes
        // both threads from 512k multiply-adds or 256 KB of weights (few_rows_threads): on 8 rows
        // 440 -> 52 (183k, 90 KB) runs on one, 2304 -> 96 (1.8M) on both, and on 2 rows 2304 -> 96
        // (442k, 885 KB) on both.
        for (auto [N, C, K, threads] :
             {std::tuple{8, 440, 52, 1}, std::tuple{8, 2304, 96, 2}, std::tuple{2, 2304, 96, 2}}) {
            CAPTURE(N);
            CAPTURE(C);
            Graph g("squeeze_rows");
            g.input({N, C, 1, 1}) | conv(K, 1, {.bias = true});
            auto ex = make_executor("onednn", g, {.mode = Mode::infer, .threads = 2, .shared = false});
            ex->prepare();
            int ran_on = 0;
            for (const StepInfo& s : ex->steps())
                if (s.node == 0) ran_on = std::max(ran_on, s.threads);
            CHECK(ran_on == threads);
            check_against_reference(g, 1e-4, 2e-4);
        }
    }
    check_against_reference(se(), 1e-4, 2e-4);
    check_against_reference(se(12), 1e-4, 2e-4);
    setenv("GOMP_SPINCOUNT", "0", 1);
    CHECK(run(Mode::train).held == 0);
    CHECK(run(Mode::infer).held == 0);
    for (const Saved& v : saved)
        if (v.value)
            setenv(v.name, v.value->c_str(), 1);
        else
            unsetenv(v.name);
}

// A step too small to pay for a second thread by its own work runs on the threads of the step that
// wrote its input where that input is 64 KB or more (executor.cpp, follow_bytes), so each thread
// reads what its own core holds: the pool of a 1x1 conv's 1152 x 7 x 7 (225 KB) on both, as the
// conv ran. The pool of 256 x 7 x 7 (50 KB) keeps one thread. On a shared machine
// (ExecOptions::shared) steps do not follow, and the pools take one thread: both cases run.
TEST_CASE("a small step reading what many threads wrote runs on as many, from 64 KB") {
    if (omp_get_num_procs() < 2) {
        MESSAGE("one core: every step runs on it");
        return;
    }
    for (bool shared : {false, true}) {
        CAPTURE(shared);
        for (int64_t K : {1152, 256}) {
            CAPTURE(K);
            Graph g("follow");
            g.input({1, 192, 7, 7}) | conv(K, 1) | adaptive_avgpool(1);
            auto ex = make_executor("onednn", g, {.mode = Mode::infer, .threads = 2, .shared = shared});
            ex->prepare();
            int conv_threads = 0, pool_threads = 0;
            for (const StepInfo& s : ex->steps()) {
                if (s.node == 0) conv_threads = std::max(conv_threads, s.threads);
                if (s.node == 1) pool_threads = std::max(pool_threads, s.threads);
            }
            if (K == 1152) {
                CHECK(conv_threads == 2);
                CHECK(pool_threads == (shared ? 1 : 2));
            } else {
                CHECK(pool_threads == 1);
            }
            if (!shared) check_against_reference(g, 1e-5, 1e-5);
        }
        // The threads a step ran on, not its estimate: a batchnorm in training takes every thread
        // (norm.cpp) from 16384 floats where the team is held awake, and the pool of its 64 KB
        // output (1 x 32 x 16 x 32) follows it. On a shared machine no team is held, the line is
        // four times that, and both run on one thread.
        Graph g("follow_bn");
        g.input({1, 16, 16, 32}) | conv(32, 1) | bn() | adaptive_avgpool(1);
        auto ex = make_executor("onednn", g, {.mode = Mode::train, .threads = 2, .shared = shared});
        ex->prepare();
        int bn_threads = 0, pool_threads = 0;
        for (const StepInfo& s : ex->steps()) {
            if (s.phase != StepPhase::fwd) continue;
            if (s.node == 1) bn_threads = std::max(bn_threads, s.threads);
            if (s.node == 2) pool_threads = std::max(pool_threads, s.threads);
        }
        CHECK(bn_threads == (shared ? 1 : 2));
        CHECK(pool_threads == (shared ? 1 : 2));
    }
}

// oneDNN falls back to its reference implementation, hundreds of times slower than its jit kernels,
// when a primitive meets a layout or shape those do not take (batchnorm on a grouped conv's nChw4c
// took 41 ms where 0.3 ms was due). Every zoo net at its own resolution, in fused inference at
// batch 1 and a fused training step at batch 8, is planned under this run's ISA (ctest repeats it
// capped at AVX2 and AVX-512), and no step may be a reference primitive except a concat (a copy at
// memory speed: shufflenet_v2's halves, one plain and one channels-last) or one whose tensors are
// all of at most 64k elements (regnet_y's squeeze-excitation gates, 8x440x1x1).
// A reorder between one layout and itself is a copy: a residual addend copied because the planner
// thought it was still needed (the bug this caught cost resnet50 at batch 16 a copy of 16x256x56x56
// and a slower summing conv in every block, about 4.5 ms each). In inference, a conv reading a
// channels-last input reads it in place: resnext50's grouped convs reordered theirs into nChw4c and
// back, about 4 ms a block at batch 16. A permutation of a layout without blocks is a view:
// convnext_tiny's two per block copied 29 ms of its 450 at batch 16; so is the gradient of one that
// moves the channels last or back where dy has no blocks (plain or channels-last, whose view is then
// the other; two reorders per permutation in convnext_tiny's training step before). In inference, a select,
// slice, flatten or reshape of a layout without blocks is a view: vit_b_16's q, k and v selects and
// its merge of the heads copied 5 ms a block at batch 16 (matmul reads strides, and writes the
// layout its permutation makes plain). The one such copy that is a real change of element order,
// and allowed: a flatten of channels-last from the channels on (VGG's classifier input).
namespace {
bool same_layout_copy(const StepInfo& s) {
    return s.primitive == "reorder" && s.args.size() >= 2 && !s.args[0].layout.empty() &&
           s.args[0].layout == s.args[1].layout && s.args[0].dims == s.args[1].dims;
}
bool out_of_channels_last(const StepInfo& s) {
    return s.primitive == "reorder" && s.args.size() >= 2 && s.args[0].layout == "acdb";
}
// A layout without blocks ("acdb", not "aBcd16b"): a permutation of it is a view.
bool unblocked(const StepArg& a) {
    return !a.layout.empty() && std::all_of(a.layout.begin(), a.layout.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}
bool copies_a_view(const Op& op, const StepInfo& s) {
    if (s.primitive != "reorder" || s.args.empty()) return false;
    if (const auto* f = std::get_if<Flatten>(&op))
        return !(s.args[0].layout == "acdb" && normalize_dim(f->start, s.args[0].dims.size()) <= 1);
    return std::holds_alternative<Select>(op) || std::holds_alternative<Slice>(op) || std::holds_alternative<Reshape>(op);
}
// NCHW -> NHWC or back.
bool channels_moved(const Op& op) {
    const auto* p = std::get_if<Permute>(&op);
    return p && (p->order == std::vector<int>{0, 2, 3, 1} || p->order == std::vector<int>{0, 3, 1, 2});
}

// ShuffleNet's halves of its shuffled channels: the shuffle writes each into a buffer of its own,
// so that neither they nor their gradients are copied, at any batch (at batch 8 the copies and
// the gradients' scatter took about a tenth of the training step).
bool halves_of_a_shuffle(const Graph& g, const Node& n) {
    if (!std::holds_alternative<Slice>(n.op)) return false;
    for (const Node& m : g.nodes())
        if (m.output == n.inputs[0]) return std::holds_alternative<ChannelShuffle>(m.op);
    return false;
}
}  // namespace

// A permutation of a blocked map (a conv's nChw16c, or nChw8c on AVX2, in training) is one reorder,
// into the strides under which the permuted tensor is plain, and a flatten of it from H on is a
// view that keeps the blocks (layout.cpp): ConvNeXt's first block of a stage and ViT's patches.
// Backward mirrors it: the gradient of the permutation after the flatten is one reorder into the
// blocked layout, which the flatten passes on as a view.
TEST_CASE("in training a blocked map's permutation is one reorder, and its flatten from H on a view") {
    auto build_net = [](Graph& g, int64_t C) {
        Tensor x = g.input({8, 3, 16, 16}) | conv(C, 3, {.pad = 1, .bias = true});
        Tensor m = x | permute({0, 2, 3, 1}) | ln() | linear(C) | permute({0, 3, 1, 2});
        add(m, x) | conv(C, 4, {.stride = 4}) | flatten(2) | permute({0, 2, 1}) | ln() | select(1, 0) | linear(10);
    };
    // 20 channels pad their last block: the flatten is then a copy into plain rows.
    for (int64_t C : {32, 20}) {
        Graph g(cat("blocked_views_", C));
        build_net(g, C);
        check_against_reference(g, 1e-4, 2e-4);
    }
    Graph g("blocked_views");
    build_net(g, 32);

    auto ex = make_executor("onednn", g, {.mode = Mode::train});
    ex->prepare();
    const std::vector<StepInfo> all = ex->steps();
    std::map<int, std::vector<const StepInfo*>> fwd, bwd;  // node -> its forward, backward steps
    for (const StepInfo& s : all)
        if (s.node >= 0) (s.phase == StepPhase::fwd ? fwd : bwd)[s.node].push_back(&s);
    int blocked_permutes = 0;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const Node& n = g.nodes()[i];
        const auto& steps = fwd[int(i)];
        if (std::holds_alternative<Flatten>(n.op)) {
            CHECK(steps.empty());
            CHECK(bwd[int(i)].empty());
        }
        const auto* perm = std::get_if<Permute>(&n.op);
        if (!perm) continue;
        CAPTURE(n.name);
        if (perm->order == std::vector<int>{0, 3, 1, 2}) {  // of plain NHWC rows: a view
            CHECK(steps.empty());
            continue;
        }
        REQUIRE(steps.size() == 1);
        const StepInfo& f = *steps[0];
        const bool tokens = perm->order == std::vector<int>{0, 2, 1};  // else NCHW -> NHWC
        CHECK(f.primitive == "reorder");
        CHECK_MESSAGE(!unblocked(f.args.front()), "reads ", f.args.front().layout);
        CHECK(f.args.back().layout == (tokens ? "acb" : "acdb"));  // channels-last
        ++blocked_permutes;
        // NCHW -> NHWC: its gradient is a view, summed into the residual's gradient by a step
        // charged to the permutation.
        if (!tokens) continue;
        REQUIRE(bwd[int(i)].size() == 1);
        CHECK(bwd[int(i)][0]->primitive == "reorder");
        CHECK(bwd[int(i)][0]->args.back().layout == f.args.front().layout);  // back into the patches' blocks
    }
    CHECK(blocked_permutes == 2);
}

// Max pools run kernels/simd's max_pool on the plain, blocked or channels-last map they are given,
// and match the reference (ceil mode, padding, a channel count that pads its blocks); in training
// max_pool_argmax and the gradient from its positions, a plain map first reordered into nChw8c,
// except with AVX-512 at stride 1, where oneDNN's pooling (its workspace read by the backward)
// keeps the pool.
TEST_CASE("max pools run kernels/simd, in training on a plain map too, with AVX-512 at stride 2") {
    const bool wide = onednn::avx512_core_here();
    Graph g("pools");
    Tensor h = g.input({2, 3, 19, 19}) | conv(20, 3, {.pad = 1}) | relu() | maxpool(3, {.stride = 2, .ceil_mode = true});
    h | conv(24, 1) | maxpool(3, {.stride = 1, .pad = 1}) | maxpool(2) | conv(8, 1);
    check_against_reference(g, 1e-4, 1e-4);
    CHECK(step_kinds<Pool2d>(g, Mode::infer, StepPhase::fwd) == std::vector<std::string>(3, "kernel"));
    const std::vector<std::string> trains = {"kernel", wide ? "pooling_v2" : "kernel", "kernel"};
    CHECK(step_kinds<Pool2d>(g, Mode::train, StepPhase::fwd) == trains);
    CHECK(step_kinds<Pool2d>(g, Mode::train, StepPhase::dgrad) == trains);
    // On the plain image itself, as on a GEMM conv's nchw output on AVX2.
    Graph plain("pool on the image");
    plain.input({2, 3, 11, 10}, true) | maxpool(3, {.stride = 2, .ceil_mode = true}) | conv(8, 1);
    check_against_reference(plain, 1e-4, 1e-4);
    CHECK(step_kinds<Pool2d>(plain, Mode::infer, StepPhase::fwd) == std::vector<std::string>{"kernel"});
    CHECK(step_kinds<Pool2d>(plain, Mode::train, StepPhase::fwd) == std::vector<std::string>{"reorder", "kernel"});
    // Behind an 11x11 stride-4 conv of the image, alexnet's first, which below AVX-512 is
    // image_conv's writing nChw8c (oneDNN's GEMM wrote nchw): the pool reads it in place, and its
    // gradient comes back in that layout.
    Graph after_conv("pool after alexnet's kind of first conv");
    after_conv.input({2, 3, 39, 39}) | conv(16, 11, {.stride = 4, .pad = 2}) | relu() |
        maxpool(3, {.stride = 2, .ceil_mode = true}) | conv(8, 1);
    check_against_reference(after_conv, 1e-4, 1e-4);
    CHECK(step_kinds<Pool2d>(after_conv, Mode::train, StepPhase::fwd) == std::vector<std::string>{"kernel"});
    CHECK(step_kinds<Pool2d>(after_conv, Mode::train, StepPhase::dgrad) == std::vector<std::string>{"kernel"});
}

// The executor, on layernorms over channels and over tokens, one of them inside a residual block
// whose skip gradient reaches its input first: every layernorm step is kernels/simd's kernel
// (test_kernel_bench checks the kernel itself on each instruction set), forward and backward (the
// gradient added in the kernel, no sum after it), beside copies into and out of channels-last, and
// the numbers match the reference executor.
TEST_CASE("the executor runs layernorms on kernels/simd's kernel") {
    Graph g("norms");
    Tensor t = g.input({2, 24, 3, 5}) | conv(32, 1) | ln(1) | flatten(2) | permute({0, 2, 1});
    add(t, t | ln() | linear(32)) | ln() | relu();
    check_against_reference(g, 1e-4, 1e-4);
    for (Mode mode : {Mode::infer, Mode::train}) {
        const std::vector<std::string> kinds = step_kinds<LayerNorm>(g, mode);
        const auto kernels = std::count(kinds.begin(), kinds.end(), "kernel");
        CHECK(kernels == (mode == Mode::train ? 6 : 3));  // forward, and backward in training, of each
        CHECK(kernels + std::count(kinds.begin(), kinds.end(), "reorder") == int64_t(kinds.size()));
    }
}

// ConvNeXt's stem: a LayerNorm over the channels of its 4x4 conv's output. In inference it reads the
// conv's channel blocks in place (one step, no reorder to channels-last before it); in training the
// backward reads x channels-last, so the forward normalizes that copy's rows.
TEST_CASE("a LayerNorm over a conv's channel blocks reads them in place in inference") {
    Graph g("stem");
    g.input({2, 3, 32, 32}) | conv(96, 4, {.stride = 4, .bias = true}) | ln(1);
    const int norm = 1;
    check_against_reference(g, 1e-4, 1e-4);
    for (Mode mode : {Mode::infer, Mode::train})
        for (bool fused : {false, true}) {
            if (mode == Mode::train && fused) continue;
            CAPTURE(mode == Mode::train);
            CAPTURE(fused);
            auto ex = make_executor("onednn", g, {.mode = mode, .fused = fused});
            ex->prepare();
            // The steps of the layernorm's forward in order, and the layout of its kernel's x. The
            // graph's output is plain, so a reorder after the kernel is y's, not x's.
            std::vector<std::string> ran;
            std::string x_layout;
            for (const StepInfo& s : ex->steps())
                if (s.node == norm && s.phase == StepPhase::fwd) {
                    ran.push_back(s.primitive == "kernel" ? s.impl : s.primitive);
                    if (s.primitive == "kernel" && !s.args.empty()) x_layout = s.args[0].layout;
                }
            std::string all;
            for (const std::string& r : ran) all += r + " ";
            INFO("steps: ", all, "; the layernorm kernel's x: ", x_layout);
            REQUIRE(!ran.empty());
            if (mode == Mode::infer) {
                CHECK(ran.front() == "ridge:layernorm_channels_forward");
                CHECK((x_layout == "aBcd16b" || x_layout == "aBcd8b"));
            } else {
                CHECK(ran.front() == "reorder");
                CHECK(ran[std::min<size_t>(1, ran.size() - 1)] == "ridge:layernorm_forward");
                CHECK(x_layout == "acdb");
            }
        }
}

TEST_CASE("every zoo net plans oneDNN primitives without its reference implementation where it costs, and no copies") {
    // oneDNN's reference concat (inputs in mixed layouts) runs only in training: inference
    // reorders the odd inputs and concatenates them with kernels/simd (layout.cpp).
    auto costly = [](const StepInfo& s, Mode mode) {
        if (s.impl.rfind("ref", 0) != 0 && s.impl.rfind("bnorm_ref", 0) != 0) return false;
        if (s.primitive == "concat") return mode == Mode::infer;
        for (const StepArg& a : s.args) {
            int64_t n = 1;
            for (int64_t d : a.dims) n *= d;
            if (n > 65536) return true;
        }
        return false;
    };
    // oneDNN's portable C++ batchnorm (nspc_bnorm:any: channels-last with 58 channels) is 25 to 65
    // times slower than its jit kernel in a blocked layout, reorders included; the unfused pass
    // (`ridge bench`'s per-layer times) runs every batchnorm on its own.
    auto generic_bnorm = [](const StepInfo& s) {
        return s.primitive == "batch_normalization" && s.impl.size() > 4 && s.impl.substr(s.impl.size() - 4) == ":any";
    };
    for (const ZooEntry& e : zoo()) {
        for (auto [mode, fused] : {std::pair{Mode::infer, true}, {Mode::infer, false}, {Mode::train, true}}) {
            // efficientnet_b7's training step at 600x600 would plan 30 GB; its layers are b0's, larger.
            if (mode == Mode::train && e.name == "efficientnet_b7") continue;
            Graph g = build(e, mode == Mode::train ? 8 : 1, e.default_res, e.default_res);
            auto ex = make_executor("onednn", g, {.mode = mode, .fused = fused});
            ex->prepare();
            std::set<int> reads_blocked, grad_blocked;  // layers that reorder a blocked input, gradient
            // Winograd convs read nChw16c only; conv2d.cpp takes them where the multiplies they
            // save outweigh the reorder of a channels-last input.
            std::set<int> winograd;
            for (const StepInfo& s : ex->steps()) {
                if (s.primitive == "reorder" && !s.args.empty() && !unblocked(s.args[0]))
                    (s.phase == StepPhase::fwd ? reads_blocked : grad_blocked).insert(s.node);
                if (s.primitive == "convolution" && s.impl.find("wino") != std::string::npos) winograd.insert(s.node);
            }
            for (const StepInfo& s : ex->steps()) {
                // The class token puts x into y's rows 1..T with a reorder: a concatenation, which
                // copies by nature, and whose two sides both read abc at batch 1.
                const bool token = s.node >= 0 && std::holds_alternative<ClassToken>(g.nodes()[size_t(s.node)].op);
                bool copy = s.phase == StepPhase::fwd && same_layout_copy(s) && !token;
                // Below AVX-512 a conv whose kernel is its stride (convnext's downsampling) runs in
                // oneDNN's nChw8c, faster there than its channels-last kernel by more than the reorder.
                const Conv2d* conv = s.node >= 0 ? std::get_if<Conv2d>(&g.nodes()[size_t(s.node)].op) : nullptr;
                const bool patches = conv && conv->kernel.h == conv->stride.h && conv->kernel.w == conv->stride.w &&
                                     conv->stride.h > 1 && conv->G == 1 && !onednn::avx512_core_here();
                bool conv_reorders = mode == Mode::infer && s.phase == StepPhase::fwd && conv && !patches &&
                                     !winograd.count(s.node) && out_of_channels_last(s);
                bool permute_copies = s.phase == StepPhase::fwd && s.node >= 0 &&
                                      std::holds_alternative<Permute>(g.nodes()[size_t(s.node)].op) &&
                                      !reads_blocked.count(s.node) && s.primitive == "reorder";
                bool view_copies = mode == Mode::infer && s.phase == StepPhase::fwd && s.node >= 0 &&
                                   !reads_blocked.count(s.node) && copies_a_view(g.nodes()[size_t(s.node)].op, s);
                bool split_copies = s.node >= 0 && halves_of_a_shuffle(g, g.nodes()[size_t(s.node)]);
                bool permute_grad_copies = s.phase == StepPhase::dgrad && s.node >= 0 &&
                                           channels_moved(g.nodes()[size_t(s.node)].op) &&
                                           !grad_blocked.count(s.node) && s.primitive == "reorder";
                bool generic = generic_bnorm(s);
                if (!costly(s, mode) && !copy && !conv_reorders && !permute_copies && !view_copies && !split_copies &&
                    !permute_grad_copies && !generic)
                    continue;
                std::string shapes;
                for (const StepArg& a : s.args) shapes += cat(" ", a.name, to_string(Shape(a.dims)), " ", a.layout);
                FAIL_CHECK(cat(e.name, mode == Mode::train ? " train" : fused ? " infer" : " infer unfused", ": ",
                               s.node >= 0 ? g.nodes()[size_t(s.node)].name : "loss", " ", s.primitive, " ", s.impl,
                               copy ? " copies into its own layout" : "",
                               conv_reorders ? " reorders its channels-last input" : "",
                               permute_copies || view_copies || split_copies || permute_grad_copies
                                   ? " copies what it could view"
                                   : "",
                               generic ? " runs oneDNN's portable C++ kernel" : "", shapes));
            }
        }
    }
}
