// The position embedding on a oneDNN binary add, e (T,D) read as (1,T,D) and broadcast over the
// batch, its gradient the batch sum of dy; the class token on the reference kernel.
// x (N,T,D)  e (T,D)  class token (D)  y (N,T,D), or (N,T+1,D) with the class token
#include "engine/backend/onednn/ops.h"

namespace ridge::onednn {

using dnnl::algorithm;

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

// The class token has no oneDNN counterpart; it copies (N,T,D) once per step, off any hot path.
void forward(Plan& p, const Layer& l, const ClassToken&) { forward_reference(p, l); }
void backward(Plan& p, const Layer& l, const ClassToken&) { backward_reference(p, l); }

}  // namespace ridge::onednn
