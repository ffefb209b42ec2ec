// The cudnn executor against the reference executor, on the device: every op alone (forward,
// input and weight gradients, the SGD update) in every precision, fused inference, and small whole
// nets. Without a CUDA device (or a build without cuDNN) the binary prints why and exits 77, which
// ctest reports as skipped. Planning needs no device and is tested in test_cudnn_plan.
//
// Tolerances (max_rel_diff: relative above 1, absolute below), per precision:
// - fp32 1e-3: cudnnFind may pick Winograd or FFT convolutions, whose transforms lose about two
//   more digits than a direct sum of fp32 products (~1e-5 relative per layer); 1e-3 leaves a
//   factor of ten for chains of two or three layers and for sums of 1e3 terms.
// - tf32 1e-2: inputs of convolutions and GEMMs are rounded to 10 mantissa bits (2^-11 = 4.9e-4
//   relative each); a dot product's error grows like sqrt(terms) times that, ~5e-3 at 100 terms.
// - fp16 2e-2: inputs, weights and outputs each rounded to 11 bits (4.9e-4), gradients too, and
//   layers chained two or three deep; sums accumulate in fp32.
// - bf16 8e-2: as fp16 with 8 bits (3.9e-3 per rounding), so eight times fp16's figure.
// Gradients get the same figure; the update is checked as w - lr * dw of the executor's own dw.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <iostream>

#include "engine/backend/executor.h"
#include "exec_compare.h"
#include "engine/dsl.h"
#include "roofline/probes/cuda/probes.h"
#include "netdefs/zoo.h"
#include "tiny_vit.h"

using namespace ridge;
using namespace exec_compare;

namespace {


double tolerance(Precision p) {
    switch (p) {
        case Precision::fp32: return 1e-3;
        case Precision::tf32: return 1e-2;
        case Precision::fp16: return 2e-2;
        case Precision::bf16: return 8e-2;
    }
    return 0;
}

const Precision all_precisions[] = {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16};

// cudnn in fused and unfused inference and in training, in every precision, against the reference.
void check_op(const Graph& g) {
    Inputs in = inputs(g, 11);
    Result ref_infer = run("reference", g, Mode::infer, false, in);
    Result ref = run("reference", g, Mode::train, false, in);
    for (Precision p : all_precisions) {
        const double tol = tolerance(p);
        std::string prec(precision_name(p));
        for (bool fused : {false, true}) {
            Result r = run("cudnn", g, Mode::infer, fused, in, p);
            check_close(r.out, ref_infer.out, tol, cat(g.model(), " ", prec, fused ? " fused" : " unfused", " inference"));
        }
        std::string mode = cat(g.model(), " ", prec, " training ");
        Result r = run("cudnn", g, Mode::train, false, in, p);
        check_close(r.out, ref.out, tol, mode + "output");
        CHECK(std::abs(r.loss - ref.loss) <= tol * std::max(1.0f, std::abs(ref.loss)));
        check_close(g, r.grads, ref.grads, tol, mode + "gradient");
        if (g.tensor(0).requires_grad) check_close(r.dx, ref.dx, tol, mode + "input gradient");
        // The update runs on fp32 master weights: exact up to fp32 rounding of w - lr * dw.
        check_close(g, r.after, sgd_step(in.w, r.grads), 1e-6, mode + "updated weights");
    }
}

}  // namespace

TEST_CASE("the cudnn backend is built and named") {
    auto names = gpu_backends();
    REQUIRE(names.size() == 1);
    Graph g = build(*find_net("resnet18"), 1, 32, 32);
    CHECK(make_executor("cudnn", g, {})->name() == "cudnn");
}

