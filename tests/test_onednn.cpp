// The oneDNN executor against the reference executor: every op alone (forward, input and weight
// gradients, the SGD update), fused groups, small whole nets in fused and unfused inference and
// in training; and every zoo net's inference, fused and unfused.
//
// Tolerance: fp32 with different summation orders (blocked convolutions, GEMMs, reductions of
// another shape) agrees to a few ulps per term: 1e-4 (max_rel_diff: relative above 1, absolute
// below) for every output and for single layers' gradients; whole nets' gradients as their test
// case explains (batchnorm in training makes some of them ill-conditioned).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>

#include "engine/analysis.h"
#include "engine/backend/executor.h"
#include "engine/backend/onednn/plan.h"
#include "exec_compare.h"
#include "engine/dsl.h"
#include "netdefs/zoo.h"

using namespace ridge;
using namespace exec_compare;

namespace {

constexpr double op_tol = 1e-4;

// oneDNN in fused and unfused inference and in training (unfused and fused), against the reference;
// the update is checked as w - lr * dw of oneDNN's own gradient. grads: the tolerance of every
// gradient, element by element; none checks inference alone.
void check_against_reference(const Graph& g, double tol, std::optional<double> grads = op_tol) {
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

}  // namespace

TEST_CASE("convolutions match the reference") {
    SUBCASE("3x3, padding 1") {
        check_against_reference(fragment("conv3x3", {2, 8, 9, 9}, [](Tensor x) { return x | conv(16, 3, {.pad = 1}); }),
                                op_tol);
    }
    SUBCASE("strided, with bias, channels not a multiple of 8") {
        check_against_reference(
            fragment("conv_s2", {2, 5, 11, 11},
                     [](Tensor x) { return x | conv(6, 3, {.stride = 2, .pad = 1, .bias = true}); }),
            op_tol);
    }
    SUBCASE("1x1") {
        check_against_reference(fragment("conv1x1", {2, 16, 7, 7}, [](Tensor x) { return x | conv(24, 1); }), op_tol);
    }
    SUBCASE("grouped") {
        check_against_reference(
            fragment("conv_g", {2, 16, 8, 8}, [](Tensor x) { return x | conv(32, 3, {.pad = 1, .groups = 4}); }),
            op_tol);
    }
    SUBCASE("grouped, 4 channels per group (backward on channels-last where blocked has only oneDNN's reference)") {
        check_against_reference(
            fragment("conv_g4", {2, 32, 7, 7}, [](Tensor x) { return x | conv(32, 3, {.pad = 1, .groups = 8}); }),
            op_tol);
    }
    SUBCASE("depthwise with bias") {
        check_against_reference(
            fragment("conv_dw", {2, 24, 10, 10},
                     [](Tensor x) { return x | conv(24, 3, {.stride = 2, .pad = 1, .groups = 24, .bias = true}); }),
            op_tol);
    }
    // 5x5 and larger depthwise weight gradients run kernels/simd's depthwise_wgrad: channel counts
    // that leave a partial block, strides, dilation, asymmetric padding and a bias.
    SUBCASE("depthwise 5x5, strided, channels not a multiple of the block") {
        check_against_reference(
            fragment("conv_dw5", {3, 20, 9, 9},
                     [](Tensor x) { return x | conv(20, 5, {.stride = 2, .pad = 2, .groups = 20}); }),
            op_tol);
    }
    SUBCASE("depthwise 5x5 and 7x7, stride 1: columns four at a time, and the edges") {
        check_against_reference(
            fragment("conv_dw5s1", {2, 24, 13, 14}, [](Tensor x) { return x | conv(24, 5, {.pad = 2, .groups = 24}); }),
            op_tol);
        check_against_reference(fragment("conv_dw7s1", {3, 16, 9, 17},
                                         [](Tensor x) {
                                             return x | conv(16, 7, {.pad = {3, 3, 2, 4}, .groups = 16, .bias = true});
                                         }),
                                op_tol);
    }
    SUBCASE("depthwise 7x7, dilated, asymmetric padding, with bias") {
        check_against_reference(fragment("conv_dw7", {2, 16, 12, 11},
                                         [](Tensor x) {
                                             return x | conv(16, 7, {.pad = {5, 6, 7, 6}, .dilation = 2, .groups = 16,
                                                                     .bias = true});
                                         }),
                                op_tol);
    }
    SUBCASE("depthwise 5x5 over 40 channels, stride 2 in width only") {
        check_against_reference(fragment("conv_dw5s", {2, 40, 7, 10},
                                         [](Tensor x) {
                                             return x | conv(40, 5, {.stride = {1, 2}, .pad = 2, .groups = 40});
                                         }),
                                op_tol);
    }
    SUBCASE("dilated, asymmetric kernel and padding") {
        check_against_reference(fragment("conv_dil", {1, 8, 12, 12},
                                         [](Tensor x) {
                                             return x | conv(8, {1, 3}, {.pad = {0, 0, 2, 1}, .dilation = 2});
                                         }),
                                op_tol);
    }
    SUBCASE("3 input channels, as a stem") {
        check_against_reference(
            fragment("conv_stem", {2, 3, 16, 16}, [](Tensor x) { return x | conv(8, 7, {.stride = 2, .pad = 3}); }),
            op_tol);
    }
}

TEST_CASE("linear layers and attention matmuls match the reference") {
    SUBCASE("linear") {
        check_against_reference(fragment("linear", {4, 20}, [](Tensor x) { return x | linear(10); }), op_tol);
    }
    SUBCASE("linear on tokens, no bias") {
        check_against_reference(fragment("linear3d", {2, 5, 12}, [](Tensor x) { return x | linear(7, false); }),
                                op_tol);
    }
    SUBCASE("matmul, a * b^T and a * b") {
        check_against_reference(fragment("matmul", {2, 3, 6, 4},
                                         [](Tensor x) {
                                             Tensor a = x | scale(0.5), b = x | scale(2.0);
                                             return matmul(matmul(a, b, true), x);
                                         }),
                                op_tol);
    }
}

TEST_CASE("normalizations match the reference") {
    SUBCASE("batchnorm") {
        check_against_reference(fragment("bn", {3, 6, 5, 5}, [](Tensor x) { return x | bn(); }), op_tol);
    }
    SUBCASE("batchnorm and relu") {
        check_against_reference(fragment("bn_relu", {3, 16, 5, 5}, [](Tensor x) { return x | bn() | relu(); }), op_tol);
    }
    SUBCASE("layernorm over the last dimension") {
        check_against_reference(fragment("ln", {2, 5, 12}, [](Tensor x) { return x | ln(); }), op_tol);
    }
    SUBCASE("layernorm over the channels of (N,C,H,W)") {
        check_against_reference(fragment("ln2d", {2, 12, 3, 4}, [](Tensor x) { return x | ln(1); }), op_tol);
    }
}

TEST_CASE("activations match the reference") {
    for (Activation a : {relu(), relu6(), sigmoid(), silu(), gelu(), hardswish(), hardsigmoid()}) {
        CAPTURE(fn_name(a.fn));
        // scaled so that relu6, hardswish and hardsigmoid see both of their bends
        check_against_reference(
            fragment(std::string(fn_name(a.fn)), {2, 10, 4, 4}, [&](Tensor x) { return x | scale(5.0) | a; }), op_tol);
    }
}

TEST_CASE("activations on a blocked layout whose channels leave a partial block match the reference") {
    // 20 channels pad to 24 (nChw8c) or 32 (nChw16c): the primitives run over the padded shape.
    for (Activation a : {relu(), relu6(), sigmoid(), silu(), gelu(), hardswish(), hardsigmoid()}) {
        CAPTURE(fn_name(a.fn));
        check_against_reference(fragment(cat(fn_name(a.fn), "_padded"), {2, 6, 4, 4},
                                         [&](Tensor x) { return x | conv(20, 1, {.bias = true}) | scale(5.0) | a; }),
                                op_tol);
    }
}

TEST_CASE("pooling matches the reference") {
    SUBCASE("max 3x3 stride 2 pad 1") {
        check_against_reference(
            fragment("maxpool", {2, 8, 9, 9}, [](Tensor x) { return x | maxpool(3, {.stride = 2, .pad = 1}); }),
            op_tol);
    }
    SUBCASE("max, ceil mode") {
        check_against_reference(fragment("maxpool_ceil", {2, 8, 10, 10},
                                         [](Tensor x) { return x | maxpool(3, {.stride = 2, .ceil_mode = true}); }),
                                op_tol);
    }
    SUBCASE("avg counting padding") {
        check_against_reference(
            fragment("avgpool", {2, 8, 7, 7}, [](Tensor x) { return x | avgpool(3, {.stride = 1, .pad = 1}); }),
            op_tol);
    }
    SUBCASE("avg excluding padding") {
        check_against_reference(
            fragment("avgpool_ex", {2, 8, 7, 7},
                     [](Tensor x) { return x | avgpool(3, {.stride = 2, .pad = 1, .count_include_pad = false}); }),
            op_tol);
    }
    SUBCASE("avg, ceil mode (reference kernel)") {
        check_against_reference(
            fragment("avgpool_ceil", {2, 8, 10, 10},
                     [](Tensor x) { return x | avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true}); }),
            op_tol);
    }
    SUBCASE("adaptive, equal windows") {
        check_against_reference(fragment("adaptive", {2, 8, 6, 6}, [](Tensor x) { return x | adaptive_avgpool(3); }),
                                op_tol);
    }
    SUBCASE("adaptive, unequal windows (reference kernel)") {
        check_against_reference(fragment("adaptive_odd", {2, 8, 5, 7},
                                         [](Tensor x) {
                                             return x | adaptive_avgpool({3, 2});
                                         }),
                                op_tol);
    }
}

