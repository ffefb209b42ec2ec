// Pooling on oneDNN pooling_v2, in the input's layout; max pooling on kernels/simd
// (max_pool_forward below). Ceil mode is a larger right padding, which
// max pooling ignores; average pooling would count it in the divisor where PyTorch does not, so
// that case, and adaptive pooling whose windows differ in size, run the reference kernel.
// x (N,C,H,W)  y (N,C,P,Q)
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;

namespace {

// A window in oneDNN's terms: padding on the right grown to give ceil mode's extra window.
struct Window {
    Dims kernel, stride, pad_l, pad_r;
};

struct Pooling {
    algorithm alg;
    Window win;
};

// The pooling a Pool2d is in oneDNN's terms, or none when only the reference kernel matches it.
std::optional<Pooling> pooling_of(const Plan& p, const Layer& l, const Pool2d& op) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    // The padding the last window reaches into, at least the declared one.
    int64_t need_h = (ys[2] - 1) * op.stride.h + op.kernel.h - xs[2] - op.pad.top;
    int64_t need_w = (ys[3] - 1) * op.stride.w + op.kernel.w - xs[3] - op.pad.left;
    Window w{{op.kernel.h, op.kernel.w},
             {op.stride.h, op.stride.w},
             {op.pad.top, op.pad.left},
             {std::max(op.pad.bottom, need_h), std::max(op.pad.right, need_w)}};
    if (op.kind == Pool2d::Kind::max) return Pooling{algorithm::pooling_max, w};
    if (!op.count_include_pad) return Pooling{algorithm::pooling_avg_exclude_padding, w};
    if (need_h > op.pad.bottom || need_w > op.pad.right) return std::nullopt;
    return Pooling{algorithm::pooling_avg_include_padding, w};
}

std::optional<Pooling> pooling_of(const Plan& p, const Layer& l, const AdaptiveAvgPool2d&) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    if (xs[2] % ys[2] || xs[3] % ys[3]) return std::nullopt;
    int64_t kh = xs[2] / ys[2], kw = xs[3] / ys[3];
    return Pooling{algorithm::pooling_avg_exclude_padding, {{kh, kw}, {kh, kw}, {0, 0}, {0, 0}}};
}

void pool_forward(Plan& p, const Layer& l, const Pooling& pl) {
    int x = p.value[size_t(l.x())];
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    Md y_any(dims_of(p.shape(l.n.output)), dnnl::memory::data_type::f32, Tag::any);
    dnnl::pooling_v2_forward::desc d(prop, pl.alg, p.md(x), y_any, pl.win.stride, pl.win.kernel, {0, 0}, pl.win.pad_l,
                                     pl.win.pad_r);
    dnnl::pooling_v2_forward::primitive_desc pd(d, p.attr(), p.eng);
    int y = p.mem(pd.dst_desc());
    Plan::Saved s{pd, {x}, y};
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}};
    if (p.train && pl.alg == algorithm::pooling_max)
        args.push_back({DNNL_ARG_WORKSPACE, s.ws = p.mem(pd.workspace_desc())});
    p.primitive(pd, args);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = s;
}

void pool_backward(Plan& p, const Layer& l, const Pooling& pl) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    dnnl::pooling_v2_backward::desc d(pl.alg, p.md(s.in[0]), p.md(s.out), pl.win.stride, pl.win.kernel, {0, 0},
                                      pl.win.pad_l, pl.win.pad_r);
    dnnl::pooling_v2_backward::primitive_desc pd(d, p.attr(), p.eng,
                                                 hint<dnnl::pooling_v2_forward::primitive_desc>(s.pd));
    int dy = p.as(p.dy(l.n.output), pd.diff_dst_desc());
    int dx = p.contribution(l.x(), pd.diff_src_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_DIFF_SRC, dx}};
    if (s.ws >= 0) args.push_back({DNNL_ARG_WORKSPACE, s.ws});
    p.primitive(pd, args);
    p.contributed(l.x(), dx);
}

