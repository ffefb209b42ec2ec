// Conv2d on oneDNN convolutions. The primitive picks its layouts (format_tag::any): on AVX2 that is
// nChw8c activations and blocked weights, which the rest of the net then keeps. In fused inference
// the batchnorm after the conv is folded into its weights and bias at load(), and the group's
// activations and residual sum are post-ops. On AVX-512, 3x3 stride-1 convs with enough channels
// run as oneDNN's Winograd, forward and backward (winograd_pays below); below AVX-512 as
// kernels/simd's, in inference and for training's gradients (winograd_forward, winograd_trains).
// Depthwise and some grouped convs run kernels/simd's kernels where oneDNN's were slow (each says
// where and why).
// x (N,C,H,W)  w (K,C/G,R,S) or, grouped, (G,K/G,C/G,R,S)  b (K)  y (N,K,P,Q)
#include <algorithm>
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::algorithm;
using dnnl::prop_kind;
namespace {

struct ConvGeometry {
    Md x, w, b, y;  // x, w, y with format any
    Dims stride, dilate, pad_l, pad_r;
};

ConvGeometry geometry(const Plan& p, const Layer& l, const Conv2d& op) {
    const Shape& xs = p.shape(l.x());
    const Shape& ys = p.shape(l.n.output);
    int64_t C = xs[1], K = op.K, G = op.G;
    Dims w = G > 1 ? Dims{G, K / G, C / G, op.kernel.h, op.kernel.w} : Dims{K, C, op.kernel.h, op.kernel.w};
    auto f32 = dnnl::memory::data_type::f32;
    return {
        Md(dims_of(xs), f32, Tag::any), Md(w, f32, Tag::any),
        Md({K}, f32, Tag::a),           Md(dims_of(ys), f32, Tag::any),
        {op.stride.h, op.stride.w},     {op.dilation.h - 1, op.dilation.w - 1},  // oneDNN counts the gaps: 0 is dense
        {op.pad.top, op.pad.left},      {op.pad.bottom, op.pad.right}};
}

// The activation layout of channel_block `block` as kernels/simd reads it: nChw16c or nChw8c, else
// channels-last.
Tag block_tag(int64_t block) { return block == 16 ? Tag::nChw16c : block == 8 ? Tag::nChw8c : Tag::nhwc; }

// The depthwise conv of layer l in kernels/simd's terms, its activations in the layout of channel
// block `block` (channel_block's: 8, 16, or C for channels-last) and its weights plain; none when
// the layer is not depthwise.
std::optional<simd::Depthwise> as_depthwise(const Plan& p, const Layer& l, const Conv2d& op, int64_t block) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    const int64_t C = xs[1];
    if (C == 1 || op.G != C || op.K != C) return std::nullopt;
    return simd::Depthwise{.N = xs[0], .C = C, .H = xs[2], .W = xs[3], .P = ys[2], .Q = ys[3], .R = op.kernel.h,
                           .S = op.kernel.w, .stride_h = op.stride.h, .stride_w = op.stride.w, .pad_t = op.pad.top,
                           .pad_l = op.pad.left, .dil_h = op.dilation.h, .dil_w = op.dilation.w, .block = block,
                           .blocked_weights = false};
}

// A depthwise conv's weights (C,1,1,R,S) blocked by the kernels' lanes: [block][r][s][lane].
Md depthwise_weights_md(const simd::Depthwise& d) {
    return Md({d.C, 1, 1, d.R, d.S}, dnnl::memory::data_type::f32,
              simd::depthwise_lanes(d) == 16 ? Tag::Goihw16g : Tag::Goihw8g);
}

// A depthwise weight gradient where oneDNN 2.6 has only its reference implementation for the
// forward's blocked layout (kernels larger than 3x3), or a forward in channels-last, where its
// weight gradient is the generic jit kernel with each channel padded to a group of 16 (convnext's
// 96-channel 7x7 at 56x56, batch 1: 3.1 ms against 0.29 ms for the kernel below in nChw16c), runs
// kernels/simd's depthwise_wgrad, which reads x and dy in that layout and writes dw in the
// forward's blocked weight layout or plain. False when the layer is not depthwise or the layouts
// are not ones it reads.
bool depthwise_wgrad(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& sv = p.saved[size_t(l.node)];
    const int64_t block = channel_block(p.md(sv.in[0]));
    std::optional<simd::Depthwise> found = as_depthwise(p, l, op, block);
    if (!found || !simd::depthwise_wgrad_supported(*found)) return false;
    simd::Depthwise d = *found;
    const int64_t C = d.C;
    const Shape& ys = p.shape(l.n.output);
    auto f32 = dnnl::memory::data_type::f32;
    Md w = p.md(p.param[size_t(l.node)][0]);
    d.blocked_weights = w == depthwise_weights_md(d);
    int dy = p.as(p.dy(l.n.output), Md(dims_of(ys), f32, block_tag(block)));
    int dw = p.dparam_mem(l.node, 0, d.blocked_weights ? w : plain({C, 1, 1, op.kernel.h, op.kernel.w}));
    int scratch = p.mem(plain({int64_t(simd::depthwise_wgrad_scratch(d, p.step_threads()))}));
    std::vector<int> args = {sv.in[0], dy, dw, scratch};
    if (op.bias) args.push_back(p.dparam_mem(l.node, 1, plain({C})));
    p.kernel(
        "depthwise_wgrad",
        [d, threads = p.step_threads(), bias = op.bias](const std::vector<float*>& a) {
            simd::depthwise_wgrad(a[0], a[1], a[2], bias ? a[4] : nullptr, a[3], d, threads);
        },
        args);
    return true;
}

// The conv of layer l as kernels/simd's ImageConv, y or dy in the layout of channel block `block`
// (8, 16, or K for channels-last); none unless it is ungrouped, dense, on at most 4 plain channels
// (a net's first, on the image).
std::optional<simd::ImageConv> as_image(const Plan& p, const Layer& l, const Conv2d& op, int x, int64_t block) {
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    if (op.G != 1 || xs[1] > 4 || channel_block(p.md(x)) != 1 || op.dilation.h != 1 || op.dilation.w != 1)
        return std::nullopt;
    return simd::ImageConv{.N = xs[0],
                           .C = xs[1],
                           .H = xs[2],
                           .W = xs[3],
                           .K = op.K,
                           .P = ys[2],
                           .Q = ys[3],
                           .R = op.kernel.h,
                           .S = op.kernel.w,
                           .stride_h = op.stride.h,
                           .stride_w = op.stride.w,
                           .pad_t = op.pad.top,
                           .pad_l = op.pad.left,
                           .block = block};
}

// A conv on the image for which oneDNN 2.6's own choice is its GEMM convolution (gemm:jit: the
// shapes its direct jit kernels do not take, alexnet's 11x11 stride 4), on AVX2 below AVX-512, runs
// kernels/simd's image_conv, writing nChw8c (the layout oneDNN's AVX2 convs after it read) with
// the bias, a folded batchnorm and a ReLU applied. Alone, 2 threads of the Zen 3, medians of
// alternated calls, alexnet's 1x3x224x224: 0.51 of the GEMM's time (1.2 against 2.1 ms), at batch
// 8 0.48; the GEMM's output was plain, which the next conv reordered. On the shapes oneDNN runs
// with its direct kernel (resnet's 7x7 stride 2, vgg's 3x3, the 3x3 stride-2 stems) the kernel
// took 1.3 to 1.9 times oneDNN's, and on vit's 16x16 stride 16 0.64 but no faster than the net's
// own channels-last plan, so those stay oneDNN's. In training the forward's weights are packed
// every step, and image_wgrad then reads dy in nChw8c; the image needs no data gradient.
bool image_forward(Plan& p, const Layer& l, const Conv2d& op, const dnnl::convolution_forward::primitive_desc& pd) {
    if (avx512_core_here() || !avx2_here() || std::string(pd.impl_info_str()).find("gemm") == std::string::npos)
        return false;
    if (p.train && p.needs_grad(l.x())) return false;
    if (!post_ops_all(p, l, Activation::Fn::relu)) return false;
    const int x = p.value[size_t(l.x())];
    const std::optional<simd::ImageConv> found = as_image(p, l, op, x, 8);
    if (!found || !simd::image_conv_supported(*found)) return false;
    const simd::ImageConv d = *found;
    if (p.train && !simd::image_conv_wgrad_supported(d)) return false;  // image_wgrad takes its backward
    const bool relu = l.group && !l.group->post.empty();
    const bool folded = l.group && l.group->bn >= 0, bias = op.bias || folded;
    auto f32 = dnnl::memory::data_type::f32;
    const int w = p.param_mem(l.node, 0, plain({d.K, d.C, d.R, d.S}));
    const int b = bias ? p.param_mem(l.node, 1, Md({d.K}, f32, Tag::a)) : -1;
    if (folded) p.folds.push_back({l.node, l.group->bn});
    // Inference packs the weights once, after the batchnorm is folded into them; training every step.
    const int u = p.mem(plain({int64_t(simd::image_conv_weights_size(d))}), !p.train);
    if (!p.train) p.at(&p.prep, l.node, Phase::fwd);
    p.kernel("image_conv_weights", [d](const std::vector<float*>& a) { simd::image_conv_weights(a[0], a[1], d); },
             {w, u});
    if (!p.train) p.at(&p.fwd, l.node, Phase::fwd);
    const int threads = p.step_threads();
    const int scratch = p.mem(plain({int64_t(simd::image_conv_scratch(d, threads))}));
    const int y = p.mem(canonical(Md(dims_of(p.shape(l.n.output)), f32, Tag::nChw8c)));
    p.kernel(
        "image_conv",
        [=](const std::vector<float*>& a) {
            simd::image_conv(a[0], a[1], bias ? a[4] : nullptr, relu, a[3], a[2], d, threads);
        },
        bias ? std::vector<int>{x, u, scratch, y, b} : std::vector<int>{x, u, scratch, y});
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};  // no primitive: image_wgrad reads this
    return true;
}

// The weight gradient of an ungrouped conv on few channels (a net's first, on the image), where the
// forward read them plain and either ran at stride 1 (vgg's 3x3), or wrote a plain output
// (oneDNN's GEMM), or was image_forward's (alexnet's 11x11 stride 4): kernels/simd's
// image_conv_wgrad. There oneDNN's ran at
// about half its own forward's speed on AVX2. On the 2-core Zen 3, `ridge profile NET --mode
// train`, weight gradient: vgg11 at batch 1 3.16 -> 2.34 ms (forward 1.4), alexnet at batch 8
// 21.1-21.9 -> 10.5. The stride-2 stems on jit:avx2's blocked output lost, two alternated runs
// each at batch 8: mobilenet_v2's 3x3 2.22-2.26 -> 3.18-3.85 ms, resnet50's 7x7 19.5-20.6 ->
// 25.6-25.7 (squeezenet1_0's 7x7, 96 channels, 36.9-38.8 -> 33.2-35.0), so those stay oneDNN's.
// False, planning nothing, for any other conv or layout.
bool image_wgrad(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    // Below AVX-512 only: not measured against oneDNN's AVX-512 kernels.
    if (avx512_core_here()) return false;
    // dy is read in the forward's layout where the kernel reads it, else (a GEMM forward's plain
    // output) reordered to nChw8c, a copy of dy that costs a small share of the sums.
    int64_t block = channel_block(p.md(s.out));
    const bool gemm = block == 1, ours = !s.pd;
    if (block != 16 && block != op.K) block = 8;
    // At stride 2 on oneDNN's blocked output oneDNN's own stays: there the kernel lost (above).
    if (!gemm && !ours && (op.stride.h != 1 || op.stride.w != 1)) return false;
    const std::optional<simd::ImageConv> found = as_image(p, l, op, s.in[0], block);
    if (!found) return false;
    const simd::ImageConv d = *found;
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    if (!simd::image_conv_wgrad_supported(d)) return false;
    int dy = p.as(p.dy(l.n.output), Md(dims_of(ys), dnnl::memory::data_type::f32, block_tag(block)));
    int dw = p.dparam_mem(l.node, 0, plain({op.K, xs[1], op.kernel.h, op.kernel.w}));
    int scratch = p.mem(plain({int64_t(simd::image_conv_wgrad_scratch(d, p.step_threads()))}));
    std::vector<int> args = {s.in[0], dy, dw, scratch};
    if (op.bias) args.push_back(p.dparam_mem(l.node, 1, plain({op.K})));
    p.kernel(
        "image_conv_wgrad",
        [d, threads = p.step_threads(), bias = op.bias](const std::vector<float*>& a) {
            simd::image_conv_wgrad(a[0], a[1], a[2], bias ? a[4] : nullptr, a[3], d, threads);
        },
        args);
    return true;
}

