// Add, Mul and LayerScale on oneDNN binary primitives, broadcasting the smaller operand (a
// per-channel gamma); the gradient of a broadcast operand is a reduction (sum) of the full one.
// Scale is eltwise_linear (activation.cpp's eltwise_forward). Squeeze-excitation's gate,
// x (N,C,H,W) times s (N,C,1,1), is a per-(image, channel) scale that oneDNN 2.6 broadcasts only
// in its reference implementation (about a thousand times slower than memory allows): it runs
// kernels/simd's scale_channels in x's own layout, and the gate's gradient is channel_dots(dy, x).
#include <algorithm>
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "engine/ops/norm.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

dnnl::binary::primitive_desc binary_pd(const Plan& p, algorithm alg, const Md& a, const Md& b, const Md& y) {
    return {dnnl::binary::desc(alg, a, b, y), p.attr(), p.eng};
}

void reduce_into(Plan& p, int src, int dst) {
    const Md &s = p.md(src), &d = p.md(dst);
    // Nothing to sum (a batch of one): oneDNN 2.6 refuses a reduction that keeps every dimension,
    // so it is a copy (vit_b_16's position-embedding gradient at batch 1 stopped its step).
    if (s.dims() == d.dims()) return p.reorder_into(src, dst);
    dnnl::reduction::primitive_desc pd({algorithm::reduction_sum, s, d, 0.0f, 0.0f}, p.attr(), p.eng);
    // oneDNN 2.6 sums a plain tensor over its first dimension only in its reference implementation
    // (vit_b_16's position-embedding gradient, 8x197x768 to 1x197x768: 7 ms, under 1 GB/s). The
    // sum primitive adds the N contiguous slices at memory speed instead.
    Dims sd = s.dims(), dd = d.dims();
    const int64_t n = sd[0];
    const bool first_only = dd[0] == 1 && std::equal(sd.begin() + 1, sd.end(), dd.begin() + 1, dd.end());
    if (!reference_impl(pd) || !first_only || n < 2 || s != plain(sd) || d != plain(dd)) {
        p.primitive(pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
        return;
    }
    // oneDNN's jit sum takes at most 16 inputs (more run its reference): in steps of 16, each
    // after the first adding into dst in place as its first input.
    constexpr int64_t most = 16;
    for (int64_t i = 0; i < n;) {
        std::vector<int> in;
        if (i > 0) in.push_back(dst);
        while (int64_t(in.size()) < most && i < n) in.push_back(p.alias(src, d, size_t(i++) * d.get_size()));
        std::vector<Md> mds(in.size(), d);
        dnnl::sum::primitive_desc sum(d, std::vector<float>(in.size(), 1.0f), mds, p.eng, p.attr());
        std::vector<std::pair<int, int>> args = {{DNNL_ARG_DST, dst}};
        for (size_t k = 0; k < in.size(); ++k) args.push_back({DNNL_ARG_MULTIPLE_SRC + int(k), in[k]});
        p.primitive(sum, args);
    }
}

namespace {

// s with leading 1s up to the given rank, as oneDNN broadcasting needs equal ranks.
Dims padded(const Shape& s, size_t rank) {
    Dims d(rank - s.size(), 1);
    d.insert(d.end(), s.begin(), s.end());
    return d;
}

// The gradient of broadcast operand t: dy (or dy * other) summed down to t's shape.
void reduce_contribution(Plan& p, int t, int full, size_t rank) {
    int r = p.contribution(t, plain(dims_of(p.shape(t))));
    reduce_into(p, full, p.alias(r, plain(padded(p.shape(t), rank))));
    p.contributed(t, r);
}

// Which operand of a binary op has the output's shape.
size_t full_operand(const Plan& p, const Layer& l) {
    const Shape& ys = p.shape(l.n.output);
    size_t full = p.shape(l.x(0)) == ys ? 0 : 1;
    if (p.shape(l.x(full)) != ys)
        throw std::invalid_argument(cat("onednn: ", to_string(p.shape(l.x(0))), " and ", to_string(p.shape(l.x(1))),
                                        " broadcast onto each other; one operand must have the output's shape"));
    return full;
}

// x (N,C,H,W) in a layout scale_channels reads, times a gate (N,C,1,1): its layout, else none.
std::optional<simd::ChannelLayout> gate_layout(const Plan& p, const Layer& l, size_t full) {
    const Shape &xs = p.shape(l.x(full)), &gs = p.shape(l.x(1 - full));
    if (xs.size() != 4 || gs != Shape{xs[0], xs[1], 1, 1}) return std::nullopt;
    int64_t block = channel_block(p.md(p.value[size_t(l.x(full))]));
    if (block == 0) return std::nullopt;
    return simd::ChannelLayout{xs[0], xs[1], xs[2] * xs[3], block};
}

// y = x * s: in place over x in inference when nothing reads x afterwards, so the gate adds no
// activation to the arena.
void gate_forward(Plan& p, const Layer& l, size_t full, const simd::ChannelLayout& lay) {
    int x = p.value[size_t(l.x(full))];
    int s = p.value_as(l.x(1 - full), plain(dims_of(p.shape(l.x(1 - full)))));
    int y = output_over(p, l, x, l.x(full), p.md(x));
    p.kernel("scale_channels", [lay](const std::vector<float*>& a) { simd::scale_channels(a[0], a[1], a[2], lay); },
             {x, s, y});
    p.value[size_t(l.n.output)] = y;
    Plan::Saved sv{{}, {-1, -1}, y};
    sv.in[full] = x;
    sv.in[1 - full] = s;
    p.saved[size_t(l.node)] = sv;
}

// dx = dy * s in x's layout; ds[n, c] = sum over H, W of dy * x.
//
// On channel blocks (x and dy in nChw8c or nChw16c) both in one pass over dy, kernels/simd's
// gate_backward, which reads dy in its own blocking. Where dy arrived in the other one (RegNetY's
// grouped convs of 8 channels a group run in nChw8c, the 1x1 convs around them in nChw16c) that
// replaces a reorder of dy and the two passes after it: regnet_y_400mf at batch 8 in training,
// block4's six gate gradients 0.68-0.70 -> 0.23 ms, all sixteen 2.51-2.53 -> 1.47-1.55 (`ridge
// profile`, 2 alternated pairs, the 2-core Zen 5). In one blocking it saves the second read of dy:
// efficientnet_b0's sixteen 5.54-5.83 -> 5.09-5.11 ms, mobilenet_v3_large's eight 1.80 -> 1.56-1.57,
// at batch 1 efficientnet_b0's 0.96-0.97 -> 0.81-0.84. There it needs two channel blocks a thread
// at least: a unit is a block of one image, whose sum takes all its positions, and
// mobilenet_v3_small's first gate at batch 1 (one block of 16 channels on 56x56) took 0.024-0.027
// ms on one thread against 0.016-0.017 for the two kernels, whose product splits the positions.
void gate_backward(Plan& p, const Layer& l, size_t full, const simd::ChannelLayout& lay) {
    const Plan::Saved& sv = p.saved[size_t(l.node)];
    int x = sv.in[full], s = sv.in[1 - full];
    const int arrived = p.dy(l.n.output);
    const int64_t dy_block = channel_block(p.md(arrived));
    const bool blocks = (lay.block == 8 || lay.block == 16) && (dy_block == 8 || dy_block == 16) &&
                        p.md(arrived).dims() == p.md(x).dims();
    if (blocks && (dy_block != lay.block || lay.N * lay.blocks() >= 2 * p.step_threads())) {
        const bool dgrad = p.needs_grad(l.x(full)), sgrad = p.needs_grad(l.x(1 - full));
        const int dx = dgrad ? p.contribution(l.x(full), p.md(x)) : -1;
        const int ds = sgrad ? p.contribution(l.x(1 - full), p.md(s)) : -1;
        std::vector<int> args = {x, arrived, s};
        if (dgrad) args.push_back(dx);
        if (sgrad) args.push_back(ds);
        p.kernel("gate_backward",
                 [lay, dy_block, dgrad, sgrad](const std::vector<float*>& a) {
                     simd::gate_backward(a[0], a[1], dy_block, a[2], dgrad ? a[3] : nullptr,
                                         sgrad ? a[dgrad ? 4 : 3] : nullptr, lay);
                 },
                 args);
        if (dgrad) p.contributed(l.x(full), dx);
        if (sgrad) p.contributed(l.x(1 - full), ds);
        return;
    }
    int dy = p.as(arrived, p.md(x));
    if (p.needs_grad(l.x(full))) {
        int dx = p.contribution(l.x(full), p.md(x));
        p.kernel("scale_channels", [lay](const std::vector<float*>& a) { simd::scale_channels(a[0], a[1], a[2], lay); },
                 {dy, s, dx});
        p.contributed(l.x(full), dx);
    }
    if (p.needs_grad(l.x(1 - full))) {
        int ds = p.contribution(l.x(1 - full), p.md(s));
        p.kernel("channel_dots", [lay](const std::vector<float*>& a) { simd::channel_dots(a[0], a[1], a[2], lay); },
                 {dy, x, ds});
        p.contributed(l.x(1 - full), ds);
    }
}

// Add or Mul: the operand with the output's shape first, the other broadcast onto it.
void binary_forward(Plan& p, const Layer& l, algorithm alg) {
    const Shape& ys = p.shape(l.n.output);
    size_t full = full_operand(p, l);
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
    // oneDNN's binary may write over its first operand (the residual sums' in inference, where
    // nothing reads it after): the sum lands in lines just read instead of another buffer's. Not
    // where the second lies in the same buffer (a slice or the same tensor): a row written early
    // would be read as the second operand later.
    const auto& mm = p.mems;
    const bool over_a = mm[size_t(a)].buffer != mm[size_t(b)].buffer && overwritable(p, l, a, l.x(full));
    int y = over_a ? p.alias(a, p.md(a)) : p.mem(p.md(a));
    p.primitive(pd, {{DNNL_ARG_SRC_0, a}, {DNNL_ARG_SRC_1, b}, {DNNL_ARG_DST, y}});
    p.value[size_t(l.n.output)] = y;
    Plan::Saved s{pd, {-1, -1}, y};
    s.in[full] = a;
    s.in[1 - full] = b;
    p.saved[size_t(l.node)] = s;
}

}  // namespace

void forward(Plan& p, const Layer& l, const Add&) { binary_forward(p, l, algorithm::binary_add); }

// The gradient passes to both operands unchanged (summed for a broadcast one). Full-shape operands
// with no gradient yet take dy's buffer as theirs, both of them (Plan::share): the copy for the
// second one is left to whichever writes into it while the other still reads it, which in a
// residual block none does. The copies had cost resnet50 at batch 8 in training 5.3 ms a step
// over its 16 adds, and mobilenet_v2's features.3 (24 channels padded to 32) 0.27-0.32 ms, 4 to 5
// times its bound.
void backward(Plan& p, const Layer& l, const Add&) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.dy(l.n.output);
    size_t rank = p.shape(l.n.output).size();
    for (size_t i = 0; i < 2; ++i)
        if (p.needs_grad(l.x(i)) && p.shape(l.x(i)) != p.shape(l.n.output)) reduce_contribution(p, l.x(i), dy, rank);
    // The add reads its dy no more: x + x then doubles it in place, where counting the add's own
    // root as a holder made the second share a copy.
    p.finished(l.n.output);
    p.share(dy);
    for (size_t i = 0; i < 2; ++i) {
        int t = l.x(i);
        if (p.needs_grad(t) && p.shape(t) == p.shape(l.n.output)) p.pass(t, dy, true);
    }
}

