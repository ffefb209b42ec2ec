// Add, Mul, LayerScale and PosEmbedding on oneDNN binary primitives, broadcasting the smaller
// operand (squeeze-excitation's (N,C,1,1) gate, a per-channel gamma, a (1,T,D) embedding); the
// gradient of a broadcast operand is a reduction (sum) of the full one.
#include "engine/backend/onednn/ops.h"
#include "engine/ops/norm.h"

namespace ridge::onednn {

using dnnl::algorithm;

namespace {

// s with leading 1s up to the given rank, as oneDNN broadcasting needs equal ranks.
Dims padded(const Shape& s, size_t rank) {
    Dims d(rank - s.size(), 1);
    d.insert(d.end(), s.begin(), s.end());
    return d;
}

dnnl::binary::primitive_desc binary_pd(const Plan& p, algorithm alg, const Md& a, const Md& b, const Md& y) {
    return {dnnl::binary::desc(alg, a, b, y), p.attr(), p.eng};
}

// dst = reduce_sum(src) over the dimensions dst has as 1.
void reduce_into(Plan& p, int src, int dst) {
    dnnl::reduction::desc d(algorithm::reduction_sum, p.md(src), p.md(dst), 0.0f, 0.0f);
    p.primitive(dnnl::reduction::primitive_desc(d, p.attr(), p.eng), {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
}

// The gradient of broadcast operand t: dy (or dy * other) summed down to t's shape.
void reduce_contribution(Plan& p, int t, int full, size_t rank) {
    int r = p.contribution(t, plain(dims_of(p.shape(t))));
    reduce_into(p, full, p.alias(r, plain(padded(p.shape(t), rank))));
    p.contributed(t, r);
}

// Add or Mul: the operand with the output's shape first, the other broadcast onto it.
void binary_forward(Plan& p, const Layer& l, algorithm alg) {
    const Shape& ys = p.shape(l.n.output);
    size_t full = p.shape(l.x(0)) == ys ? 0 : 1;
    if (p.shape(l.x(full)) != ys)
        throw std::invalid_argument(cat("onednn: ", to_string(p.shape(l.x(0))), " and ", to_string(p.shape(l.x(1))),
                                        " broadcast onto each other; one operand must have the output's shape"));
    int t = l.x(1 - full);
    int a = p.value[size_t(l.x(full))], b;
    dnnl::binary::primitive_desc pd;
    if (p.shape(t) == ys) {
        b = p.value_as(t, p.md(a));
        pd = binary_pd(p, alg, p.md(a), p.md(b), p.md(a));
    } else {
        // Broadcast in the operand's own layout when the primitive takes it, else a plain copy.
        b = p.value[size_t(t)];
        if (p.shape(t).size() == ys.size()) try {
                pd = binary_pd(p, alg, p.md(a), p.md(b), p.md(a));
            } catch (const dnnl::error&) {
            }
        if (!pd) {
            b = p.alias(p.value_as(t, plain(dims_of(p.shape(t)))), plain(padded(p.shape(t), ys.size())));
            pd = binary_pd(p, alg, p.md(a), p.md(b), p.md(a));
        }
    }
    int y = p.mem(p.md(a));
    p.primitive(pd, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}});
    p.value[size_t(l.n.output)] = y;
    Plan::Saved s{pd, {-1, -1}, y};
    s.in[full] = a;
    s.in[1 - full] = b;
    p.saved[size_t(l.node)] = s;
}

}  // namespace

void forward(Plan& p, const Layer& l, const Add&) { binary_forward(p, l, algorithm::binary_add); }

// The gradient passes to both operands unchanged (summed for a broadcast one). One full-shape
// operand may take dy's buffer as its gradient; the other gets a copy or adds it in.
void backward(Plan& p, const Layer& l, const Add&) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.dy(l.n.output);
    size_t rank = p.shape(l.n.output).size();
    for (size_t i = 0; i < 2; ++i)
        if (p.needs_grad(l.x(i)) && p.shape(l.x(i)) != p.shape(l.n.output)) reduce_contribution(p, l.x(i), dy, rank);
    bool taken = false;
    for (size_t i = 0; i < 2; ++i) {
        int t = l.x(i);
        if (!p.needs_grad(t) || p.shape(t) != p.shape(l.n.output)) continue;
        bool take = !taken && p.fresh(t);
        p.pass(t, dy, take);
        taken = taken || take;
    }
}