// kernels/simd's depthwise_conv_dgrad into dx, adding where a gradient arrived there: the data
// gradient of a channels-last depthwise conv (depthwise_backward) and of a blocked one on a wide
// map (depthwise_dgrad). w in the blocked weight layout of d's lanes.
void conv_dgrad_kernel(Plan& p, const simd::Depthwise& d, int dy, int w, int dx, bool add) {
    p.kernel("depthwise_conv_dgrad",
             [d, add, threads = p.step_threads()](const std::vector<float*>& a) {
                 simd::depthwise_conv_dgrad(a[0], a[1], a[2], add, nullptr, d, threads);
             },
             {dy, w, dx});
}

// The data gradient of a depthwise conv oneDNN ran forward in a channel-blocked layout (MobileNet's,
// MnasNet's, EfficientNet's and ShuffleNet's, whose batchnorm and activation keep their own steps
// in training): kernels/simd's depthwise_dgrad, which also adds into a gradient that arrived in x's
// layout (a stride-2 unit's input, which its other branch reads too) instead of writing a copy for
// oneDNN's binary add after it. oneDNN 2.6's jit_dw backward took 3 to 10 times its bound, more on
// small maps, where a large share of the taps lands in the padding (mobilenet_v3_large's 5x5
// features.14.conv2 at batch 8, 960 channels on 7x7, 1.48 ms against its forward's 0.40 on the
// 2-core Zen 3). `ridge profile NET --mode train`, alternated runs on the 2-core Zen 5, these
// layers' data gradients in all, ms:
// - At stride 2, on any map: shufflenet_v2_x1_0 at batch 8 1.96-1.97 -> 0.88-0.98 (stage4.0's
//   branch1.conv1, which adds, 0.20-0.26 -> 0.04-0.05), at batch 1 0.26-0.27 -> 0.13-0.14;
//   mobilenet_v2 at batch 8 4.06-4.12 -> 3.19-3.32; mobilenet_v3_large 3.20-3.45 -> 2.52-2.63;
//   efficientnet_b0 3.78-4.62 -> 3.36-3.50 (features.2.0's 8x96x112x112, 1.8-2.2 ms, level: its
//   dx is 38 MB), at batch 1 0.71-0.75 -> 0.45-0.64.
// - At stride 1, on maps up to 32 wide (oneDNN's before, or up to 3 kernel widths across the
//   forward's strip kernel over dy with the taps turned), 2 pairs at batch 8: 28x28 and 14x14
//   under 3x3, oneDNN's before, mobilenet_v2's features.5-13 3.09-3.36 -> 1.96-2.11,
//   efficientnet_b0's features.3.1 and 4.1-4.2 1.63-1.71 -> 1.05-1.13, shufflenet_v2_x1_0's
//   stages 2 and 3 1.18-1.26 -> 0.78; 7x7, and 14x14 under 5x5, the strip kernel's before,
//   efficientnet_b0's features.5-7 3.08-3.23 -> 2.26-2.46, shufflenet_v2's stage 4 0.21-0.22 ->
//   0.11. On 56x56 and 112x112 oneDNN's stays: efficientnet_b0's features.1.0 (112) 1.09-1.22
//   against 1.32-1.46 with the kernel, features.2.1 (56) 1.40-1.46 against 1.57-1.61;
//   mobilenet_v2's 1.17-1.21 against 1.22-1.26 and 1.35-1.46 against 1.45-1.50.
// - At stride 1 on a map wider than 32 whose gradient arrived first (efficientnet_b7's features.1
//   after its first block, which a residual add reads too): kernels/simd's depthwise_conv_dgrad,
//   the forward's strip kernel over dy with the taps turned, adding into it, where oneDNN's jit_dw
//   had written a fresh dx for a binary add. Batch 1, 3x3 over 32 channels at 300x300, 3 rounds:
//   the three 3.13, 3.84, 2.85 -> 2.46, 3.20, 2.55 ms. Where nothing arrived the strip kernel did not
//   pay against oneDNN's alone (batch 1, per layer): efficientnet_b7's 38x38 3x3s 0.45-0.51 ->
//   0.54-0.60 ms, efficientnet_b0's features.1.0 (112) 0.083 -> 0.135, mnasnet1_0's at batch 8
//   0.55-0.64 -> 0.63-0.95, though efficientnet_b7's 5x5s at 75x75 went 1.43-1.47 -> 1.17-1.25.
// False, planning nothing, for any other conv or layout.
bool depthwise_dgrad(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Md x_md = p.md(s.in[0]);
    const int64_t block = channel_block(x_md);
    if ((block != 8 && block != 16) || channel_block(p.md(s.out)) != block) return false;
    std::optional<simd::Depthwise> found = as_depthwise(p, l, op, block);
    if (!found) return false;
    simd::Depthwise d = *found;
    d.blocked_weights = true;
    const int arrived = p.arrived_as(l.x(), x_md);
    const bool strips = d.stride_h == 1 && d.W > 32;
    if (strips ? arrived < 0 || !simd::depthwise_conv_supported(d) : !simd::depthwise_dgrad_supported(d)) return false;
    const int w = p.as(p.param[size_t(l.node)][0], depthwise_weights_md(d));
    const int dy = p.as(p.dy(l.n.output), p.md(s.out));  // the forward's output layout, of the same block
    const int dx = arrived >= 0 ? arrived : p.contribution(l.x(), x_md);
    if (strips)
        conv_dgrad_kernel(p, d, dy, w, dx, true);
    else
        p.kernel("depthwise_dgrad",
                 [d, add = arrived >= 0, threads = p.step_threads()](const std::vector<float*>& a) {
                     simd::depthwise_dgrad(a[0], a[1], a[2], add, d, threads);
                 },
                 {dy, w, dx});
    p.contributed(l.x(), dx);
    return true;
}

// The data gradient of a 1x1 conv at a stride over 1 that oneDNN ran forward in a channel-blocked
// layout, where x's gradient arrived first in that layout (RegNet's projections, which come after
// the block's first conv in the backward): kernels/simd's strided1x1_dgrad adds into it, touching
// the strided positions alone, instead of oneDNN's product spread over a fresh dx and the binary
// add after it, three passes over all of dx. regnet_y_400mf at batch 8 in training on the 2-core
// Zen 5 (`ridge profile`, 3 alternated pairs, a noisy hour), its four projections' data gradients
// 3.4-4.0 -> 2.3-2.8 ms (block1-0's, 32 -> 48 channels on 112x112: 1.7-1.8 -> 0.5-0.9). Not where
// the weights hold over 2^17 floats, which the kernel streams for every output row (resnet50's
// downsampling at batch 8, 1024 -> 2048 channels: 4.7 -> 11.6 ms), nor where oneDNN's conv writes
// x's gradient first (ResNet's downsampling, declared after the block; there the kernel's products
// alone ran 1.1-1.5x slower than oneDNN's 1x1 conv). With AVX-512 only: not measured below it.
constexpr int64_t max_strided1x1_weights = int64_t(1) << 17;

bool strided1x1_dgrad(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Md x_md = p.md(s.in[0]);
    const int64_t block = channel_block(x_md);
    if ((block != 8 && block != 16) || channel_block(p.md(s.out)) != block) return false;
    const Padding& pad = op.pad;
    if (op.G != 1 || op.kernel.h != 1 || op.kernel.w != 1 || (op.stride.h == 1 && op.stride.w == 1) ||
        pad.top || pad.bottom || pad.left || pad.right)
        return false;
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    const simd::Strided1x1 d{.N = xs[0], .C = xs[1], .H = xs[2], .W = xs[3], .K = ys[1], .P = ys[2], .Q = ys[3],
                             .stride_h = op.stride.h, .stride_w = op.stride.w, .block = block};
    const int dx = p.arrived_as(l.x(), x_md);
    const bool fits = d.C * d.K <= max_strided1x1_weights;
    if (!avx512_core_here() || !simd::strided1x1_dgrad_supported(d) || dx < 0 || !fits) return false;
    const int w = p.as(p.param[size_t(l.node)][0], plain({d.K, d.C, 1, 1}));
    const int dy = p.as(p.dy(l.n.output), p.md(s.out));
    const int packed = p.mem(plain({int64_t(simd::strided1x1_packed(d))}));
    p.kernel("strided1x1_dgrad",
             [d, threads = p.step_threads()](const std::vector<float*>& a) {
                 simd::strided1x1_dgrad(a[0], a[1], a[2], a[3], true, d, threads);
             },
             {dy, w, dx, packed});
    return true;
}

// An ungrouped 1x1 convolution of a 1x1 map without padding (squeeze-excitation's two) is an
// inner product of (N, C) rows with (K, C) weights. oneDNN's convolution kernels spend 40 to 80 us
// on mobilenet_v3_small's 576 -> 144 -> 576 at batch 8 in each of forward, data and weight
// gradient, 5 to 10 times what reading the 0.33 MB of weights takes; the inner product (measured
// in bench/runs/README.md) is a GEMM with nothing to slide. A conv with a batchnorm folded in stays
// a conv.
std::optional<InnerProduct> as_inner_product(const Plan& p, const Layer& l, const Conv2d& op) {
    const Shape& xs = p.shape(l.x());
    if (xs[2] != 1 || xs[3] != 1 || op.kernel.h != 1 || op.kernel.w != 1 || op.G != 1) return std::nullopt;
    if (op.pad.top || op.pad.bottom || op.pad.left || op.pad.right) return std::nullopt;
    if (l.group && l.group->bn >= 0) return std::nullopt;
    const int64_t N = xs[0], C = xs[1], K = op.K;
    return InnerProduct{plain({N, C, 1, 1}), Md({K, C, 1, 1}, dnnl::memory::data_type::f32, Tag::any),
                        plain({N, K}), op.bias};
}

// Those inner products on at most 32 rows (a training batch) run kernels/simd's linear_rows and, in
// training, its gradients: oneDNN's inner product spent 20 to 140 us on each of forward, data and
// weight gradient at batch 8 (efficientnet_b0's 1152 -> 48 -> 1152, regnet's, the MobileNetV3s'),
// 3 to 10 times their bounds. The weights are kept with their longer side contiguous: (K, C) for
// the squeeze, (C, K) for the expansion (simd.h). In inference too, with a squeeze's fused SiLU
// applied in place after (the one post-op taken): efficientnet_b7 at batch 1, its 110 inner
// products' forwards 3.6-4.2 ms on oneDNN's inner product with a swish post-op, 1 to 28 of them
// flagged slow, against 2.1-2.7 ms and 0 to 2 here (6 alternated pairs). At batch 16 a full
// survey pass still flagged 28 of its squeezes (20 to 50 us against bounds of 5 to 10), as
// before, until the dot products took 4 x 4 chains (kernels/simd/linear.cpp): 1 and 3 flagged
// in two passes after. The other squeeze-excitation activations fused in inference (a squeeze's
// ReLU, an expansion's sigmoid or hardsigmoid) run the same way; on oneDNN's inner product with
// a ReLU post-op, regnet_y_400mf's block4 squeezes at batch 16 had taken 37 us against 9.
constexpr int64_t few_rows = 32;