void forward(Plan& p, const Layer& l, const Mul&) {
    size_t full = full_operand(p, l);
    if (auto lay = gate_layout(p, l, full)) return gate_forward(p, l, full, *lay);
    binary_forward(p, l, algorithm::binary_mul);
}

// d a = dy * b; for a broadcast a, summed: reduce(dy * b).
void backward(Plan& p, const Layer& l, const Mul&) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Shape& ys = p.shape(l.n.output);
    size_t full = full_operand(p, l);
    if (!s.pd)  // the forward ran scale_channels
        return gate_backward(p, l, full, {ys[0], ys[1], ys[2] * ys[3], channel_block(p.md(s.in[full]))});
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

namespace {
// A per-channel gamma on a 4-D activation in a layout scale_channels reads: its layout, else none.
std::optional<simd::ChannelLayout> gamma_layout(const Plan& p, const Layer& l, const LayerScale& op, const Md& m) {
    const Shape& xs = p.shape(l.x());
    if (xs.size() != 4 || normalize_dim(op.dim, xs.size()) != 1) return std::nullopt;
    int64_t block = channel_block(m);
    if (block == 0) return std::nullopt;
    return simd::ChannelLayout{xs[0], xs[1], xs[2] * xs[3], block};
}

// y = x * gamma as scale_channels with gamma repeated for every image (N*C floats). oneDNN 2.6's
// binary broadcasts a (1,C,1,1) operand over channels-last far below memory speed: ConvNeXt's
// 8x96x56x56 in 1.2 ms on a 2-core Zen 5, 16 GB/s of the 99 its triad reaches. In inference y
// is x where nothing reads x after (ConvNeXt's, after its second linear, which x has just left
// in cache): convnext_tiny's 18 at batch 1 in `ridge bench`'s per-layer pass on the Zen 5, 2
// alternated pairs, 0.85-1.09 -> 0.26-0.28 ms in all, 16 -> 0 over 4x their bounds.
void scale_by_gamma(Plan& p, const simd::ChannelLayout& lay, int x, int gamma, int y) {
    int table = p.mem(plain({lay.N, lay.C}));
    p.kernel(
        "layer_scale",
        [lay](const std::vector<float*>& a) {
            for (int64_t n = 0; n < lay.N; ++n) std::copy(a[1], a[1] + lay.C, a[2] + n * lay.C);
            simd::scale_channels(a[0], a[2], a[3], lay);
        },
        {x, gamma, table, y});
}
}  // namespace