void forward(Plan& p, const Layer& l, const Mul&) { binary_forward(p, l, algorithm::binary_mul); }

// d a = dy * b; for a broadcast a, summed: reduce(dy * b).
void backward(Plan& p, const Layer& l, const Mul&) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Shape& ys = p.shape(l.n.output);
    size_t full = p.shape(l.x(0)) == ys ? 0 : 1;
    Md m = p.md(s.in[full]);
    int dy = p.as(p.dy(l.n.output), m);
    for (size_t i = 0; i < 2; ++i) {
        int t = l.x(i), other = s.in[1 - i];
        if (!p.needs_grad(t)) continue;
        if (p.shape(t) == ys) {
            int dx = p.contribution(t, m);
            p.primitive(binary_pd(p, algorithm::binary_mul, m, p.md(other), m),
                        {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, other}, {DNNL_ARG_DST, dx}});
            p.contributed(t, dx);
        } else {
            int prod = p.mem(m);
            p.primitive(binary_pd(p, algorithm::binary_mul, m, m, m),
                        {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, other}, {DNNL_ARG_DST, prod}});
            reduce_contribution(p, t, prod, ys.size());
        }
    }
}

namespace {
// gamma (C) as a broadcast operand: C at the scaled dimension, 1 elsewhere.
Md gamma_md(const Plan& p, const Layer& l, const LayerScale& op) {
    const Shape& xs = p.shape(l.x());
    int d = normalize_dim(op.dim, xs.size());
    Dims dims(xs.size(), 1);
    dims[size_t(d)] = xs[size_t(d)];
    return plain(dims);
}
}  // namespace

void forward(Plan& p, const Layer& l, const LayerScale& op) {
    int x = p.value[size_t(l.x())];
    int gamma = p.param_mem(l.node, 0, gamma_md(p, l, op));
    auto pd = binary_pd(p, algorithm::binary_mul, p.md(x), p.md(gamma), p.md(x));
    int y = p.mem(p.md(x));
    p.primitive(pd, {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, gamma}, {DNNL_ARG_DST, y}});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, {x, gamma}, y};
}

void backward(Plan& p, const Layer& l, const LayerScale& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    Md m = p.md(s.in[0]);
    int x = s.in[0], gamma = s.in[1];
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), m);
    if (p.needs_grad(l.x())) {
        int dx = p.contribution(l.x(), m);
        p.primitive(binary_pd(p, algorithm::binary_mul, m, p.md(gamma), m),
                    {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, gamma}, {DNNL_ARG_DST, dx}});
        p.contributed(l.x(), dx);
    }
    p.at(&p.bwd, l.node, Phase::wgrad);
    int prod = p.mem(m);
    p.primitive(binary_pd(p, algorithm::binary_mul, m, m, m),
                {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, x}, {DNNL_ARG_DST, prod}});
    reduce_into(p, prod, p.dparam_mem(l.node, 0, gamma_md(p, l, op)));
}

// x (N,T,D) + e (T,D), e read as (1,T,D).
void forward(Plan& p, const Layer& l, const PosEmbedding&) {
    const Shape& xs = p.shape(l.x());
    int x = p.value[size_t(l.x())];
    int e = p.param_mem(l.node, 0, plain({1, xs[1], xs[2]}));
    auto pd = binary_pd(p, algorithm::binary_add, p.md(x), p.md(e), p.md(x));
    int y = p.mem(p.md(x));
    p.primitive(pd, {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, e}, {DNNL_ARG_DST, y}});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, {x, e}, y};
}

void backward(Plan& p, const Layer& l, const PosEmbedding&) {
    const Shape& xs = p.shape(l.x());
    int dy = p.dy(l.n.output);
    p.at(&p.bwd, l.node, Phase::wgrad);
    reduce_into(p, dy, p.dparam_mem(l.node, 0, plain({1, xs[1], xs[2]})));
    p.at(&p.bwd, l.node, Phase::dgrad);
    if (p.needs_grad(l.x())) p.pass(l.x(), dy, true);
}

}  // namespace ridge::onednn
