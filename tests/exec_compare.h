#pragma once
// Running one executor on seeded inputs and comparing what it produced with another's: shared by
// the oneDNN and cuDNN tests, which both check against the reference executor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "engine/backend/executor.h"
#include "engine/graph.h"

namespace exec_compare {

using namespace ridge;

constexpr float lr = 0.1f;

struct Result {
    HostTensor out;
    float loss = 0;
    Weights grads;
    HostTensor dx;
    Weights after;  // weights after one SGD step
};

struct Inputs {
    Weights w;
    HostTensor x;
    std::vector<int32_t> labels;
};

inline Inputs inputs(const Graph& g, uint64_t seed) {
    const Shape& out = g.tensor(g.output()).shape;
    return {init_weights(g, seed), random_input(g.input_shape(), seed + 1),
            random_labels(g.input_shape()[0], numel(out) / out[0], seed + 2)};
}

// Inference: the output. Training: also the loss, every gradient and the weights after one step.
inline Result run(const std::string& backend, const Graph& g, Mode mode, bool fused, const Inputs& in,
                  Precision p = Precision::fp32, bool cuda_graph = false) {
    auto ex = make_executor(backend, g, {.mode = mode, .fused = fused, .precision = p, .cuda_graph = cuda_graph});
    ex->prepare();
    ex->load(in.w);
    ex->set_input(in.x, in.labels);
    ex->forward();
    Result r;
    r.out = ex->output();
    if (mode == Mode::train) {
        r.loss = ex->backward();
        r.grads = ex->gradients();
        r.dx = ex->input_gradient();
        ex->update(lr);
        r.after = ex->weights();
    }
    return r;
}

inline void check_close(const HostTensor& a, const HostTensor& b, double tol, const std::string& what) {
    INFO(what);
    REQUIRE(a.shape == b.shape);
    CHECK(max_rel_diff(a, b) <= tol);
}

inline void check_close(const Graph& g, const Weights& a, const Weights& b, double tol, const std::string& what) {
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
        REQUIRE(a[i].size() == b[i].size());
        for (size_t j = 0; j < a[i].size(); ++j)
            check_close(a[i][j], b[i][j], tol, cat(what, " of ", g.nodes()[i].name, " #", j));
    }
}

// What one SGD step from `w` with the executor's own gradients must give.
inline Weights sgd_step(Weights w, const Weights& grads) {
    for (size_t i = 0; i < w.size(); ++i)
        for (size_t j = 0; j < w[i].size(); ++j)
            for (size_t k = 0; k < grads[i][j].v.size(); ++k) w[i][j].v[k] -= lr * grads[i][j].v[k];
    return w;
}

// A graph of one layer (or a short chain) on an input that requires a gradient.
template <class F>
Graph fragment(const std::string& name, Shape x, F body) {
    Graph g(name);
    body(g.input(std::move(x), true));
    return g;
}

// ||a - b|| / ||b|| over every tensor of every layer together.
inline double global_rel_l2(const Weights& a, const Weights& b) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i)
        for (size_t j = 0; j < a[i].size(); ++j)
            for (size_t k = 0; k < a[i][j].v.size(); ++k) {
                double d = double(a[i][j].v[k]) - double(b[i][j].v[k]);
                diff += d * d;
                norm += double(b[i][j].v[k]) * double(b[i][j].v[k]);
            }
    return std::sqrt(diff / std::max(norm, 1e-300));
}

}  // namespace exec_compare