// The activation fused after a few-rows inner product in inference, over y's N*K floats in place;
// null for none. Training keeps its activations as layers (their backward reads y).
using RowsActivation = void (*)(float* y, int64_t n);
template <void (*F)(const float*, float*, int64_t)>
void in_place(float* y, int64_t n) {
    F(y, y, n);
}
void relu_in_place(float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = y[i] > 0 ? y[i] : 0.0f;  // NaN gives 0, as the reference's
}
std::optional<RowsActivation> rows_activation(const Plan& p, const Layer& l) {
    if (l.group && l.group->bn >= 0) return std::nullopt;
    if (!l.group || l.group->post.empty()) return RowsActivation{};
    if (p.train || l.group->post.size() != 1 || l.group->post[0].kind != PostOp::Kind::eltwise) return std::nullopt;
    switch (std::get<Activation>(p.g.nodes()[size_t(l.group->post[0].node)].op).fn) {
        case Activation::Fn::relu:
            return relu_in_place;
        case Activation::Fn::silu:
            return in_place<simd::silu_forward>;
        case Activation::Fn::sigmoid:
            return in_place<simd::sigmoid_forward>;
        case Activation::Fn::hardsigmoid:
            return in_place<simd::hardsigmoid_forward>;
        case Activation::Fn::relu6:
        case Activation::Fn::gelu:
        case Activation::Fn::hardswish:
            return std::nullopt;
    }
    return std::nullopt;
}

// In inference on 2 to 32 rows below AVX-512, and 2 to 16 with it (panel_rows_most),
// linear_panels (as linear.cpp's classifiers): its blocks of rows over panels of 16 outputs reuse
// each weight vector for every row of the block, where linear_rows' dot products read it once a
// row. regnet_y_400mf's block4 squeezes (440 -> 110) at batch 16 on the 2-core Zen 3 had taken 37
// to 42 us on linear_rows against a bound of 9. With AVX-512 once its blocks took 16-lane columns
// (kernels/simd/linear.cpp): efficientnet_b7 at batch 16 and 300x300 on the 2-core Zen 5,
// `ridge profile`, 4 alternated rounds, its 55 squeezes 1.93-2.41 -> 1.57-2.04 ms (3840 -> 160:
// 0.16-0.25 -> 0.10-0.18), the expansions level (1.87-2.66 either way); 3840 -> 160 alone on 16
// rows, 2 threads, warm: 79 us against 108 on 8-lane halves.
bool panel_rows(const Plan& p, int64_t N) { return !p.train && N > 1 && N <= panel_rows_most(); }

// Every thread for 256k multiply-adds or more (efficientnet_b0's 1152 -> 48 at batch 8: 0.44M), or
// weights of 128 KB or more, which two cores read faster even for one row: at batch 1,
// efficientnet_b7's 2304 -> 96 -> 2304 (221k weights) forward, data and weight gradient 0.36 ->
// 0.23 ms, mobilenet_v3_large's squeezes 2.5-2.6 -> 2.1 ms in all (2 alternated rounds). From
// 256 KB down to 128 KB, on the 2-core Zen 4 (`ridge profile`, batch 1, 2 alternated runs):
// efficientnet_b0's 48 -> 1152 expansions (55k weights) 21-23 -> 13-14 us (bound 5; four were
// flagged slow in the survey), its 32 squeeze inner products 220-267 -> 197-200 us in all;
// regnet_y_400mf's 266-305 -> 217-225 us, mobilenet_v3_large's features.11 (480 -> 120) 24-26 ->
// 12 us each; the whole nets level (mobilenet_v3_small 1.12-1.14 against 1.19 ms). Below,
// one, as the plan's step threads would be: waking the second thread cost more than it saved
// (mobilenet_v3_small's 96 -> 24, 18k: 40 us forward with two threads, 3 with one; regnet_y_400mf's
// 208 -> 52 at batch 8, 86k: 10 against 50 us in one of two passes). Where the executor holds the
// team awake (Plan::teams_held) there is no waking, and every thread pays from 64k:
// regnet_y_400mf's block4-0 squeeze at batch 8 (440 -> 52 -> 440, 183k each, weights read
// cold) took 18-28 us forward on one thread and 10-12 on two (3 runs each).
//
// Inference on linear_panels' rows (panel_rows) takes both threads only from 512k multiply-adds or
// 256 KB of weights. A squeeze and its expansion there run right after their pool, which both
// threads ran over the whole map, and the second thread's share of a small product cost more than
// it saved. `ridge profile` on the 2-core Zen 5 (a held team), the inner products summed per
// stage, alternated runs against the lines above: efficientnet_b7 at batch 8 (2 pairs),
// features.3 (480 -> 20, 77k) 205-228 -> 102-120 us for 14, features.4 (960 -> 40, 307k)
// 411-464 -> 310-330 for 20, 8-11 of them over 20 us -> 3, and at batch 16 (1 pair) features.3
// 304 -> 132; efficientnet_b0 at batch 16 (2 pairs), features.4 56-73 -> 45-49 and features.5
// 83-108 -> 57-61, at batch 8 (3 pairs) features.6 (1152 -> 48, 442k) 122-168 -> 73-109;
// regnet_y_400mf at batch 8 (3 pairs), block3 80-116 -> 51-55, block4 (440 -> 110, 387k)
// 122-195 -> 100-143. Wider ones lost on one thread: efficientnet_b7's features.6 at batch 8
// (2304 -> 96, 1.8M), 26 of them, 1.22-1.24 -> 1.49-1.60 ms. Fused inference level within the
// host's noise (efficientnet_b0, regnet_y_400mf, mobilenet_v3_large at batch 8, efficientnet_b7 at
// 8, 3 to 4 alternated pairs). 256 KB of weights keep both threads on any rows (efficientnet_b7's
// 2304 -> 96 at batch 2 has 442k); from 128 to 256 KB on 2 to 7 rows was not measured. Without a
// held team the second thread costs its wake-up too, so the line stands there as well.
int few_rows_threads(const Plan& p, int64_t N, int64_t C, int64_t K) {
    if (panel_rows(p, N)) return N * C * K >= (1 << 19) || C * K >= (1 << 16) ? p.threads : 1;
    const int64_t enough = p.teams_held ? (1 << 16) : (1 << 18);
    return N * C * K >= enough || C * K >= (1 << 15) ? p.threads : 1;
}

bool few_rows_forward(Plan& p, const Layer& l, const Conv2d& op) {
    const Shape& xs = p.shape(l.x());
    const int64_t N = xs[0], C = xs[1], K = op.K;
    const std::optional<RowsActivation> act = rows_activation(p, l);
    if (N > few_rows || !act) return false;
    auto f32 = dnnl::memory::data_type::f32;
    const int v = p.value[size_t(l.x())];
    const int x = rows_in_place(p.md(v)) ? v : p.value_as(l.x(), plain(dims_of(xs)));
    const int y = p.mem(plain(dims_of(p.shape(l.n.output))));
    const bool tr = K > C;
    const int64_t NK = N * K;
    const int threads = few_rows_threads(p, N, C, K);
    p.use_threads(threads);
    std::vector<int> args = {x, -1, y};
    if (op.bias) args.push_back(p.param_mem(l.node, 1, Md({K}, f32, Tag::a)));
    if (panel_rows(p, N)) {
        args[1] = p.param_mem(l.node, 0, Md({K, C, 1, 1}, f32, Tag::ABcd16b16a));
        const bool relu = *act == relu_in_place;
        p.kernel(
            "linear_panels",
            [=, bias = op.bias, act = relu ? nullptr : *act](const std::vector<float*>& a) {
                simd::linear_panels(a[0], C, a[1], bias ? a[3] : nullptr, relu, a[2], N, C, K);
                if (act) act(a[2], NK);
            },
            args);
    } else {
        args[1] = p.param_mem(l.node, 0, Md({K, C, 1, 1}, f32, tr ? Tag::bacd : Tag::abcd));
        p.kernel(
            "linear_rows",
            [=, bias = op.bias, act = *act](const std::vector<float*>& a) {
                simd::linear_rows(a[0], a[1], bias ? a[3] : nullptr, a[2], N, C, K, tr, threads);
                if (act) act(a[2], NK);
            },
            args);
    }
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};  // no primitive: few_rows_backward reads this
    return true;
}

void few_rows_backward(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Shape& xs = p.shape(l.x());
    const int64_t N = xs[0], C = xs[1], K = op.K;
    const int threads = few_rows_threads(p, N, C, K);
    p.use_threads(threads);
    const bool tr = K > C;
    const int w = p.param[size_t(l.node)][0];
    p.at(&p.bwd, l.node, Phase::dgrad);
    const int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    if (p.needs_grad(l.x())) {
        const int dx = p.contribution(l.x(), plain(dims_of(xs)));
        p.kernel("linear_rows_dgrad",
                 [=](const std::vector<float*>& a) { simd::linear_rows_dgrad(a[0], a[1], a[2], N, C, K, tr, threads); },
                 {dy, w, dx});
        p.contributed(l.x(), dx);
    }
    p.at(&p.bwd, l.node, Phase::wgrad);
    std::vector<int> args = {s.in[0], dy, p.dparam_mem(l.node, 0, p.md(w))};
    if (op.bias) args.push_back(p.dparam_mem(l.node, 1, Md({K}, dnnl::memory::data_type::f32, Tag::a)));
    p.kernel(
        "linear_rows_wgrad",
        [=, bias = op.bias](const std::vector<float*>& a) {
            simd::linear_rows_wgrad(a[0], a[1], a[2], bias ? a[3] : nullptr, N, C, K, tr, threads);
        },
        args);
}

// Whether a convolution may run as Winograd F(4x4, 3x3) or F(2x2, 3x3), oneDNN's
// jit_wino_4x3 / jit_fp32_wino_2x3 (AVX-512 only, nChw16c in and out): 3x3, stride 1, dense,
// ungrouped. They multiply 2 to 4 times less than a direct convolution; timed alone on a 2-core
// Zen 4 (peak 235 GFLOP/s), 16x64x56x56 to 64 channels took 7.0 ms against brgemm's 16.7, and
// 1x256x14x14 to 256 0.71 against 0.95 ms. Where the neighbours keep channels-last, the input and
// output are reordered into and out of nChw16c, which costs the same per element whatever the
// channels, while the multiplies saved per element moved grow as 9CK / (C + K). Below 128 the
// reorders ate the gain: VGG's 3 -> 64 first conv (26) took 2.6 ms against 0.93 direct at batch
// 1, squeezenet1_1's 16 -> 64 expands (115) lost their 0.05 ms gain and 0.1 ms more in the
// concatenation and conv after them; its 32 -> 128 expands (230) gained net. In training the
// gradients run as Winograd too: at 8x64x56x56, forward 9.0 -> 3.7 ms, data gradient 8.4 -> 3.3,
// weight gradient 9.5 -> 3.7 against the direct jit kernels training uses in nChw16c.
//
// Inference transforms the weights once, when the plan is built; training transforms them on every
// step, forward and data gradient, and its weight gradient transforms back: 36 floats per C x K
// pair written and read again, whatever the batch, against multiplies saved in proportion to the
// output positions N x P x Q. Timed on resnet34 in training, direct against Winograd, forward +
// data + weight gradient, 2-core Zen 4: 512 -> 512 at 7x7 took 3.7 against 13.7 ms at batch 1
// (NPQ 49), 6.5 against 11.4 at batch 2 (98), and at batch 4 (196) 14.9 against 14.0; 256 -> 256
// at 14x14 took 3.2 against 3.7 ms at batch 1 (196) and 6.2 against 4.6 at batch 2 (392). So
// training runs Winograd from 256 output positions on; inference at batch 1 keeps it at 7x7
// (resnet34's layer4 convs, 231 MFLOP each, 0.89 against 1.01 ms; smaller convs on small maps
// stay direct: winograd_pays).
// A conv Winograd F(m, 3) computes at all, where the plan allows it: 3x3, stride 1, dense.
bool winograd_shape(const Plan& p, const Conv2d& op) {
    return p.winograd && op.kernel.h == 3 && op.kernel.w == 3 && op.stride.h == 1 && op.stride.w == 1 &&
           op.dilation.h == 1 && op.dilation.w == 1;
}

// The multiplies Winograd saves per element of input and output, 9CK / (C + K) for a group's C
// and K (in G groups, 9CK / (G (C + K)) of the whole conv's).
double saved_per_element(const Plan& p, const Layer& l, const Conv2d& op) {
    const double C = double(p.shape(l.x())[1]), K = double(op.K);
    return 9 * C * K / (double(op.G) * (C + K));
}