void forward(Plan& p, const Layer& l, const LayerScale& op) {
    int x = p.value[size_t(l.x())];
    int gamma = p.param_mem(l.node, 0, gamma_md(p, l, op));
    int y = -1;
    dnnl::binary::primitive_desc pd;
    if (auto lay = gamma_layout(p, l, op, p.md(x))) {
        y = output_over(p, l, x, l.x(), p.md(x));
        scale_by_gamma(p, *lay, x, gamma, y);
    } else {
        y = p.mem(p.md(x));
        pd = binary_pd(p, algorithm::binary_mul, p.md(x), p.md(gamma), p.md(x));
        p.primitive(pd, {{DNNL_ARG_SRC_0, x}, {DNNL_ARG_SRC_1, gamma}, {DNNL_ARG_DST, y}});
    }
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
        if (auto lay = gamma_layout(p, l, op, m))
            scale_by_gamma(p, *lay, dy, gamma, dx);
        else
            p.primitive(binary_pd(p, algorithm::binary_mul, m, p.md(gamma), m),
                        {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, gamma}, {DNNL_ARG_DST, dx}});
        p.contributed(l.x(), dx);
    }
    p.at(&p.bwd, l.node, Phase::wgrad);
    int dgamma = p.dparam_mem(l.node, 0, gamma_md(p, l, op));
    const Shape& xs = p.shape(l.x());
    int64_t block = xs.size() == 4 && normalize_dim(op.dim, xs.size()) == 1 ? channel_block(m) : 0;
    if (block) {
        // ConvNeXt's per-channel gamma: dgamma[c] = sum over n of channel_dots(dy, x)[n, c], one
        // pass over both instead of a product tensor and oneDNN's reference reduction.
        simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
        int per_image = p.mem(plain({xs[0], xs[1]}));
        p.kernel("channel_dots",
                 [lay](const std::vector<float*>& a) {
                     simd::channel_dots(a[0], a[1], a[2], lay);
                     for (int64_t c = 0; c < lay.C; ++c) {
                         float sum = 0;
                         for (int64_t n = 0; n < lay.N; ++n) sum += a[2][n * lay.C + c];
                         a[3][c] = sum;
                     }
                 },
                 {dy, x, per_image, dgamma});
        return;
    }
    int prod = p.mem(m);
    p.primitive(binary_pd(p, algorithm::binary_mul, m, m, m),
                {{DNNL_ARG_SRC_0, dy}, {DNNL_ARG_SRC_1, x}, {DNNL_ARG_DST, prod}});
    reduce_into(p, prod, dgamma);
}

