// Activations on oneDNN eltwise primitives, in whatever layout their input has (Scale, in
// elementwise.cpp, runs eltwise_forward too).
// x (any)  y (same shape and layout)
//
// oneDNN 2.6 runs eltwise on a blocked layout whose channels do not fill the last block (120
// channels in nChw16c) only in its reference implementation. Its padding is zero, so where the
// function maps 0 to 0 (and always for backward, whose zero dy padding gives zero dx padding) the
// primitive is made for the padded shape over the same bytes, which its vector kernel runs.
//
// SiLU runs kernels/simd's silu_forward / silu_backward instead (oneDNN's swish is compute-bound
// at a quarter of memory speed on the efficientnets' maps) wherever its input is a whole dense
// buffer, blocked or not: elementwise, the kernels need no layout, and padding stays zero.
// Hardsigmoid, which oneDNN lacks, runs kernels/simd's too, on a buffer without padding, and so
// does the sigmoid (oneDNN's logistic is compute-bound too, kernels/simd/activation.cpp), and a
// ReLU of few elements, where the primitive's own cost exceeds the work (small_relu below). A GELU
// that is a layer of its own (training, the unfused pass) runs kernels/simd's gelu_forward and
// gelu_backward as SiLU does; in fused inference it stays the linear's post-op.
#include "engine/backend/onednn/ops.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

std::vector<Eltwise> eltwise_of(Activation::Fn fn) {
    using F = Activation::Fn;
    switch (fn) {
        case F::relu:
            return {{algorithm::eltwise_relu}};
        // clip_v2 passes the gradient on the open interval (0, 6), as PyTorch's hardtanh does.
        case F::relu6:
            return {{algorithm::eltwise_clip_v2, 0.0f, 6.0f}};
        case F::sigmoid:
            return {{algorithm::eltwise_logistic}};
        case F::silu:
            return {{algorithm::eltwise_swish, 1.0f}};
        case F::gelu:
            return {{algorithm::eltwise_gelu_erf}};
        case F::hardswish:
            return {{algorithm::eltwise_hardswish}};
        // oneDNN 2.6 has no hardsigmoid: min(max(x/6 + 1/2, 0), 1) is two algorithms, which only a
        // post-op chain can run as one primitive (the standalone layer runs kernels/simd's).
        case F::hardsigmoid:
            return {{algorithm::eltwise_linear, 1.0f / 6.0f, 0.5f}, {algorithm::eltwise_clip_v2, 0.0f, 1.0f}};
    }
    throw std::logic_error("onednn: unknown activation");
}

bool post_ops_all(const Plan& p, const Layer& l, Activation::Fn fn) {
    if (!l.group) return true;
    for (const PostOp& po : l.group->post)
        if (po.kind != PostOp::Kind::eltwise || std::get<Activation>(p.g.nodes()[size_t(po.node)].op).fn != fn)
            return false;
    return true;
}

std::optional<SumRelu> sum_then_relu(const Plan& p, const Layer& l) {
    SumRelu r;
    if (!l.group) return r;
    for (const PostOp& po : l.group->post) {
        if (po.kind == PostOp::Kind::sum && !r.sum && !r.relu)
            r.sum = true;
        else if (po.kind == PostOp::Kind::eltwise && !r.relu &&
                 std::get<Activation>(p.g.nodes()[size_t(po.node)].op).fn == Activation::Fn::relu)
            r.relu = true;
        else
            return std::nullopt;
    }
    return r;
}

dnnl::post_ops post_ops_of(const Graph& g, const Group& gr) {
    dnnl::post_ops po;
    for (const PostOp& p : gr.post) {
        if (p.kind == PostOp::Kind::sum) {
            po.append_sum(1.0f);
            continue;
        }
        if (p.kind == PostOp::Kind::depthwise) {
            const auto& dw = std::get<Conv2d>(g.nodes()[size_t(p.node)].op);
            auto f32 = dnnl::memory::data_type::f32;
            auto bias = dw.bias || p.bn >= 0 ? f32 : dnnl::memory::data_type::undef;
            po.append_dw(f32, bias, f32, 3, dw.stride.h, 1, 0, {});
            continue;
        }
        for (const Eltwise& e : eltwise_of(std::get<Activation>(g.nodes()[size_t(p.node)].op).fn))
            po.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
    }
    return po;
}

