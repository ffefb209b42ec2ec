// The ops oneDNN 2.6 has no primitive for (class token, ceil-mode average pooling, adaptive
// pooling with unequal windows, hardsigmoid alone, the loss), which the oneDNN executor runs on
// the reference kernels or on its own (the class token, hardsigmoid), against PyTorch's
// values, not against the reference: tests/data/torch_fallback_ops.txt, written by
// bench/torch_fallback_ops.py in float64. Each case is one layer trained one step as every
// executor does (the output, the mean cross-entropy of it read as (N, numel/N), backward), run on
// the float reference, the double reference and, where built, oneDNN fused and unfused.
//
// Inputs are exact in float32, so a float32 run differs from PyTorch's float64 only by its own
// rounding: a few ulps of the tensor's largest element (|a - b| <= 4e-7 (max|b| + |b|)); the double
// reference by 1e-14 of it, except hardsigmoid's input gradient: PyTorch 1.13 multiplies by 1.0f/6.0f,
// a float constant, even in float64, so its value carries a relative error of 3e-8 (2e-7 allowed).
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "engine/backend/reference/reference.h"
#include "engine/dsl.h"
#include "netdefs/zoo.h"

using namespace ridge;

namespace {

// The formulas of bench/torch_fallback_ops.py.
std::vector<float> values(int64_t n, int salt, float scale = 1) {
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(float((7 * i + 3 * salt + 3) % 17 - 8) / 8 * scale);
    return v;
}

std::vector<int32_t> labels(int64_t N, int64_t classes) {
    std::vector<int32_t> l;
    for (int64_t n = 0; n < N; ++n) l.push_back(int32_t((3 * n + 1) % classes));
    return l;
}

using Table = std::map<std::string, std::vector<double>>;  // "case quantity" -> values

Table torch_values() {
    std::ifstream f(RIDGE_TEST_DATA "/torch_fallback_ops.txt");
    REQUIRE_MESSAGE(f.good(), "cannot open torch_fallback_ops.txt");
    Table t;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::string c, q;
        in >> c >> q;
        std::vector<double>& v = t[c + " " + q];
        double x;
        while (in >> x) v.push_back(x);
    }
    return t;
}

struct Case {
    std::string name;
    Graph g;
    Shape x;
    float scale = 1;
    int salt = 0;
    int param_salt = 0;  // the layer's one parameter, when it has one
    double torch_dx = 1e-14;  // how exact PyTorch's float64 input gradient is
};

// One executor's step: output, loss, input gradient and the layer's parameter gradients, in double.
struct Step {
    std::vector<double> out, loss, dx;
    std::vector<std::vector<double>> dparams;
};

template <class T>
std::vector<double> widen(const std::vector<T>& v) {
    return {v.begin(), v.end()};
}

void compare(const std::vector<double>& got, const std::vector<double>& expect, double rel, const std::string& what) {
    INFO(what);
    REQUIRE(got.size() == expect.size());
    double largest = 0;
    for (double e : expect) largest = std::max(largest, std::abs(e));
    for (size_t i = 0; i < got.size(); ++i) {
        INFO("element ", i, ": ", got[i], " against PyTorch's ", expect[i]);
        CHECK(std::abs(got[i] - expect[i]) <= rel * (largest + std::abs(expect[i])));
    }
}

void check_case(Case& c, const Table& torch) {
    CAPTURE(c.name);
    const Graph& g = c.g;
    HostTensor x(c.x);
    x.v = values(numel(c.x), c.salt, c.scale);
    Weights w = init_weights(g, 1);
    if (c.param_salt) w[0][0].v = values(w[0][0].size(), c.param_salt);
    const Shape& out = g.tensor(g.output()).shape;
    const std::vector<int32_t> l = labels(out[0], numel(out) / out[0]);
    auto at = [&](const std::string& q) {
        auto it = torch.find(c.name + " " + q);
        REQUIRE_MESSAGE(it != torch.end(), c.name, " ", q, " is not in torch_fallback_ops.txt");
        return it->second;
    };
    auto check = [&](const Step& s, double rel, const std::string& who) {
        compare(s.out, at("output"), rel, who + ": output");
        compare(s.loss, at("loss"), rel, who + ": loss");
        compare(s.dx, at("dx"), std::max(rel, c.torch_dx), who + ": input gradient");
        if (c.param_salt) compare(s.dparams.at(0), at("dtoken"), rel, who + ": parameter gradient");
    };

    auto ex64 = make_reference64(g, Mode::train);
    ex64->load(w);
    ex64->set_input(x, l);
    ex64->forward();
    Step s64{ex64->output64().v, {ex64->backward64()}, ex64->input_gradient64().v, {}};
    if (c.param_salt) s64.dparams.push_back(ex64->gradients64()[0][0].v);
    check(s64, 1e-14, "double reference");

    std::vector<std::pair<std::string, bool>> runs = {{"reference", false}};
    for (const std::string& b : cpu_backends())
        if (b != "reference") runs.insert(runs.end(), {{b, false}, {b, true}});
    for (const auto& [backend, fused] : runs) {
        auto ex = make_executor(backend, g, {.mode = Mode::train, .fused = fused});
        ex->load(w);
        ex->set_input(x, l);
        ex->forward();
        Step s{widen(ex->output().v), {double(ex->backward())}, widen(ex->input_gradient().v), {}};
        if (c.param_salt) s.dparams.push_back(widen(ex->gradients()[0][0].v));
        check(s, 4e-7, cat(backend, fused ? " fused" : " unfused"));
    }
}

template <class F>
Case make_case(std::string name, Shape x, F body, float scale = 1, int salt = 0, int param_salt = 0) {
    Case c{std::move(name), Graph(name), x, scale, salt, param_salt};
    body(c.g.input(x, true));
    return c;
}

}  // namespace

TEST_CASE("the ops oneDNN leaves to the reference kernels, against PyTorch") {
    const Table torch = torch_values();
    // The salts and scales of bench/torch_fallback_ops.py, case by case.
    SUBCASE("class token") {
        Case c = make_case("class_token", {2, 3, 4}, [](Tensor x) { x | class_token(); }, 1, 1, 2);
        check_case(c, torch);
    }
    SUBCASE("average pooling 3x3, stride 2, padding 1, ceil mode, counting the padding and not") {
        Case in = make_case("avgpool_ceil_include_pad", {2, 3, 6, 6},
                            [](Tensor x) { x | avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true}); }, 1, 3);
        check_case(in, torch);
        Case ex = make_case(
            "avgpool_ceil_exclude_pad", {2, 3, 6, 6},
            [](Tensor x) { x | avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true, .count_include_pad = false}); }, 1, 3);
        check_case(ex, torch);
    }
    SUBCASE("adaptive average pooling to 3x2 (unequal, overlapping windows)") {
        Case c = make_case("adaptive_3x2", {2, 3, 5, 7}, [](Tensor x) { x | adaptive_avgpool({3, 2}); }, 1, 4);
        check_case(c, torch);
    }
    SUBCASE("hardsigmoid alone, its kinks at -3 and 3 among the inputs") {
        Case c = make_case("hardsigmoid", {2, 3, 4, 4}, [](Tensor x) { x | hardsigmoid(); }, 4, 5);
        c.torch_dx = 2e-7;
        check_case(c, torch);
    }
    SUBCASE("the softmax cross-entropy loss") {
        Case c = make_case("loss", {3, 5}, [](Tensor x) { x | flatten(); }, 2, 6);
        check_case(c, torch);
    }
}