// A direct conv's multiply-adds times 2.
double direct_flops(const Plan& p, const Layer& l, const Conv2d& op) {
    const Shape& y = p.shape(l.n.output);
    return 2.0 * double(y[0]) * double(y[1]) * double(y[2]) * double(y[3]) * double(p.shape(l.x())[1] / op.G) * 9;
}

// In inference on fewer than 729 output positions (27x27 at batch 1), Winograd only for 200 MFLOP
// of direct work or more. On the 2-core Zen 5 at batch 1, per conv, Winograd with the reorder into
// it against direct (fused plans of `--no-winograd`, 30 steps each, fast phase of the host), the
// reorder out not counted: googlenet's 14x14 and 7x7 convs (43 to 180 MFLOP) took 1.03 to 2.16
// times as long, densenet121's 128 -> 32 at 14x14 and 7x7 1.57 and 1.82, squeezenet1_0's 64 ->
// 256 at 13x13 (50 MFLOP) 1.32; resnet50's 256 -> 256 at 14x14 and 512 -> 512 at 7x7 (231
// MFLOP each) 0.75 and 0.86, and every conv on 27x27 and larger maps 0.66 to 0.91 but
// densenet121's 128 -> 32 at 28x28 (58 MFLOP, 1.08). Whole steps, each against every conv direct
// in the same minute: before, googlenet 9.84 against 9.46 ms, densenet121 21.7 against 19.8 (at
// the host's slow phase 13.5 against 11.0 and 28.1 against 22.8); with this rule googlenet 8.69
// against 9.12, densenet121 18.4 against 18.6, squeezenet1_0 4.58 against 4.96, resnet50 21.3
// against 24.3 (unchanged). Batch 16 keeps Winograd wherever it had it (16 x 7 x 7 is 784).
// Below 729 positions also only where both channel counts are powers of two. Alone, one conv and a
// 1x1 after it, alternated with the direct plan, medians of 55 (2-core Zen 5): on 13x13 maps
// oneDNN's jit_fp32_wino_2x3 took 1.29 to 2.50 times direct for 176, 192, 208 or 160 -> 384 or 480
// and 384 -> 192 or 208 (alexnet's conv3, 192 -> 384: 1.35 against 0.85 ms on two threads, 0.97 on
// one), and 0.89 to 1.0 for others (224 -> 384, 192 -> 448, 192 -> 368); on powers of two 0.69 to
// 0.92 (256 -> 256 at 14x14 and 16x16, 512 -> 512 at 7x7 and 14x14, 256 <-> 512 at 13x13, 512 <->
// 1024 and 1024 -> 1024 at 7x7). On 27x27 and more the others gained too (192 -> 384 0.68, 384 ->
// 208 0.61).
bool winograd_pays(const Plan& p, const Layer& l, const Conv2d& op) {
    if (!winograd_shape(p, op) || op.G != 1) return false;  // oneDNN's are ungrouped
    // oneDNN 2.6 builds a Winograd conv with more padding on one side of an axis than the other,
    // and its forward and weight gradient are right, but its data gradient is not: 2x64x8x8 with
    // padding top 0, bottom 1, left 0, right 1 differed from the direct one by 12.4 on values up
    // to 8.7. No zoo net has such a 3x3 conv (inception_v3's uneven padding is on 1x7 and 7x1).
    if (op.pad.top != op.pad.bottom || op.pad.left != op.pad.right) return false;
    const Shape& y = p.shape(l.n.output);
    const int64_t positions = y[0] * y[2] * y[3];
    if (p.train && positions < 256) return false;
    auto power_of_two = [](int64_t n) { return n > 0 && (n & (n - 1)) == 0; };
    if (!p.train && positions < 729 &&
        (direct_flops(p, l, op) < 200e6 || !power_of_two(p.shape(l.x())[1]) || !power_of_two(op.K)))
        return false;
    return saved_per_element(p, l, op) >= 128;
}

// Where kernels/simd's Winograd takes a conv (in inference its forward, in training its gradients):
// below AVX-512 (oneDNN's own above), 9CK / (C + K) of 64 or more, and 16 tiles or more (the
// figures below say why); grouped in inference only (winograd_forward).
bool simd_winograd(const Plan& p, const Layer& l, const Conv2d& op) {
    if (!winograd_shape(p, op) || saved_per_element(p, l, op) < 64 || (p.train && op.G != 1)) return false;
    if (avx512_core_here()) return false;
    const Shape& ys = p.shape(l.n.output);
    return ys[0] * ((ys[2] + 3) / 4) * ((ys[3] + 3) / 4) >= 16;
}

// Below AVX-512, where oneDNN 2.6 has no Winograd kernel, dense, stride-1 3x3 convs run
// as kernels/simd's winograd3x3, F(4x4, 3x3), in the layout their input has (nChw8c, nChw16c, or
// channels-last with C a multiple of 8; any other is reordered into nChw8c), in inference with the
// folded batchnorm as its bias and a residual sum and a ReLU after it. Inference transforms the
// weights once, by load(), after the batchnorm is folded into them (training: winograd_trains).
// Timed alone on a 2-core Zen 3 (AVX2, FMA peak 203 GFLOP/s) against oneDNN's jit:avx2 direct conv
// in nChw8c, best of 4 to 10, the host noisy within 30 %: 1x64x224x224 to 64 10.9-16.9 against
// 19.7-23.7 ms, 1x128x112x112 to 128 7.0-9.2 against 19.8-21.8, 1x512x28x28 to 512 7.6-9.0 against
// 20.3-23.5, 1x512x14x14 to 512 2.6-4.7 against 5.0-9.8, 1x128x56x56 to 32 (DenseNet's growth) 1.4
// against 2.3. Its transformed weights are 4 times the direct ones: over 1x512x7x7 (4 tiles of 4x4
// outputs) it took 1.6 and 1.9 ms against 2.6 and 1.7 in two runs, no clear gain for the memory, so
// it runs from 16 tiles on. With no reorders around it, it gains below winograd_pays' 9CK / (C + K)
// of 128 too: squeezenet's 16 -> 64 at 55x55 (115) 0.19-0.24 against 0.29-0.34 ms, googlenet's 16
// -> 32 at 28x28 (96) 0.041-0.042 against 0.046-0.052, 16 -> 48 at 14x14 (108) 0.018-0.019 against
// 0.024-0.026; 8 -> 8 at 56x56 (36) lost, 0.046-0.050 against 0.042-0.046. So it takes 64 and more.
// Grouped convs count a group's C and K: groups of 16, 24 and 32 (72, 108, 144) run it too, in
// inference; groups of 4 and 8 stay grouped_forward's. In the fused plan at batch 16 on the Zen 3,
// per step, the build that sends them to oneDNN's jit:avx2 in alternated processes:
// regnet_x_1_6gf's 15 stride-1 grouped convs (24 a group) 70.5 against 83.4 ms and 68.4 against
// 98.4, a third pair level (84.7 against 84.0), its block3 convs 4.1-4.4 against 4.9-5.3 ms;
// resnext50_32x4d's layer3 (16 a group) 3.9-4.6 against 4.9-5.4 ms, layer4 (32) 3.0-3.1 against
// 5.5-5.8. In training grouped convs keep their other kernels (Winograd's gradients for them not
// measured).
bool winograd_forward(Plan& p, const Layer& l, const Conv2d& op) {
    if (p.train || !simd_winograd(p, l, op)) return false;
    const std::optional<SumRelu> chain = sum_then_relu(p, l);
    if (!chain) return false;
    const bool sum = chain->sum, relu = chain->relu;
    const Shape& xs = p.shape(l.x());
    const Shape& ys = p.shape(l.n.output);
    const int64_t C = xs[1], K = op.K;
    auto f32 = dnnl::memory::data_type::f32;
    const int now = p.value[size_t(l.x())];
    // channel_block gives 8 or 16 for nChw8c / nChw16c and C for channels-last (C of 8 or 16 is the
    // same bytes as one block), all read in place where they hold whole vectors.
    const int64_t block = channel_block(p.md(now));
    const bool in_place = block >= 8 && block % 8 == 0;
    const int64_t block_x = in_place ? block : 8;
    const bool nhwc = block_x != 8 && block_x != 16;
    const int64_t block_y = nhwc ? (K % 8 == 0 ? K : 8) : block_x;
    const simd::Winograd3x3 d{xs[0], C, xs[2], xs[3], K, ys[2], ys[3], op.pad.top, op.pad.left, block_x, block_y, op.G};
    if (!simd::winograd3x3_supported(d)) return false;
    // Wider groups than measured (32) stay oneDNN's: the kernel sizes a group's chunk of tiles to
    // its L2, which for groups of hundreds of channels leaves a few tiles a chunk, each reading
    // the group's U again.
    if (op.G > 1 && (C / op.G > 64 || K / op.G > 64)) return false;
    const Md x_md = canonical(Md(dims_of(xs), f32, Tag::nChw8c)),
             y_md = canonical(Md(dims_of(ys), f32, block_tag(block_y)));
    const bool folded = l.group && l.group->bn >= 0, bias = op.bias || folded;
    // PyTorch's (K, C/G, R, S), as oneDNN names grouped weights: (G, K/G, C/G, R, S).
    const int w = p.param_mem(l.node, 0, op.G == 1 ? plain({K, C, 3, 3}) : plain({op.G, K / op.G, C / op.G, 3, 3}));
    const int b = bias ? p.param_mem(l.node, 1, Md({K}, f32, Tag::a)) : -1;
    if (folded) p.folds.push_back({l.node, l.group->bn});
    const int u = p.mem(plain({int64_t(simd::winograd3x3_weights_size(d))}), true);
    p.at(&p.prep, l.node, Phase::fwd);
    p.kernel("winograd3x3_weights",
             [d](const std::vector<float*>& a) { simd::winograd3x3_weights(a[0], a[1], d, false); }, {w, u});
    p.at(&p.fwd, l.node, Phase::fwd);
    const int x = in_place ? now : p.value_as(l.x(), x_md);
    const int threads = p.step_threads();
    const int scratch = p.mem(plain({int64_t(simd::winograd3x3_scratch(d, threads))}));
    const int y = group_destination(p, l, y_md, x);
    if (bias)
        p.kernel("winograd3x3",
                 [=](const std::vector<float*>& a) {
                     simd::winograd3x3(a[0], a[1], a[2], sum, relu, a[4], a[3], d, threads);
                 },
                 {x, u, b, scratch, y});
    else
        p.kernel("winograd3x3",
                 [=](const std::vector<float*>& a) {
                     simd::winograd3x3(a[0], a[1], nullptr, sum, relu, a[3], a[2], d, threads);
                 },
                 {x, u, scratch, y});
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    return true;
}

// In training below AVX-512 the forward stays oneDNN's direct conv, and a conv winograd_forward
// would take runs its gradients as Winograd: the data gradient is winograd3x3 over dy with the
// weights turned and transposed (transformed every step, from the plain weights such a conv keeps,
// reordered for the forward), the weight gradient winograd3x3_wgrad; both in the forward's
// layouts. oneDNN's jit:avx2 kernels, per layer on the 2-core Zen 3 (AVX2, FMA peak 203 GFLOP/s),
// resnet18 at batch 8: 19 ms forward, 13 data gradient and 16 to 31 weight gradient for each 3x3
// conv's 1.85 GFLOP (9.1 ms at peak). With these, one pass over the net had its weight gradients at
// 212 against 343 ms, its data gradients level (225 against 238). The forward as Winograd failed
// test_gradients (every tensor of a step against double): its errors reached the plain VGGs' first
// convs, whose gradients vanish towards the image at initialization, with 270 (vgg13) and 2392
// (vgg19) times the float32 spread the test measures, 10 allowed; the gradients alone stayed
// within it (0).
bool winograd_trains(const Plan& p, const Layer& l, const Conv2d& op) { return p.train && simd_winograd(p, l, op); }