namespace {

// f(0) = 0, so a padded channel stays zero through the forward.
bool keeps_zero(const Eltwise& e) {
    using dnnl::algorithm;
    switch (e.alg) {
        case algorithm::eltwise_relu:
        case algorithm::eltwise_relu_use_dst_for_bwd:
        case algorithm::eltwise_swish:
        case algorithm::eltwise_gelu_erf:
        case algorithm::eltwise_hardswish:
            return true;
        case algorithm::eltwise_clip_v2:
            return e.alpha <= 0 && e.beta >= 0;
        case algorithm::eltwise_linear:
            return e.beta == 0;
        default:
            return false;
    }
}

// A channel-blocked descriptor with padded channels, as the dense one of its padded shape over the
// same bytes; any other descriptor as it is.
Md padded_view(const Md& md) {
    int64_t block = channel_block(md);
    if ((block != 8 && block != 16) || md.data.padded_dims[1] == md.data.dims[1]) return md;
    Dims d = md.dims();
    d[1] = md.data.padded_dims[1];
    return Md(d, dnnl::memory::data_type::f32, block == 16 ? Tag::nChw16c : Tag::nChw8c);
}

// Training keeps what backward reads: ReLU differentiates from its output (the sigmoid too, on
// kernels/simd).
algorithm training_alg(algorithm a) {
    return a == algorithm::eltwise_relu ? algorithm::eltwise_relu_use_dst_for_bwd : a;
}

bool uses_dst(algorithm a) { return a == algorithm::eltwise_relu_use_dst_for_bwd; }

// A ReLU's gradient where dy arrived in nChw8c and y is in nChw16c, or the other way round
// (RegNetX's grouped convs of 24 channels a group run in nChw8c between ReLUs in nChw16c):
// kernels/simd's relu_backward_reblocked reads dy in its own layout, instead of a reorder of dy
// into y's and oneDNN's eltwise over the copy: three passes instead of five. At batch 8 in
// training on the 2-core Zen 5 (`ridge profile`, 2 alternated pairs), the ReLU gradients that had
// a reorder: regnet_x_1_6gf's 36 19.6-20.2 -> 12.8-13.7 ms, regnet_y_400mf's 14 3.3-3.7 ->
// 2.2-2.3. False, planning nothing, for any other layouts.
bool relu_backward_reblocked(Plan& p, const Layer& l) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const int dy = p.dy(l.n.output);
    if (dy < 0) return false;
    const Md y = p.md(s.out), got = p.md(dy);
    auto in_blocks = [](const Md& m, Tag tag) {
        return m.dims().size() == 4 && m == Md(m.dims(), dnnl::memory::data_type::f32, tag);
    };
    int64_t block = 0;
    if (in_blocks(y, Tag::nChw16c) && in_blocks(got, Tag::nChw8c)) block = 16;
    if (in_blocks(y, Tag::nChw8c) && in_blocks(got, Tag::nChw16c)) block = 8;
    if (!block || got.dims() != y.dims()) return false;
    const Dims d = y.dims();
    const simd::ChannelLayout lay{d[0], d[1], d[2] * d[3], block};
    const int dx = p.contribution(l.x(), y);
    p.kernel(
        "relu_backward_reblocked",
        [lay, dy_block = 24 - block, threads = p.step_threads()](const std::vector<float*>& a) {
            simd::relu_backward_reblocked(a[0], a[1], dy_block, a[2], lay, threads);
        },
        {s.out, dy, dx});
    p.contributed(l.x(), dx);
    return true;
}

void eltwise_backward(Plan& p, const Layer& l, Eltwise e) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    if (e.alg == algorithm::eltwise_relu_use_dst_for_bwd && relu_backward_reblocked(p, l)) return;
    const Plan::Saved& s = p.saved[size_t(l.node)];
    Md data = p.md(s.in[0]), view = padded_view(data);
    auto as_view = [&](int m) { return view == data ? m : p.alias(m, view); };
    dnnl::eltwise_backward::desc d(e.alg, view, view, e.alpha, e.beta);
    dnnl::eltwise_backward::primitive_desc pd(d, p.attr(), p.eng, hint<dnnl::eltwise_forward::primitive_desc>(s.pd));
    int dy = p.as(p.dy(l.n.output), data);
    int dx = p.contribution_over(l.x(), dy);  // in place: dy is not read again
    p.primitive(pd, {{uses_dst(e.alg) ? DNNL_ARG_DST : DNNL_ARG_SRC, as_view(uses_dst(e.alg) ? s.out : s.in[0])},
                     {DNNL_ARG_DIFF_DST, as_view(dy)},
                     {DNNL_ARG_DIFF_SRC, as_view(dx)}});
    p.contributed(l.x(), dx);
}