TEST_CASE("elementwise ops match the reference") {
    SUBCASE("add") {
        check_against_reference(fragment("add", {2, 8, 4, 4}, [](Tensor x) { return add(x | scale(2.0), x); }), op_tol);
    }
    SUBCASE("add, broadcast") {
        check_against_reference(
            fragment("add_b", {2, 8, 4, 4}, [](Tensor x) { return add(x, x | adaptive_avgpool(1)); }), op_tol);
    }
    SUBCASE("mul, squeeze-excitation gate") {
        check_against_reference(
            fragment("mul_se", {2, 12, 4, 4}, [](Tensor x) { return mul(x | adaptive_avgpool(1) | sigmoid(), x); }),
            op_tol);
    }
    // The gate on a conv's blocked output runs kernels/simd's scale_channels (in place in inference
    // when nothing reads the activation afterwards) and channel_dots for the gate's gradient.
    SUBCASE("mul, gate on a blocked activation, channels not a multiple of the block") {
        check_against_reference(fragment("mul_se_blocked", {2, 6, 5, 5},
                                         [](Tensor x) {
                                             Tensor h = x | conv(20, 1);
                                             return mul(h | adaptive_avgpool(1) | sigmoid(), h);
                                         }),
                                op_tol);
    }
    SUBCASE("mul, gate on an activation read again afterwards") {
        check_against_reference(fragment("mul_se_reread", {2, 6, 3, 7},
                                         [](Tensor x) {
                                             Tensor h = x | conv(16, 1);
                                             return add(mul(h, h | adaptive_avgpool(1) | sigmoid()), h);
                                         }),
                                op_tol);
    }
    SUBCASE("mul, same shapes") {
        check_against_reference(fragment("mul", {2, 8, 3, 3}, [](Tensor x) { return mul(x, x | relu()); }), op_tol);
    }
    SUBCASE("layer scale over channels and over the last dimension") {
        check_against_reference(
            fragment("layer_scale", {2, 8, 3, 3}, [](Tensor x) { return x | layer_scale(1) | layer_scale(-1); }),
            op_tol);
    }
    SUBCASE("layer scale over the channels of a blocked activation (its gradient on channel_dots)") {
        check_against_reference(
            fragment("layer_scale_blocked", {2, 6, 3, 5}, [](Tensor x) { return x | conv(20, 1) | layer_scale(1); }),
            op_tol);
    }
    SUBCASE("softmax over the last dimension and over channels") {
        check_against_reference(
            fragment("softmax", {2, 6, 3, 5}, [](Tensor x) { return x | softmax() | scale(3.0) | softmax(1); }),
            op_tol);
    }
}