// The conv's shape in the saved layouts of its forward, where the kernels read them.
std::optional<simd::Winograd3x3> winograd_gradients(const Plan& p, const Layer& l, const Conv2d& op) {
    if (!winograd_trains(p, l, op)) return std::nullopt;
    const Shape& xs = p.shape(l.x());
    const Shape& ys = p.shape(l.n.output);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const simd::Winograd3x3 d{xs[0], xs[1], xs[2], xs[3], op.K, ys[2], ys[3], op.pad.top, op.pad.left,
                              channel_block(p.md(s.in[0])), channel_block(p.md(s.out))};
    if (!simd::winograd3x3_supported(d)) return std::nullopt;
    return d;
}

void winograd_dgrad(Plan& p, const Layer& l, const simd::Winograd3x3& d) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const simd::Winograd3x3 back{d.N, d.K, d.P, d.Q, d.C, d.H, d.W, 2 - d.pad_t, 2 - d.pad_l, d.block_y, d.block_x};
    const int u = p.mem(plain({int64_t(simd::winograd3x3_weights_size(back))}));
    p.kernel("winograd3x3_weights",
             [back](const std::vector<float*>& a) { simd::winograd3x3_weights(a[0], a[1], back, true); },
             {p.param[size_t(l.node)][0], u});
    const int dy = p.as(p.dy(l.n.output), p.md(s.out));
    const int threads = p.step_threads();
    const int scratch = p.mem(plain({int64_t(simd::winograd3x3_scratch(back, threads))}));
    const Md x_md = p.md(s.in[0]);
    const int arrived = p.arrived_as(l.x(), x_md);
    const int dx = arrived >= 0 ? arrived : p.contribution(l.x(), x_md);
    p.kernel("winograd3x3",
             [=](const std::vector<float*>& a) {
                 simd::winograd3x3(a[0], a[1], nullptr, arrived >= 0, false, a[3], a[2], back, threads);
             },
             {dy, u, scratch, dx});
    if (arrived < 0) p.contributed(l.x(), dx);
}

void winograd_wgrad(Plan& p, const Layer& l, const Conv2d& op, const simd::Winograd3x3& d) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const int dy = p.as(p.dy(l.n.output), p.md(s.out));
    const int dw = p.dparam_mem(l.node, 0, plain({d.K, d.C, 3, 3}));
    const int scratch = p.mem(plain({int64_t(simd::winograd3x3_wgrad_scratch(d))}));
    const int threads = p.step_threads();
    if (op.bias) {
        const int db = p.dparam_mem(l.node, 1, Md({d.K}, dnnl::memory::data_type::f32, Tag::a));
        p.kernel(
            "winograd3x3_wgrad",
            [=](const std::vector<float*>& a) { simd::winograd3x3_wgrad(a[0], a[1], a[2], a[3], a[4], d, threads); },
            {s.in[0], dy, dw, db, scratch});
    } else {
        p.kernel(
            "winograd3x3_wgrad",
            [=](const std::vector<float*>& a) { simd::winograd3x3_wgrad(a[0], a[1], a[2], nullptr, a[3], d, threads); },
            {s.in[0], dy, dw, scratch});
    }
}

bool runs_winograd(const dnnl::primitive_desc_base& pd) {
    return std::string(pd.impl_info_str()).find("wino") != std::string::npos;
}

const PostOp* depthwise_post(const Layer& l) {
    if (!l.group) return nullptr;
    for (const PostOp& po : l.group->post)
        if (po.kind == PostOp::Kind::depthwise) return &po;
    return nullptr;
}

// A group whose depthwise post-op oneDNN runs only in its reference implementation
// (ref_fused_convolution: the two convs in turn through a scratch buffer; its jit kernel wants
// channels in whole vector blocks) is planned as two groups, the 1x1 conv's and the depthwise
// conv's. mobilenet_v3_small's 16 -> 72 at 56x56, batch 16: 2.9 ms fused that way, 1.5 ms apart.
void forward_apart(Plan& p, const Layer& l, const Conv2d& op, const PostOp& dw) {
    const Group& gr = *l.group;
    const auto post = gr.post.begin() + (&dw - gr.post.data());
    const auto split = std::find(gr.nodes.begin(), gr.nodes.end(), dw.node);
    Group head{gr.lead, gr.bn, {gr.post.begin(), post}, *(split - 1), {gr.nodes.begin(), split}};
    Group tail{dw.node, dw.bn, {post + 1, gr.post.end()}, gr.last, {split, gr.nodes.end()}};
    forward(p, {gr.lead, l.n, &head}, op);
    const Node& n = p.g.nodes()[size_t(dw.node)];
    p.at(&p.fwd, dw.node, Phase::fwd);
    forward(p, {dw.node, n, &tail}, std::get<Conv2d>(n.op));
}

// A depthwise conv on a channels-last input at stride 1 (convnext's 7x7s, which keep channels-last
// between their permutes) runs kernels/simd's depthwise_conv, its data gradient
// depthwise_conv_dgrad and its weight gradient depthwise_wgrad, the weights kept in the kernels'
// blocked layout (Goihw16g or Goihw8g), which all three read or write in place. oneDNN 2.6 ran the
// forward as brdgmm_dw and the data gradient as jit_dw after reordering the weights into its own
// layout each step. Alone, 7x7 pad 3, 2 threads, caches flushed before each call, µs, oneDNN's
// forward + data gradient + reorder against these two: N1 C96 56x56 242 + 276 + 8 -> 239 + 245;
// C384 14x14 62 + 90 + 14 -> 69 + 68; C768 7x7 34 + 51 + 18 -> 36 + 31; N8 C192 28x28 1034 + 1405
// + 11 -> 838 + 829. In training only: inference keeps oneDNN's forward, measured there, with its
// fusions (a depthwise conv taken into the 1x1 conv before it, post-ops). Where x's gradient has
// arrived channels-last (a convnext block's residual add passes it back before its branch does),
// the data gradient adds into it in the same pass, where a binary add had read both again after:
// convnext_tiny at batch 1 on the 2-core Zen 5, `ridge profile`, 3 alternated rounds of 10 steps,
// its 15 such data gradients 1.90-2.09 -> 1.32-1.36 ms in all (on 56x56 0.25-0.27 -> 0.17 ms
// each, on 7x7 0.053-0.060 -> 0.041); whole steps level within the host's noise.
bool depthwise_forward(Plan& p, const Layer& l, const Conv2d& op) {
    if (!p.train || (l.group && (l.group->bn >= 0 || !l.group->post.empty()))) return false;
    const int x = p.value[size_t(l.x())];
    const Md md = p.md(x);
    auto f32 = dnnl::memory::data_type::f32;
    // channel_block, as depthwise_wgrad reads the layout: a 1x1 map's channels-last is also nchw.
    if (md != canonical(Md(md.dims(), f32, Tag::nhwc)) || channel_block(md) != md.dims()[1]) return false;
    const std::optional<simd::Depthwise> found = as_depthwise(p, l, op, md.dims()[1]);
    if (!found || !simd::depthwise_conv_supported(*found)) return false;  // depthwise_wgrad's shapes too
    simd::Depthwise d = *found;
    d.blocked_weights = true;
    const int w = p.param_mem(l.node, 0, depthwise_weights_md(d));
    const int y = p.mem(canonical(Md(dims_of(p.shape(l.n.output)), f32, Tag::nhwc)));
    const int threads = p.step_threads();
    if (op.bias)
        p.kernel(
            "depthwise_conv",
            [=](const std::vector<float*>& a) { simd::depthwise_conv(a[0], a[1], a[2], a[3], nullptr, d, threads); },
            {x, w, p.param_mem(l.node, 1, Md({d.C}, f32, Tag::a)), y});
    else
        p.kernel(
            "depthwise_conv",
            [=](const std::vector<float*>& a) { simd::depthwise_conv(a[0], a[1], nullptr, a[2], nullptr, d, threads); },
            {x, w, y});
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};  // no primitive: depthwise_backward reads this
    return true;
}

// The gradients of a conv depthwise_forward ran, in its layouts.
void depthwise_backward(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    simd::Depthwise d = *as_depthwise(p, l, op, p.shape(l.x())[1]);
    d.blocked_weights = true;
    if (p.needs_grad(l.x())) {
        p.at(&p.bwd, l.node, Phase::dgrad);
        const int dy = p.as(p.dy(l.n.output), p.md(s.out));
        const int arrived = p.arrived_as(l.x(), p.md(s.in[0]));
        const int dx = arrived >= 0 ? arrived : p.contribution(l.x(), p.md(s.in[0]));
        conv_dgrad_kernel(p, d, dy, p.param[size_t(l.node)][0], dx, arrived >= 0);
        p.contributed(l.x(), dx);
    }
    p.at(&p.bwd, l.node, Phase::wgrad);
    if (!depthwise_wgrad(p, l, op))
        throw std::logic_error(cat("onednn: ", l.n.name, ": depthwise_wgrad refused the layout its forward took"));
}