// The elements of x's buffer when it is one the elementwise kernels may run over end to end: dense
// without blocks, or channel-blocked, from its first byte (the kernels are handed the memory's
// address, which does not count offset0); 0 for a strided view, which has gaps. Padded channel
// blocks only where the function keeps zero at zero (SiLU, not hardsigmoid).
int64_t span_elements(const Md& x, bool keeps_zero) {
    const int64_t block = channel_block(x);
    const bool blocked = (block == 8 || block == 16) && (keeps_zero || x.data.padded_dims[1] == x.data.dims[1]);
    if ((!(unblocked(x) && dense(x)) && !blocked) || x.data.offset0 != 0) return 0;
    return int64_t(x.get_size() / sizeof(float));
}

// y = f(x) over x's whole buffer (one span_elements accepts) into a buffer of x's layout, and its
// gradient dx = g(x, dy) in that layout, in place over dy: kernels/simd's elementwise kernels.
using SpanForward = void (*)(const float* x, float* y, int64_t n);
using SpanBackward = void (*)(const float* x, const float* dy, float* dx, int64_t n);

// y is x's bytes where over_x (each element is read before it is written): in inference when
// nothing reads x afterwards, so the activation adds no buffer to the arena.
void span_forward(Plan& p, const Layer& l, int x, bool keeps_zero, SpanForward f, bool over_x) {
    const int64_t n = span_elements(p.md(x), keeps_zero);
    int y = over_x ? p.alias(x, p.md(x)) : p.mem(p.md(x));
    p.kernel(op_kind(l.n.op), [n, f](const std::vector<float*>& a) { f(a[0], a[1], n); }, {x, y});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
}

// g reads x, or where from_output, y (the sigmoid's gradient).
void span_backward(Plan& p, const Layer& l, bool keeps_zero, SpanBackward g, bool from_output = false) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const int x = from_output ? s.out : s.in[0];
    const int64_t n = span_elements(p.md(x), keeps_zero);
    int dy = p.as(p.dy(l.n.output), p.md(x));
    int dx = p.contribution_over(l.x(), dy);  // in place: dy is not read again
    p.kernel(op_kind(l.n.op), [n, g](const std::vector<float*>& a) { g(a[0], a[1], a[2], n); }, {x, dy, dx});
    p.contributed(l.x(), dx);
}

// The global average pool (to 1x1) that reads tensor t, or -1.
int global_pool_reading(const Plan& p, int t) {
    for (int r : readers_of(p.g, t)) {
        const Shape& ys = p.shape(p.g.nodes()[size_t(r)].output);
        if (std::holds_alternative<AdaptiveAvgPool2d>(p.g.nodes()[size_t(r)].op) && ys.size() == 4 && ys[2] == 1 &&
            ys[3] == 1)
            return r;
    }
    return -1;
}