TEST_CASE("data movement matches the reference") {
    SUBCASE("concat of blocked and odd channel counts") {
        check_against_reference(fragment("concat", {2, 5, 6, 6},
                                         [](Tensor x) {
                                             return concat({x | conv(8, 1), x, x | conv(3, 1)});
                                         }),
                                op_tol);
    }
    SUBCASE("concats at 1x1 whose inputs differ only in the strides of size-1 dimensions") {
        // On AVX-512 hosts a 1x1 conv writes (1,232,1,1) channels-last, the input is plain: the
        // first concat got oneDNN's simple:any, the second ref:any, and the primitive cache handed
        // the second the first's primitive, which crashed without its scratchpad (plan.cpp).
        check_against_reference(fragment("concat_1x1", {1, 232, 1, 1},
                                         [](Tensor x) {
                                             Tensor a = concat({x | conv(232, 1), x | conv(232, 1)});
                                             Tensor b = concat({x | conv(232, 1), x});
                                             return add(a, b);
                                         }),
                                op_tol);
    }
    SUBCASE("channel split, shuffle") {
        check_against_reference(fragment("shuffle", {2, 12, 3, 3},
                                         [](Tensor x) {
                                             Tensor a = x | slice(1, 0, 6), b = x | slice(1, 6, 6) | scale(2.0);
                                             return concat({a, b}) | channel_shuffle(3);
                                         }),
                                op_tol);
    }
    SUBCASE("concat of a plain and a blocked input, as shufflenet's units") {
        check_against_reference(fragment("concat_mixed", {2, 12, 5, 5},
                                         [](Tensor x) {
                                             Tensor a = x | slice(1, 0, 6), b = x | slice(1, 6, 6) | conv(6, 1);
                                             return concat({a, b}) | channel_shuffle(2);
                                         }),
                                op_tol);
    }
    SUBCASE("flatten, reshape, permute, select") {
        check_against_reference(fragment("views", {2, 6, 2, 3},
                                         [](Tensor x) {
                                             Tensor y = x | permute({0, 2, 3, 1}) | reshape({0, -1, 3}) | scale(1.5);
                                             return add(y | select(1, 0), y | select(1, 3)) | flatten();
                                         }),
                                op_tol);
    }
    SUBCASE("dropout and stochastic depth are identities") {
        check_against_reference(fragment("identity", {2, 8, 3, 3},
                                         [](Tensor x) { return add(x | dropout(0.5), x | stochastic_depth(0.2)); }),
                                op_tol);
    }
    SUBCASE("class token and position embedding") {
        check_against_reference(
            fragment("tokens", {2, 4, 8}, [](Tensor x) { return x | class_token() | pos_embedding(); }), op_tol);
    }
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

TEST_CASE("fused inference groups match the unfused layers") {
    SUBCASE("conv, batchnorm, residual add, relu") {
        check_against_reference(fragment("residual", {2, 16, 6, 6},
                                         [](Tensor x) {
                                             Tensor skip = x | conv(16, 1) | bn();
                                             Tensor y = x | conv(16, 3, {.pad = 1}) | bn() | relu() |
                                                        conv(16, 3, {.pad = 1}) | bn();
                                             return add(y, skip) | relu();
                                         }),
                                op_tol);
    }
    SUBCASE("a conv whose input is also the residual it adds") {
        check_against_reference(fragment("self_residual", {2, 8, 6, 6},
                                         [](Tensor x) {
                                             Tensor h = x | conv(8, 1);  // blocked, as the conv reads it
                                             return add(h | conv(8, 3, {.pad = 1}) | bn(), h);
                                         }),
                                op_tol);
    }
    SUBCASE("conv, batchnorm, each activation") {
        for (Activation a : {relu6(), silu(), hardswish(), hardsigmoid(), sigmoid(), gelu()}) {
            CAPTURE(fn_name(a.fn));
            check_against_reference(
                fragment("conv_act", {2, 8, 5, 5},
                         [&](Tensor x) { return x | conv(12, 3, {.pad = 1, .bias = true}) | bn() | a; }),
                op_tol, std::nullopt);
        }
    }
    SUBCASE("linear, gelu, residual add") {
        check_against_reference(
            fragment("mlp", {2, 5, 8}, [](Tensor x) { return add(x | linear(16) | gelu() | linear(8), x); }), op_tol);
    }
}

namespace {

// A two-layer ViT as torchvision builds its encoder (netdefs/vit.cpp), small enough for the
// reference executor: patches, class token, position embedding, pre-norm attention and MLP.
Graph mini_vit() {
    Graph g("mini_vit");
    Tensor x = g.input({2, 3, 32, 32});
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

}  // namespace

TEST_CASE("small whole nets match the reference in inference and training") {
    // At 64x64 the last stages are 2x2, so a batchnorm in training normalizes 8 values per channel:
    // enough to keep resnet18's gradients as well conditioned as its forward.
    SUBCASE("resnet18") { check_against_reference(build(*find_net("resnet18"), 2, 64, 64), 1e-4, 2e-4); }
    SUBCASE("vit") { check_against_reference(mini_vit(), 1e-4, 2e-4); }
    // MobileNetV2 and EfficientNet-B0 at random initialization are not: moving every weight of the
    // reference by one part in 1e7 moves single gradients of layers many batchnorms deep by more
    // than their size. Their inference is compared here, element by element; their training step
    // tensor by tensor against the double reference, within the float32 spread measured for each
    // tensor (exec_compare.h, check_against_f64), fused and unfused.
    for (const char* net : {"mobilenet_v2", "efficientnet_b0"}) {
        CAPTURE(net);
        Graph g = build(*find_net(net), 2, 64, 64);
        check_against_reference(g, 1e-4, std::nullopt);
        F64Summary s = check_against_f64(g, inputs(g, 11), {{"onednn", false}, {"onednn", true}}, true);
        MESSAGE(std::string(net), ": worst (error - floor) / spread ", s.worst_ratio, " (", s.worst, "), eta ", s.eta,
                ", relative error admitted: median ", s.median_allowed);
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

TEST_CASE("inference returns the weights as loaded (not the folded ones) and has no backward") {
    Graph g = build(*find_net("mobilenet_v3_small"), 1, 32, 32);
    Inputs in = inputs(g, 9);
    auto infer = make_executor("onednn", g, {.mode = Mode::infer});
    infer->load(in.w);
    check_close(g, infer->weights(), in.w, 0, "inference weights");
    CHECK_THROWS_AS(infer->backward(), std::logic_error);
}