// Global average pooling's gradient is dy[n, c] / HW at every position. oneDNN 2.6 runs a
// pooling backward whose window is the whole map in its reference implementation: 30 ms for the
// first squeeze-excitation pool of regnet_y_400mf at batch 8 (8x48x56x56), 246 of the training
// step's 355 ms over its 16 SE blocks. kernels/simd's broadcast writes it in x's layout instead.
bool global_pool_backward(Plan& p, const Layer& l) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    if (ys.size() != 4 || ys[2] != 1 || ys[3] != 1 || s.in.empty() || s.in[0] < 0) return false;
    const int64_t block = channel_block(p.md(s.in[0]));
    if (block == 0) return false;
    if (!p.needs_grad(l.x())) return true;
    p.at(&p.bwd, l.node, Phase::dgrad);
    const simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
    const float k = 1.0f / float(xs[2] * xs[3]);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(ys)));
    // Squeeze-excitation's scale reached x's gradient first: the broadcast adds into it while it is
    // in cache, where writing a map of its own and adding that were two passes over memory
    // (regnet_y_400mf's block3-0 at batch 1: 0.022 to 0.023 ms against the 20 us floor).
    if (int gr = p.arrived_as(l.x(), p.md(s.in[0])); gr >= 0) {
        p.kernel("add_broadcast_channels",
                 [lay, k](const std::vector<float*>& a) { simd::add_broadcast_channels(a[0], k, a[1], lay); },
                 {dy, gr});
        return true;
    }
    int dx = p.contribution(l.x(), p.md(s.in[0]));
    p.kernel("broadcast_channels",
             [lay, k](const std::vector<float*>& a) { simd::broadcast_channels(a[0], k, a[1], lay); }, {dy, dx});
    p.contributed(l.x(), dx);
    return true;
}

// Global average pooling runs kernels/simd's channel_means into plain rows, from a plain,
// channel-blocked or channels-last map. Where the channels pad the last block (72 or 120 in
// nChw16c: mobilenet_v3_large's, regnet_y_400mf's 104 and 440) oneDNN's pooling wrote the padded
// blocks, which the squeeze-excitation's inner product after it then reordered into rows, a step
// of its own for a few kilobytes (features.4.se.fc1 of mobilenet_v3_large at batch 16: 24 us
// against a 20 us floor). Elsewhere its pooling took 25 to 55 us on the classifiers' pools at
// batch 1 (densenet169's 1664x7x7: 55 against a bound of 13); channel_means took 10 to 16 (2-core
// Zen 3). A oneDNN primitive run after a large layer finds its own state out of cache: in a test
// program a ReLU over 4096 floats took 1.5 us warm and 17 to 27 after 256 MB were read. At
// batch 16 too it was no slower: resnet50's 0.22-0.31 ms against 0.60-0.88, efficientnet_b0's 17
// pools 7.1-7.7 against 8.4-10.0.
bool global_pool_into_rows(Plan& p, const Layer& l) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    int x = p.value[size_t(l.x())];
    const int64_t block = channel_block(p.md(x));
    if (ys.size() != 4 || ys[2] != 1 || ys[3] != 1 || block == 0) return false;
    const simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
    int y = p.mem(plain(dims_of(ys)));
    p.kernel("channel_means", [lay](const std::vector<float*>& a) { simd::channel_means(a[0], a[1], lay); }, {x, y});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    return true;
}

simd::MaxPool max_pool_of(const Plan& p, const Layer& l, const Pool2d& op, const Md& x) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    return {xs[0],       xs[1],       xs[2],       xs[3],      ys[2],       ys[3],        op.kernel.h,
            op.kernel.w, op.stride.h, op.stride.w, op.pad.top, op.pad.left, channel_block(x)};
}

// A pool's y in x's layout (plain, blocked by `block` or channels-last): channels-last of 8 or 16
// channels is the bytes of one block, which channel_block names by the block, but its readers
// expect channels-last.
int pooled(Plan& p, const Layer& l, int x, int64_t block) {
    const auto f32 = dnnl::memory::data_type::f32;
    const bool nhwc = p.md(x) == canonical(Md(dims_of(p.shape(l.x())), f32, Tag::nhwc));
    return p.mem(canonical(Md(dims_of(p.shape(l.n.output)), f32, tag_of_block(block, nhwc))));
}

