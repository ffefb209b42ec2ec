// BatchNorm and LayerNorm on oneDNN's normalization primitives, epsilon 1e-5.
// BatchNorm: x (N,C,H,W) in any layout; inference reads the running statistics (use_global_stats),
// training computes batch statistics (biased variance) and keeps them for backward. A batchnorm
// that feeds only a ReLU runs it inside (fuse_norm_relu) when fused. In training a small map, and
// with AVX-512 a map of 8-channel blocks up to a size, runs kernels/simd's batchnorm instead
// (small_batchnorm and block8_unit_floats below); in inference, where the layout allows,
// kernels/simd's per-channel affine from the running statistics (affine_forward below).
// LayerNorm: kernels/simd's, over rows of the last dimension of a dense tensor (oneDNN 2.6's
// layernorm is portable C++ without vector code, kernels/simd/layernorm.cpp says how slow);
// ConvNeXt's channels-first LayerNorm2d (dim 1 of (N,C,H,W)) runs on an nhwc copy, which is
// (N,H,W,C) with C last.
#include "engine/ops/norm.h"

#include <cmath>
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::prop_kind;
using Flags = dnnl::normalization_flags;

namespace {
constexpr float eps = 1e-5f;
Md vec(int64_t n) { return Md({n}, dnnl::memory::data_type::f32, Tag::a); }

// A batchnorm leads a group only to fuse the ReLU after it.
bool fused_relu(const Layer& l) { return l.group != nullptr; }

// In training a batchnorm of at most this many elements (its padding counted) runs kernels/simd's
// batchnorm_forward and batchnorm_backward: oneDNN's primitive took 20 to 50 us for maps of a few
// kilobytes at batch 1 (googlenet's inception4 and 5, shufflenet_v2's stage 4, resnet18's layer4),
// its own state out of cache after the large layers around it.
constexpr int64_t small_batchnorm = 1 << 17;

// With AVX-512, a batchnorm on 8-channel blocks (nChw8c, or channels-last on 8 channels, the same
// bytes) runs kernels/simd's kernel beyond small_batchnorm too, while a thread's unit, one block
// over every image, holds at most this many floats of x (its passes then find x, and dy, in L2)
// and there are at least as many blocks as threads. oneDNN's batchnorm there is its AVX2 kernel
// (the grouped convs before it run oneDNN's AVX2 kernels: regnet_x_1_6gf's groups of 24,
// regnet_y_400mf's and resnext50's of 8 at stride 1); kernels/simd's reads an even map's lines
// whole (batchnorm.cpp's pairs), an odd one's (7x7) half a line a position as before. On the
// 2-core Zen 5, alone with a ReLU, 8x48x56x56 (200704 floats a unit, past L2 for x and dy) took
// 0.23 ms forward and 0.80-0.91 backward against oneDNN's 0.37-0.42 and 0.55-0.61, hence the
// limit. In the training step at batch 8 (`ridge profile`, two alternated runs, the nets' nChw8c
// batchnorms summed, forward and backward; a busy hour): regnet_x_1_6gf's 18 (block1's two now
// oneDNN's) 6.58 and 7.39, 5.92 and 5.44 ms -> 5.18 and 6.06, 5.47 and 6.95; regnet_y_400mf's 14
// 1.98 and 2.44, 1.83 and 2.07 -> 1.32 and 2.30, 1.50 and 2.74; resnext50's 3 2.30 and 2.70, 1.64
// and 1.90 -> 1.56 and 2.63, 1.30 and 2.09. The forward gains, the backward (with its ReLU's
// mask: batchnorm.cpp) is level or slower.
constexpr int64_t block8_unit_floats = 1 << 16;

// x's layout as kernels/simd's batchnorm reads it, where it can: 8 or 16 channels a block, or
// channels-last with C a multiple of 8. Block 0: not one of those.
simd::ChannelLayout simd_layout(const Plan& p, const Layer& l, int x) {
    const Shape& xs = p.shape(l.x());
    const int64_t block = channel_block(p.md(x));
    const simd::ChannelLayout none{0, 0, 0, 0};
    if (xs.size() != 4 || block == 0 || block % 8 != 0) return none;
    simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
    if (block == 8 && avx512_core_here() && lay.N * lay.HW * 8 <= block8_unit_floats && lay.blocks() >= p.threads)
        return lay;
    return lay.N * lay.batch_stride() > small_batchnorm ? none : lay;
}

// The forward reads x three times (the sum, the deviations, the output) and writes once: twice the
// bytes the executor's estimate counts, by which googlenet's 8x24x14x14 maps in nChw16c (50176
// floats) ran on one thread, 26-33 us against a bound of 6 at batch 8 on the 2-core Zen 4 (the
// backward, on both, 15-21). From 16384 floats (13 us of one core's passes at 20 GB/s) it takes
// every thread where the executor holds the team awake, else from four times that, as
// activation.cpp's sigmoid_shared.
int64_t batchnorm_shared(const Plan& p) { return p.teams_held ? 16384 : 4 * 16384; }

bool simd_forward(Plan& p, const Layer& l) {
    const int x = p.value[size_t(l.x())];
    const simd::ChannelLayout lay = simd_layout(p, l, x);
    if (!p.train || lay.block == 0) return false;
    // The kernel gives a thread whole units of channels, 16 where the block is a multiple of 16,
    // else 8: a single unit is one thread's anyway.
    const bool units = lay.padded_channels() > (lay.block % 16 == 0 ? 16 : 8);
    if (units && lay.N * lay.batch_stride() >= batchnorm_shared(p)) p.use_threads(p.threads);
    const int64_t C = lay.C;
    const int y = p.mem(p.md(x));
    Plan::Saved s{{}, {x}, y};
    s.mean = p.mem(vec(C));
    s.var = p.mem(vec(C));
    p.kernel("batchnorm_forward",
             [lay, relu = fused_relu(l)](const std::vector<float*>& a) {
                 simd::batchnorm_forward(a[0], a[1], a[2], a[3], a[4], a[5], relu, lay, eps);
             },
             {x, p.param_mem(l.node, 0, vec(C)), p.param_mem(l.node, 1, vec(C)), y, s.mean, s.var},
             {"src", "scale", "shift", "dst", "mean", "variance"});
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = s;
    return true;
}

void simd_backward(Plan& p, const Layer& l) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Md xmd = p.md(s.in[0]);
    const simd::ChannelLayout lay = simd_layout(p, l, s.in[0]);
    const bool dgrad = p.needs_grad(l.x());
    std::vector<int> args = {s.in[0],
                             p.as(p.dy(l.y(p.g)), xmd),
                             p.param[size_t(l.node)][0],
                             p.param[size_t(l.node)][1],
                             s.mean,
                             s.var,
                             p.dparam_mem(l.node, 0, vec(lay.C)),
                             p.dparam_mem(l.node, 1, vec(lay.C))};
    const int dx = dgrad ? p.contribution(l.x(), xmd) : -1;
    if (dgrad) args.push_back(dx);
    p.kernel("batchnorm_backward",
             [lay, relu = fused_relu(l)](const std::vector<float*>& a) {
                 simd::batchnorm_backward(a[0], a[1], a[2], a[3], a[4], a[5], relu, a.size() > 8 ? a[8] : nullptr, a[6],
                                          a[7], lay, eps);
             },
             args, {"src", "diff_dst", "scale", "shift", "mean", "variance", "diff_scale", "diff_shift", "diff_src"});
    if (dgrad) p.contributed(l.x(), dx);
}

