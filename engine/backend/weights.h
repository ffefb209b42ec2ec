#pragma once
// Seeded weights, inputs and labels: every executor starts from the same numbers, so their
// results can be compared element by element.
#include "engine/backend/host_tensor.h"
#include "engine/graph.h"

namespace ridge {

// Every layer's tensors, [node index][i] in the order of op_params(); empty for layers without.
using Weights = std::vector<std::vector<HostTensor>>;
using Weights64 = std::vector<std::vector<HostTensor64>>;  // the double-precision reference's

template <class U, class T>
std::vector<std::vector<HostTensorT<U>>> convert(const std::vector<std::vector<HostTensorT<T>>>& w) {
    std::vector<std::vector<HostTensorT<U>>> out(w.size());
    for (size_t i = 0; i < w.size(); ++i)
        for (const HostTensorT<T>& t : w[i]) out[i].push_back(convert<U>(t));
    return out;
}

// Uniform in +-1/sqrt(fan-in) for weights and biases (PyTorch's default scale, so activations
// stay O(1) through deep nets); gamma in [0.5, 1.5), beta and running mean in [-0.1, 0.1),
// running variance in [0.5, 1.5), tokens and embeddings in [-0.1, 0.1).
Weights init_weights(const Graph& g, uint64_t seed);

HostTensor random_input(const Shape& s, uint64_t seed);  // uniform in [-1, 1)
std::vector<int32_t> random_labels(int64_t N, int64_t classes, uint64_t seed);

}  // namespace ridge