// Max pooling runs kernels/simd's max_pool, in the map's layout (plain, channel-blocked or
// channels-last): oneDNN 2.6's AVX2 pooling read nChw8c at a quarter of memory speed, and nchw
// with its generic kernel (see kernels/simd/pool.cpp). In training max_pool_argmax writes y and
// each window's winning position, from which max_pool_backward gathers dx. On AVX2, oneDNN's
// pooling in training took resnet18's first pool at batch 8 on the 2-core Zen 3 10.5 ms forward
// and 12.3 backward, against bounds of 1.3 and 2.8. On AVX-512 oneDNN keeps the pools at stride
// 1 (googlenet's branch pools): there kernels/simd's forward, a chain of compares and selects
// for each of 9 elements a window, took twice oneDNN's (googlenet at batch 8 on the 2-core Zen
// 5: inception4a.branch4.0 0.33 against 0.16 ms), its gradient level. At stride 2 it was faster
// in the sum of both directions: resnet50's stem pool forward 0.79-0.84 ms against oneDNN's
// 0.92-1.02 (the flag's line 1.38), its gradient 1.34-1.46 against 1.43-1.46; vgg11's five 2x2
// pools forward level (6.6-9.2 ms against 7.7), gradients 5.5-8.6 against 8.5-9.1. Other strides
// were not measured there and keep oneDNN's. Where x takes no gradient, y alone (max_pool).
bool max_pool_forward(Plan& p, const Layer& l, const Pool2d& op) {
    if (op.kind != Pool2d::Kind::max) return false;
    const bool grad = p.train && p.needs_grad(l.x());
    if (grad && avx512_core_here() && (op.stride.h != 2 || op.stride.w != 2)) return false;
    const Shape& xs = p.shape(l.x());
    int x = p.value[size_t(l.x())];
    simd::MaxPool d = max_pool_of(p, l, op, p.md(x));
    // The backward needs channel blocks. A plain map in training (the image, or the output of a
    // conv oneDNN runs as its GEMM in nchw where image_forward does not take it) is reordered into
    // nChw8c, whose gradient the conv's backward reorders back: on the 2-core Zen 3 at batch 8, on
    // alexnet's first pool before image_forward took its conv, oneDNN's generic nchw pooling took
    // 19.9 ms forward and 4.6 ms backward, against bounds of 0.31 and 0.68.
    if (grad && d.block == 1) {
        const Md blocked = canonical(Md(dims_of(xs), dnnl::memory::data_type::f32, Tag::nChw8c));
        const simd::MaxPool b = max_pool_of(p, l, op, blocked);
        if (!simd::max_pool_backward_supported(b)) return false;
        x = p.value_as(l.x(), blocked);
        d = b;
    }
    if (!(grad ? simd::max_pool_backward_supported(d) : simd::max_pool_supported(d))) return false;
    const int y = pooled(p, l, x, d.block);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    if (!grad) {
        p.kernel("max_pool", [d](const std::vector<float*>& a) { simd::max_pool(a[0], a[1], d); }, {x, y});
        return true;
    }
    const int at = p.saved[size_t(l.node)].ws = p.mem(plain({simd::max_pool_positions_size(d)}));
    // y last, as every step's output.
    p.kernel("max_pool_argmax",
             [d](const std::vector<float*>& a) {
                 simd::max_pool_argmax(a[0], a[2], reinterpret_cast<int32_t*>(a[1]), d);
             },
             {x, at, y});
    return true;
}

simd::AvgPool avg_pool_of(const Plan& p, const Layer& l, const Pool2d& op, const Md& x) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    return {xs[0],       xs[1],       xs[2],       xs[3],       ys[2],        ys[3],           op.kernel.h,
            op.kernel.w, op.stride.h, op.stride.w, op.pad.top, op.pad.left, channel_block(x), op.count_include_pad,
            op.pad.bottom, op.pad.right};
}

// Average pooling on a channel-blocked map runs kernels/simd's avg_pool, forward and backward (the
// choice depends on the op and x's layout alone, so the backward makes it again). oneDNN's took 4
// to 12 times its bounds on inception_v3's and DenseNet's pools in training (kernels/simd/pool.cpp).
bool avg_pool_forward(Plan& p, const Layer& l, const Pool2d& op) {
    if (op.kind != Pool2d::Kind::avg) return false;
    const int x = p.value[size_t(l.x())];
    const simd::AvgPool d = avg_pool_of(p, l, op, p.md(x));
    if (!simd::avg_pool_supported(d)) return false;
    const int y = pooled(p, l, x, d.block);
    p.kernel("avg_pool", [d](const std::vector<float*>& a) { simd::avg_pool(a[0], a[1], d); }, {x, y});
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    return true;
}

// An adaptive pool whose output is its input's size.
bool to_own_size(const Plan& p, const Layer& l) { return p.shape(l.x()) == p.shape(l.n.output); }

}  // namespace

void forward(Plan& p, const Layer& l, const Pool2d& op) {
    if (max_pool_forward(p, l, op) || avg_pool_forward(p, l, op)) return;
    if (auto pl = pooling_of(p, l, op)) return pool_forward(p, l, *pl);
    forward_reference(p, l);
}

