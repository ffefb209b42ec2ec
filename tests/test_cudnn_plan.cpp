// What the GPU path does without a GPU: the cudnn executor plans (and so refuses what will not
// fit) before any device is touched, its plan is exact arithmetic on shapes, and a CPU backend
// refuses a precision it does not compute in. Built only with the cudnn executor; runs anywhere.
#include <doctest/doctest.h>

#include "engine/backend/executor.h"
#include "engine/dsl.h"
#include "kernels/cuda/probes.h"
#include "netdefs/zoo.h"
#include "skip.h"

using namespace ridge;

namespace {

Graph small_conv() {
    Graph g("small_conv");
    g.input({2, 3, 8, 8}) | conv(4, 3, {.pad = 1}) | relu();
    return g;
}

// Every buffer is rounded up to 256 bytes; the cuBLAS workspace is 32 MiB and a graph with a
// convolution adds a 256 MiB convolution workspace.
constexpr int64_t fixed_bytes = (int64_t(32) << 20) + (int64_t(256) << 20);

}  // namespace

TEST_CASE("planned bytes are exact arithmetic on the shapes") {
    Graph g = small_conv();
    // fp32 inference: input 2*3*8*8*4 = 1536, conv and relu outputs 2*4*8*8*4 = 2048 each,
    // weights 4*3*3*3*4 = 432 -> 512.
    CHECK(make_executor("cudnn", g, {})->planned_bytes() == 1536 + 2048 + 2048 + 512 + fixed_bytes);
    // fp16: tensors halve (768, 1024, 1024); the weights keep an fp32 master (512) and a 16-bit
    // copy (216 -> 256).
    CHECK(make_executor("cudnn", g, {.precision = Precision::fp16})->planned_bytes() ==
          768 + 1024 + 1024 + 512 + 256 + fixed_bytes);
    // fp32 training adds the gradients of the conv and relu outputs (the input needs none), the
    // weight gradient, and labels, per-row losses and the loss (8, 8 and 4 bytes -> 256 each).
    CHECK(make_executor("cudnn", g, {.mode = Mode::train})->planned_bytes() ==
          1536 + 2048 + 2048 + 512 + 2048 + 2048 + 512 + 3 * 256 + fixed_bytes);
}

TEST_CASE("fused inference folds a batchnorm into its conv: the batchnorm's output aliases the conv's") {
    Graph g("conv_bn");
    g.input({2, 3, 8, 8}) | conv(4, 3, {.pad = 1}) | bn();
    int64_t unfused = make_executor("cudnn", g, {.fused = false})->planned_bytes();
    int64_t fused = make_executor("cudnn", g, {.fused = true})->planned_bytes();
    // Folded: no 2048-byte batchnorm output, and a 16-byte folded bias (-> 256).
    CHECK(unfused - fused == 2048 - 256);
}

TEST_CASE("views alias their input; slices are copies") {
    Graph g("views");
    Tensor x = g.input({2, 4, 4, 4}) | relu();
    x | flatten() | dropout(0.5);
    int64_t base = make_executor("cudnn", g, {})->planned_bytes();
    Graph h("slice");
    h.input({2, 4, 4, 4}) | relu() | slice(1, 0, 2);
    // The slice writes its own (2,2,4,4) fp32 tensor: 64 elements, 256 bytes.
    CHECK(make_executor("cudnn", h, {})->planned_bytes() == base + 256);
}

TEST_CASE("every zoo net plans in every precision without a device") {
    for (const ZooEntry& e : zoo())
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
            CAPTURE(e.name);
            Graph g = build(e, 2, e.default_res, e.default_res);
            for (Mode m : {Mode::infer, Mode::train}) {
                auto ex = make_executor("cudnn", g, {.mode = m, .precision = p});
                CHECK(ex->planned_bytes() > 0);
            }
        }
}

TEST_CASE("the CPU backends compute in fp32 only") {
    Graph g = small_conv();
    for (Precision p : {Precision::tf32, Precision::fp16, Precision::bf16})
        CHECK_THROWS_WITH_AS(make_executor("reference", g, {.precision = p}), doctest::Contains("fp32 only"),
                             std::invalid_argument);
    CHECK(parse_precision("bf16") == Precision::bf16);
    CHECK(!parse_precision("fp64"));
}

TEST_CASE("without a device, prepare() fails with one CUDA error [may skip]") {
    if (probe::gpu::unavailable_reason().empty()) return testskip::skip("a GPU is here: test_cudnn covers it");
    Graph g = small_conv();
    auto ex = make_executor("cudnn", g, {});
    CHECK_THROWS_AS(ex->prepare(), std::runtime_error);
}