// In fused inference a SiLU over a map that a global average pool reads (efficientnet's squeeze-
// excitation after its depthwise conv) writes the pool's means in the same pass
// (simd::silu_channel_means), and the pool plans nothing (pool.cpp): the pool had read the map
// again right after the SiLU wrote it, on one thread at batch 1 (channels-last). The unfused
// per-layer pass keeps a step each. efficientnet_b0 on the 2-core Zen 5, the fused executor's steps
// timed apart (2 rounds each): at batch 1 the pools' 0.37-0.38 ms went, the SiLUs took 1.03-1.09
// against 0.98-1.01 and the gates' multiplications, reading what the new kernel had just written,
// 0.26-0.27 against 0.53-0.54; whole steps 6.15-6.54 against 6.70-6.84 ms (5 alternated rounds). At
// batch 16 (nChw16c) the steps' sums were level, 71.3-71.7 against 71.7-71.8 ms.
bool silu_means_forward(Plan& p, const Layer& l, int x) {
    const int pool = global_pool_reading(p, l.n.output);
    const int64_t block = channel_block(p.md(x));
    if (p.train || !p.fused || pool < 0 || block == 0) return false;
    const Shape& xs = p.shape(l.x());
    const simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
    const int y = output_over(p, l, x, l.x(), p.md(x));
    const int means = p.mem(plain(dims_of(p.shape(p.g.nodes()[size_t(pool)].output))));
    p.kernel("silu_channel_means",
             [lay](const std::vector<float*>& a) { simd::silu_channel_means(a[0], a[1], a[2], lay); }, {x, y, means},
             {"src", "dst", "means"});
    p.value[size_t(l.n.output)] = y;
    p.value[size_t(p.g.nodes()[size_t(pool)].output)] = means;
    return true;
}

// SiLU on its input's buffer where the kernel may run over it; false, planning nothing, elsewhere.
bool silu_forward(Plan& p, const Layer& l) {
    int x = p.value[size_t(l.x())];
    if (span_elements(p.md(x), true) == 0) return false;
    if (silu_means_forward(p, l, x)) return true;
    span_forward(p, l, x, true, simd::silu_forward, overwritable(p, l, x, l.x()));
    return true;
}

// GELU likewise: oneDNN's gelu_erf is compute-bound at about 4x memory's pace on the Zen 5.
bool gelu_forward(Plan& p, const Layer& l) {
    int x = p.value[size_t(l.x())];
    if (span_elements(p.md(x), true) == 0) return false;
    span_forward(p, l, x, true, simd::gelu_forward, overwritable(p, l, x, l.x()));
    return true;
}

// Hardsigmoid and the sigmoid outside a post-op chain (squeeze-excitation's gate in training and
// in the unfused pass), over x's buffer, or a plain copy where x has padded blocks or gaps.
// A sigmoid costs about 1.2 ns an element on one Zen 3 core (an exp and a division), far above
// its counted FLOPs, by which the executor gave efficientnet_b0's 16x1152 gates one thread: 24 us
// against a bound of 6. From 8192 elements (10 us) it takes every thread where the executor holds
// the team awake (Plan::teams_held); elsewhere waking a thread costs about 27 us, and only from
// four times that many (as few_rows_threads in conv2d.cpp draws its line outside linear_panels'
// rows).
int64_t sigmoid_shared(const Plan& p) { return p.teams_held ? 8192 : 4 * 8192; }

// costly: the function's cost per element is far above its counted FLOPs (the sigmoid's).
void gate_forward(Plan& p, const Layer& l, SpanForward f, bool costly) {
    int x = p.value[size_t(l.x())];
    if (span_elements(p.md(x), false) == 0) x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    if (costly && span_elements(p.md(x), false) >= sigmoid_shared(p)) p.use_threads(p.threads);
    span_forward(p, l, x, false, f, overwritable(p, l, x, l.x()));
}

// In training a ReLU keeps only its output for the backward, so it may write over its input x
// where no later layer reads x and no layer's backward reads x's bytes: none saved x as an input,
// and x's producer is one whose backward reads only its output's descriptor. A ReLU that wrote a
// fresh buffer read a tensor its producer had just left in cache and wrote one nobody had touched
// since the step before. This rests on two things true of the planner, not checked here: backward
// reads forward bytes only through p.saved, and no other training step writes over a value (a
// workspace or a batch statistic is always a buffer of its own). No op today both reads its
// output's bytes in its backward and can write a negative number, so no case fails without the
// producer check; it keeps such an op's output from being overwritten.
bool relu_over_input(const Plan& p, const Layer& l, int x) {
    if (!p.train || !free_after(p, l, x, l.x())) return false;
    const int buffer = p.mems[size_t(x)].buffer;
    auto in_buffer = [&](int m) { return m >= 0 && p.mems[size_t(m)].buffer == buffer; };
    auto reads_output_md_only = [](const Op& op) {
        return std::holds_alternative<BatchNorm>(op) || std::holds_alternative<Conv2d>(op) ||
               std::holds_alternative<Linear>(op) || std::holds_alternative<Add>(op);
    };
    for (size_t m = 0; m < p.saved.size(); ++m) {
        const Plan::Saved& s = p.saved[m];
        for (int i : s.in)
            if (in_buffer(i)) return false;
        if (in_buffer(s.out) && !reads_output_md_only(p.g.nodes()[m].op)) return false;
    }
    return true;
}

