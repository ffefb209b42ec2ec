// Matmul (attention) on oneDNN matmul, whose strided descriptors read an operand in any layout
// without blocks (ViT's q, k and v are strided regions of one packed tensor, layout.cpp) and
// read it transposed by swapping two strides; their gradients it writes into their regions of
// the packed tensor's gradient the same way.
// a (B..., M, L)  b (B..., L, J), or b (B..., J, L) with transpose_b  y (B..., M, J)
//
// y is written so that the permutation that alone reads it is a plain view: ViT's heads merged
// back, (N, heads, L, d) -> (N, L, heads, d), cost a copy of the whole attention output in every
// block otherwise (0.75 ms at batch 16), and oneDNN's brgemm writes those strides as fast.
#include "engine/backend/onednn/ops.h"

namespace ridge::onednn {

namespace {

// The last two dimensions swapped, through the strides.
Md transposed(const Md& md) {
    Dims dims = md.dims(), st = strides_of(md);
    size_t r = dims.size();
    std::swap(dims[r - 1], dims[r - 2]);
    std::swap(st[r - 1], st[r - 2]);
    return Md(dims, dnnl::memory::data_type::f32, st);
}

// An input as it is where oneDNN's matmul reads it in place, else a plain copy.
int operand(Plan& p, int t) {
    int v = p.value[size_t(t)];
    return matmul_reads(p.md(v)) ? v : p.value_as(t, plain(dims_of(p.shape(t))));
}

// The layout of y whose permutation by its sole reader is plain; plain if another layer reads it.
Md output_md(const Plan& p, int y) {
    const Md flat = plain(dims_of(p.shape(y)));
    const Permute* perm = nullptr;
    int readers = 0;
    for (const Node& n : p.g.nodes())
        for (int in : n.inputs)
            if (in == y) ++readers, perm = std::get_if<Permute>(&n.op);
    const size_t r = p.shape(y).size();
    // Only where the rows stay rows: a permutation that moves the last dimension would leave y
    // without a contiguous one.
    if (readers != 1 || !perm || y == p.g.output() || normalize_dim(perm->order.back(), r) != int(r) - 1)
        return flat;
    std::vector<int64_t> permuted;  // the permutation's output shape
    for (int o : perm->order) permuted.push_back(p.shape(y)[size_t(normalize_dim(o, r))]);
    Dims pst = strides_of(plain(dims_of(permuted))), st(r);
    for (size_t i = 0; i < r; ++i) st[size_t(normalize_dim(perm->order[i], r))] = pst[i];
    return Md(dims_of(p.shape(y)), dnnl::memory::data_type::f32, st);
}

// y = s a b, s applied by oneDNN as it writes y.
void matmul_into(Plan& p, int a, int b, int y, float s) {
    dnnl::matmul::desc d(p.md(a), p.md(b), p.md(y));
    dnnl::primitive_attr attr = p.attr();
    if (s != 1.0f) attr.set_output_scales(0, {s});
    p.primitive(dnnl::matmul::primitive_desc(d, attr, p.eng),
                {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, y}});
}

// The tensors the matmul multiplies, reading through the scales fused into it (fusion.h's
// MatmulScale), and the product of those scales, in double and rounded once.
struct Operands {
    int a, b;  // tensors
    float s;
};

Operands operands(const Plan& p, const Layer& l) {
    Operands o{l.x(0), l.x(1), 1.0f};
    double s = 1.0;
    for (const MatmulScale& m : p.matmul_scales) {
        if (m.matmul != l.node) continue;
        const Node& scale = p.g.nodes()[size_t(m.scale)];
        int& t = scale.output == o.a ? o.a : o.b;
        t = scale.inputs[0];
        s *= m.s;
    }
    o.s = float(s);
    return o;
}

int transposed_view(Plan& p, int m) { return p.alias(m, transposed(p.md(m))); }

}  // namespace

void forward(Plan& p, const Layer& l, const Matmul& op) {
    const Shape &as = p.shape(l.x(0)), &bs = p.shape(l.x(1));
    if (as.size() != bs.size())
        throw std::invalid_argument(
            cat("onednn: matmul of ", to_string(as), " and ", to_string(bs), " (ranks differ)"));
    const Operands o = operands(p, l);
    int a = operand(p, o.a), b = operand(p, o.b);
    int y = p.mem(output_md(p, l.n.output));
    matmul_into(p, a, op.transpose_b ? transposed_view(p, b) : b, y, o.s);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {a, b}, y};  // b as stored
}

// da = s dy b^T;  db = s a^T dy, or with transpose_b (b stored as (J,L)) db = s dy^T a. Written
// as the gradients of the tensors read through the fused scales.
void backward(Plan& p, const Layer& l, const Matmul& op) {
    const Operands o = operands(p, l);
    const Shape &as = p.shape(o.a), &bs = p.shape(o.b), &ys = p.shape(l.n.output);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const int a = s.in[0], b = s.in[1];
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(ys)));
    if (p.needs_grad(o.a)) {
        int da = p.placed_contribution(o.a);
        if (da < 0) da = p.contribution(o.a, plain(dims_of(as)));
        matmul_into(p, dy, op.transpose_b ? b : transposed_view(p, b), da, o.s);
        p.contributed(o.a, da);
    }
    if (p.needs_grad(o.b)) {
        int db = p.placed_contribution(o.b);
        if (db < 0) db = p.contribution(o.b, plain(dims_of(bs)));
        if (op.transpose_b)
            matmul_into(p, transposed_view(p, dy), a, db, o.s);
        else
            matmul_into(p, transposed_view(p, a), dy, db, o.s);
        p.contributed(o.b, db);
    }
}

}  // namespace ridge::onednn
