#include "engine/backend/fold.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

namespace {

// The node that produces t when it is an op of type Op, else null.
template <class Op>
const Op* made_by(const Graph& g, int t, int* node = nullptr) {
    const int p = g.tensor(t).producer;
    if (node) *node = p;
    return p < 0 ? nullptr : std::get_if<Op>(&g.nodes()[size_t(p)].op);
}

}  // namespace

bool foldable_scale(double s) { return std::isnormal(s) && std::fabs(s) <= 1e6 && std::fabs(s) >= 1e-6; }

std::vector<ScaleFold> scale_folds(const Graph& g) {
    const auto& nodes = g.nodes();
    std::vector<std::vector<int>> readers(size_t(g.output()) + 1);
    for (size_t i = 0; i < nodes.size(); ++i)
        for (int t : nodes[i].inputs) readers[size_t(t)].push_back(int(i));
    auto only_reader = [&](int t, int node) {
        return t != g.output() && readers[size_t(t)].size() == 1 && readers[size_t(t)][0] == node;
    };
    std::vector<ScaleFold> folds;
    for (size_t i = 0; i < nodes.size(); ++i) {
        const auto* scale = std::get_if<Scale>(&nodes[i].op);
        if (!scale || !foldable_scale(scale->s)) continue;
        int sel_node, perm_node, resh_node, lin_node;
        const int picked = nodes[i].inputs[0];
        const auto* sel = made_by<Select>(g, picked, &sel_node);
        if (!sel || !only_reader(picked, int(i))) continue;
        const int permuted = nodes[size_t(sel_node)].inputs[0];
        const auto* perm = made_by<Permute>(g, permuted, &perm_node);
        if (!perm || permuted == g.output()) continue;
        const int reshaped = nodes[size_t(perm_node)].inputs[0];
        if (!made_by<Reshape>(g, reshaped, &resh_node) || !only_reader(reshaped, perm_node)) continue;
        const int out = nodes[size_t(resh_node)].inputs[0];
        if (!made_by<Linear>(g, out, &lin_node) || !only_reader(out, resh_node)) continue;

        const Shape &ls = g.tensor(out).shape, &rs = g.tensor(reshaped).shape;
        const size_t lead = ls.size() - 1;  // dimensions before the features
        if (rs.size() <= ls.size() || !std::equal(ls.begin(), ls.begin() + long(lead), rs.begin())) continue;
        const int d = normalize_dim(sel->dim, g.tensor(permuted).shape.size());
        if (normalize_dim(perm->order[size_t(d)], rs.size()) != int(lead)) continue;
        // A select's index is within its dimension (shape inference refuses any other).
        bool alone = true;  // the permutation read only by selects of dimension d, one of them at index
        for (int r : readers[size_t(permuted)]) {
            const auto* other = std::get_if<Select>(&nodes[size_t(r)].op);
            if (!other || normalize_dim(other->dim, g.tensor(permuted).shape.size()) != d ||
                (other->index == sel->index && r != sel_node))
                alone = false;
        }
        if (!alone) continue;
        const int64_t count = ls.back() / rs[lead];
        folds.push_back({int(i), lin_node, sel->index * count, count, scale->s});
    }
    return folds;
}

std::vector<HostTensor> fold_scale(std::vector<HostTensor> linear, const ScaleFold& f) {
    HostTensor& w = linear.at(0);
    if (w.shape.size() != 2 || w.shape[0] < f.first + f.count)
        throw std::invalid_argument(cat("fold_scale: a linear's weight (K, C) with K >= ", f.first + f.count,
                                        ", not ", to_string(w.shape)));
    const int64_t C = w.size() / w.shape[0];
    for (int64_t k = f.first; k < f.first + f.count; ++k) {
        for (int64_t c = 0; c < C; ++c) {
            float& v = w.v[size_t(k * C + c)];
            v = float(double(v) * f.s);
        }
        if (linear.size() > 1 && !linear[1].v.empty()) linear[1].v[size_t(k)] = float(double(linear[1].v[size_t(k)]) * f.s);
    }
    return linear;
}

std::string describe(const Graph& g, int node) {
    if (node < 0) return "the loss";
    const Node& n = g.nodes()[size_t(node)];
    std::string in;
    for (int t : n.inputs) in += (in.empty() ? "" : ", ") + to_string(g.tensor(t).shape);
    return cat("layer ", n.name, " (", op_kind(n.op), ", input ", in, ")");
}

}  // namespace ridge
