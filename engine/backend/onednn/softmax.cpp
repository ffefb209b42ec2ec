// Softmax on oneDNN softmax, in the input's layout; along the last dimension of a plain tensor
// (vit's attention weights) forward runs kernels/simd's, about twice as fast (0.25 against 0.49 ms
// a layer at batch 1) and there on every instruction set; backward differentiates from the output,
// on kernels/simd where oneDNN has only its reference (without AVX-512). The primitive descriptor
// is made either way: backward's is built from it. In inference the kernel writes over its input
// where nothing reads that after (vit's attention weights), so a row is written where it was just
// read, in cache, not into lines of another buffer read in first: with the kernel's NaN-free path,
// vit_b_16's 12 softmaxes at batch 8 in `ridge bench`'s per-layer pass, 3 alternated pairs on the
// 2-core Zen 5, 1.15-1.44 -> 0.96-1.00 ms a layer (bound 0.30; over 4x it in 12, 2 and 12 of
// them before, none after).
// x (any)  y (same shape)
#include "engine/backend/onednn/ops.h"
#include "engine/ops/norm.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::prop_kind;

void forward(Plan& p, const Layer& l, const Softmax& op) {
    int axis = normalize_dim(op.dim, p.shape(l.x()).size());
    int x = p.value[size_t(l.x())];
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    dnnl::softmax_forward::desc d(prop, p.md(x), axis);
    dnnl::softmax_forward::primitive_desc pd(d, p.attr(), p.eng);
    const Shape& xs = p.shape(l.x());
    int y;
    if (axis == int(xs.size()) - 1 && p.md(x) == canonical(plain(dims_of(xs))) && pd.dst_desc() == p.md(x)) {
        const int64_t n = xs.back(), rows = numel(xs) / n;
        y = output_over(p, l, x, l.x(), p.md(x));
        p.kernel("softmax_forward",
                 [rows, n](const std::vector<float*>& a) { simd::softmax_forward(a[0], a[1], rows, n); }, {x, y});
    } else {
        y = p.mem(pd.dst_desc());
        p.primitive(pd, {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}});
    }
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, {x}, y};
}

void backward(Plan& p, const Layer& l, const Softmax& op) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int axis = normalize_dim(op.dim, p.shape(l.x()).size());
    const Plan::Saved& s = p.saved[size_t(l.node)];
    Md m = p.md(s.out);
    dnnl::softmax_backward::desc d(m, m, axis);
    dnnl::softmax_backward::primitive_desc pd(d, p.attr(), p.eng, hint<dnnl::softmax_forward::primitive_desc>(s.pd));
    int dy = p.as(p.dy(l.n.output), m);
    int dx = p.contribution(l.x(), m);
    const Shape& ys = p.shape(l.n.output);
    if (reference_impl(pd) && axis == int(ys.size()) - 1 && m == canonical(plain(dims_of(ys)))) {
        // oneDNN 2.6's jit softmax backward needs AVX-512; elsewhere rows along the last dimension
        // run kernels/simd.
        const int64_t n = ys.back(), rows = numel(ys) / n;
        p.kernel("softmax_backward",
                 [rows, n](const std::vector<float*>& a) { simd::softmax_backward(a[0], a[1], a[2], rows, n); },
                 {s.out, dy, dx});
    } else {
        p.primitive(pd, {{DNNL_ARG_DST, s.out}, {DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}});
    }
    p.contributed(l.x(), dx);
}

}  // namespace ridge::onednn
