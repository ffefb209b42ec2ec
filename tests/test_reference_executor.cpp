// The reference executor on whole graphs: zoo nets at small sizes and hand-built fragments train
// (the loss falls), their weight and input gradients match finite differences of the loss through
// the whole executor, and dropout is the identity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/executor.h"
#include "engine/backend/reference/reference.h"
#include "engine/dsl.h"
#include "netdefs/zoo.h"
#include "tiny_vit.h"

using namespace ridge;
using ridge::testnets::tiny_vit;

namespace {

std::unique_ptr<Executor> make(const Graph& g, Mode mode) { return make_executor("reference", g, {.mode = mode}); }

// Mean softmax cross-entropy of the output seen as (N, numel/N), in double: finite differences of
// it are not limited by the float rounding of the loss itself.
double loss_of(const HostTensor& out, const std::vector<int32_t>& labels) {
    const int64_t N = out.shape[0], K = out.size() / N;
    double loss = 0;
    for (int64_t n = 0; n < N; ++n) {
        const float* z = out.data() + n * K;
        double m = *std::max_element(z, z + K), sum = 0;
        for (int64_t k = 0; k < K; ++k) sum += std::exp(z[k] - m);
        loss += std::log(sum) + m - z[labels[n]];
    }
    return loss / double(N);
}

// A graph with its seeded weights, input and labels, ready to run.
struct Setup {
    Weights w;
    HostTensor x;
    std::vector<int32_t> labels;
};

Setup setup(const Graph& g, uint64_t seed) {
    const Shape& s = g.input_shape();
    const Shape out = g.tensor(g.output()).shape;
    return {init_weights(g, seed), random_input(s, seed + 1), random_labels(s[0], numel(out) / out[0], seed + 2)};
}

// A few SGD steps on one fixed batch at a small learning rate: each step's loss is below the last.
void check_loss_falls(const Graph& g, float lr, int steps) {
    Setup s = setup(g, 5);
    auto ex = make(g, Mode::train);
    ex->prepare();
    ex->load(s.w);
    ex->set_input(s.x, s.labels);
    std::vector<float> losses;
    for (int i = 0; i < steps; ++i) {
        ex->forward();
        losses.push_back(ex->backward());
        ex->update(lr);
    }
    ex->forward();
    losses.push_back(float(loss_of(ex->output(), s.labels)));
    for (size_t i = 1; i < losses.size(); ++i) {
        INFO(g.model(), " step ", i, ": ", losses[i - 1], " -> ", losses[i]);
        CHECK(losses[i] < losses[i - 1]);
    }
}

// For each (layer, tensor index), the element with the largest gradient: the double executor's
// gradient against a central difference of its own loss with that one weight moved by +-h. In
// double the step can be tiny, h = 1e-8, so that no ReLU6 or max-pool input moves across its kink
// and batchnorm over a few values (sharply curved) leaves a truncation error (h^2/6 times the
// third derivative) far below the tolerance; the loss's rounding, about 1e-16 |L| ~ 1e-15,
// becomes 1e-7 in the difference quotient. |fd - backward| <= 1e-5 |backward| + 1e-6: a gradient
// 1 % off misses by 10^2 to 10^5. (At h = 1e-6, mobilenet_v2's stem conv already differs by
// 0.6 %.) The float executor's gradients must be those of double within float32 rounding: tensor
// by tensor for every zoo net in test_gradients.
struct WeightProbe {
    std::string layer;
    int tensor = 0;
};

void check_weight_gradients(const Graph& g, const std::vector<WeightProbe>& probes, double h = 1e-8,
                            double rtol = 1e-5, double atol = 1e-6) {
    Setup s = setup(g, 11);
    auto ex = make_reference64(g, Mode::train);
    const Weights64 w0 = convert<double>(s.w);
    ex->load64(w0);
    ex->set_input64(convert<double>(s.x), s.labels);
    ex->forward();
    const double loss = ex->backward64();
    const Weights64 grads = ex->gradients64();
    auto loss_with = [&](const Weights64& w) {
        ex->load64(w);
        ex->forward();
        return ex->backward64();
    };
    CHECK(loss == loss_with(w0));  // the loss is a function of the weights alone
    for (const WeightProbe& p : probes) {
        const Node* node = g.find(p.layer);
        REQUIRE_MESSAGE(node, "no layer ", p.layer);
        const size_t i = size_t(node - g.nodes().data());
        const std::vector<double>& dw = grads.at(i).at(size_t(p.tensor)).v;
        REQUIRE(!dw.empty());
        const size_t k = size_t(
            std::max_element(dw.begin(), dw.end(), [](double a, double b) { return std::abs(a) < std::abs(b); }) -
            dw.begin());
        Weights64 w = w0;
        double& v = w[i][size_t(p.tensor)].v[k];
        const double v0 = v;
        v = v0 + h;
        const double Lp = loss_with(w);
        v = v0 - h;
        const double Lm = loss_with(w);
        const double num = (Lp - Lm) / (2 * h);
        INFO(g.model(), " ", p.layer, " tensor ", p.tensor, " element ", k, ": finite difference ", num, ", backward ",
             dw[k]);
        CHECK(std::abs(num - dw[k]) <= rtol * std::abs(dw[k]) + atol);
    }
}

}  // namespace

