#include "engine/backend/weights.h"

#include <cmath>

namespace ridge {

Weights init_weights(const Graph& g, uint64_t seed) {
    Weights w(g.nodes().size());
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const Node& n = g.nodes()[i];
        std::vector<ParamSpec> specs = g.params(n);
        // fan-in of the layer's weight: every element of it but the output dimension
        float bound = 0.1f;
        if (!specs.empty() && specs[0].name == "weight")
            bound = 1.0f / std::sqrt(float(numel(specs[0].shape) / specs[0].shape[0]));
        for (size_t j = 0; j < specs.size(); ++j) {
            HostTensor t(specs[j].shape);
            const std::string& p = specs[j].name;
            uint64_t s = seed * 1000003u + i * 16 + j;
            if (p == "weight" || p == "bias") fill_uniform(t, -bound, bound, s);
            else if (p == "gamma" || p == "running_var") fill_uniform(t, 0.5f, 1.5f, s);
            else fill_uniform(t, -0.1f, 0.1f, s);
            w[i].push_back(std::move(t));
        }
    }
    return w;
}

HostTensor random_input(const Shape& s, uint64_t seed) {
    HostTensor t(s);
    fill_uniform(t, -1.0f, 1.0f, seed);
    return t;
}

std::vector<int32_t> random_labels(int64_t N, int64_t classes, uint64_t seed) {
    Rng r(seed);
    std::vector<int32_t> y(static_cast<size_t>(N));
    for (auto& v : y) v = int32_t(r.next() % uint64_t(classes));
    return y;
}

}  // namespace ridge