// Grouped 3x3 convs of 4 channels a group (resnext50's first stage: 128 channels in 32 groups),
// padding 1, stride 1 or 2, run kernels/simd's grouped_conv3x3 in the layout their input has
// (nChw16c, nChw8c below AVX-512, or channels-last at batch 1); in training, at stride 1 without
// a bias, and grouped_backward then runs their gradients. oneDNN 2.6's jit kernel for them wants
// nChw4c, 4-lane vectors: at batch 8 on the 2-core Zen 4 it took 2.95 ms there plus 0.7 ms of
// reorders from and back to the neighbours' layout, against 1.37 ms (its bound: 0.98 ms); at
// batch 1 0.56 ms channels-last against 0.21; stride 2 at batch 8, 0.60 against 0.44 ms.
// Groups of 8 at stride 2 run it too, and in training without a bias grouped_backward: oneDNN's
// kernel for them wants nChw8c, into which nChw16c neighbours are reordered and back. In
// inference, regnet_y_400mf at batch 16 (the 2-core Zen 4, 3 alternated runs): block1-0.conv2,
// 16x48x112x112 in, 5.9-6.8 -> 3.5-3.8 ms (bound 1.48), block3-0.conv2 0.88-1.06 -> 0.71-0.73.
// C may leave the last nChw16c block half padding (regnet_y_400mf's 104 and 440 channels, oneDNN's
// before): its block2-0 (16x104x56x56) 2.82-3.79 -> 2.20-2.90 ms (bound 0.80; 4 alternated pairs,
// the host drifting), the 1x1 conv after it then jit_1x1 in place of brgconv_1x1, 1.98-2.01 ->
// 1.38-1.63. On fewer than 14 output columns the strips of 16 positions run half empty and oneDNN's
// jit kernel stays (in inference; in training it was not measured): block4-0 (14 -> 7 on 440)
// 0.23-0.29 ms against 0.35-0.62 at batch 8, 0.47-0.93 against 0.78-1.27 at batch 16; at 28 -> 14
// (block3-0, 208 channels) the strips 0.54-0.64 against 0.55-0.78 at batch 8 and 1.06-1.28
// against 1.47-1.65 at 16, resnext50's layer2.0 at 16 6.5-7.4 against 7.1-8.6.
// Channels-last (batch 1) oneDNN's kernel is 1.3x faster than this one (1x48x112x112: 120 against
// 162 us alone) except where C is a multiple of 256:
// 1x256x56x56 took it 548 us against 161 at 240 channels and 182 at 272, and 1x512x28x28 270, as if
// the input positions it reads, a multiple of 2 KB apart, fell into the same L1 sets. There the
// kernel runs channels-last too: resnext50's layer2.0.conv2 at batch 1, 0.56-0.69 -> 0.26-0.39 ms
// (bound 0.12). At stride 1 oneDNN is faster in its own layout (1x256x28x28: 0.14 ms plus 0.04 of
// reorders against 0.20; channels-last 0.16 against 0.22), so groups of 8 there stay oneDNN's.
// That is AVX-512, as oneDNN sees the host (ONEDNN_MAX_CPU_ISA caps it). Below it, groups of 4 run
// the kernel in nChw8c, the layout oneDNN's AVX2 convs keep, or channels-last: resnext50's layer1
// convs at batch 1 on the 2-core Zen 3, per layer, 2 runs of the build before against 3 of this
// one, 1.20-2.15 -> 0.46-0.58 ms (bound 0.14); in training at batch 8, where oneDNN's
// convolutions took 18.8 ms forward, 31.6 data and 38.5 weight gradient, 5.1, 5.0 and 2.5 ms
// (bounds 1.5, 2.2 and 2.2). Groups of 8 there run it at stride 1, as its planar
// form (kernels/simd/conv2d.cpp), which also takes C a multiple of 8 only (regnet_y_400mf's 104 and
// 440 channels): per layer, old and new builds one after the other, regnet_y_400mf's stride-1
// grouped convs at batch 8 0.80 -> 0.62 ms (block3, bound 0.23) and 0.53 -> 0.43 (block4, bound
// 0.12), resnext50's layer2.1-2.3 3.5 -> 3.0-3.3 ms (bound 1.14); groups of 4 at stride 1 run it
// too (resnext50's layer1 at batch 8 5.2-5.4 -> 4.1 ms). Groups of 8 train with it as the
// forward beside oneDNN's gradients: regnet_y_400mf at batch 8, block3's 0.65-0.67 -> 0.46-0.48
// ms, block4's 0.39-0.41 -> 0.29-0.31, the data gradient's reorder of the plain weights within the
// noise. At stride 2 groups of 8 stay oneDNN's below AVX-512: their 24 8-lane registers spill in
// the AVX2 build of the forms above, and the planar form was no faster.
// With AVX-512, in inference and in nChw16c (batch 2 and more), groups of 8 at stride 1 and groups
// of 24 (regnet_x_1_6gf's) on maps at least 56 wide, 14 at stride 2, run the kernel's 16-lane
// planar form. Groups of whole 16-channel blocks (16, 32: resnext50's layer3 and layer4) are
// oneDNN's: its jit kernel in nChw16c ran them near the FMA peak, where 24 a group, which splits a
// block, took brgconv. On the 2-core Zen 4 at batch 16, per layer, 4 alternated pairs (one oneDNN
// run, beside a disturbed host, left out): resnext50's layer3.0 (16 a group, stride 2, 28 -> 14)
// 5.8-7.5 ms on this kernel against 2.65-2.75 on oneDNN's (bound 1.98), 3.05-3.36 against
// 1.35-1.36 at batch 8; its layer3.1 took 2.1-2.3 there. regnet_x_1_6gf's block4-0 (24 a group,
// stride 2, 14 -> 7), 2 pairs: brgconv 4.39-4.61 ms, this kernel 3.37-3.79 (bound 1.32), 1.84-2.33
// against 1.58-1.64 at batch 8, while the 1x1 conv after it took jit_1x1 in place of brgconv_1x1
// and 0.3 to 0.5 ms more at batch 16; the whole net level (3 alternated pairs at batch 8 and 16,
// within the host's 10 % drift). At stride 1 on 7x7 (block4-1) brgconv took 2.15-2.46 ms, the
// kernel alone 2.54. Before that, on the 2-core Zen 5, per layer, 2 alternated pairs against the
// build before: regnet_x_1_6gf b16 block1-0 14.7-15.0 -> 10.2-10.3 ms (bound
// 3.5), block1-1 7.8-8.0 -> 6.1, block2-0 8.0-8.1 -> 6.6 (bound 2.1), b8 block1-0 7.4-7.7 -> 5.4;
// resnext50 b16 layer2.1-2.3 3.3-4.1 -> 2.7-3.4 ms, layer3.0 6.1-7.1 -> 5.4-5.5 (bound 1.05), and
// the convs after it in the stage then took oneDNN's jit kernels in nChw16c instead of brgconv,
// its later grouped convs (oneDNN's) 2.0-2.4 -> 1.3-1.5; regnet_y_400mf b8 block3-1 0.40-0.46 ->
// 0.31-0.34. Steps at b16: regnet_x_1_6gf 195-201 -> 189, resnext50 429-447 -> 404-419,
// regnet_y_400mf 55.6-56.3 -> 53.8-53.9 ms. On smaller maps brgconv won (regnet_x_1_6gf's block2-1,
// 28x28 on 24 a group: 3.65-3.82 against 3.92-3.96 ms, block3-1 at 14x14 2.51-2.52 against
// 2.77-2.82; resnext50's 14x14 on 16 a group 1.9-2.4 against 2.6-2.8; 14 -> 7 on 32, 1.8-2.1
// against 3.3-3.4), channels-last at batch 1 (regnet_x_1_6gf's
// block2-0 0.29-0.31 against 0.63-0.67 ms) and in training beside oneDNN's gradients
// (regnet_y_400mf's step at b8 122-127 against 128-140 ms, regnet_x_1_6gf's 364-372 against
// 381-401). The group may add a folded batchnorm (the bias) and a ReLU in inference; false,
// planning nothing, for any other conv or chain.
// The channel block grouped_conv3x3 and its gradients take for a map of C channels in layout m: C
// channels-last, 8 nChw8c, 16 nChw16c; 0 for any other layout.
int64_t grouped_block(const Md& m, int64_t C) {
    const auto f32 = dnnl::memory::data_type::f32;
    if (m == canonical(Md(m.dims(), f32, Tag::nhwc))) return C;
    if (m == canonical(Md(m.dims(), f32, Tag::nChw8c))) return 8;
    if (m == canonical(Md(m.dims(), f32, Tag::nChw16c))) return 16;
    return 0;
}

bool grouped_forward(Plan& p, const Layer& l, const Conv2d& op) {
    const Shape& xs = p.shape(l.x());
    const Shape& ys = p.shape(l.n.output);
    const int64_t C = xs[1], width = op.G < 2 || C != op.K || C % op.G ? 0 : C / op.G;
    const bool avx512 = avx512_core_here();
    if (width != 4 && width != 8 && !(avx512 && width == 24)) return false;
    if (p.train && (op.bias || (l.group && (l.group->bn >= 0 || !l.group->post.empty())))) return false;
    if (op.kernel.h != 3 || op.kernel.w != 3 || op.stride.h != op.stride.w) return false;
    if (op.dilation.h != 1 || op.dilation.w != 1) return false;
    if (op.pad.top != 1 || op.pad.bottom != 1 || op.pad.left != 1 || op.pad.right != 1) return false;
    if (width == 8 && op.stride.h == 2 && !avx512) return false;
    if (!post_ops_all(p, l, Activation::Fn::relu)) return false;
    const bool relu = l.group && !l.group->post.empty();
    const int x = p.value[size_t(l.x())];
    auto f32 = dnnl::memory::data_type::f32;
    const int64_t block = grouped_block(p.md(x), C);
    if (block == 0 || (block == 8 && avx512)) return false;  // nChw8c is the AVX2 convs' layout
    const bool nhwc = block == C;
    if (avx512 && width == 8 && nhwc && C % 256 != 0) return false;
    if (avx512 && width == 8 && op.stride.h == 2 && !p.train && ys[3] < 14) return false;  // see above
    const bool wide = avx512 && (width == 24 || (width == 8 && op.stride.h == 1));
    if (wide && (p.train || nhwc || (width == 24 && xs[3] < (op.stride.h == 2 ? 14 : 56)))) return false;
    const simd::GroupedConv3x3 d{xs[0], C, xs[2], xs[3], ys[2], ys[3], op.stride.h, block, width};
    if (!simd::grouped_conv3x3_supported(d)) return false;
    // Groups of 8 at stride 1 (below AVX-512 only, by the tests above) train on oneDNN's gradients,
    // which beat the planar form's (grouped_backward says by how much). They need a forward
    // descriptor as their hint: built below, never run.
    const bool onednn_gradients = p.train && width == 8 && op.stride.h == 1;
    if (p.train && !onednn_gradients && !simd::grouped4_wgrad_supported(d) && !simd::grouped8_backward_supported(d))
        return false;
    const bool folded = l.group && l.group->bn >= 0, bias = op.bias || folded;
    const int w = p.param_mem(l.node, 0, plain({op.G, width, width, 3, 3}));  // PyTorch's (K, C/G, R, S)
    const int b = bias ? p.param_mem(l.node, 1, Md({C}, f32, Tag::a)) : -1;
    if (folded) p.folds.push_back({l.node, l.group->bn});
    const int threads = p.step_threads();
    const int scratch = p.mem(plain({int64_t(simd::grouped_conv3x3_scratch(d, threads))}));
    const int y = p.mem(canonical(Md(dims_of(ys), f32, tag_of_block(block, nhwc))));
    p.kernel(
        "grouped_conv3x3",
        [=](const std::vector<float*>& a) {
            simd::grouped_conv3x3(a[0], a[1], bias ? a[4] : nullptr, relu, a[3], a[2], d, threads);
        },
        bias ? std::vector<int>{x, w, scratch, y, b} : std::vector<int>{x, w, scratch, y});
    p.value[size_t(l.y(p.g))] = y;
    if (!p.train) return true;
    p.saved[size_t(l.node)] = {{}, {x}, y};  // no primitive: grouped_backward reads this
    if (onednn_gradients) {
        const ConvGeometry c = geometry(p, l, op);
        dnnl::convolution_forward::desc hint(prop_kind::forward_training, algorithm::convolution_direct, p.md(x), c.w,
                                             p.md(y), c.stride, c.dilate, c.pad_l, c.pad_r);
        p.saved[size_t(l.node)].pd = dnnl::convolution_forward::primitive_desc(hint, p.attr(), p.eng);
    }
    return true;
}

// The gradients of a conv grouped_forward ran in training, in its layouts. Groups of 4 (stride 1):
// the data gradient is the same kernel over dy with the groups' weights transposed and turned, the
// weight gradient kernels/simd's grouped4_wgrad (in nChw16c, nChw8c or channels-last). oneDNN 2.6
// had these in nChw4c or channels-last only: at batch 8 (resnext50's 8x128x56x56) on the Zen 4 the
// weight gradient took 11 ms against its 1.1 ms bound, the data gradient 2.9 ms, the forward 3.8 ms
// with its reorders. Groups of 8 (stride 2):
// grouped8_conv3x3_dgrad and grouped8_wgrad; oneDNN's convs in nChw8c had regnet_y_400mf's
// block1-0.f.conv2 reorder its 8x48x112x112 input from nChw16c and the data gradient back, 1.1-1.2
// ms each. Per layer on the 2-core Zen 4, its three phases and the reorder back: batch 8 8.0 and
// 9.5 -> 6.2 ms, batch 16 19.6 -> 11.3. oneDNN's data gradient itself was faster than the strip
// form's: on resnext50's layer2.0.conv2 at batch 8 (8x256x56x56) 1.9-2.8 ms against 4.4-5.1, its
// phases 9.5-10.8 -> 11.0-11.5 ms in all (of a 1.2 s step). With AVX-512 the data gradient now sums
// dx's four phases on 16 dy positions a vector: on the 2-core Zen 5, in the step (2 alternated
// pairs), that conv's 3.48 and 3.51 -> 3.22 and 3.22 ms, regnet_y_400mf's block1-0.f.conv2 3.17 and
// 2.22 -> 2.02 and 1.93.
void grouped_backward(Plan& p, const Layer& l, const Conv2d& op) {
    const Plan::Saved& s = p.saved[size_t(l.node)];
    const Shape &xs = p.shape(l.x()), &ys = p.shape(l.n.output);
    const int64_t C = xs[1], width = C / op.G;
    const Md ym = p.md(s.out);
    const simd::GroupedConv3x3 d{xs[0], C, xs[2], xs[3], ys[2], ys[3], op.stride.h, grouped_block(ym, C), width};
    const int w = p.param[size_t(l.node)][0];
    const int threads = p.step_threads();
    int dy = -1;
    if (p.needs_grad(l.x())) {
        p.at(&p.bwd, l.node, Phase::dgrad);
        dy = p.as(p.dy(l.n.output), ym);
        const int dx = p.contribution(l.x(), p.md(s.in[0]));
        const size_t scratch_floats =
            width == 4 ? simd::grouped4_dgrad_scratch(d, threads) : simd::grouped8_dgrad_scratch(d, threads);
        const int scratch = p.mem(plain({int64_t(scratch_floats)}));
        const auto dgrad = width == 4 ? simd::grouped4_conv3x3_dgrad : simd::grouped8_conv3x3_dgrad;
        p.kernel(width == 4 ? "grouped4_conv3x3_dgrad" : "grouped8_conv3x3_dgrad",
                 [d, threads, dgrad](const std::vector<float*>& a) { dgrad(a[0], a[1], a[3], a[2], d, threads); },
                 {dy, w, scratch, dx});
        p.contributed(l.x(), dx);
    }
    p.at(&p.bwd, l.node, Phase::wgrad);
    if (dy < 0) dy = p.as(p.dy(l.n.output), ym);
    const int dw = p.dparam_mem(l.node, 0, plain({op.G, width, width, 3, 3}));
    const size_t scratch_floats =
        width == 4 ? simd::grouped4_wgrad_scratch(d, threads) : simd::grouped8_wgrad_scratch(d, threads);
    const int scratch = p.mem(plain({int64_t(scratch_floats)}));
    const auto wgrad = width == 4 ? simd::grouped4_wgrad : simd::grouped8_wgrad;
    p.kernel(width == 4 ? "grouped4_wgrad" : "grouped8_wgrad",
             [d, threads, wgrad](const std::vector<float*>& a) { wgrad(a[0], a[1], a[2], a[3], d, threads); },
             {s.in[0], dy, dw, scratch});
}