// A ReLU of at most this many elements runs kernels/simd's relu_forward (and its gradient
// relu_backward) instead of oneDNN's eltwise: the primitive's own state is out of cache after a
// large layer, which costs more than the work. The VGGs' classifier ReLUs (4096 floats at batch 1)
// took 20 to 29 us after their 400 MB inner products; in a test program oneDNN's ReLU over 4096
// floats took 1.5 us warm and 17 to 27 after 256 MB were read, a plain loop 2 to 3. Larger ones
// keep oneDNN's, memory-bound either way.
constexpr int64_t small_relu = 1 << 16;

bool small_relu_forward(Plan& p, const Layer& l) {
    int x = p.value[size_t(l.x())];
    const int64_t n = span_elements(p.md(x), true);
    if (n == 0 || n > small_relu) return false;
    span_forward(p, l, x, true, simd::relu_forward, p.train ? relu_over_input(p, l, x) : overwritable(p, l, x, l.x()));
    return true;
}

}  // namespace

void eltwise_forward(Plan& p, const Layer& l, Eltwise e) {
    int x = p.value[size_t(l.x())];
    // In inference over x where nothing reads x later, as the batchnorm (norm.cpp): a fresh y was
    // written line by line from the other core's cache.
    const bool over_x = p.train ? uses_dst(e.alg) && relu_over_input(p, l, x) : overwritable(p, l, x, l.x());
    int y = over_x ? p.alias(x, p.md(x)) : p.mem(p.md(x));
    // The primitive runs over views: the padded shape where that keeps the padding zero.
    Md view = keeps_zero(e) ? padded_view(p.md(x)) : p.md(x);
    int xv = view == p.md(x) ? x : p.alias(x, view), yv = view == p.md(x) ? y : p.alias(y, view);
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    dnnl::eltwise_forward::desc d(prop, e.alg, view, e.alpha, e.beta);
    dnnl::eltwise_forward::primitive_desc pd(d, p.attr(), p.eng);
    p.primitive(pd, {{DNNL_ARG_SRC, xv}, {DNNL_ARG_DST, yv}});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, {x}, y};
}

void forward(Plan& p, const Layer& l, const Activation& op) {
    if (op.fn == Activation::Fn::silu && silu_forward(p, l)) return;
    if (op.fn == Activation::Fn::gelu && gelu_forward(p, l)) return;
    if (op.fn == Activation::Fn::hardsigmoid) return gate_forward(p, l, simd::hardsigmoid_forward, false);
    if (op.fn == Activation::Fn::sigmoid) return gate_forward(p, l, simd::sigmoid_forward, true);
    if (op.fn == Activation::Fn::relu && small_relu_forward(p, l)) return;
    std::vector<Eltwise> e = eltwise_of(op.fn);
    if (p.train) e[0].alg = training_alg(e[0].alg);
    eltwise_forward(p, l, e[0]);
}

void backward(Plan& p, const Layer& l, const Activation& op) {
    if (op.fn == Activation::Fn::silu && !p.saved[size_t(l.node)].pd) return span_backward(p, l, true, simd::silu_backward);
    if (op.fn == Activation::Fn::gelu && !p.saved[size_t(l.node)].pd) return span_backward(p, l, true, simd::gelu_backward);
    if (op.fn == Activation::Fn::hardsigmoid) return span_backward(p, l, false, simd::hardsigmoid_backward);
    if (op.fn == Activation::Fn::sigmoid) return span_backward(p, l, false, simd::sigmoid_backward, true);
    if (op.fn == Activation::Fn::relu && !p.saved[size_t(l.node)].pd)
        return span_backward(p, l, true, simd::relu_backward, true);
    std::vector<Eltwise> e = eltwise_of(op.fn);
    eltwise_backward(p, l, {training_alg(e[0].alg), e[0].alpha, e[0].beta});
}

}  // namespace ridge::onednn
