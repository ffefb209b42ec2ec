// Seeded weights: the tensors each op declares agree with its analytic parameter count, and a
// seed gives the same numbers every time.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/analysis.h"
#include "engine/backend/weights.h"
#include "netdefs/zoo.h"

using namespace ridge;

TEST_CASE("the learned tensors of every layer of every zoo net add up to its analytic params") {
    for (const ZooEntry& e : zoo()) {
        Graph g = build(e, 1, e.default_res, e.default_res);
        Analysis a = analyze(g, DType::fp32);
        for (size_t i = 0; i < g.nodes().size(); ++i) {
            const Node& n = g.nodes()[i];
            int64_t learned = 0;
            for (const ParamSpec& p : g.params(n))
                if (p.learned) learned += numel(p.shape);
            INFO(e.name, " ", n.name);
            CHECK(learned == a.layers[i].c.params);
            CHECK(op_has_params(n.op) == (learned > 0));
        }
    }
}

TEST_CASE("weights follow the declared shapes and the seed") {
    Graph g = build(*find_net("resnet18"), 1, 64, 64);
    Weights a = init_weights(g, 7), b = init_weights(g, 7), c = init_weights(g, 8);
    REQUIRE(a.size() == g.nodes().size());
    const Node* conv1 = g.find("conv1");
    REQUIRE(conv1);
    size_t i = size_t(conv1 - g.nodes().data());
    REQUIRE(a[i].size() == 1);
    CHECK(a[i][0].shape == Shape{64, 3, 7, 7});
    CHECK(a[i][0].v == b[i][0].v);
    CHECK(a[i][0].v != c[i][0].v);
    float bound = 1.0f / std::sqrt(3.0f * 7 * 7);  // fan-in C*R*S
    for (float v : a[i][0].v) REQUIRE((v >= -bound && v < bound));
}

TEST_CASE("labels lie in range and differ between seeds") {
    auto y = random_labels(1000, 10, 1);
    for (int v : y) REQUIRE((v >= 0 && v < 10));
    CHECK(y != random_labels(1000, 10, 2));
}
