#pragma once
// Running one executor on seeded inputs and comparing what it produced with another's: shared by
// the oneDNN and cuDNN tests, which both check against the reference executor.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>

#include "engine/backend/executor.h"
#include "engine/backend/reference/reference.h"
#include "engine/analysis.h"
#include "engine/graph.h"
#include "netdefs/zoo.h"

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

// ---- every tensor against the double-precision reference ------------------------------------
//
// A float32 training step is compared with the same step in double (make_reference64), tensor by
// tensor: the output, the loss, every learned tensor's gradient and the input gradient. How far a
// correct float32 computation may land from the double one depends on the net: rounding is
// amplified by batchnorm over few values and by sums that cancel (VGG's early weight gradients
// at initialization are 1e-3 of their terms), and a ReLU or max-pool input within rounding
// distance of its kink may take either side, which moves gradients upstream by up to percents.
// So the tolerance is measured, per tensor, as the spread of float32-sized errors:
// - the float-sums reference (make_reference_float_sums): the reference kernels with every sum
//   accumulated in float in plain order, as inexact as a float32 library may be;
// - two probes: the double step with every weight and input element multiplied by 1 + s*eta*U
//   (U uniform in [-1,1), the same draws, s = +1 and -1: whichever side of a kink a float32 run
//   lands on, one probe lands there too), eta such that the probes' output moves four times as
//   far from double as the farthest run's (eta from a first forward pass perturbed at 4u, the
//   output's response being linear in eta; never below 4u).
// A float32 run passes when, for every tensor x (norms over the tensor),
//   |x - x64| <= k * max(|float sums - x64|, |probe+ - x64|, |probe- - x64|) + floor,
// floor = phi * (|x64| + |f64| * sqrt(n / nf)), f the first gradient of the same layer (nf
// elements): a float32 result differs from double by its own rounding at least, and a gradient
// that is exactly zero in double (a conv bias followed by a batchnorm) is rounding noise the size
// of its layer's other gradient times u in float32.
struct F64Tolerance {
    double k = 10;      // see test_gradients.cpp for the worst ratio measured on each net
    double phi = 1e-4;  // u = 6e-8 accumulated over a few hundred roundings
};

// One float32 training step, as much of it as the comparison needs (no copy of the updated weights).
struct Run32 {
    std::string what;
    HostTensor out, loss;  // loss: (1)
    Weights grads;
    HostTensor dx;
};

inline Run32 run32(Executor& ex, const Inputs& in, std::string what) {
    ex.prepare();
    ex.load(in.w);
    ex.set_input(in.x, in.labels);
    ex.forward();
    Run32 r;
    r.what = std::move(what);
    r.out = ex.output();
    r.loss = HostTensor({1});
    r.loss.v[0] = ex.backward();
    r.grads = ex.gradients();
    r.dx = ex.input_gradient();
    return r;
}

inline Run32 run32(const std::string& backend, const Graph& g, const Inputs& in, bool fused = true,
                   Precision p = Precision::fp32) {
    auto ex = make_executor(backend, g, {.mode = Mode::train, .fused = fused, .precision = p});
    return run32(*ex, in, backend == "reference" ? backend : cat(backend, fused ? " fused" : " unfused"));
}

template <class T>
double distance(const HostTensorT<T>& a, const HostTensor64& b) {
    REQUIRE(a.shape == b.shape);
    double d = 0;
    for (size_t i = 0; i < b.v.size(); ++i) {
        const double e = double(a.v[i]) - b.v[i];
        d += e * e;
    }
    return std::sqrt(d);
}

inline double norm(const HostTensor64& t) {
    double n = 0;
    for (double v : t.v) n += v * v;
    return std::sqrt(n);
}

// The tensors compared, in a fixed order: the output, the loss (one element), the input gradient
// (when the graph's input needs one), every learned tensor's gradient.
struct Step64 {
    std::vector<std::string> names;
    std::vector<HostTensor64> tensors;
    std::vector<size_t> first;  // per tensor: the first gradient of the same layer (itself if none)
};

// The double reference after its forward pass, on the weights and input each multiplied by
// 1 + sign * eta * U (U uniform in [-1,1), fixed draws) when eta > 0.
inline std::unique_ptr<Reference64> forward64(const Graph& g, const Inputs& in, double eta = 0, double sign = 0) {
    Weights64 w = convert<double>(in.w);
    HostTensor64 x = convert<double>(in.x);
    if (eta > 0) {
        auto perturb = [&](std::vector<double>& v, uint64_t seed) {
            Rng rng(seed);
            for (double& e : v) e *= 1 + sign * eta * (double(rng.next() >> 11) * 0x1p-52 - 1);
        };
        uint64_t seed = 1000;
        for (auto& layer : w)
            for (HostTensor64& t : layer) perturb(t.v, ++seed);
        perturb(x.v, 999);
    }
    auto ex = make_reference64(g, Mode::train);
    ex->load64(std::move(w));
    ex->set_input64(x, in.labels);
    ex->forward();
    return ex;
}