// In inference, y = x * scale + shift (and the ReLU) in x's own layout, through kernels/simd's
// concat_affine with one piece: plain, channels-last of any C, or channel blocks C fills. The
// per-layer pass (unfused) runs every batchnorm so. oneDNN 2.6 has only its portable C++ kernel
// for channels-last when C is not a multiple of 4, so shufflenet_v2's 58 and 116 channels went
// to nChw16c and back around each batchnorm: at batch 1 on the 2-core Zen 5, 35 us a batchnorm of
// 1x58x28x28 with its reorders (bound 6.4) and 1.6 of the 4.5 ms of that pass in reorders.
bool affine_forward(Plan& p, const Layer& l) {
    const int x = p.value[size_t(l.x())];
    const Shape& xs = p.shape(l.x());
    const int64_t block = channel_block(p.md(x));
    if (p.train || block == 0 || (block != 1 && block != xs[1] && xs[1] % block != 0)) return false;
    const simd::ChannelLayout lay{xs[0], xs[1], xs[2] * xs[3], block};
    const int64_t C = lay.C;
    // Over x where nothing reads x after it (a conv's output, the per-layer pass's usual case): a
    // fresh y was a buffer the other core had written last, whose lines each cost a transfer to be
    // written. regnet_y_400mf's 1x208x14x14 after a two-thread conv: 28 us, 11 in a test program.
    const int y = output_over(p, l, x, l.x(), p.md(x));
    p.kernel("batchnorm_inference",
             [lay, relu = fused_relu(l)](const std::vector<float*>& a) {
                 batchnorm_affine(a[0], a[1], a[2], a[3], a[4], a[4] + lay.C, lay.C);
                 const float* in = a[5];
                 simd::concat_affine(&in, &lay.C, 1, a[4], a[4] + lay.C, relu, a[6], lay);
             },
             {p.param_mem(l.node, 0, vec(C)), p.param_mem(l.node, 1, vec(C)), p.param_mem(l.node, 2, vec(C)),
              p.param_mem(l.node, 3, vec(C)), p.mem(vec(2 * C)), x, y},
             {"scale", "shift", "mean", "variance", "scratch", "src", "dst"});
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    return true;
}

}  // namespace