// Whether inference on one image runs in nChw16c on AVX-512 too, as larger batches do (forward()
// below), for two kinds of net, judged by every conv that reads more than 4 channels (all but the
// one on the image).
//
// SqueezeNet's fires: the net concatenates channels and each such conv is a 1x1 or an ungrouped
// 3x3 on at most 64 channels. There oneDNN's direct jit kernel on nChw16c keeps level with brgconv
// on channels-last, the Winograd expands on 27x27 maps need no reorders, and the concatenations are
// written in place (layout.cpp's concat_in_place). On the 2-core Zen 5, per conv: 16 -> 64 at
// 55x55 171 against 172 to 186 us, 64 -> 256 at 13x13 149 to 160 against 163 to 168. On more
// channels or larger kernels the direct kernel lost to brgconv by 10 to 40 % (googlenet's 96 ->
// 208 to 192 -> 384 at 14x14 and 7x7, inception_v3's 5x5 on 48 channels and its 1x7s), and those
// steps were 0.3 to 2.4 ms slower in nChw16c.
//
// Stacks of ungrouped 1x1 and 3x3 convs without concatenations (the ResNets and VGGs): in
// channels-last each 3x3 conv that runs Winograd, which has no channels-last kernel, had its input
// reordered into nChw16c and its output back (resnet50's conv2 and conv3 of every block but the
// first of a stage). On the 2-core Zen 5, both plans made in one process and stepped alternately,
// 30 steps, the effect the geometric mean of the two orders of making them (the one made second
// ran up to 2 % faster with equal plans): resnet18 0.98, resnet34 0.98, resnet50 0.97, resnet101
// 0.95, resnet152 0.94, vgg11 0.95, vgg16 0.96, wide_resnet50_2 level. Grouped convs, depthwise
// ones and larger kernels keep channels-last (one order, the blocked plan made second:
// resnext50_32x4d 0.98 but regnet_x_1_6gf 1.04, regnet_y_400mf 1.01, mobilenet_v2 1.08, mnasnet1_0
// 1.03, inception_v3 1.03, alexnet 1.02), and so do concatenations of wider 3x3 convs (densenet169
// 1.02, densenet121 level).
bool blocked_one_image(const Graph& g) {
    bool concat = false, fires = true, stack = true, any = false;
    for (const Node& n : g.nodes()) {
        concat = concat || concat_of_channels(g, n.op, n.output);
        const auto* conv = std::get_if<Conv2d>(&n.op);
        if (!conv || n.inputs.empty()) continue;
        const Shape& xs = g.tensor(n.inputs[0]).shape;
        if (xs.size() != 4 || xs[1] <= 4) continue;
        const bool pointwise = conv->kernel.h == 1 && conv->kernel.w == 1;
        const bool three = conv->kernel.h == 3 && conv->kernel.w == 3 && conv->G == 1;
        if (!pointwise && !three) return false;
        fires = fires && (pointwise || xs[1] <= 64);
        stack = stack && conv->G == 1;
        any = true;
    }
    return concat ? fires : any && stack;
}

// Whether a conv of the nChw16c plan runs channels-last between two reorders: on AVX-512, in
// inference at batch 4 and more, an ungrouped 3x3 conv at stride 2 onto 14 columns (the ResNets'
// first conv of layer3: 28 -> 14). oneDNN 2.6's direct jit kernel in nChw16c runs it at half the
// FMA peak, its brgconv kernel channels-last at 70 to 80 %, which pays for reordering x in and y
// back. Measured on the 2-core Zen 5 (`ridge profile`, per layer, the reorders charged to the
// conv, 2 alternated pairs): resnet50's layer3.0.conv2 (256 channels) 7.0-8.6 -> 5.0-5.3 ms at
// batch 8, 13.6-18.4 -> 10.1-10.2 at 16; resnet18's layer3.0.conv1 (128 -> 256) 3.3-3.5 -> 2.6 and
// 6.2-6.6 -> 5.2-5.4; wide_resnet50_2's layer3.0.conv2 (512) 27.4-27.9 -> 22.8-22.9 and 54.8-57.2
// -> 45.1-51.1. At batch 2 level (resnet50 1.57 -> 1.47, wide_resnet50_2 5.7 -> 5.8-5.9). A test
// program, batches 1 to 16, channels-last with its reorders against the jit kernel: onto 28
// columns 0.94-1.13x the time on 64 to 128 channels (but 0.79-0.88x on 256: wide_resnet50_2's
// layer2.0, not taken), onto 7 columns 1.13-1.26x on 512 and 1024 from batch 8. Why the jit
// kernel is slow onto 14 was not found. Not in training, where the weight
// gradient would follow into channels-last: 10.8 against 6.5 ms for the 256 channels at batch 8.
// Not with a residual sum (its addend would be reordered too; no zoo net has one there) or a
// fused depthwise conv.
bool channels_last_between_reorders(const Plan& p, const Layer& l, const Conv2d& op, const ConvGeometry& c) {
    const bool sum = l.group && std::any_of(l.group->post.begin(), l.group->post.end(),
                                            [](const PostOp& po) { return po.kind == PostOp::Kind::sum; });
    return !p.train && !sum && avx512_core_here() && op.G == 1 && op.kernel.h == 3 && op.kernel.w == 3 &&
           op.stride.h == 2 && op.stride.w == 2 && op.dilation.h == 1 && op.dilation.w == 1 && c.x.dims()[0] >= 4 &&
           c.y.dims()[3] == 14;
}

}  // namespace

int group_destination(Plan& p, const Layer& l, const Md& dst, int src) {
    const PostOp* sum = nullptr;
    if (l.group)
        for (const PostOp& po : l.group->post)
            if (po.kind == PostOp::Kind::sum) sum = &po;
    if (!sum) return p.mem(dst);
    int addend = p.value[size_t(sum->addend)];
    const Mem& a = p.mems[size_t(addend)];
    bool last_use = read_last_by(p, l, sum->addend);
    bool shared = a.buffer == p.mems[size_t(src)].buffer;
    if (last_use && !shared && !p.buffers[size_t(a.buffer)].pinned && a.md == dst) return p.alias(addend, dst);
    int y = p.mem(dst);
    p.reorder_into(addend, y);
    return y;
}