TEST_CASE("convolutions (cuDNN) match the reference") {
    SUBCASE("3x3, padding 1") { check_op(fragment("conv3x3", {2, 8, 9, 9}, [](Tensor x) { return x | conv(16, 3, {.pad = 1}); })); }
    SUBCASE("strided, with bias") {
        check_op(fragment("conv_s2", {2, 5, 11, 11}, [](Tensor x) { return x | conv(6, 3, {.stride = 2, .pad = 1, .bias = true}); }));
    }
    SUBCASE("grouped") {
        check_op(fragment("conv_g", {2, 16, 8, 8}, [](Tensor x) { return x | conv(32, 3, {.pad = 1, .groups = 4}); }));
    }
    SUBCASE("depthwise with bias") {
        check_op(fragment("conv_dw", {2, 24, 10, 10},
                          [](Tensor x) { return x | conv(24, 3, {.stride = 2, .pad = 1, .groups = 24, .bias = true}); }));
    }
    SUBCASE("dilated, rectangular kernel") {
        check_op(fragment("conv_dil", {1, 8, 12, 12}, [](Tensor x) { return x | conv(8, {1, 3}, {.pad = {0, 2}, .dilation = 2}); }));
    }
    SUBCASE("stem: 3 channels, 7x7 stride 2") {
        check_op(fragment("conv_stem", {2, 3, 16, 16}, [](Tensor x) { return x | conv(8, 7, {.stride = 2, .pad = 3}); }));
    }
}

TEST_CASE("linear layers and attention matmuls (cuBLAS) match the reference") {
    SUBCASE("linear") { check_op(fragment("linear", {4, 20}, [](Tensor x) { return x | linear(10); })); }
    SUBCASE("linear on tokens, no bias") {
        check_op(fragment("linear3d", {2, 5, 12}, [](Tensor x) { return x | linear(7, false); }));
    }
    SUBCASE("matmul, a * b^T and a * b") {
        check_op(fragment("matmul", {2, 3, 6, 4}, [](Tensor x) {
            Tensor a = x | scale(0.5), b = x | scale(2.0);
            return matmul(matmul(a, b, true), x);
        }));
    }
}

TEST_CASE("normalizations, activations, pooling, softmax match the reference") {
    SUBCASE("batchnorm and relu") { check_op(fragment("bn_relu", {3, 16, 5, 5}, [](Tensor x) { return x | bn() | relu(); })); }
    SUBCASE("batchnorm after a conv (folded when fused)") {
        check_op(fragment("conv_bn", {2, 8, 6, 6}, [](Tensor x) { return x | conv(8, 3, {.pad = 1}) | bn() | relu(); }));
    }
    SUBCASE("layernorm, last dimension and channels") {
        check_op(fragment("ln", {2, 5, 12}, [](Tensor x) { return x | ln(); }));
        check_op(fragment("ln2d", {2, 12, 3, 4}, [](Tensor x) { return x | ln(1); }));
    }
    for (Activation a : {relu(), relu6(), sigmoid(), silu(), gelu(), hardswish(), hardsigmoid()}) {
        CAPTURE(fn_name(a.fn));
        check_op(fragment(std::string(fn_name(a.fn)), {2, 10, 4, 4}, [&](Tensor x) { return x | scale(5.0) | a; }));
    }
    SUBCASE("pooling: cuDNN and the hand-written kernel") {
        check_op(fragment("maxpool", {2, 8, 9, 9}, [](Tensor x) { return x | maxpool(3, {.stride = 2, .pad = 1}); }));
        check_op(fragment("maxpool_ceil", {2, 8, 10, 10}, [](Tensor x) { return x | maxpool(3, {.stride = 2, .ceil_mode = true}); }));
        check_op(fragment("avgpool_ex", {2, 8, 7, 7},
                          [](Tensor x) { return x | avgpool(3, {.stride = 2, .pad = 1, .count_include_pad = false}); }));
        check_op(fragment("adaptive", {2, 8, 7, 5}, [](Tensor x) { return x | adaptive_avgpool({3, 2}); }));
    }
    SUBCASE("softmax over a middle dimension") {
        check_op(fragment("softmax", {2, 5, 3, 4}, [](Tensor x) { return x | softmax(1); }));
    }
}

TEST_CASE("elementwise and data movement match the reference") {
    check_op(fragment("add_mul", {2, 6, 4, 4}, [](Tensor x) {
        Tensor se = x | adaptive_avgpool(1) | sigmoid();
        return add(mul(x, se), x | scale(0.5));
    }));
    check_op(fragment("layer_scale", {2, 6, 3, 3}, [](Tensor x) { return x | layer_scale(1); }));
    check_op(fragment("concat_shuffle", {2, 8, 3, 3}, [](Tensor x) {
        return concat({x, x | scale(2.0)}) | channel_shuffle(4) | slice(1, 2, 8) | flatten();
    }));
    check_op(fragment("tokens", {2, 4, 6}, [](Tensor x) {
        return x | class_token() | pos_embedding() | permute({0, 2, 1}) | select(2, 0) | dropout(0.1);
    }));
}