TEST_CASE("the reference backend is built and named") {
    auto names = cpu_backends();
    CHECK(std::find(names.begin(), names.end(), "reference") != names.end());
    Graph g = build(*find_net("resnet18"), 1, 32, 32);
    CHECK(make(g, Mode::infer)->name() == "reference");
    CHECK_THROWS_AS(make_executor("nonesuch", g, {}), std::invalid_argument);
}

// Batchnorm in training normalizes each channel over N*P*Q values; at 32x32 the last stages of
// these nets are 1x1 or 2x2, so a channel holds a handful of values. With N = 2 the two values of
// a 1x1 channel are normalized to +-1, and a nearly constant channel is scaled by up to
// 1/sqrt(eps): gradients reach hundreds and the loss is sharply curved. Larger batches keep it
// tame; the double executor's tiny step does the rest. bench/torch_reference.py shows the same
// nets agree with PyTorch's autograd in float64.
TEST_CASE("resnet18 at 32x32, batch 4") {
    Graph g = build(*find_net("resnet18"), 4, 32, 32);
    SUBCASE("the loss falls over SGD steps on a fixed batch") { check_loss_falls(g, 0.01f, 3); }
    SUBCASE("weight gradients match finite differences of the loss") {
        check_weight_gradients(g,
                               {{"conv1"},
                                {"bn1", 0},
                                {"layer2.0.downsample.conv1"},
                                {"layer3.1.conv2"},
                                {"layer4.1.bn2", 1},
                                {"fc", 0},
                                {"fc", 1}});
    }
}

TEST_CASE("mobilenet_v2 at 32x32, batch 8") {
    Graph g = build(*find_net("mobilenet_v2"), 8, 32, 32);
    check_loss_falls(g, 0.01f, 2);
    check_weight_gradients(
        g,
        {{"features.0.conv1"}, {"features.2.conv2"}, {"features.10.conv3"}, {"features.18.bn1", 0}, {"classifier.fc1"}});
}

TEST_CASE("efficientnet_b0 at 64x64, batch 2") {
    Graph g = build(*find_net("efficientnet_b0"), 2, 64, 64);
    check_loss_falls(g, 0.01f, 2);
    check_weight_gradients(g,
                           {{"features.0.conv1"},
                            {"features.2.0.conv2"},
                            {"features.2.0.se.fc1"},
                            {"features.6.1.conv3"},
                            {"classifier.fc1"}});
}

TEST_CASE("a tiny vision transformer") {
    Graph g = tiny_vit(2);
    check_loss_falls(g, 0.05f, 3);
    check_weight_gradients(g,
                           {{"conv1"},
                            {"class_token"},
                            {"pos_embedding"},
                            {"layer0.in_proj"},
                            {"layer0.ln_1", 0},
                            {"layer1.out_proj", 1},
                            {"layer1.fc1"},
                            {"ln", 1},
                            {"head"}});
}

TEST_CASE("dropout and stochastic depth are the identity in training") {
    auto body = [](bool regularized) {
        Graph g("mlp");
        Tensor x = g.input({3, 6});
        x = x | linear(8);
        if (regularized) x = x | dropout(0.5);
        x = x | relu();
        if (regularized) x = x | stochastic_depth(0.5);
        x | linear(4);
        return g;
    };
    Graph a = body(true), b = body(false);
    Setup sa = setup(a, 3);
    Weights wb;  // the same layers' tensors, without the regularizers
    for (size_t i = 0; i < a.nodes().size(); ++i)
        if (!std::holds_alternative<Dropout>(a.nodes()[i].op) &&
            !std::holds_alternative<StochasticDepth>(a.nodes()[i].op))
            wb.push_back(sa.w[i]);
    REQUIRE(wb.size() == b.nodes().size());
    auto ea = make(a, Mode::train), eb = make(b, Mode::train);
    ea->load(sa.w);
    eb->load(wb);
    ea->set_input(sa.x, sa.labels);
    eb->set_input(sa.x, sa.labels);
    ea->forward();
    eb->forward();
    const HostTensor first = ea->output();
    CHECK(first.v == eb->output().v);
    CHECK(ea->backward() == eb->backward());
    auto learned = [](const Weights& w) {
        std::vector<std::vector<float>> v;
        for (const auto& layer : w)
            for (const HostTensor& t : layer) v.push_back(t.v);
        return v;
    };
    CHECK(learned(ea->gradients()) == learned(eb->gradients()));
    ea->forward();  // no random mask: a second forward gives the same output
    CHECK(ea->output().v == first.v);
}