namespace {

// md as kernels/simd's Strided: no blocks, at most Strided::most dimensions, the last contiguous.
std::optional<simd::Strided> strided(const Md& md) {
    const Dims dims = md.dims();
    if (!unblocked(md) || md.data.offset0 != 0 || dims.empty() || dims.size() > size_t(simd::Strided::most))
        return std::nullopt;
    const Dims st = strides_of(md);
    if (st.back() != 1) return std::nullopt;
    simd::Strided s;
    s.rank = int(dims.size());
    std::copy(dims.begin(), dims.end(), s.dims);
    std::copy(st.begin(), st.end(), s.strides);
    return s;
}

// y = s * x where x and y have the same dimensions in layouts without blocks: kernels/simd's
// scale_strided where both rows are contiguous, else a reorder with an output scale. names: the
// two arguments' as the profile shows them.
void scale_copy(Plan& p, int x, float s, int y, std::vector<std::string> names) {
    const std::optional<simd::Strided> xl = strided(p.md(x)), yl = strided(p.md(y));
    if (xl && yl) {
        p.kernel("scale_strided",
                 [s, xl = *xl, yl = *yl](const std::vector<float*>& a) { simd::scale_strided(a[0], xl, s, a[1], yl); },
                 {x, y}, std::move(names));
        return;
    }
    dnnl::primitive_attr a = p.attr();
    a.set_output_scales(0, {s});
    p.primitive(dnnl::reorder::primitive_desc(p.eng, p.md(x), p.eng, p.md(y), a), {{DNNL_ARG_FROM, x}, {DNNL_ARG_TO, y}});
}

}  // namespace