void batchnorm_affine(const float* gamma, const float* beta, const float* mean, const float* var, float* scale,
                      float* shift, int64_t C) {
    for (int64_t c = 0; c < C; ++c) {
        const double k = double(gamma[c]) / std::sqrt(double(var[c]) + 1e-5);  // epsilon: executor.h
        scale[c] = float(k);
        shift[c] = float(double(beta[c]) - double(mean[c]) * k);
    }
}

void forward(Plan& p, const Layer& l, const BatchNorm&) {
    if (simd_forward(p, l) || affine_forward(p, l)) return;
    int64_t C = p.shape(l.x())[1];
    bool relu = fused_relu(l);
    Flags flags = Flags::use_scale | Flags::use_shift;
    if (!p.train) flags |= Flags::use_global_stats;
    if (relu) flags |= Flags::fuse_norm_relu;
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    auto make = [&](const Md& data) {
        dnnl::batch_normalization_forward::desc d(prop, data, eps, flags);
        return dnnl::batch_normalization_forward::primitive_desc(d, p.attr(), p.eng);
    };
    // Normally the input's own layout. Where oneDNN 2.6 has no vector kernel for it, it runs on a
    // copy in the first blocked or channels-last layout with one; its output and gradients stay in
    // that layout. Grouped convs of 4 channels per group (resnext50's first stage) write nChw4c,
    // which only its reference kernel normalizes: 41 ms forward for 8x128x56x56 against 0.3 ms in
    // nChw16c after a 0.8 ms reorder, and the backward likewise. Channels-last with a channel count
    // not a multiple of 4 (shufflenet_v2's 58) gets its portable C++ kernel (nspc_bnorm:any):
    // 230 us for 1x58x28x28 against 6.6 us in nChw16c plus a 15 us reorder in, 1.7 + 3.5 ms forward
    // and backward at batch 8 against 0.05 + 0.05 ms.
    int x = p.value[size_t(l.x())];
    auto pd = make(p.md(x));
    const Shape& xs = p.shape(l.x());
    if (generic_impl(pd) && xs.size() == 4)
        for (Tag tag : {Tag::nChw16c, Tag::nChw8c, Tag::nhwc}) {
            auto other = make(Md(dims_of(xs), dnnl::memory::data_type::f32, tag));
            if (generic_impl(other)) continue;
            pd = other;
            x = p.value_as(l.x(), pd.src_desc());
            break;
        }

    int y = p.mem(pd.dst_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, x},
                                             {DNNL_ARG_DST, y},
                                             {DNNL_ARG_SCALE, p.param_mem(l.node, 0, vec(C))},
                                             {DNNL_ARG_SHIFT, p.param_mem(l.node, 1, vec(C))}};
    Plan::Saved s{pd, {x}, y};
    if (p.train) {
        s.mean = p.mem(pd.mean_desc());
        s.var = p.mem(pd.variance_desc());
        if (relu) args.push_back({DNNL_ARG_WORKSPACE, s.ws = p.mem(pd.workspace_desc())});
    } else {
        s.mean = p.param_mem(l.node, 2, vec(C));
        s.var = p.param_mem(l.node, 3, vec(C));
    }
    args.push_back({DNNL_ARG_MEAN, s.mean});
    args.push_back({DNNL_ARG_VARIANCE, s.var});
    p.primitive(pd, args);
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = s;
}

