// Ops that move data. A concatenation of channels whose inputs are all in the layout of the first
// (channels-last, whole blocks of nChw8c / nChw16c, or plain) is kernels/simd's concat_affine
// without the affine, any other oneDNN's concat in its inputs' layout; the rest
// work on plain row-major copies: a view (flatten, reshape, a contiguous slice or select) is
// another descriptor over the same bytes, and a permutation (permute, channel shuffle, a strided
// slice) is a oneDNN reorder between a strided descriptor and a dense one. Their gradients go the
// other way through the same descriptors. Dropout and stochastic depth are identities: their
// output is their input, and so is their gradient.
#include <cmath>

#include "engine/backend/onednn/ops.h"
#include "engine/ops/norm.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

namespace {

Dims strides_of(const Shape& s) {
    Dims st(s.size());
    int64_t v = 1;
    for (size_t i = s.size(); i-- > 0;) st[i] = v, v *= s[i];
    return st;
}

Md strided(const Dims& dims, const Dims& strides) { return Md(dims, dnnl::memory::data_type::f32, strides); }

// Forward through a view of x's plain layout: an alias when the view is dense, else a copy.
void forward_view(Plan& p, const Layer& l, const Md& view, const Dims& dense_dims) {
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    int y = p.mem(plain(dims_of(p.shape(l.n.output))));
    p.reorder_into(p.alias(x, view), p.alias(y, plain(dense_dims)));
    p.value[size_t(l.n.output)] = y;
}

void reshape_forward(Plan& p, const Layer& l) {
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    p.value[size_t(l.n.output)] = p.alias(x, plain(dims_of(p.shape(l.n.output))));
}

void reshape_backward(Plan& p, const Layer& l) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass(l.x(), p.alias(dy, plain(dims_of(p.shape(l.x())))), true);
}

// Slice and select read the region [start, start + length) of dimension d.
struct Region {
    Md sub;        // over x's plain layout, keeping x's rank
    Dims dims;     // the region's extent, x's rank
    bool dense;    // the region is one contiguous run of bytes
    bool whole;    // the region is all of x
    size_t bytes;  // where the region starts
};

Region region(const Plan& p, const Layer& l, int dim, int64_t start, int64_t length) {
    const Shape& xs = p.shape(l.x());
    int d = normalize_dim(dim, xs.size());
    Dims dims = dims_of(xs), offsets(xs.size(), 0);
    dims[size_t(d)] = length;
    offsets[size_t(d)] = start;
    int64_t outer = 1;
    for (int i = 0; i < d; ++i) outer *= xs[size_t(i)];
    return {plain(dims_of(xs)).submemory_desc(dims, offsets), dims, outer == 1, length == xs[size_t(d)],
            size_t(start * strides_of(xs)[size_t(d)]) * sizeof(float)};
}

void region_forward(Plan& p, const Layer& l, const Region& r) {
    if (!r.dense) return forward_view(p, l, r.sub, r.dims);
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    p.value[size_t(l.n.output)] = p.alias(x, plain(dims_of(p.shape(l.n.output))), r.bytes);
}

void region_backward(Plan& p, const Layer& l, const Region& r) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass_view(l.x(), r.sub, p.alias(dy, plain(r.dims)), r.whole);
}

// y = x.permute(order): y's dimension i is x's dimension order[i].
Md permuted(const Plan& p, const Layer& l, const std::vector<int>& order) {
    const Shape& xs = p.shape(l.x());
    Dims st = strides_of(xs), pst;
    for (int o : order) pst.push_back(st[size_t(normalize_dim(o, xs.size()))]);
    return strided(dims_of(p.shape(l.n.output)), pst);
}

// (N,C,H,W) read as (N, C/G, G, H, W): the shuffled channel j*G + g is channel g*(C/G) + j.
Md shuffled(const Plan& p, const Layer& l, const ChannelShuffle& op) {
    const Shape& xs = p.shape(l.x());
    int64_t C = xs[1], H = xs[2], W = xs[3];
    return strided({xs[0], C / op.G, op.G, H, W}, {C * H * W, H * W, C / op.G * H * W, W, 1});
}

void permute_backward(Plan& p, const Layer& l, const Md& view) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass_view(l.x(), view, p.alias(dy, plain(view.dims())), true);
}

// The layout kernels/simd's concat_affine writes a concatenation of channels in: the first
// input's, channels-last (DenseNet at batch 16 on AVX-512, where oneDNN's brgemm convolutions
// choose it), or nChw8c / nChw16c where every input fills whole blocks (DenseNet's 32-channel
// pieces), else plain nchw.
struct ChannelConcat {
    Tag tag;
    simd::ChannelLayout y;
    std::vector<int64_t> channels;  // each input's
};

