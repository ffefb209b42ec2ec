// Whole-graph accounting: totals, per-type totals, deduplicated saved tensors, training memory,
// which layers take part in backward, and dtype scaling. Numbers by hand in the comments.
#include <doctest/doctest.h>

#include <array>

#include "engine/analysis.h"
#include "engine/dsl.h"
#include "netdefs/zoo.h"

using namespace ridge;

namespace {
// x (2,3,8,8) -> conv 4x3x3 pad 1 -> relu -> conv 4x4x3x3 pad 1
Graph tiny() {
    Graph g{"tiny"};
    g.input({2, 3, 8, 8}) | conv(4, 3, {.pad = 1}) | relu() | conv(4, 3, {.pad = 1});
    return g;
}
}  // namespace

TEST_CASE("saved tensors are counted once, however many layers keep them") {
    Analysis a = analyze(tiny(), DType::fp32);
    REQUIRE(a.layers.size() == 3);
    // conv1 keeps x (384 elements); relu keeps its output r (512); conv2 keeps r again.
    CHECK(a.layers[0].c.saved_bytes == 384 * 4);
    CHECK(a.layers[1].c.saved_bytes == 512 * 4);
    CHECK(a.layers[2].c.saved_bytes == 512 * 4);
    CHECK(a.totals.saved_bytes == (384 + 512) * 4);
    // weights 4*3*9 + 4*4*9 = 252 elements = 1008 bytes
    CHECK(a.totals.params == 252);
    CHECK(a.totals.train_memory_bytes == 3 * 1008 + 3584);       // weights, grads, momentum, saved
    CHECK(a.totals.train_memory_adam_bytes == 4 * 1008 + 3584);  // two Adam moments
}

TEST_CASE("the first layer has no dgrad; later layers do") {
    Analysis a = analyze(tiny(), DType::fp32);
    CHECK(a.layers[0].c.dgrad_flops == 0);
    CHECK(a.layers[1].c.dgrad_flops == 512);
    CHECK(a.layers[2].c.dgrad_flops == 2 * a.layers[2].c.macs);
    CHECK(a.layers[0].c.bwd_traffic_bytes == (512 + 384 + 108) * 4);  // dy, x, dw: no w read, no dx
}

TEST_CASE("a layer before any weight takes no part in backward") {
    Graph g{"pre"};
    g.input({1, 3, 4, 4}) | relu() | conv(2, 1);
    Analysis a = analyze(g, DType::fp32);
    CHECK(a.layers[0].c.dgrad_flops == 0);
    CHECK(a.layers[0].c.saved_bytes == 0);
    CHECK(a.layers[0].c.bwd_traffic_bytes == 0);
    CHECK(a.layers[0].c.fwd_traffic_bytes == 2 * 48 * 4);
}

TEST_CASE("fp16 and bf16 halve every tensor byte count but not FLOPs") {
    Analysis f = analyze(tiny(), DType::fp32), h = analyze(tiny(), DType::fp16), b = analyze(tiny(), DType::bf16);
    CHECK(h.totals.fwd_flops == f.totals.fwd_flops);
    CHECK(2 * h.totals.fwd_traffic_bytes == f.totals.fwd_traffic_bytes);
    CHECK(2 * h.totals.train_memory_bytes == f.totals.train_memory_bytes);
    CHECK(b.totals.activation_bytes == h.totals.activation_bytes);
}

TEST_CASE("totals and per-type totals are the sums of the layers, for every zoo net") {
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        Analysis a = analyze(build(e, 2, e.default_res, e.default_res), DType::fp32);
        // Summed here field by field, not with the analysis's own Counts::operator+=.
        auto field_sums = [](const auto& rows, auto counts_of) {
            std::array<int64_t, 9> s{};
            for (const auto& r : rows) {
                const Counts& c = counts_of(r);
                const int64_t f[9] = {c.params,       c.macs,           c.fwd_flops,         c.dgrad_flops,      c.wgrad_flops,
                                      c.param_bytes,  c.activation_bytes, c.fwd_traffic_bytes, c.bwd_traffic_bytes};
                for (int i = 0; i < 9; ++i) s[i] += f[i];
            }
            return s;
        };
        const Totals& t = a.totals;
        const std::array<int64_t, 9> totals = {t.params,      t.macs,             t.fwd_flops,
                                               t.dgrad_flops, t.wgrad_flops,      t.param_bytes,
                                               t.activation_bytes, t.fwd_traffic_bytes, t.bwd_traffic_bytes};
        CHECK(field_sums(a.layers, [](const LayerCost& L) -> const Counts& { return L.c; }) == totals);
        CHECK(field_sums(a.by_type, [](const TypeTotals& T) -> const Counts& { return T.c; }) == totals);
        int64_t saved_sum = 0;
        for (const LayerCost& L : a.layers) saved_sum += L.c.saved_bytes;
        CHECK(a.totals.saved_bytes <= saved_sum);
        CHECK(a.totals.saved_bytes > 0);
        // Forward FLOPs are at least two per MAC; backward is between 1x and 2x+ of forward.
        CHECK(a.totals.fwd_flops >= 2 * a.totals.macs);
        CHECK(a.totals.bwd_flops() > a.totals.fwd_flops);
        CHECK(a.totals.bwd_flops() < 3 * a.totals.fwd_flops);
    }
}

TEST_CASE("counts scale exactly with the batch") {
    for (const ZooEntry& e : zoo()) {
        CAPTURE(e.name);
        Analysis one = analyze(build(e, 1, e.default_res, e.default_res), DType::fp32);
        Analysis four = analyze(build(e, 4, e.default_res, e.default_res), DType::fp32);
        CHECK(four.totals.params == one.totals.params);
        CHECK(four.totals.macs == 4 * one.totals.macs);
        CHECK(four.totals.activation_bytes == 4 * one.totals.activation_bytes);
    }
}