// One primitive computes dx, dgamma and dbeta; its time is charged to dgrad.
void backward(Plan& p, const Layer& l, const BatchNorm&) {
    p.at(&p.bwd, l.node, p.needs_grad(l.x()) ? Phase::dgrad : Phase::wgrad);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    if (!s.pd) return simd_backward(p, l);
    int64_t C = p.shape(l.x())[1];
    Flags flags = Flags::use_scale | Flags::use_shift;
    if (s.ws >= 0) flags |= Flags::fuse_norm_relu;
    // The forward's own descriptor: the plan's memories are canonical (plan.h), and a layout the
    // forward took in place of its input's (above) may differ from its canonical form in the
    // strides of size-1 dimensions, for which oneDNN has no backward.
    auto fwd = hint<dnnl::batch_normalization_forward::primitive_desc>(s.pd);
    Md data = fwd.src_desc();
    dnnl::batch_normalization_backward::desc d(prop_kind::backward, data, data, eps, flags);
    dnnl::batch_normalization_backward::primitive_desc pd(d, p.attr(), p.eng, fwd);
    int dy = p.as(p.dy(l.y(p.g)), pd.diff_dst_desc());
    int dx = p.needs_grad(l.x()) ? p.contribution(l.x(), pd.diff_src_desc()) : p.mem(pd.diff_src_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, s.in[0]},
                                             {DNNL_ARG_MEAN, s.mean},
                                             {DNNL_ARG_VARIANCE, s.var},
                                             {DNNL_ARG_SCALE, p.param[size_t(l.node)][0]},
                                             {DNNL_ARG_SHIFT, p.param[size_t(l.node)][1]},  // asked for, unread
                                             {DNNL_ARG_DIFF_DST, dy},
                                             {DNNL_ARG_DIFF_SRC, dx},
                                             {DNNL_ARG_DIFF_SCALE, p.dparam_mem(l.node, 0, vec(C))},
                                             {DNNL_ARG_DIFF_SHIFT, p.dparam_mem(l.node, 1, vec(C))}};
    if (s.ws >= 0) args.push_back({DNNL_ARG_WORKSPACE, s.ws});
    p.primitive(pd, args);
    if (p.needs_grad(l.x())) p.contributed(l.x(), dx);
}

namespace {

// The layout LayerNorm reads its input in: dense with the normalized dimension innermost, so that
// the tensor is `rows` rows of D contiguous floats.
struct LnRows {
    Md value;
    int64_t rows, D;
};

LnRows ln_rows(const Plan& p, const Layer& l, const LayerNorm& op) {
    const Shape& xs = p.shape(l.x());
    int d = normalize_dim(op.dim, xs.size());
    const int64_t D = xs[size_t(d)], rows = numel(xs) / D;
    if (d == int(xs.size()) - 1) return {plain(dims_of(xs)), rows, D};
    if (xs.size() == 4 && d == 1) return {Md(dims_of(xs), dnnl::memory::data_type::f32, Tag::nhwc), rows, D};
    throw std::invalid_argument(cat("onednn: layernorm over dimension ", d, " of ", to_string(xs),
                                    " (only the last, or channels of (N,C,H,W))"));
}

// In inference, a LayerNorm over the channels of an activation a convolution left channel-blocked
// (ConvNeXt's stem) reads it in place, instead of from a channels-last copy made first: that
// copy had been 0.44 of convnext_tiny's features.0.ln1's 0.93 ms at batch 8 on the 2-core Zen 5
// (bound 0.19). Three alternated rounds there, after: batch 8 1.09-1.17 -> 0.85-1.10 ms, batch 16
// 2.08-2.69 -> 1.75-1.96 (bound 0.39), still over 4x at that hour's memory speed. In training the
// backward reads x channels-last, so the copy stays.
std::optional<simd::ChannelLayout> blocked_channels(const Plan& p, const Layer& l, const LayerNorm& op) {
    const Shape& xs = p.shape(l.x());
    if (p.train || xs.size() != 4 || normalize_dim(op.dim, xs.size()) != 1) return std::nullopt;
    const Md& m = p.md(p.value[size_t(l.x())]);
    const int64_t block = channel_block(m);
    if ((block != 8 && block != 16) || m == Md(dims_of(xs), dnnl::memory::data_type::f32, Tag::nhwc))
        return std::nullopt;
    return simd::ChannelLayout{xs[0], xs[1], xs[2] * xs[3], block};
}

}  // namespace