ChannelConcat channel_concat(const Plan& p, const Layer& l) {
    const Shape& ys = p.shape(l.n.output);
    auto f32 = dnnl::memory::data_type::f32;
    const Md& first = p.md(p.value[size_t(l.x(0))]);
    const bool nhwc = first == Md(first.dims(), f32, Tag::nhwc);
    int64_t block = channel_block(first);
    std::vector<int64_t> channels;
    for (int t : l.n.inputs) {
        channels.push_back(p.shape(t)[1]);
        if (!nhwc && ((block != 8 && block != 16) || channels.back() % block != 0)) block = 1;
    }
    if (nhwc) block = ys[1];
    const Tag tag = nhwc ? Tag::nhwc : block == 16 ? Tag::nChw16c : block == 8 ? Tag::nChw8c : Tag::nchw;
    return {tag, {ys[0], ys[1], ys[2] * ys[3], block}, channels};
}

// A concatenation of channels fused with the batchnorm (and ReLU) that alone reads it, in
// inference, as one pass of concat_affine over the inputs; inputs in another layout than
// channel_concat's are reordered to it.
void concat_batchnorm(Plan& p, const Layer& l) {
    const Shape& ys = p.shape(l.n.output);
    const int64_t C = ys[1];
    auto f32 = dnnl::memory::data_type::f32;
    const auto [tag, yl, channels] = channel_concat(p, l);
    const Md vec = plain({C});
    const int bn = l.group->bn;
    std::vector<int> args = {p.param_mem(bn, 0, vec), p.param_mem(bn, 1, vec), p.param_mem(bn, 2, vec),
                             p.param_mem(bn, 3, vec), p.mem(plain({2 * C})), p.mem(Md(dims_of(ys), f32, tag))};
    for (int t : l.n.inputs) args.push_back(p.value_as(t, Md(dims_of(p.shape(t)), f32, tag)));
    p.kernel(
        [channels, yl, relu = !l.group->post.empty()](const std::vector<float*>& a) {
            // The batchnorm as y = x * scale + shift, from its tensors as loaded, in double as
            // fold.cpp folds one into a conv; epsilon 1e-5 as in every backend (executor.h).
            const float *gamma = a[0], *beta = a[1], *mean = a[2], *var = a[3];
            float *scale = a[4], *shift = a[4] + yl.C;
            for (int64_t c = 0; c < yl.C; ++c) {
                double k = double(gamma[c]) / std::sqrt(double(var[c]) + 1e-5);
                scale[c] = float(k);
                shift[c] = float(double(beta[c]) - double(mean[c]) * k);
            }
            simd::concat_affine(a.data() + 6, channels.data(), int64_t(channels.size()), scale, shift, relu, a[5], yl);
        },
        args);
    p.value[size_t(l.y(p.g))] = args[5];
}

// A concatenation of channels whose inputs are all in channel_concat's layout, as concat_affine
// without the affine: false, planning nothing, for any other.
bool concat_copy(Plan& p, const Layer& l, int dim) {
    const Shape& ys = p.shape(l.n.output);
    if (ys.size() != 4 || dim != 1) return false;
    const auto [tag, yl, channels] = channel_concat(p, l);
    auto f32 = dnnl::memory::data_type::f32;
    std::vector<int> args = {-1};
    for (int t : l.n.inputs) {
        int x = p.value[size_t(t)];
        if (p.md(x) != Md(dims_of(p.shape(t)), f32, tag)) return false;
        args.push_back(x);
    }
    args[0] = p.mem(Md(dims_of(ys), f32, tag));
    p.kernel(
        [channels, yl](const std::vector<float*>& a) {
            simd::concat_affine(a.data() + 1, channels.data(), int64_t(channels.size()), nullptr, nullptr, false,
                                a[0], yl);
        },
        args);
    p.value[size_t(l.n.output)] = args[0];
    p.saved[size_t(l.node)] = {{}, std::vector<int>(args.begin() + 1, args.end()), args[0]};
    return true;
}

}  // namespace

void forward(Plan& p, const Layer& l, const Concat& op) {
    if (l.group) return concat_batchnorm(p, l);
    int d = normalize_dim(op.dim, p.shape(l.n.output).size());
    if (concat_copy(p, l, d)) return;
    std::vector<int> in;
    std::vector<Md> mds;
    for (int t : l.n.inputs) in.push_back(p.value[size_t(t)]), mds.push_back(p.md(in.back()));
    dnnl::concat::primitive_desc pd;
    try {
        pd = dnnl::concat::primitive_desc(d, mds, p.eng, p.attr());
    } catch (const dnnl::error&) {
        // Blocked inputs whose channel counts do not fill whole blocks: concatenate plain copies.
        for (size_t i = 0; i < in.size(); ++i) {
            in[i] = p.value_as(l.x(i), plain(dims_of(p.shape(l.x(i)))));
            mds[i] = p.md(in[i]);
        }
        pd = dnnl::concat::primitive_desc(d, mds, p.eng, p.attr());
    }
    int y = p.mem(pd.dst_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_DST, y}};
    for (size_t i = 0; i < in.size(); ++i) args.push_back({DNNL_ARG_MULTIPLE_SRC + int(i), in[i]});
    p.primitive(pd, args);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, in, y};
}

