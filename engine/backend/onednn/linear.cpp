// Linear on oneDNN inner_product over the leading dimensions flattened, and Matmul (attention) on
// oneDNN matmul, whose strided descriptors read a transposed operand without copying it.
// Linear: x (M..., C)  w (K,C)  b (K)  y (M..., K), all plain row-major.
// Matmul: a (B..., M, L)  b (B..., L, J), or b (B..., J, L) with transpose_b  y (B..., M, J)
#include "engine/backend/onednn/ops.h"

namespace ridge::onednn {

using dnnl::prop_kind;

namespace {

struct LinearShape {
    int64_t M, C, K;
};

LinearShape linear_shape(const Plan& p, const Layer& l, const Linear& op) {
    const Shape& xs = p.shape(l.x());
    return {numel(xs) / xs.back(), xs.back(), op.K};
}

Md weights_any(const LinearShape& s) { return Md({s.K, s.C}, dnnl::memory::data_type::f32, Tag::any); }
Md bias_md(const LinearShape& s) { return Md({s.K}, dnnl::memory::data_type::f32, Tag::a); }

}  // namespace

void forward(Plan& p, const Layer& l, const Linear& op) {
    LinearShape s = linear_shape(p, l, op);
    Md x2 = plain({s.M, s.C}), y2 = plain({s.M, s.K});
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    auto d = op.bias ? dnnl::inner_product_forward::desc(prop, x2, weights_any(s), bias_md(s), y2)
                     : dnnl::inner_product_forward::desc(prop, x2, weights_any(s), y2);
    dnnl::primitive_attr attr = p.attr();
    if (l.group) attr.set_post_ops(post_ops_of(p.g, *l.group));
    dnnl::inner_product_forward::primitive_desc pd(d, attr, p.eng);

    int x = p.alias(p.value_as(l.x(), plain(dims_of(p.shape(l.x())))), x2);
    int y = group_destination(p, l, plain(dims_of(p.shape(l.y(p.g)))), x);
    Plan::Saved sv{pd, {x}, p.alias(y, y2)};
    std::vector<std::pair<int, int>> args = {
        {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, p.param_mem(l.node, 0, pd.weights_desc())}, {DNNL_ARG_DST, sv.out}};
    if (op.bias) args.push_back({DNNL_ARG_BIAS, p.param_mem(l.node, 1, bias_md(s))});
    p.primitive(pd, args);
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = sv;
}

void backward(Plan& p, const Layer& l, const Linear& op) {
    LinearShape s = linear_shape(p, l, op);
    const Plan::Saved& sv = p.saved[size_t(l.node)];
    auto fwd = hint<dnnl::inner_product_forward::primitive_desc>(sv.pd);
    Md x2 = p.md(sv.in[0]), y2 = p.md(sv.out);
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.alias(p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output)))), y2);

    if (p.needs_grad(l.x())) {
        dnnl::inner_product_backward_data::desc d(x2, weights_any(s), y2);
        dnnl::inner_product_backward_data::primitive_desc pd(d, p.attr(), p.eng, fwd);
        int w = p.as(p.param[size_t(l.node)][0], pd.weights_desc());
        int dx = p.contribution(l.x(), plain(dims_of(p.shape(l.x()))));
        p.primitive(pd, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, p.alias(dx, x2)}});
        p.contributed(l.x(), dx);
    }

    p.at(&p.bwd, l.node, Phase::wgrad);
    auto d = op.bias ? dnnl::inner_product_backward_weights::desc(x2, weights_any(s), bias_md(s), y2)
                     : dnnl::inner_product_backward_weights::desc(x2, weights_any(s), y2);
    dnnl::inner_product_backward_weights::primitive_desc pd(d, p.attr(), p.eng, fwd);
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, sv.in[0]},
                                             {DNNL_ARG_DIFF_DST, dy},
                                             {DNNL_ARG_DIFF_WEIGHTS, p.dparam_mem(l.node, 0, pd.diff_weights_desc())}};
    if (op.bias) args.push_back({DNNL_ARG_DIFF_BIAS, p.dparam_mem(l.node, 1, bias_md(s))});
    p.primitive(pd, args);
}

namespace {

// A plain tensor of shape `stored` read as a matrix stack, transposed in its last two dimensions
// or not: the strides do the transposing.
Md matrices(const Shape& stored, bool transposed) {
    Dims dims = dims_of(stored), strides(stored.size());
    int64_t st = 1;
    for (size_t i = stored.size(); i-- > 0;) strides[i] = st, st *= stored[i];
    if (transposed) {
        size_t r = stored.size();
        std::swap(dims[r - 1], dims[r - 2]);
        std::swap(strides[r - 1], strides[r - 2]);
    }
    return Md(dims, dnnl::memory::data_type::f32, strides);
}

void matmul_into(Plan& p, int a, int b, int y) {
    dnnl::matmul::desc d(p.md(a), p.md(b), p.md(y));
    p.primitive(dnnl::matmul::primitive_desc(d, p.attr(), p.eng),
                {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, y}});
}

}  // namespace

void forward(Plan& p, const Layer& l, const Matmul& op) {
    const Shape &as = p.shape(l.x(0)), &bs = p.shape(l.x(1)), &ys = p.shape(l.n.output);
    if (as.size() != bs.size())
        throw std::invalid_argument(
            cat("onednn: matmul of ", to_string(as), " and ", to_string(bs), " (ranks differ)"));
    int a = p.value_as(l.x(0), plain(dims_of(as)));
    int b = p.alias(p.value_as(l.x(1), plain(dims_of(bs))), matrices(bs, op.transpose_b));
    int y = p.mem(plain(dims_of(ys)));
    matmul_into(p, a, b, y);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {a, b}, y};
}

// da = dy b^T;  db = a^T dy, or with transpose_b (b stored as (J,L)) db = dy^T a.
void backward(Plan& p, const Layer& l, const Matmul& op) {
    const Shape &as = p.shape(l.x(0)), &bs = p.shape(l.x(1)), &ys = p.shape(l.n.output);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(ys)));
    if (p.needs_grad(l.x(0))) {
        int da = p.contribution(l.x(0), plain(dims_of(as)));
        matmul_into(p, dy, p.alias(s.in[1], matrices(bs, !op.transpose_b)), da);
        p.contributed(l.x(0), da);
    }
    if (p.needs_grad(l.x(1))) {
        int db = p.contribution(l.x(1), plain(dims_of(bs)));
        if (op.transpose_b)
            matmul_into(p, p.alias(dy, matrices(ys, true)), s.in[0], db);
        else
            matmul_into(p, p.alias(s.in[0], matrices(as, true)), dy, db);
        p.contributed(l.x(1), db);
    }
}

}  // namespace ridge::onednn