void forward(Plan& p, const Layer& l, const LayerNorm& op) {
    const auto [value, rows, D] = ln_rows(p, l, op);
    const std::optional<simd::ChannelLayout> blocked = blocked_channels(p, l, op);
    int x = blocked ? p.value[size_t(l.x())] : p.value_as(l.x(), value);
    // Rows over their input in inference where nothing reads it after (ConvNeXt's, after its
    // depthwise conv and at each downsampling): a row is written where it was just read.
    int y = blocked ? p.mem(value) : output_over(p, l, x, l.x(), value);
    Plan::Saved s{{}, {x}, y};
    std::vector<int> args = {x, p.param_mem(l.node, 0, vec(D)), p.param_mem(l.node, 1, vec(D)), y};
    if (blocked) {
        p.kernel(
            "layernorm_channels_forward",
            [lay = *blocked](const std::vector<float*>& a) {
                simd::layernorm_channels_forward(a[0], lay, a[1], a[2], a[3], eps);
            },
            args);
    } else {
        if (p.train) args.push_back(s.mean = p.mem(vec(rows))), args.push_back(s.var = p.mem(vec(rows)));
        p.kernel(
            "layernorm_forward",
            [rows, D](const std::vector<float*>& a) {
                const bool stats = a.size() > 4;
                simd::layernorm_forward(a[0], a[1], a[2], a[3], stats ? a[4] : nullptr, stats ? a[5] : nullptr, rows,
                                        D, eps);
            },
            args);
    }
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = s;
}

void backward(Plan& p, const Layer& l, const LayerNorm& op) {
    const bool dgrad = p.needs_grad(l.x());
    p.at(&p.bwd, l.node, dgrad ? Phase::dgrad : Phase::wgrad);
    const auto [value, rows, D] = ln_rows(p, l, op);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const int threads = p.step_threads();
    std::vector<int> args = {s.in[0],
                             p.as(p.dy(l.n.output), value),
                             p.param[size_t(l.node)][0],
                             s.mean,
                             s.var,
                             p.dparam_mem(l.node, 0, vec(D)),
                             p.dparam_mem(l.node, 1, vec(D)),
                             p.mem(plain({int64_t(simd::layernorm_backward_scratch(D, threads))}))};
    // A residual's gradient that reached x first is added to in the same pass: in vit_b_16 that saved
    // a binary add over 197x768 floats after each layernorm's gradient.
    const int arrived = dgrad ? p.arrived_as(l.x(), value) : -1;
    const bool add = arrived >= 0;
    int dx = !dgrad ? -1 : add ? arrived : p.contribution(l.x(), value);
    if (dgrad) args.push_back(dx);
    p.kernel("layernorm_backward",
             [rows, D, threads, add](const std::vector<float*>& a) {
                 simd::layernorm_backward(a[0], a[1], a[2], a[3], a[4], a.size() > 8 ? a[8] : nullptr, add, a[5], a[6],
                                          a[7], rows, D, eps, threads);
             },
             args, {"src", "diff_dst", "scale", "mean", "variance", "diff_scale", "diff_shift", "scratch", "diff_src"});
    if (dgrad && !add) p.contributed(l.x(), dx);
}

}  // namespace ridge::onednn