// Each input's gradient is its region of dy, read through a sub-memory descriptor; a blocked dy
// whose regions do not start on a block boundary is read from a plain copy.
void backward(Plan& p, const Layer& l, const Concat& op) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    const Shape& ys = p.shape(l.n.output);
    int d = normalize_dim(op.dim, ys.size());
    int dy = p.dy(l.n.output), dy_plain = -1;
    Dims offsets(ys.size(), 0);
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        int t = l.x(i);
        Dims dims = dims_of(p.shape(t));
        if (p.needs_grad(t)) {
            Md sub = p.md(dy).submemory_desc(dims, offsets, true);
            int src = dy;
            if (sub.is_zero()) {
                if (dy_plain < 0) dy_plain = p.as(dy, plain(dims_of(ys)));
                src = dy_plain;
                sub = p.md(src).submemory_desc(dims, offsets);
            }
            p.pass_reordered(t, p.alias(src, sub), p.md(p.value[size_t(t)]));
        }
        offsets[size_t(d)] += dims[size_t(d)];
    }
}

void forward(Plan& p, const Layer& l, const ChannelShuffle& op) {
    Md view = shuffled(p, l, op);
    forward_view(p, l, view, view.dims());
}

void backward(Plan& p, const Layer& l, const ChannelShuffle& op) { permute_backward(p, l, shuffled(p, l, op)); }

// A permutation is x's bytes read with its dimensions' order changed (oneDNN's permute_axes). Where
// x's layout has no blocks, the output is that view: ConvNeXt's NCHW -> NHWC of a channels-last map
// is plain NHWC, and its NHWC -> NCHW back is channels-last, which its next depthwise conv reads as
// it is (inference at batch 16: the permutations took 29 ms of 450). A blocked x is reordered to
// plain and then copied in the new order: oneDNN's one reorder from the permuted blocked view was
// slower than the two (convnext_tiny's training step at batch 8: 1.02x).
void forward(Plan& p, const Layer& l, const Permute& op) {
    int x = p.value[size_t(l.x())];
    const Md xm = p.md(x);
    if (xm.data.format_kind != dnnl_blocked || xm.data.format_desc.blocking.inner_nblks != 0)
        return forward_view(p, l, permuted(p, l, op.order), dims_of(p.shape(l.n.output)));
    std::vector<int> to(op.order.size());  // permute_axes wants each axis's new position
    for (size_t i = 0; i < op.order.size(); ++i) to[size_t(normalize_dim(op.order[i], op.order.size()))] = int(i);
    p.value[size_t(l.n.output)] = p.alias(x, xm.permute_axes(to));
}

void backward(Plan& p, const Layer& l, const Permute& op) { permute_backward(p, l, permuted(p, l, op.order)); }

void forward(Plan& p, const Layer& l, const Flatten&) { reshape_forward(p, l); }
void backward(Plan& p, const Layer& l, const Flatten&) { reshape_backward(p, l); }
void forward(Plan& p, const Layer& l, const Reshape&) { reshape_forward(p, l); }
void backward(Plan& p, const Layer& l, const Reshape&) { reshape_backward(p, l); }

void forward(Plan& p, const Layer& l, const Slice& op) {
    region_forward(p, l, region(p, l, op.dim, op.start, op.length));
}
void backward(Plan& p, const Layer& l, const Slice& op) {
    region_backward(p, l, region(p, l, op.dim, op.start, op.length));
}
void forward(Plan& p, const Layer& l, const Select& op) { region_forward(p, l, region(p, l, op.dim, op.index, 1)); }
void backward(Plan& p, const Layer& l, const Select& op) { region_backward(p, l, region(p, l, op.dim, op.index, 1)); }

namespace {
void identity_forward(Plan& p, const Layer& l) {
    p.value[size_t(l.n.output)] = p.value[size_t(l.x())];
    p.grad_root[size_t(l.n.output)] = p.grad_root[size_t(l.x())];
}
}  // namespace

void forward(Plan& p, const Layer& l, const Dropout&) { identity_forward(p, l); }
void backward(Plan&, const Layer&, const Dropout&) {}
void forward(Plan& p, const Layer& l, const StochasticDepth&) { identity_forward(p, l); }
void backward(Plan&, const Layer&, const StochasticDepth&) {}

}  // namespace ridge::onednn
