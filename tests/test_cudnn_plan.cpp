// What the GPU path does without a GPU: the cudnn executor plans (and so refuses what will not
// fit) before any device is touched, its plan is exact arithmetic on shapes, and a CPU backend
// refuses a precision it does not compute in; every case of the op table (op_cases.h) plans, or is
// refused as the table says; cuBLAS loads at its first call. Built only with the cudnn executor;
// runs anywhere.
#include <cublas_api.h>
#include <doctest/doctest.h>

#include <fstream>
#include <string>

#include "engine/backend/cudnn/cudnn.h"
#include "engine/backend/executor.h"
#include "engine/dsl.h"
#include "roofline/probes/cuda/probes.h"
#include "netdefs/zoo.h"
#include "op_cases.h"
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

namespace {

// The bytes a plan must take, worked out from the rules plan.h and the layers state, not from
// the planner: every buffer rounded up to 256 bytes;
// - a buffer per tensor that owns storage (flatten, reshape, dropout and stochastic depth alias
//   their input; in fused inference a batchnorm read only after a conv, and not the output,
//   aliases the conv's output), and in training one for its gradient where it needs one (it or
//   a tensor aliasing it requires a gradient, or it is the graph's output);
// - per parameter an fp32 master, a storage-type copy of conv and linear weights in 16-bit
//   precisions, and in training a gradient (storage type for those weights, fp32 otherwise);
// - a folded bias (fp32, K) per conv that absorbed a batchnorm;
// - batchnorm in training: fp32 mean and 1/std per channel, and a scratch dx when its input
//   needs no gradient; layernorm: fp32 mean and 1/std per row;
// - training: labels, per-row losses (N each, 4 bytes) and the loss; the 32 MiB cuBLAS workspace;
//   the 256 MiB convolution workspace when the graph has a convolution.
int64_t expected_plan_bytes(const Graph& g, Mode mode, Precision p, bool fused) {
    const bool train = mode == Mode::train;
    const int64_t e = p == Precision::fp16 || p == Precision::bf16 ? 2 : 4;
    auto round = [](int64_t b) { return (b + 255) / 256 * 256; };
    const auto& nodes = g.nodes();
    int T = 1;
    for (const Node& n : nodes) T = std::max(T, n.output + 1);
    std::vector<int> root(static_cast<size_t>(T)), readers(static_cast<size_t>(T), 0);
    for (int t = 0; t < T; ++t) root[size_t(t)] = t;
    for (const Node& n : nodes)
        for (int t : n.inputs) ++readers[size_t(t)];
    int64_t bytes = 0;
    for (const Node& n : nodes) {
        const bool view = std::holds_alternative<Flatten>(n.op) || std::holds_alternative<Reshape>(n.op) ||
                          std::holds_alternative<Dropout>(n.op) || std::holds_alternative<StochasticDepth>(n.op);
        if (view) root[size_t(n.output)] = root[size_t(n.inputs[0])];
        if (fused && !train && std::holds_alternative<BatchNorm>(n.op)) {
            const int x = n.inputs[0], producer = g.tensor(x).producer;
            if (producer >= 0 && std::holds_alternative<Conv2d>(nodes[size_t(producer)].op) &&
                readers[size_t(x)] == 1 && x != g.output()) {
                root[size_t(n.output)] = root[size_t(x)];
                bytes += round(std::get<Conv2d>(nodes[size_t(producer)].op).K * 4);  // the folded bias
            }
        }
    }
    std::vector<bool> grad(size_t(T), false);
    for (int t = 0; t < T; ++t)
        if (train && (g.tensor(t).requires_grad || t == g.output())) grad[size_t(root[size_t(t)])] = true;
    for (int t = 0; t < T; ++t)
        if (root[size_t(t)] == t) bytes += round(numel(g.tensor(t).shape) * e) * (grad[size_t(t)] ? 2 : 1);
    for (const Node& n : nodes) {
        const bool library = std::holds_alternative<Conv2d>(n.op) || std::holds_alternative<Linear>(n.op);
        const std::vector<ParamSpec> specs = g.params(n);
        for (size_t j = 0; j < specs.size(); ++j) {
            const int64_t count = numel(specs[j].shape);
            const bool lib = library && j == 0;
            bytes += round(count * 4);
            if (lib && e == 2) bytes += round(count * 2);
            if (train && specs[j].learned) bytes += round(count * (lib ? e : 4));
        }
        const Shape& x = g.tensor(n.inputs[0]).shape;
        if (train && std::holds_alternative<BatchNorm>(n.op)) {
            bytes += 2 * round(x[1] * 4);
            if (!grad[size_t(root[size_t(n.inputs[0])])]) bytes += round(numel(x) * e);
        }
        if (const auto* ln = std::get_if<LayerNorm>(&n.op)) {
            const int64_t rows = numel(x) / x[size_t(normalize_dim(ln->dim, x.size()))];
            bytes += 2 * round(rows * 4);
        }
    }
    const int64_t N = g.input_shape()[0];
    if (train) bytes += 2 * round(N * 4) + round(4);
    bytes += int64_t(32) << 20;
    bool conv = false;
    for (const Node& n : nodes) conv = conv || std::holds_alternative<Conv2d>(n.op);
    if (conv) bytes += int64_t(256) << 20;
    return bytes;
}

}  // namespace

