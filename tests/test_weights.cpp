// Seeded weights: the tensors each op declares agree with its analytic parameter count, and a
// seed gives the same numbers every time.
#include <doctest/doctest.h>

#include <cmath>

#include "engine/analysis.h"
#include "engine/backend/fold.h"
#include "engine/backend/weights.h"
#include "engine/dsl.h"
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

TEST_CASE("batchnorm folding: which batchnorms fold, and the folded weights by hand") {
    using namespace ridge;
    Graph g{"folds"};
    Tensor x = g.input({1, 2, 4, 4});
    Tensor a = x | conv(2, 1) | bn() | relu();         // nodes 0, 1, 2: folds
    Tensor b = a | conv(2, 1);                         // node 3: its output read twice
    Tensor c = add(b | bn(), b);                       // nodes 4 (no fold), 5
    Tensor d = c | relu() | bn();                      // nodes 6, 7: a batchnorm after a ReLU
    (void)(d | conv(2, 1) | bn());                     // nodes 8, 9: the output, folds
    std::vector<int> into = batchnorm_folds(g);
    REQUIRE(into.size() == 10);
    CHECK(into == std::vector<int>{-1, 0, -1, -1, -1, -1, -1, -1, -1, 8});

    // K = 2 output channels of 2 weights each, with a bias, and gamma, beta, mean, variance.
    auto tensor = [](Shape s, std::vector<float> v) {
        HostTensor t(std::move(s));
        t.v = std::move(v);
        return t;
    };
    std::vector<HostTensor> conv_w = {tensor({2, 2, 1, 1}, {1, 2, 3, 4}), tensor({2}, {0.5f, -1})};
    std::vector<HostTensor> bn_w = {tensor({2}, {2, 0.5f}), tensor({2}, {1, 0}), tensor({2}, {0.5f, 1}),
                                    tensor({2}, {3, 0.25f})};
    FoldedConv f = fold_batchnorm(conv_w, bn_w);
    // Channel 0: s = 2 / sqrt(3 + 1e-5); weights 1 s, 2 s; bias (0.5 - 0.5) s + 1 = 1.
    // Channel 1: s = 0.5 / sqrt(0.25 + 1e-5); weights 3 s, 4 s; bias (-1 - 1) s + 0.
    double s0 = 2 / std::sqrt(3 + 1e-5), s1 = 0.5 / std::sqrt(0.25 + 1e-5);
    CHECK(f.weight.shape == Shape{2, 2, 1, 1});
    CHECK(f.weight.v[0] == doctest::Approx(s0).epsilon(1e-7));
    CHECK(f.weight.v[1] == doctest::Approx(2 * s0).epsilon(1e-7));
    CHECK(f.weight.v[2] == doctest::Approx(3 * s1).epsilon(1e-7));
    CHECK(f.weight.v[3] == doctest::Approx(4 * s1).epsilon(1e-7));
    CHECK(f.bias.v[0] == doctest::Approx(1.0).epsilon(1e-7));
    CHECK(f.bias.v[1] == doctest::Approx(-2 * s1).epsilon(1e-7));
    // Without a conv bias the shift is -mean s + beta.
    FoldedConv nb = fold_batchnorm({conv_w[0]}, bn_w);
    CHECK(nb.bias.v[0] == doctest::Approx(-0.5 * s0 + 1).epsilon(1e-7));
    CHECK(nb.bias.v[1] == doctest::Approx(-s1).epsilon(1e-7));
    CHECK(describe(g, 1) == "layer " + g.nodes()[1].name + " (batchnorm, input (1,2,4,4))");
    CHECK(describe(g, -1) == "the loss");
}

TEST_CASE("scale folding: which scales fold into a linear, and the folded rows by hand") {
    // The q of a packed in_proj (D = 4, 2 heads) as vit.cpp builds it, read with one other region.
    auto attention = [](Tensor x, int64_t q_index, int64_t k_index) {
        Tensor qkv = x | linear(12) | reshape({0, 0, 3, 2, -1}) | permute({0, 2, 3, 1, 4});  // 0, 1, 2
        Tensor q = qkv | select(1, q_index) | scale(0.5);                                      // 3, 4
        return matmul(q, qkv | select(1, k_index), true);                                      // 5, 6
    };
    SUBCASE("vit_b_16: every block's q scale, rows [0, 768) of in_proj") {
        Graph g = build(*find_net("vit_b_16"), 1, 224, 224);
        std::vector<ScaleFold> f = scale_folds(g);
        REQUIRE(f.size() == 12);
        for (const ScaleFold& s : f) {
            CHECK(std::holds_alternative<Scale>(g.nodes()[size_t(s.scale)].op));
            CHECK(g.nodes()[size_t(s.linear)].name.find("in_proj") != std::string::npos);
            CHECK(s.first == 0);
            CHECK(s.count == 768);
            CHECK(s.s == 0.125);
        }
    }
    SUBCASE("a region past the first: the v of the packed tensor") {
        Graph g{"v"};
        (void)(attention(g.input({1, 3, 4}), 2, 1) | flatten() | linear(2));
        std::vector<ScaleFold> f = scale_folds(g);
        REQUIRE(f.size() == 1);
        CHECK(f[0].scale == 4);
        CHECK(f[0].linear == 0);
        CHECK(f[0].first == 8);
        CHECK(f[0].count == 4);
    }
    SUBCASE("not where the region is read unscaled too, or the scale reads no select of a linear") {
        Graph g{"shared"};
        (void)(attention(g.input({1, 3, 4}), 0, 0) | flatten() | linear(2));
        CHECK(scale_folds(g).empty());
        Graph inf{"infinite"};
        Tensor t0 = inf.input({1, 3, 4}) | linear(12) | reshape({0, 0, 3, 2, -1}) | permute({0, 2, 3, 1, 4});
        (void)(matmul(t0 | select(1, 0) | scale(INFINITY), t0 | select(1, 1), true) | flatten() | linear(2));
        CHECK(scale_folds(inf).empty());
        Graph h{"plain"};
        (void)(h.input({1, 3, 4}) | linear(4) | scale(0.5) | flatten() | linear(2));
        CHECK(scale_folds(h).empty());
        // The split dimension selected is not the first of the split ones (a head, not q, k or v).
        Graph m{"head"};
        Tensor t = m.input({1, 3, 4}) | linear(12) | reshape({0, 0, 3, 2, -1}) | permute({0, 3, 2, 1, 4});
        (void)(t | select(1, 0) | scale(0.5) | flatten() | linear(2));
        CHECK(scale_folds(m).empty());
    }
    SUBCASE("the folded rows and bias") {
        HostTensor w({3, 2}), b({3});
        w.v = {1, 2, 3, 4, 5, 6};
        b.v = {1, 2, 3};
        std::vector<HostTensor> f = fold_scale({w, b}, {0, 0, 1, 1, 0.5});
        CHECK(f[0].v == std::vector<float>{1, 2, 1.5f, 2, 5, 6});
        CHECK(f[1].v == std::vector<float>{1, 1, 3});
        CHECK(fold_scale({w}, {0, 0, 2, 1, 0.25}).at(0).v == std::vector<float>{1, 2, 3, 4, 1.25f, 1.5f});
        HostTensor flat({6});  // a weight handed over flat: refused, not scaled in the wrong places
        CHECK_THROWS_AS(fold_scale({flat}, {0, 0, 2, 1, 0.25}), std::invalid_argument);
    }
}