// A strided region (ViT's q, layout.cpp) is scaled as it is copied out (scale_copy): eltwise would
// write the same gaps and run its reference kernel on them. In fused
// inference the scale is folded into the linear layer that wrote q (fold.h) and q read where it
// is: vit_b_16 at batch 1 on the 2-core Zen 5 had spent 70 to 100 us a block copying it out. In
// fused training the matmul that reads it applies it (fusion.h's MatmulScale).
void forward(Plan& p, const Layer& l, const Scale& op) {
    int x = p.value[size_t(l.x())];
    const auto folded = [&](const auto& f) { return f.scale == l.node; };
    if (std::any_of(p.scale_folds.begin(), p.scale_folds.end(), folded) ||
        std::any_of(p.matmul_scales.begin(), p.matmul_scales.end(), folded)) {
        p.value[size_t(l.n.output)] = x;
        return;
    }
    if (!unblocked(p.md(x)) || dense(p.md(x))) return eltwise_forward(p, l, {algorithm::eltwise_linear, float(op.s), 0.0f});
    int y = p.mem(plain(dims_of(p.shape(l.n.output))));
    scale_copy(p, x, float(op.s), y, {"src", "dst"});
    p.value[size_t(l.n.output)] = y;
}

// dx = s*dy: the same linear map, applied to the gradient.
void backward(Plan& p, const Layer& l, const Scale& op) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.dy(l.n.output);
    if (int dx = p.placed_contribution(l.x()); dx >= 0) {  // ViT's q: its region of the packed gradient
        scale_copy(p, dy, float(op.s), dx, {"diff_dst", "diff_src"});
        return p.contributed(l.x(), dx);
    }
    dnnl::eltwise_forward::desc d(prop_kind::forward_inference, algorithm::eltwise_linear, p.md(dy), float(op.s), 0.0f);
    dnnl::eltwise_forward::primitive_desc pd(d, p.attr(), p.eng);
    int dx = p.contribution_over(l.x(), dy);
    p.primitive(pd, {{DNNL_ARG_SRC, dy}, {DNNL_ARG_DST, dx}});
    p.contributed(l.x(), dx);
}


}  // namespace ridge::onednn