TEST_CASE("every zoo net's plan, in every precision and mode, is the bytes its rules give") {
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        Graph g = build(e, 2, e.default_res, e.default_res);
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
            CAPTURE(precision_name(p));
            for (auto [m, fused] : {std::pair{Mode::infer, true}, std::pair{Mode::infer, false}, std::pair{Mode::train, true}}) {
                CAPTURE(fused);
                CHECK(make_executor("cudnn", g, {.mode = m, .fused = fused, .precision = p})->planned_bytes() ==
                      expected_plan_bytes(g, m, p, fused));
            }
        }
    }
    // The rules above on the small conv of the first test case: 1536 + 2048 + 2048 + 512 + fixed.
    CHECK(expected_plan_bytes(small_conv(), Mode::infer, Precision::fp32, true) == 1536 + 2048 + 2048 + 512 + fixed_bytes);
}

TEST_CASE("every case of the op table plans as its rules give, or is refused for the reason the table states") {
    // The modes and precisions test_cudnn runs each case in; a refusal comes from make_executor,
    // before any device is touched.
    for (const op_cases::OpCase& c : op_cases::all()) {
        CAPTURE(c.name);
        Graph g = c.graph();
        const op_cases::Refusal* refused = c.refusal("cudnn");
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16}) {
            CAPTURE(precision_name(p));
            for (auto [m, fused] : {std::pair{Mode::infer, true}, std::pair{Mode::infer, false}, std::pair{Mode::train, false}}) {
                if (m == Mode::train && !c.train) continue;
                CAPTURE(fused);
                const ExecOptions o{.mode = m, .fused = fused, .precision = p};
                if (refused)
                    CHECK_THROWS_WITH(make_executor("cudnn", g, o), doctest::Contains(refused->why.c_str()));
                else
                    CHECK(make_executor("cudnn", g, o)->planned_bytes() == expected_plan_bytes(g, m, p, fused));
            }
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

// cublas_on_use.cpp: libcublas, and with it libcublasLt's initializers, load at the first cuBLAS
// call, not at every start of ridge; the version then comes from the library the build found.
TEST_CASE("cuBLAS is opened at its first call, and answers through the forwarders") {
    auto mapped = [](const char* lib) {
        std::ifstream maps("/proc/self/maps");
        std::string line;
        while (std::getline(maps, line))
            if (line.find(lib) != std::string::npos) return true;
        return false;
    };
    CHECK_FALSE(mapped("libcublasLt.so"));
    CHECK(cublas_version().rfind(cat(CUBLAS_VER_MAJOR, ".", CUBLAS_VER_MINOR, "."), 0) == 0);
    CHECK(mapped("libcublasLt.so"));
}