// A double step's tensors in Step64's order, read in place from the executor after its backward
// (loss: its loss as a tensor of one element).
inline std::vector<const HostTensor64*> tensors_of(const Graph& g, const Reference64& ex, const HostTensor64& loss) {
    std::vector<const HostTensor64*> t = {&ex.output64(), &loss};
    if (g.tensor(0).requires_grad) t.push_back(&ex.input_gradient64());
    for (const auto& layer : ex.gradients64())
        for (const HostTensor64& x : layer)
            if (!x.v.empty()) t.push_back(&x);
    return t;
}

inline Step64 step64(const Graph& g, const Inputs& in) {
    auto ex = forward64(g, in);
    HostTensor64 loss({1});
    loss.v[0] = ex->backward64();
    Step64 s;
    for (const HostTensor64* t : tensors_of(g, *ex, loss)) s.tensors.push_back(*t);
    s.names = {"output", "loss"};
    s.first = {0, 1};
    if (g.tensor(0).requires_grad) {
        s.names.push_back("input gradient");
        s.first.push_back(2);
    }
    const Weights64& grads = ex->gradients64();
    for (size_t i = 0; i < grads.size(); ++i) {
        const size_t first = s.names.size();
        for (size_t j = 0; j < grads[i].size(); ++j)
            if (!grads[i][j].v.empty()) {
                s.names.push_back(cat("gradient of ", g.nodes()[i].name, " #", j));
                s.first.push_back(first);
            }
    }
    return s;
}

// A float32 run's tensors in Step64's order.
inline std::vector<const HostTensor*> tensors_of(const Graph& g, const Run32& r) {
    std::vector<const HostTensor*> t = {&r.out, &r.loss};
    if (g.tensor(0).requires_grad) t.push_back(&r.dx);
    for (const auto& layer : r.grads)
        for (const HostTensor& x : layer)
            if (!x.v.empty()) t.push_back(&x);
    return t;
}

struct F64Summary {
    double eta = 0;
    double worst_ratio = 0;  // max over tensors and runs of (error - floor) / spread: k must exceed it
    std::string worst;
    // The relative error each tensor's tolerance admits, (k spread + floor) / |x64|: its median and
    // largest over the gradient tensors, what the check can resolve on this net.
    double median_allowed = 0, max_allowed = 0;
};

// Runs the double step and the float32 reference, then each backend (name, fused), then the
// yardsticks (float sums, the probes), and checks every tensor of the float32 reference and of
// each backend. `parallel` runs two single-threaded references at a time (each holds the net's
// weights and gradients; in double for the double ones).
inline F64Summary check_against_f64(const Graph& g, const Inputs& in,
                                    const std::vector<std::pair<std::string, bool>>& backends, bool parallel,
                                    F64Tolerance tol = {}) {
    auto maybe_async = [&](auto f) { return std::async(parallel ? std::launch::async : std::launch::deferred, f); };
    auto ref = maybe_async([&] { return run32("reference", g, in); });
    const Step64 exact = step64(g, in);
    const size_t T = exact.tensors.size();
    auto distances = [&](const std::vector<const HostTensor*>& t) {
        REQUIRE(t.size() == T);
        std::vector<double> d(T);
        for (size_t k = 0; k < T; ++k) d[k] = distance(*t[k], exact.tensors[k]);
        return d;
    };
    // Each run is kept as its distances only: VGG's gradients are 0.5 GB a run.
    std::vector<std::string> what;
    std::vector<std::vector<double>> dist;
    double drift = 0;
    auto add = [&](const Run32& r) {
        what.push_back(r.what);
        dist.push_back(distances(tensors_of(g, r)));
        drift = std::max(drift, dist.back()[0] / norm(exact.tensors[0]));
    };
    add(ref.get());
    for (const auto& [name, fused] : backends) add(run32(name, g, in, fused));
    F64Summary sum;
    auto sums_run = maybe_async([&] {
        auto ex = make_reference_float_sums(g, Mode::train);
        Run32 r = run32(*ex, in, "float sums");
        return distances(tensors_of(g, r));
    });
    // The probes' size: a first forward pass perturbed at eta0 = 4u gives the output's response,
    // linear in eta while no kink is crossed; eta is then set for an output error four times the
    // runs' largest. Only the output is needed there, so that pass has no backward (every zoo net
    // gets an eta above eta0, so a whole step at eta0 would be thrown away).
    auto probe = [&](double eta, double sign) {
        auto ex = forward64(g, in, eta, sign);
        HostTensor64 loss({1});
        loss.v[0] = ex->backward64();
        const std::vector<const HostTensor64*> t = tensors_of(g, *ex, loss);
        REQUIRE(t.size() == T);
        std::vector<double> d(T);
        for (size_t k = 0; k < T; ++k) d[k] = distance(*t[k], exact.tensors[k]);
        return d;
    };
    const double eta0 = 0x1p-22;
    const double response =
        distance(forward64(g, in, eta0, 1)->output64(), exact.tensors[0]) / norm(exact.tensors[0]) / eta0;
    sum.eta = std::max(eta0, 4 * drift / std::max(response, 1e-300));
    const std::vector<double> plus = probe(sum.eta, 1);
    const std::vector<double> sums = sums_run.get();
    const std::vector<double> minus = probe(sum.eta, -1);

    std::vector<double> allowed;
    for (size_t r = 0; r < dist.size(); ++r)
        for (size_t k = 0; k < T; ++k) {
            const HostTensor64& x = exact.tensors[k];
            const HostTensor64& first = exact.tensors[exact.first[k]];
            const double floor =
                tol.phi * (norm(x) + norm(first) * std::sqrt(double(x.v.size()) / double(first.v.size())));
            const double spread = std::max({sums[k], plus[k], minus[k]});
            if (r == 0 && exact.first[k] >= 2) allowed.push_back((tol.k * spread + floor) / std::max(norm(x), 1e-300));
            const double ratio = (dist[r][k] - floor) / std::max(spread, 1e-300);
            if (ratio > sum.worst_ratio) {
                sum.worst_ratio = ratio;
                sum.worst = cat(what[r], ", ", exact.names[k]);
            }
            INFO(g.model(), ", ", what[r], ": ", exact.names[k], " is ", dist[r][k], " from double (norm ", norm(x),
                 "); float sums ", sums[k], ", probes ", plus[k], " and ", minus[k], " (eta ", sum.eta, "), floor ",
                 floor);
            CHECK(dist[r][k] <= tol.k * spread + floor);
        }
    if (!allowed.empty()) {
        std::sort(allowed.begin(), allowed.end());
        sum.median_allowed = allowed[allowed.size() / 2];
        sum.max_allowed = allowed.back();
    }
    return sum;
}