TEST_CASE("the input gradient of a fragment matches finite differences, in double") {
    Graph g("fragment");
    Tensor x = g.input({2, 3, 5, 5}, true);
    Tensor y = x | conv(4, 3, {.stride = 2, .pad = 1}) | bn() | hardswish();
    Tensor gate = y | adaptive_avgpool(1) | conv(4, 1, {.bias = true}) | sigmoid();
    mul(y, gate) | maxpool(2, {.ceil_mode = true}) | flatten();  // a (2, 16) output read as logits
    Setup s = setup(g, 21);
    auto ex = make_reference64(g, Mode::train);
    ex->load(s.w);
    HostTensor64 x0 = convert<double>(s.x);
    ex->set_input64(x0, s.labels);
    ex->forward();
    ex->backward64();
    const HostTensor64 dx = ex->input_gradient64();
    REQUIRE(dx.shape == s.x.shape);
    // As the weights above: h = 1e-6, 1e-5 relative + 1e-9. A step that small moves no hardswish
    // or max-pool input across its kink unless one lies within 1e-6 of it.
    const double h = 1e-6;
    for (size_t k = 0; k < dx.v.size(); ++k) {
        HostTensor64 xp = x0;
        auto loss_at = [&](double v) {
            xp.v[k] = v;
            ex->set_input64(xp, s.labels);
            ex->forward();
            return ex->backward64();
        };
        const double num = (loss_at(x0.v[k] + h) - loss_at(x0.v[k] - h)) / (2 * h);
        INFO("d loss / d x[", k, "]: finite difference ", num, ", backward ", dx.v[k]);
        CHECK(std::abs(num - dx.v[k]) <= 1e-5 * std::abs(dx.v[k]) + 1e-9);
    }

    Graph net = build(*find_net("resnet18"), 1, 32, 32);  // a network's image needs no gradient
    auto en = make(net, Mode::train);
    en->load(init_weights(net, 1));
    en->set_input(random_input(net.input_shape(), 2), {3});
    en->forward();
    en->backward();
    CHECK(en->input_gradient().v.empty());
}

TEST_CASE("planned bytes: activations, parameters, gradients in training, kernel scratch") {
    Graph g("fc");
    g.input({2, 4}) | linear(3);
    // infer: x and y (8 + 6 floats), w and b (12 + 3 floats), scratch 24 bytes per element of x
    CHECK(make(g, Mode::infer)->planned_bytes() == 4 * (8 + 6) + 4 * (12 + 3) + 24 * 8);
    // train: y's gradient (x needs none), and the gradients of w and b
    CHECK(make(g, Mode::train)->planned_bytes() == 4 * (8 + 6 + 6) + 2 * 4 * (12 + 3) + 24 * 8);
}

TEST_CASE("per-layer timing splits backward into dgrad and wgrad and leaves the gradients unchanged") {
    Graph g = tiny_vit(2);
    Setup s = setup(g, 31);
    auto run = [&](bool timed) {
        auto ex = make(g, Mode::train);
        ex->time_layers(timed);
        ex->load(s.w);
        ex->set_input(s.x, s.labels);
        ex->forward();
        ex->backward();
        return std::make_pair(ex->gradients(), ex->step_times());
    };
    auto [plain, none] = run(false);
    auto [timed, t] = run(true);
    REQUIRE(plain.size() == timed.size());
    for (size_t i = 0; i < plain.size(); ++i)
        for (size_t j = 0; j < plain[i].size(); ++j) CHECK(plain[i][j].v == timed[i][j].v);
    REQUIRE(t.layers.size() == g.nodes().size());
    double fwd = 0;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const Node& n = g.nodes()[i];
        fwd += t.layers[i].fwd;
        // dgrad is timed exactly where an input needs its gradient, and reads 0 elsewhere
        bool any_dx = false;
        for (int id : n.inputs) any_dx = any_dx || g.tensor(id).requires_grad;
        CHECK((t.layers[i].dgrad > 0) == any_dx);
        // only layers with weights have a weight gradient; the patch conv has no input gradient
        if (!op_has_params(n.op)) CHECK(t.layers[i].wgrad == 0);
        if (n.name == "conv1") {
            CHECK(t.layers[i].dgrad == 0);
            CHECK(t.layers[i].wgrad > 0);
        }
    }
    CHECK(fwd > 0);
    CHECK(t.loss > 0);
}

TEST_CASE("infer mode: batchnorm's running statistics, and no backward") {
    Graph g("bn");
    g.input({4, 2}) | bn();
    Weights w = init_weights(g, 1);
    HostTensor x = random_input({4, 2}, 2);
    auto ex = make(g, Mode::infer);
    ex->load(w);
    ex->set_input(x, {});
    ex->forward();
    const HostTensor y = ex->output();
    for (int n = 0; n < 4; ++n)
        for (int c = 0; c < 2; ++c) {
            double expect =
                (x.v[n * 2 + c] - w[0][2].v[c]) / std::sqrt(w[0][3].v[c] + 1e-5) * w[0][0].v[c] + w[0][1].v[c];
            CHECK(y.v[n * 2 + c] == doctest::Approx(expect).epsilon(1e-6));
        }
    CHECK_THROWS_AS(ex->backward(), std::logic_error);
    Weights bad = w;
    bad[0][0] = HostTensor({3});
    CHECK_THROWS_AS(ex->load(bad), std::invalid_argument);
    CHECK_THROWS_AS(ex->set_input(HostTensor({4, 3}), {}), std::invalid_argument);
}