// The gradient of a max pool whose forward was kernels/simd's (no primitive saved), in x's layout.
bool max_pool_backward(Plan& p, const Layer& l, const Pool2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    if (op.kind != Pool2d::Kind::max || s.pd || s.in.empty()) return false;
    if (!p.needs_grad(l.x())) return true;
    p.at(&p.bwd, l.node, Phase::dgrad);
    const simd::MaxPool d = max_pool_of(p, l, op, p.md(s.in[0]));
    int dy = p.as(p.dy(l.n.output), p.md(s.out));
    int dx = p.contribution(l.x(), p.md(s.in[0]));
    p.kernel("max_pool_backward",
             [d](const std::vector<float*>& a) {
                 simd::max_pool_backward(reinterpret_cast<const int32_t*>(a[0]), a[1], a[2], d);
             },
             {s.ws, dy, dx});
    p.contributed(l.x(), dx);
    return true;
}

// The gradient of an average pool whose forward was kernels/simd's, in x's layout.
bool avg_pool_backward(Plan& p, const Layer& l, const Pool2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    if (op.kind != Pool2d::Kind::avg || s.pd || s.in.empty()) return false;
    const simd::AvgPool d = avg_pool_of(p, l, op, p.md(s.in[0]));
    if (!simd::avg_pool_supported(d)) return false;  // the reference kernel's
    if (!p.needs_grad(l.x())) return true;
    p.at(&p.bwd, l.node, Phase::dgrad);
    const int dy = p.as(p.dy(l.n.output), p.md(s.out));
    const int dx = p.contribution(l.x(), p.md(s.in[0]));
    p.kernel("avg_pool_backward", [d](const std::vector<float*>& a) { simd::avg_pool_backward(a[0], a[1], d); },
             {dy, dx});
    p.contributed(l.x(), dx);
    return true;
}

void backward(Plan& p, const Layer& l, const Pool2d& op) {
    if (max_pool_backward(p, l, op) || avg_pool_backward(p, l, op)) return;
    if (auto pl = pooling_of(p, l, op)) return pool_backward(p, l, *pl);
    backward_reference(p, l);
}

// An adaptive average pool to its input's own size (alexnet's 6x6 and the VGGs' 7x7 before the
// classifier) is the identity: a copy into plain nchw, after which the flatten is a view, and in
// training a gradient reordered back into the input's layout. From nChw16c (batch 2 and more) that
// one reorder replaces the pool's copy and the flatten's (0.05 to 0.1 ms each at batch 16); in
// training oneDNN's pooling backward on the 1x1 window took 4x its bound (0.2 ms at batch 8).
// Where the classifier reads the map as it lies (training at one or two images, inference on
// AVX-512 up to 16: linear.cpp), the pool is a view and its gradient the classifier's; only where
// the pool reads the map last: the view's readers do not count as the map's, so a later reader
// could overwrite it in place (a SiLU of it on a branch of its own) before the classifier reads it.
void forward(Plan& p, const Layer& l, const AdaptiveAvgPool2d& op) {
    // The SiLU before it wrote the means (activation.cpp's silu_means_forward).
    if (p.value[size_t(l.n.output)] >= 0) return;
    if (to_own_size(p, l)) {
        int x = p.value[size_t(l.x())];
        if (read_last_by(p, l, l.x()) && classifier_reads_map(p, l.n.output, p.md(x))) {
            p.value[size_t(l.n.output)] = x;
            return;
        }
        int y = p.mem(plain(dims_of(p.shape(l.n.output))));
        p.reorder_into(x, y);
        p.value[size_t(l.n.output)] = y;
        return;
    }
    if (global_pool_into_rows(p, l)) return;
    if (auto pl = pooling_of(p, l, op)) return pool_forward(p, l, *pl);
    forward_reference(p, l);
}

void backward(Plan& p, const Layer& l, const AdaptiveAvgPool2d& op) {
    if (to_own_size(p, l)) {
        if (!p.needs_grad(l.x())) return;
        p.at(&p.bwd, l.node, Phase::dgrad);
        if (p.md(p.dy(l.n.output)) == p.md(p.value[size_t(l.x())])) return p.pass(l.x(), p.dy(l.n.output), true);
        return p.pass_reordered(l.x(), p.dy(l.n.output), p.md(p.value[size_t(l.x())]));
    }
    if (global_pool_backward(p, l)) return;
    if (auto pl = pooling_of(p, l, op)) return pool_backward(p, l, *pl);
    backward_reference(p, l);
}

}  // namespace ridge::onednn