void forward(Plan& p, const Layer& l, const Conv2d& op) {
    if (auto ip = as_inner_product(p, l, op)) {
        if (!few_rows_forward(p, l, op)) inner_product_forward(p, l, *ip);
        return;
    }
    if (grouped_forward(p, l, op) || depthwise_forward(p, l, op) || winograd_forward(p, l, op)) return;
    ConvGeometry c = geometry(p, l, op);
    bool folded = l.group && l.group->bn >= 0;
    bool bias = op.bias || folded;
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    dnnl::primitive_attr attr = p.attr();
    if (l.group) attr.set_post_ops(post_ops_of(p.g, *l.group));
    auto describe = [&](const Md& x, const Md& y, algorithm alg = algorithm::convolution_direct) {
        auto d = bias ? dnnl::convolution_forward::desc(prop, alg, x, c.w, c.b, y, c.stride, c.dilate, c.pad_l,
                                                        c.pad_r)
                      : dnnl::convolution_forward::desc(prop, alg, x, c.w, y, c.stride, c.dilate, c.pad_l, c.pad_r);
        return dnnl::convolution_forward::primitive_desc(d, attr, p.eng);
    };
    const PostOp* dw = depthwise_post(l);
    dnnl::convolution_forward::primitive_desc pd;
    try {
        pd = describe(c.x, c.y);
    } catch (const dnnl::error&) {
        if (!dw) throw;
    }
    if (pd && !dw && image_forward(p, l, op, pd)) return;
    // oneDNN 2.6 also builds the fused conv on a channels-last input, but its jit_1x1 kernel then
    // writes the depthwise output at blocked offsets (op case pw_dw_after_nhwc: 1.7 off on values
    // up to 6); in a channels-last plan the pair runs apart.
    auto f32 = dnnl::memory::data_type::f32;
    Md x_nhwc = canonical(Md(c.x.dims(), f32, Tag::nhwc));
    const Md x_now = p.md(p.value[size_t(l.x())]);
    if (dw && (!pd || reference_impl(pd) || x_now == x_nhwc || pd.src_desc() == x_nhwc))
        return forward_apart(p, l, op, *dw);
    bool wino = false;
    if (winograd_pays(p, l, op)) try {
            auto w = describe(c.x, c.y, algorithm::convolution_winograd);
            if (!reference_impl(w) && impl_isa(w) == impl_isa(pd)) pd = w, wino = true;
        } catch (const dnnl::error&) {  // no Winograd kernel for this ISA (AVX2) or these post-ops
        }
    // Left to choose, oneDNN picks each conv's layout for that conv alone, and the reorders into it
    // and back out can cost more than its kernel saves: resnext50's grouped 3x3 convs (4 to 32
    // channels per group) picked nChw4c / nChw8c between channels-last 1x1 convs, and in inference
    // at batch 16 its first stage's grouped conv took 5.3 ms in nChw4c, plus 2.8 ms and 1 ms of
    // reorders into it and back, against 6.8 ms reading channels-last in place. So in inference a
    // conv whose input is channels-last reads and writes channels-last wherever oneDNN has a kernel
    // for that of the instruction set it picked for free layouts (plans alternated in one process:
    // resnext50 0.95x at batch 1 and 0.96x at 16, regnet_y_400mf 0.90x and 0.89x). Not for a
    // Winograd conv, which has no channels-last kernel and still gains its reorders back. Not in training,
    // whose backward primitives then follow the forward's layouts: convnext_tiny's step at batch 8
    // was 1.04x slower.
    //
    // At batch 2 and more on AVX-512, or on one image as large (below), inference runs its convs
    // in nChw16c instead: the first conv
    // reads the plain image with oneDNN's jit kernel and writes nChw16c, and a conv whose input is
    // nChw16c keeps it, in and out, where oneDNN has a jit kernel of the same instruction set as
    // its free choice. There depthwise convs run jit_dw, 1.5 to 2x faster than the brgemm kernel
    // channels-last gets (16x144x56x56: 1.6 against 3.0 ms), 1x1 convs jit_1x1, level or faster
    // (16 -> 96 at 112x112: 3.3 against 5.2 ms), and a depthwise conv fused into the 1x1 before
    // it needs no reorder. Plans alternated process by process, 2 rounds, on a 2-core Zen 4:
    // batch 16 mobilenet_v2 0.75x, mnasnet1_0 0.88x, mobilenet_v3_large 0.88x, mobilenet_v3_small
    // 0.93x, efficientnet_b0 0.94x, squeezenet1_1 0.88x, resnet50 0.95x, shufflenet_v2 and
    // regnet_y_400mf level; batch 8 mobilenet_v2 0.80x; batch 6 mobilenet_v2 0.73x, efficientnet_b0
    // 0.91x; batch 4 mobilenet_v2 0.81x, efficientnet_b0 0.96x, googlenet 0.98x, resnet50 level;
    // batch 2 mobilenet_v2 0.93x, googlenet 0.93x, resnet50 0.98x, efficientnet_b0 1.02x (3 or 4
    // rounds). At batch 1 it was mixed (mobilenet_v2 1.06x, efficientnet_b0 1.05x, mnasnet1_0
    // 1.02x, googlenet 0.95x, squeezenet1_1 0.95x), so channels-last stays there for an image of
    // fewer pixels than two of 224x224: efficientnet_b7's one 600x600 image has as many as 7, and
    // in nChw16c its step took 0.84x the time (508 against 604 ms, 3 rounds). SqueezeNet's, the
    // ResNets' and the VGGs' one image runs nChw16c too (blocked_one_image).
    auto keep = [&](const Md& x, Tag y) {
        try {
            auto kept = describe(x, Md(c.y.dims(), f32, y));
            if (!reference_impl(kept) && impl_isa(kept) == impl_isa(pd)) pd = kept;
        } catch (const dnnl::error&) {
        }
    };
    const bool avx512 = impl_isa(pd).rfind("avx512", 0) == 0;
    const bool image = x_now == canonical(plain(c.x.dims())) && c.x.dims()[1] <= 4;
    // A conv on the image whose output a flatten or reshape reads (vit's patch conv) writes
    // channels-last, reading the image as it is or reordered: its rows of tokens are then a view.
    // nChw16c needed a copy there, 1.28 ms of a 2735 ms step at batch 16, and nChw8c on AVX2 one too;
    // the conv took about as much longer in channels-last (steps level at batch 8). Not a conv
    // carrying a fused depthwise conv, which oneDNN computes wrongly on channels-last (above).
    const std::vector<int> r = image ? readers_of(p.g, l.y(p.g)) : std::vector<int>{};
    const bool reshaped = std::any_of(r.begin(), r.end(), [&](int n) {
        const Op& op = p.g.nodes()[size_t(n)].op;
        return std::holds_alternative<Flatten>(op) || std::holds_alternative<Reshape>(op);
    });
    const Md y_nhwc = canonical(Md(c.y.dims(), f32, Tag::nhwc));
    const Shape& img = p.g.input_shape();
    const bool large = img.size() == 4 && (img[0] >= 2 || img[2] * img[3] >= 2 * 224 * 224);
    if (!wino && !p.train && image && reshaped && !dw) {
        if (canonical(pd.dst_desc()) != y_nhwc) keep(x_now, Tag::nhwc);
        if (canonical(pd.dst_desc()) != y_nhwc) keep(x_nhwc, Tag::nhwc);
    } else if (!wino && !p.train && avx512 && pd.src_desc() != x_now &&
               (image || x_now == canonical(Md(c.x.dims(), f32, Tag::nChw16c))) && (large || blocked_one_image(p.g))) {
        keep(x_now, Tag::nChw16c);
    }
    // A depthwise conv on a channels-last input (convnext's blocks, after the permutation back) keeps
    // it in training too: its reorders in and out were most of its time (features.1.0's 7x7 at batch
    // 1: forward 0.34 -> 0.20 ms, data gradient 0.49 -> 0.25). Only where depthwise_wgrad reads it
    // (channels a multiple of 8, kernels up to 11): oneDNN's own weight gradient there is 10x slower.
    const std::optional<simd::Depthwise> channels_last_dw = as_depthwise(p, l, op, c.x.dims()[1]);
    const bool depthwise = channels_last_dw && simd::depthwise_wgrad_supported(*channels_last_dw);
    // Not a conv whose kernel is its stride (convnext's 2x2 stride-2 downsampling between stages)
    // below AVX-512: oneDNN 2.6's AVX2 kernel ran it on channels-last at about half the speed of its
    // own nChw8c. convnext_tiny's three at batch 8 on the 2-core Zen 3, per layer, two alternated
    // pairs: 12.5-16.3 -> 7.6-12.9 ms each (bound 4.6), while the reorders this moves to the
    // permutation and the residual sum after them took 2 to 3 ms in all; at batch 1 level.
    // Ungrouped and in inference only: a depthwise one in training needs channels-last for
    // depthwise_wgrad, and grouped ones were not measured.
    const bool patches =
        op.kernel.h == op.stride.h && op.kernel.w == op.stride.w && op.stride.h > 1 && op.G == 1 && !p.train && !avx512;
    if (!wino && (!p.train || depthwise) && !patches && x_now == x_nhwc && pd.src_desc() != x_nhwc)
        keep(x_now, Tag::nhwc);

    // The ResNets' 3x3 convs onto 14 columns read and write channels-last between reorders
    // (channels_last_between_reorders says why); the map after them stays nChw16c.
    const Md x16 = canonical(Md(c.x.dims(), f32, Tag::nChw16c));
    bool reorder_back = false;
    if (!wino && !dw && x_now == x16 && pd.src_desc() == x16 && channels_last_between_reorders(p, l, op, c)) try {
            auto n = describe(x_nhwc, y_nhwc);
            if (!reference_impl(n) && impl_isa(n) == impl_isa(pd)) pd = n, reorder_back = true;
        } catch (const dnnl::error&) {
        }
    int x = p.value_as(l.x(), pd.src_desc());
    // Plain for a conv whose data gradient is Winograd's (winograd_trains), reordered each step.
    int w = winograd_trains(p, l, op) ? p.as(p.param_mem(l.node, 0, plain(c.w.dims())), pd.weights_desc())
                                      : p.param_mem(l.node, 0, pd.weights_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, w}};
    // A folded conv's bias is its own tensor's slot 1 whether or not the conv declared one.
    if (bias) args.push_back({DNNL_ARG_BIAS, p.param_mem(l.node, 1, c.b)});
    if (folded) p.folds.push_back({l.node, l.group->bn});
    if (dw) {
        const int arg = DNNL_ARG_ATTR_POST_OP_DW;
        args.push_back({arg | DNNL_ARG_WEIGHTS,
                        p.param_mem(dw->node, 0, pd.query_md(dnnl::query::exec_arg_md, arg | DNNL_ARG_WEIGHTS))});
        if (std::get<Conv2d>(p.g.nodes()[size_t(dw->node)].op).bias || dw->bn >= 0)
            args.push_back({arg | DNNL_ARG_BIAS, p.param_mem(dw->node, 1, c.b)});
        if (dw->bn >= 0) p.folds.push_back({dw->node, dw->bn});
    }
    int y = group_destination(p, l, pd.dst_desc(), x);
    args.push_back({DNNL_ARG_DST, y});
    p.primitive(pd, args);
    if (reorder_back) {
        const int blocked = p.mem(canonical(Md(c.y.dims(), f32, Tag::nChw16c)));
        p.reorder_into(y, blocked);
        y = blocked;
    }
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {pd, {x}, y};
}

void backward(Plan& p, const Layer& l, const Conv2d& op) {
    if (auto ip = as_inner_product(p, l, op))
        return p.saved[size_t(l.node)].pd ? inner_product_backward(p, l, *ip) : few_rows_backward(p, l, op);
    if (!p.saved[size_t(l.node)].pd) {  // a kernels/simd conv: on the image, depthwise, or grouped by 4 or 8
        if (op.G == 1) {
            p.at(&p.bwd, l.node, Phase::wgrad);
            if (!image_wgrad(p, l, op))
                throw std::logic_error(cat("onednn: ", l.n.name, ": image_wgrad refused the layout its forward took"));
            return;
        }
        return op.G == op.K ? depthwise_backward(p, l, op) : grouped_backward(p, l, op);
    }
    ConvGeometry c = geometry(p, l, op);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    auto fwd = hint<dnnl::convolution_forward::primitive_desc>(s.pd);
    Md src = p.md(s.in[0]), dst = p.md(s.out);

    // Backward primitives are asked first for the forward's layouts, so nothing is reordered; where
    // that leaves only oneDNN's naive reference implementation (3x3 weight gradients of a 2x2
    // image, grouped convolutions of 4 channels per group in nChw16c), they are asked for
    // channels-last, whose jit kernels take any group width (resnext50's first stage: its weight
    // gradient 39 ms there against 127 ms for the GEMM on nchw that free layouts give, batch 8,
    // one thread), then with free layouts, and the memories are reordered to suit.
    auto f32 = dnnl::memory::data_type::f32;
    Md x_nhwc(c.x.dims(), f32, Tag::nhwc), y_nhwc(c.y.dims(), f32, Tag::nhwc);
    // A Winograd forward's backward runs as Winograd too, in the forward's nChw16c layouts, where
    // oneDNN has it (not over a 1x1 map: resnet18's last stage at 32x32). Else the first of the
    // forward's layouts, channels-last and free layouts that oneDNN runs with more than its
    // reference implementation.
    const auto direct = algorithm::convolution_direct;
    auto pick = [&](auto make) {
        if (runs_winograd(s.pd)) try {
                return make(src, dst, algorithm::convolution_winograd);
            } catch (const dnnl::error&) {
            }
        auto pd = make(src, dst, direct);
        if (!reference_impl(pd)) return pd;
        try {
            auto nhwc = make(x_nhwc, y_nhwc, direct);
            if (!reference_impl(nhwc)) return nhwc;
        } catch (const dnnl::error&) {
        }
        return make(c.x, c.y, direct);
    };

    const std::optional<simd::Winograd3x3> wino = winograd_gradients(p, l, op);
    if (p.needs_grad(l.x())) p.at(&p.bwd, l.node, Phase::dgrad);
    if (p.needs_grad(l.x()) && wino) {
        winograd_dgrad(p, l, *wino);
    } else if (p.needs_grad(l.x()) && !depthwise_dgrad(p, l, op) && !strided1x1_dgrad(p, l, op)) {
        auto data_pd = [&](const Md& dx, const Md& dy, algorithm alg) {
            dnnl::convolution_backward_data::desc d(alg, dx, c.w, dy, c.stride, c.dilate, c.pad_l, c.pad_r);
            return dnnl::convolution_backward_data::primitive_desc(d, p.attr(), p.eng, fwd);
        };
        auto pd = pick(data_pd);
        int w = p.as(p.param[size_t(l.node)][0], pd.weights_desc());
        int dy = p.as(p.dy(l.n.output), pd.diff_dst_desc());
        int dx = p.contribution(l.x(), pd.diff_src_desc());
        p.primitive(pd, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, dx}});
        p.contributed(l.x(), dx);
    }

    p.at(&p.bwd, l.node, Phase::wgrad);
    if (wino) return winograd_wgrad(p, l, op, *wino);
    auto weights_pd = [&](const Md& x, const Md& dy, algorithm alg) {
        auto d = op.bias ? dnnl::convolution_backward_weights::desc(alg, x, c.w, c.b, dy, c.stride, c.dilate, c.pad_l,
                                                                    c.pad_r)
                         : dnnl::convolution_backward_weights::desc(alg, x, c.w, dy, c.stride, c.dilate, c.pad_l, c.pad_r);
        return dnnl::convolution_backward_weights::primitive_desc(d, p.attr(), p.eng, fwd);
    };
    if ((src == x_nhwc || reference_impl(weights_pd(src, dst, direct))) && depthwise_wgrad(p, l, op)) return;
    if (image_wgrad(p, l, op)) return;
    auto pd = pick(weights_pd);
    int x = p.as(s.in[0], pd.src_desc());
    int dy = p.as(p.dy(l.n.output), pd.diff_dst_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, x},
                                             {DNNL_ARG_DIFF_DST, dy},
                                             {DNNL_ARG_DIFF_WEIGHTS, p.dparam_mem(l.node, 0, pd.diff_weights_desc())}};
    if (op.bias) args.push_back({DNNL_ARG_DIFF_BIAS, p.dparam_mem(l.node, 1, c.b)});
    p.primitive(pd, args);
}

}  // namespace ridge::onednn
