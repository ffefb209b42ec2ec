// SGD with momentum and weight decay in the executors (executor.h): three steps of a small net
// against torch.optim.SGD in float64 (tests/data/sgd_torch.txt, written by
// bench/torch_train.py --sgd-reference from the same formulas for weights and input), and the
// recurrence v = m v + (dw + wd w), w -= lr v, step by step from each executor's own gradients.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/backend/executor.h"
#include "engine/dsl.h"

using namespace ridge;

namespace {

double val(int64_t i, int salt) { return double((i * 37 + salt * 11) % 23 - 11) / 20.0; }

HostTensor formula(const Shape& s, int salt, double offset = 0) {
    HostTensor t(s);
    for (int64_t i = 0; i < t.size(); ++i) t.v[size_t(i)] = float(offset + val(i, salt));
    return t;
}

// conv(2, 3x3, pad 1) -> batchnorm -> ReLU -> flatten -> linear(3) on (4, 3, 4, 4).
Graph small_net() {
    Graph g("sgd_net");
    g.input({4, 3, 4, 4}) | conv(2, 3, {.pad = 1}) | bn() | relu() | flatten() | linear(3);
    return g;
}

struct Setup {
    Weights w;
    HostTensor x;
    std::vector<int32_t> labels{0, 2, 1, 2};
};

Setup setup(const Graph& g) {
    Setup s;
    s.w = init_weights(g, 1);
    s.w[0][0] = formula({2, 3, 3, 3}, 1);
    s.w[1][0] = formula({2}, 2, 1.0);
    s.w[1][1] = formula({2}, 3);
    s.w[1][2] = HostTensor({2});  // running mean and variance: unused in training
    s.w[1][3] = HostTensor({2});
    s.w[1][3].v = {1.0f, 1.0f};
    s.w[4][0] = formula({3, 32}, 4);
    s.w[4][1] = formula({3}, 5);
    s.x = HostTensor({4, 3, 4, 4});
    for (int64_t i = 0; i < s.x.size(); ++i) s.x.v[size_t(i)] = float(double((i * 13 + 5) % 17 - 8) / 8.0);
    return s;
}

// (momentum, weight decay, tensor name) -> values after three steps.
std::map<std::string, std::vector<double>> torch_reference(double m, double wd) {
    std::ifstream f(std::string(RIDGE_TEST_DATA) + "/sgd_torch.txt");
    REQUIRE(f);
    std::map<std::string, std::vector<double>> out;
    for (std::string line; std::getline(f, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        double lm, lwd;
        std::string name;
        in >> lm >> lwd >> name;
        if (lm != m || lwd != wd) continue;
        for (double v; in >> v;) out[name].push_back(v);
    }
    return out;
}

std::vector<std::string> backends() { return cpu_backends(); }

}  // namespace

TEST_CASE("three SGD steps with momentum and weight decay match torch.optim.SGD") {
    Graph g = small_net();
    Setup s = setup(g);
    for (const std::string& backend : backends())
        for (auto [m, wd] : {std::pair{0.9, 0.01}, std::pair{0.0, 0.05}}) {
            CAPTURE(backend);
            CAPTURE(m);
            auto ex = make_executor(backend, g, {.mode = Mode::train, .momentum = float(m), .weight_decay = float(wd)});
            ex->load(s.w);
            ex->set_input(s.x, s.labels);
            for (int step = 0; step < 3; ++step) {
                ex->forward();
                ex->backward();
                ex->update(0.1f);
            }
            Weights w = ex->weights();
            auto ref = torch_reference(m, wd);
            REQUIRE(ref.size() == 5);
            const std::pair<const char*, const HostTensor*> tensors[] = {{"conv.weight", &w[0][0]},
                                                                         {"bn.weight", &w[1][0]},
                                                                         {"bn.bias", &w[1][1]},
                                                                         {"fc.weight", &w[4][0]},
                                                                         {"fc.bias", &w[4][1]}};
            for (auto [name, t] : tensors) {
                CAPTURE(name);
                const std::vector<double>& r = ref.at(name);
                REQUIRE(r.size() == t->v.size());
                double worst = 0;
                for (size_t k = 0; k < r.size(); ++k) worst = std::max(worst, std::fabs(double(t->v[k]) - r[k]));
                CHECK(worst < 2e-5);  // fp32 against float64 over three steps of O(1) values
            }
            // The non-learned running statistics are left as loaded.
            CHECK(w[1][3].v == s.w[1][3].v);
        }
}

TEST_CASE("each SGD step follows v = m v + (dw + wd w), w -= lr v from the executor's gradients") {
    Graph g = small_net();
    Setup s = setup(g);
    const float lr = 0.1f, m = 0.9f, wd = 0.01f;
    for (const std::string& backend : backends()) {
        CAPTURE(backend);
        auto ex = make_executor(backend, g, {.mode = Mode::train, .momentum = m, .weight_decay = wd});
        ex->load(s.w);
        ex->set_input(s.x, s.labels);
        Weights w = s.w, v = s.w;
        for (auto& layer : v)
            for (HostTensor& t : layer) std::fill(t.v.begin(), t.v.end(), 0.0f);
        for (int step = 0; step < 3; ++step) {
            CAPTURE(step);
            ex->forward();
            ex->backward();
            Weights dw = ex->gradients();
            ex->update(lr);
            for (size_t i = 0; i < w.size(); ++i)
                for (size_t j = 0; j < w[i].size(); ++j)
                    for (size_t k = 0; k < dw[i][j].v.size(); ++k) {
                        double vk = double(m) * v[i][j].v[k] + (double(dw[i][j].v[k]) + double(wd) * w[i][j].v[k]);
                        v[i][j].v[k] = float(vk);
                        w[i][j].v[k] = float(double(w[i][j].v[k]) - double(lr) * vk);
                    }
            Weights got = ex->weights();
            for (size_t i = 0; i < w.size(); ++i)
                for (size_t j = 0; j < w[i].size(); ++j) CHECK(max_rel_diff(got[i][j], w[i][j]) < 1e-6);
        }
    }
}

TEST_CASE("the velocity starts at zero again at load()") {
    Graph g = small_net();
    Setup s = setup(g);
    for (const std::string& backend : backends()) {
        CAPTURE(backend);
        auto step_once = [&](Executor& ex) {
            ex.load(s.w);
            ex.set_input(s.x, s.labels);
            ex.forward();
            ex.backward();
            ex.update(0.1f);
            return ex.weights();
        };
        auto fresh = make_executor(backend, g, {.mode = Mode::train, .momentum = 0.9f, .weight_decay = 0.01f});
        Weights once = step_once(*fresh);
        auto used = make_executor(backend, g, {.mode = Mode::train, .momentum = 0.9f, .weight_decay = 0.01f});
        step_once(*used);
        used->forward();  // a second step: the velocity is now non-zero
        used->backward();
        used->update(0.1f);
        Weights again = step_once(*used);
        for (size_t i = 0; i < once.size(); ++i)
            for (size_t j = 0; j < once[i].size(); ++j) CHECK(max_rel_diff(again[i][j], once[i][j]) == 0);
    }
}

TEST_CASE("momentum adds a velocity the size of the learned tensors to the plan") {
    Graph g = small_net();
    // Learned elements: conv 54, gamma and beta 4, linear 96 + 3.
    const int64_t learned_bytes = 4 * (54 + 4 + 96 + 3);
    auto plain = make_executor("reference", g, {.mode = Mode::train});
    auto with_m = make_executor("reference", g, {.mode = Mode::train, .momentum = 0.9f});
    CHECK(with_m->planned_bytes() - plain->planned_bytes() == learned_bytes);
    for (const std::string& backend : backends()) {
        auto a = make_executor(backend, g, {.mode = Mode::train});
        auto b = make_executor(backend, g, {.mode = Mode::train, .momentum = 0.9f});
        CHECK(b->planned_bytes() - a->planned_bytes() >= learned_bytes);  // blocked layouts pad
    }
}