// The zoo at the shapes check_zoo_against_f64 runs it, or shard i of n of it when RIDGE_ZOO_SHARD
// is "i/n": nets in order of their training FLOPs there, largest first, each to the shard with the
// fewest so far, so the shards take about equal times side by side under ctest -j (the double
// reference steps are most of the time, and those follow the FLOPs).
inline std::vector<std::pair<const ZooEntry*, Graph>> zoo_at_test_shapes() {
    const char* only = std::getenv("RIDGE_NETS");
    std::vector<std::pair<const ZooEntry*, Graph>> nets;
    for (const ZooEntry& e : zoo()) {
        if (only && cat(",", only, ",").find(cat(",", e.name, ",")) == std::string::npos) continue;
        CAPTURE(e.name);
        const int64_t side = std::max<int64_t>(32, min_resolution(e));
        nets.emplace_back(&e, build(e, 4, side, side));
    }
    REQUIRE_MESSAGE(!nets.empty(), "RIDGE_NETS names no zoo net");
    const char* shard = std::getenv("RIDGE_ZOO_SHARD");
    if (!shard || !*shard) return nets;
    int i = 0, n = 0;
    char end = 0;
    REQUIRE_MESSAGE((std::sscanf(shard, "%d/%d%c", &i, &n, &end) == 2 && n >= 1 && i >= 1 && i <= n),
                    "RIDGE_ZOO_SHARD is ", std::string(shard), ", not i/n with 1 <= i <= n");
    std::vector<std::pair<int64_t, size_t>> order;
    for (size_t k = 0; k < nets.size(); ++k) {
        const Counts& c = analyze(nets[k].second, DType::fp32).totals;
        order.push_back({c.fwd_flops + c.bwd_flops(), k});
    }
    std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::vector<int64_t> load(size_t(n), 0);
    std::vector<bool> mine(nets.size(), false);
    for (const auto& [flops, k] : order) {
        const size_t s = size_t(std::min_element(load.begin(), load.end()) - load.begin());
        load[s] += flops;
        mine[k] = s == size_t(i - 1);
    }
    std::vector<std::pair<const ZooEntry*, Graph>> picked;
    for (size_t k = 0; k < nets.size(); ++k)
        if (mine[k]) picked.push_back(std::move(nets[k]));
    REQUIRE_MESSAGE(!picked.empty(), "shard ", std::string(shard), " of ", nets.size(), " nets is empty");
    return picked;
}

// Every zoo net (or those RIDGE_NETS lists, comma-separated; or a shard, above) at batch 4 and the
// larger of 32x32 and its smallest input, so that every batchnorm normalizes at least 4 values per
// channel; nets of more than 30 M parameters run their double steps one at a time (VGG's take 3 GB
// each).
inline void check_zoo_against_f64(const std::vector<std::pair<std::string, bool>>& backends) {
    for (auto& [entry, g] : zoo_at_test_shapes()) {
        const ZooEntry& e = *entry;
        CAPTURE(e.name);
        const int64_t side = g.input_shape()[2];
        const int64_t params = analyze(g, DType::fp32).totals.params;
        F64Summary s = check_against_f64(g, inputs(g, 11), backends, params < 30'000'000);
        MESSAGE(e.name, " at ", side, "x", side, ": eta ", s.eta, ", worst (error - floor) / spread ", s.worst_ratio,
                " (", s.worst, "); relative error admitted: median ", s.median_allowed, ", max ", s.max_allowed);
    }
}

}  // namespace exec_compare