TEST_CASE("every zoo net: each tensor of an fp32 training step against double") {
    // The same check as test_gradients for the CPU executors (exec_compare.h, check_against_f64):
    // the output, the loss and every gradient tensor, within k times the float32 spread measured
    // for each. cuDNN's fp32 convolutions may be Winograd or FFT, less exact than a direct sum:
    // the probes' eta follows the executor's own forward error, so the spread does too.
    check_zoo_against_f64({{"cudnn", false}});
}

TEST_CASE("small whole nets agree with the reference executor") {
    // resnet18 at 64x64, batch 2: correct fp32 implementations agree to 2e-6 here
    // (kernels/README.md), so fp32's 1e-3 has room. fp32 gradients are checked tensor by tensor
    // against double above; the 16-bit precisions' gradients, whose rounding the float32 spread
    // does not measure, as one vector at ten times their precision's tolerance.
    Graph g = build(*find_net("resnet18"), 2, 64, 64);
    Inputs in = inputs(g, 5);
    Result ref = run("reference", g, Mode::train, false, in);
    Result ref_infer = run("reference", g, Mode::infer, false, in);
    for (Precision p : all_precisions) {
        CAPTURE(precision_name(p));
        for (bool graph : {false, true}) {
            Result r = run("cudnn", g, Mode::infer, true, in, p, graph);
            check_close(r.out, ref_infer.out, 5 * tolerance(p), "resnet18 fused inference");
        }
        Result t = run("cudnn", g, Mode::train, false, in, p);
        CHECK(std::abs(t.loss - ref.loss) <= 5 * tolerance(p) * std::abs(ref.loss));
        CHECK(global_rel_l2(t.grads, ref.grads) <= 10 * tolerance(p));
    }
    Graph v = ridge::testnets::tiny_vit(2);
    Inputs vin = inputs(v, 7);
    Result vref = run("reference", v, Mode::train, false, vin);
    for (Precision p : all_precisions) {
        CAPTURE(precision_name(p));
        Result t = run("cudnn", v, Mode::train, false, vin, p);
        check_close(t.out, vref.out, 5 * tolerance(p), "tiny_vit output");
        CHECK(global_rel_l2(t.grads, vref.grads) <= 10 * tolerance(p));
    }
}

TEST_CASE("every zoo net runs fused inference at a small size in fp32 and bf16") {
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        int64_t side = std::max<int64_t>(min_resolution(e), 64);
        Graph g = build(e, 2, side, side);
        Inputs in = inputs(g, 3);
        Result ref = run("reference", g, Mode::infer, false, in);
        for (Precision p : {Precision::fp32, Precision::bf16}) {
            Result r = run("cudnn", g, Mode::infer, true, in, p);
            // Deep nets compound the per-layer error; compared as one vector.
            CHECK(global_rel_l2({{r.out}}, {{ref.out}}) <= 5 * tolerance(p));
        }
    }
}

TEST_CASE("the plan is what prepare() allocates, and the device has room for it") {
    Graph g = build(*find_net("resnet18"), 4, 64, 64);
    auto ex = make_executor("cudnn", g, {.mode = Mode::train});
    int64_t before = probe::gpu::free_memory_bytes();
    ex->prepare();
    int64_t after = probe::gpu::free_memory_bytes();
    // The arena is one cudaMalloc of planned_bytes(); handles take a little more besides.
    CHECK(before - after >= ex->planned_bytes());
    CHECK(!ex->algorithm(0).empty());
}

int main(int argc, char** argv) {
    if (gpu_backends().empty()) {
        std::cout << "skipped: this build has no cudnn executor (no nvcc or no cuDNN at configure time)\n";
        return 77;
    }
    if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
        std::cout << "skipped: " << why << "\n";
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
