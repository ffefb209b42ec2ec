#include "engine/backend/fold.h"

#include <cmath>

#include "engine/op.h"
#include "engine/shape.h"

namespace ridge {

std::vector<int> batchnorm_folds(const Graph& g) {
    const auto& nodes = g.nodes();
    std::vector<int> readers(size_t(g.output()) + 1, 0);
    for (const Node& n : nodes)
        for (int t : n.inputs) ++readers[size_t(t)];
    std::vector<int> into(nodes.size(), -1);
    for (size_t i = 0; i < nodes.size(); ++i) {
        if (!std::holds_alternative<BatchNorm>(nodes[i].op)) continue;
        int x = nodes[i].inputs[0], prod = g.tensor(x).producer;
        if (prod < 0 || !std::holds_alternative<Conv2d>(nodes[size_t(prod)].op)) continue;
        if (readers[size_t(x)] != 1 || x == g.output()) continue;
        into[i] = prod;
    }
    return into;
}

FoldedConv fold_batchnorm(const std::vector<HostTensor>& conv, const std::vector<HostTensor>& bn) {
    constexpr double eps = 1e-5;  // executor.h: batchnorm's epsilon in every backend
    FoldedConv f{conv.at(0), HostTensor({conv.at(0).shape[0]})};
    const HostTensor &gamma = bn.at(0), &beta = bn.at(1), &mean = bn.at(2), &var = bn.at(3);
    int64_t K = f.weight.shape[0], per = f.weight.size() / K;
    for (int64_t k = 0; k < K; ++k) {
        double s = double(gamma.v[size_t(k)]) / std::sqrt(double(var.v[size_t(k)]) + eps);
        for (int64_t e = 0; e < per; ++e) {
            float& w = f.weight.v[size_t(k * per + e)];
            w = float(double(w) * s);
        }
        double b = conv.size() > 1 ? double(conv[1].v[size_t(k)]) : 0.0;
        f.bias.v[size_t(k)] = float((b - double(mean.v[size_t(k)])) * s + double(beta.v[size_t(k)]));
    }
    return f;
}

std::string describe(const Graph& g, int node) {
    if (node < 0) return "the loss";
    const Node& n = g.nodes()[size_t(node)];
    std::string in;
    for (int t : n.inputs) in += (in.empty() ? "" : ", ") + to_string(g.tensor(t).shape);
    return cat("layer ", n.name, " (", op_kind(n.op), ", input ", in, ")");
}

}  // namespace ridge
