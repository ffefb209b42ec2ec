// Matmul (attention) on oneDNN matmul, whose strided descriptors read a transposed operand without
// copying it.
// a (B..., M, L)  b (B..., L, J), or b (B..., J, L) with transpose_b  y (B..., M, J), all plain.
#include "engine/backend/onednn/ops.h"

namespace ridge::onednn {

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
