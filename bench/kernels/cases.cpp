#include "bench/kernels/cases.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "bench/env.h"
#include "bench/usage_error.h"

namespace ridge::kbench {

simd::Depthwise Problem::depthwise() const {
    simd::Depthwise d;
    d.N = N, d.C = C, d.H = H, d.W = W, d.P = P(), d.Q = Q(), d.R = R, d.S = S;
    d.stride_h = d.stride_w = stride, d.pad_t = d.pad_l = pad;
    d.block = block();
    d.blocked_weights = true;
    return d;
}

simd::AvgPool Problem::avg_pool() const {
    return {N, C, H, W, P(), Q(), R, S, stride, stride, pad, pad, block(), true, pad, pad};
}

simd::MaxPool Problem::max_pool() const { return {N, C, H, W, P(), Q(), R, S, stride, stride, pad, pad, block()}; }

std::string Problem::describe(bool filter) const {
    std::string s = "N" + std::to_string(N) + " C" + std::to_string(C) + " " + std::to_string(H) + "x" +
                    std::to_string(W);
    if (!layout.empty()) s += " " + layout;
    if (K > 0) s += " -> K" + std::to_string(K);
    if (filter)
        s += " " + std::to_string(R) + "x" + std::to_string(S) + "/" + std::to_string(stride) + " pad " +
             std::to_string(pad);
    return s;
}

namespace {

// EfficientNet-B0's features.5 (MBConv6, 5x5, 112 channels at 14x14 from a 224x224 image) expands
// to 672 channels: its squeeze-excitation gates and its depthwise convolution are the zoo's
// largest of their kind at that resolution. Batch 32, as ridge train runs.
Problem se_default() {
    Problem p;
    p.N = 32, p.C = 672, p.H = 14, p.W = 14;
    p.layout = "nChw16c";
    return p;
}

Problem dw_default() {
    Problem p = se_default();
    p.R = 5, p.S = 5, p.stride = 1, p.pad = 2;
    return p;
}

// inception_v3's Mixed_5b.avgpool1: the branch pool of its first 35x35 block (192 channels, 3x3 at
// stride 1 padded by 1), at batch 8 as training runs it, in nChw16c as oneDNN's convs leave it.
Problem pool_default() {
    Problem p;
    p.N = 8, p.C = 192, p.H = 35, p.W = 35, p.R = 3, p.S = 3, p.stride = 1, p.pad = 1, p.layout = "nChw16c";
    return p;
}

// resnet50's maxpool after its stem: 64 channels at 112x112 (from a 224x224 image), 3x3 at
// stride 2 padded by 1, at batch 16 as the zoo's inference runs, in nChw16c as oneDNN's conv
// leaves it with AVX-512.
Problem max_pool_default() {
    Problem p;
    p.N = 16, p.C = 64, p.H = 112, p.W = 112, p.R = 3, p.S = 3, p.stride = 2, p.pad = 1, p.layout = "nChw16c";
    return p;
}

// The same pool in training at batch 8, where its gradient runs.
Problem max_pool_train_default() {
    Problem p = max_pool_default();
    p.N = 8;
    return p;
}

// DenseNet-121's features.denseblock2.denselayer12.norm1: the block's 128 input channels and 11
// layers' 32 at 28x28 (from a 224x224 image), the largest concatenation of that block, at batch
// 16 as the zoo's inference runs. nChw16c: what oneDNN's convolutions pick there on AVX-512.
Problem concat_default() {
    Problem p;
    p.N = 16, p.C = 480, p.H = 28, p.W = 28;
    p.layout = "nChw16c";
    return p;
}

// vit_b_16's q at batch 1: 12 heads, 197 tokens, 64 floats a head.
Problem vit_q_default() {
    Problem p;
    p.N = 1, p.C = 12, p.H = 197, p.W = 64;
    return p;
}

// vit_b_16's attention weights, softmax(q k^T / 8) of (N, heads, T, T) = (8, 12, 197, 197): 197
// tokens (196 patches and the class token), 12 heads, batch 8 as ridge train runs.
Problem softmax_default() {
    Problem p;
    p.N = 8, p.C = 12, p.H = 197, p.W = 197;
    return p;
}

// regnet_y_400mf's trunk_output.block1.block1-0.f.se.adaptive_avgpool1: its first block's 48
// channels at 56x56 (a 224x224 image after the stride-2 stem and the block's stride 2), the
// largest map any of its SE gates pools, at batch 8 as ridge train runs.
Problem gap_default() {
    Problem p;
    p.N = 8, p.C = 48, p.H = 56, p.W = 56;
    p.layout = "nChw16c";
    return p;
}

// AlexNet's classifier.fc1, 9216 inputs (256 channels at 6x6) to 4096, at batch 1: the zoo's
// second-largest weight matrix (151 MB), read once per image.
Problem linear_default() {
    Problem p;
    p.N = 1, p.C = 9216, p.H = 1, p.W = 1, p.K = 4096;
    return p;
}

// vit_b_16's encoder.layers.0.mlp.gelu1, 197 tokens of 3072 (4 x 768) at batch 8 as ridge train
// runs; elementwise, so only the count matters.
Problem gelu_default() {
    Problem p;
    p.N = 8, p.C = 3072, p.H = 197, p.W = 1;
    return p;
}

Problem plain(Problem p) {
    p.layout.clear();
    return p;
}

const std::vector<std::string> channel_layouts = {"nchw", "nhwc", "nChw8c", "nChw16c"};
const std::string se_origin = "efficientnet_b0 features.5.1 SE gate (672 ch at 14x14), batch 32";
const std::string silu_origin = "efficientnet_b0 features.5.1.silu1 (672 ch at 14x14), batch 32";
const std::string gelu_origin = "vit_b_16 encoder.layers.0.mlp.gelu1 (197 tokens x 3072), batch 8";
const std::string concat_origin =
    "densenet121 features.denseblock2.denselayer12.norm1 (480 ch at 28x28; there 128 + 11 x 32, here "
    "15 x 32), batch 16";

}  // namespace

std::vector<int64_t> concat_pieces(int64_t C) {
    constexpr int64_t growth = 32;
    std::vector<int64_t> pieces = {C - (C - 1) / growth * growth};
    for (int64_t c = pieces[0]; c < C; c += growth) pieces.push_back(growth);
    return pieces;
}

Floats uniform(size_t n, float lo, float hi, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<float> d(lo, hi);
    Floats v(n);
    for (float& x : v) x = d(gen);
    return v;
}

const std::vector<Kernel>& kernels() {
    static const std::vector<Kernel> k = {
        {"se-scale", false, false, channel_layouts,
         "squeeze-excitation scale y = x * s[n,c] (kernels/simd scale_channels; ref: Mul forward)", se_origin,
         se_default()},
        {"se-gate-grad", false, false, channel_layouts,
         "gate gradient ds[n,c] = sum over H,W of dy * x (kernels/simd channel_dots; ref: Mul backward)", se_origin,
         se_default()},
        {"dw-wgrad", false, true, {"nhwc", "nChw8c", "nChw16c"},
         "depthwise conv weight and bias gradient (kernels/simd depthwise_wgrad; ref: Conv2d backward)",
         "efficientnet_b0 features.5.1.conv2, 5x5 depthwise (672 ch at 14x14), batch 32", dw_default()},
        {"dw-dgrad", false, true, {"nhwc", "nChw8c", "nChw16c"},
         "depthwise conv data gradient at stride 1 or 2 (kernels/simd depthwise_dgrad; ref: Conv2d backward)",
         "efficientnet_b0 features.5.1.conv2, 5x5 depthwise (672 ch at 14x14), batch 32", dw_default()},
        {"concat", false, false, channel_layouts,
         "concatenation of channels alone, the pieces as concat-bn's (kernels/simd concat_affine without a and b; "
         "ref: Concat forward)",
         concat_origin, concat_default(), true},
        {"concat-bn", false, false, channel_layouts,
         "concatenation + inference batchnorm + ReLU, y = max(0, x * a[c] + b[c]), the pieces 32 channels "
         "each (DenseNet's growth) but the first, which takes the rest (kernels/simd concat_affine; ref: Concat, "
         "BatchNorm, Activation forward)",
         concat_origin, concat_default(), true},
        {"concat-bn-norelu", false, false, channel_layouts,
         "concat-bn without the ReLU, y = x * a[c] + b[c] (kernels/simd concat_affine; ref: Concat, BatchNorm "
         "forward)",
         concat_origin, concat_default(), true},
        {"softmax", false, false, {},
         "softmax y = e^(x - max) / sum of e^(x - max), N*C*H rows of W (kernels/simd softmax_forward; ref: "
         "Softmax forward)",
         "vit_b_16 attention weights (N, 12 heads, 197, 197 tokens), batch 8", softmax_default()},
        {"softmax-bwd", false, false, {},
         "softmax gradient dx = y * (dy - sum of dy * y over the row), N*C*H rows of W (kernels/simd "
         "softmax_backward; ref: Softmax backward)",
         "vit_b_16 attention weights (N, 12 heads, 197, 197 tokens), batch 8", softmax_default()},
        {"scale-strided", false, false, {},
         "attention's q scaled out of the packed in_proj output, y = x / sqrt(W), x (N, C heads, H tokens, W) "
         "a strided region (kernels/simd scale_strided; ref: Scale forward)",
         "vit_b_16 self_attention.scale1 (12 heads, 197 tokens, 64 each), batch 1", vit_q_default()},
        {"scale-strided-bwd", false, false, {},
         "its gradient into q's region of the packed gradient, dx = dy / sqrt(W) (kernels/simd scale_strided; "
         "ref: Scale forward)",
         "vit_b_16 self_attention.scale1 (12 heads, 197 tokens, 64 each), batch 1", vit_q_default()},
        {"silu", false, false, {},
         "SiLU y = x * sigmoid(x), elementwise over the buffer (kernels/simd silu_forward; ref: Activation silu "
         "forward)",
         silu_origin, plain(se_default())},
        {"silu-bwd", false, false, {},
         "SiLU gradient dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x) (kernels/simd silu_backward; ref: "
         "Activation silu backward)",
         silu_origin, plain(se_default())},
        {"gelu", false, false, {},
         "GELU y = x * Phi(x), Phi the normal distribution (erf form), elementwise over the buffer "
         "(kernels/simd gelu_forward; ref: Activation gelu forward)",
         gelu_origin, gelu_default()},
        {"gelu-bwd", false, false, {},
         "GELU gradient dx = dy * (Phi(x) + x * phi(x)) (kernels/simd gelu_backward; ref: Activation gelu "
         "backward)",
         gelu_origin, gelu_default()},
        {"avg-pool", false, true, {"nChw8c", "nChw16c"},
         "average pooling y = the mean of each window of x, the padding counted (kernels/simd avg_pool; ref: "
         "Pool2d avg forward)",
         "inception_v3 Mixed_5b.avgpool1 (192 ch at 35x35, 3x3 stride 1 pad 1), batch 8", pool_default()},
        {"avg-pool-bwd", false, true, {"nChw8c", "nChw16c"},
         "its gradient dx = the sum of dy / R*S over the windows that hold each element (kernels/simd "
         "avg_pool_backward; ref: Pool2d avg backward)",
         "inception_v3 Mixed_5b.avgpool1 (192 ch at 35x35, 3x3 stride 1 pad 1), batch 8", pool_default()},
        {"max-pool", false, true, channel_layouts,
         "max pooling y = the maximum of each window of x, a NaN winning (kernels/simd max_pool; ref: Pool2d max "
         "forward)",
         "resnet50 maxpool (64 ch at 112x112, 3x3 stride 2 pad 1), batch 16", max_pool_default()},
        {"max-pool-bwd", false, true, {"nhwc", "nChw8c", "nChw16c"},
         "its gradient in training dx = each dy at its window's first maximum (or last NaN), from the positions "
         "max_pool_argmax keeps (kernels/simd max_pool_backward, timed alone; ref: Pool2d max backward)",
         "resnet50 maxpool (64 ch at 112x112, 3x3 stride 2 pad 1), batch 8", max_pool_train_default()},
        {"gap-grad", false, false, channel_layouts,
         "global average pooling gradient dx[n,c,h,w] = dy[n,c] / HW (kernels/simd broadcast_channels; ref: "
         "AdaptiveAvgPool2d to 1x1 backward)",
         "regnet_y_400mf trunk_output.block1.block1-0.f.se.adaptive_avgpool1 (48 ch at 56x56), batch 8", gap_default()},
        {"linear-row", false, false, {},
         "linear layer on N rows y = x w^T + b, the weights in panels of 16 rows (kernels/simd linear_panels; ref: "
         "Linear forward)",
         "alexnet classifier.fc1 (9216 -> 4096), batch 1", linear_default(), false, true},
        {"cuda-se-scale", true, false, {},
         "squeeze-excitation scale on the GPU (kernels/cuda mul_forward, broadcasting; ref: CPU Mul forward)",
         se_origin, plain(se_default())},
        {"cuda-se-gate-grad", true, false, {},
         "gate gradient on the GPU (kernels/cuda broadcast_backward; ref: CPU Mul backward)", se_origin,
         plain(se_default())},
        {"cuda-hardswish", true, false, {},
         "hardswish forward on the GPU (kernels/cuda activation_forward; ref: CPU Activation forward)",
         "efficientnet_b0 features.5.1 expanded activations (672 ch at 14x14), batch 32", plain(se_default())},
    };
    return k;
}

const Kernel* find_kernel(const std::string& name) {
    for (const Kernel& k : kernels())
        if (k.name == name) return &k;
    return nullptr;
}

void validate(const Kernel& k, const Problem& p) {
    auto fail = [&](const std::string& why) { throw bench::UsageError(k.name + ": " + why); };
    for (auto [v, name] : {std::pair{p.N, "N"}, {p.C, "C"}, {p.H, "H"}, {p.W, "W"}})
        if (v < 1 || v > 1'000'000)
            fail(std::string(name) + " must be between 1 and 1000000, not " + std::to_string(v));
    if (k.layouts.empty() && !p.layout.empty()) fail("takes no --layout (it runs on plain NCHW)");
    if (k.outputs && (p.H != 1 || p.W != 1)) fail("runs on rows of one vector: H and W must be 1");
    if (k.outputs && p.N > simd::max_panel_rows)
        fail("runs on 1 to " + std::to_string(simd::max_panel_rows) + " rows (linear_panels' most), not " +
             std::to_string(p.N));
    if (k.outputs && (p.K < 1 || p.K > 1'000'000)) fail("K must be between 1 and 1000000, not " + std::to_string(p.K));
    if (!k.layouts.empty() && std::find(k.layouts.begin(), k.layouts.end(), p.layout) == k.layouts.end()) {
        std::string list;
        for (const std::string& l : k.layouts) list += (list.empty() ? "" : ", ") + l;
        fail("layout '" + p.layout + "' is not one it runs on (" + list + ")");
    }
    const int64_t block = p.layout == "nChw8c" ? 8 : p.layout == "nChw16c" ? 16 : 1;
    if (k.whole_blocks && p.C % block != 0)
        fail("C " + std::to_string(p.C) + " is not a multiple of " + p.layout + "'s block of " +
             std::to_string(block) + " (every piece must fill whole blocks)");
    // depthwise_wgrad and depthwise_dgrad read channels-last in blocks of 8 or 16 channels
    // (convnext's 96 to 768).
    if ((k.name == "dw-wgrad" || k.name == "dw-dgrad") && p.layout == "nhwc" && p.C % 8 != 0)
        fail("C " + std::to_string(p.C) + " is not a multiple of 8, as " +
             (k.name == "dw-wgrad" ? "depthwise_wgrad" : "depthwise_dgrad") + " needs in nhwc");
    double elements = double(p.N) * double(p.C + 15) * double(p.H) * double(p.W);
    if (k.outputs) elements = double(p.K + 15) * double(p.C + 15) + double(p.N) * double(p.C + p.K);  // w, x, y
    if (k.filter) {
        if (p.R < 1 || p.S < 1 || p.R > 11 || p.S > 11)
            fail("kernel " + std::to_string(p.R) + "x" + std::to_string(p.S) + ": R and S must be 1 to 11");
        if (p.stride < 1 || p.stride > 16) fail("stride must be 1 to 16, not " + std::to_string(p.stride));
        if (p.pad < 0 || p.pad >= std::min(p.R, p.S))
            fail("pad must be at least 0 and below the kernel size, not " + std::to_string(p.pad));
        if (p.H + 2 * p.pad < p.R || p.W + 2 * p.pad < p.S || p.P() < 1 || p.Q() < 1)
            fail("a " + std::to_string(p.R) + "x" + std::to_string(p.S) + " window does not fit " +
                 std::to_string(p.H) + "x" + std::to_string(p.W) + " with pad " + std::to_string(p.pad));
        if (k.name.starts_with("avg-pool") && !simd::avg_pool_supported(p.avg_pool()))
            fail(p.describe(true) + " is not a window avg_pool takes: its column buffer holds rows of at most 512 "
                                    "columns, in and out");
        // PyTorch's pools (and Pool2d's reference) take padding up to half the window.
        if ((k.name.starts_with("avg-pool") || k.name.starts_with("max-pool")) && 2 * p.pad > std::min(p.R, p.S))
            fail("pad must be at most half the window (" + std::to_string(std::min(p.R, p.S) / 2) + "), not " +
                 std::to_string(p.pad));
        if (k.name == "max-pool-bwd" && !simd::max_pool_backward_supported(p.max_pool()))
            fail(p.describe(true) + " is not a window max_pool_backward takes: in nhwc C a multiple of 8, at most "
                                    "256 elements a window, and where windows overlap (but 3x3 at stride 2) rows "
                                    "of at most 512 columns with the padding");
        if (k.name == "max-pool" && !simd::max_pool_supported(p.max_pool()))
            fail(p.describe(true) + " is not a window max_pool takes: in nhwc C a multiple of 8, in nchw a row of "
                                    "at most 4096 columns");
        if (k.name == "dw-dgrad" && !simd::depthwise_dgrad_supported(p.depthwise()))
            fail(p.describe(true) + " is not a window depthwise_dgrad takes: stride 1 or 2, S of 3, 5 or 7, R up "
                                    "to 7, and at stride 1 a pad of S / 2");
    }
    // Inputs, outputs, their packed copies and the reference's magnitudes: about six tensors;
    // dw-dgrad's dx is as large as x, in a packed copy for each instruction set, its reference's
    // scratch and its bounds in double: about sixteen (measured: 2.8 times six with three builds).
    // The average pools' output and a reference's copy of it for each instruction set, as large as
    // x for the gradient, and the bounds in double: sixteen likewise (counted, not measured).
    double need = (k.name == "dw-dgrad" || k.name.starts_with("avg-pool") ? 16 : 6) * 4 * elements;
    int64_t available = bench::available_memory_bytes();
    double have = available > 0 ? double(available) : double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    if (need > have / 2) {
        char b[200];
        std::snprintf(b, sizeof b, "%s needs about %.1f GiB, more than half of the %.1f GiB this process may use",
                      p.describe(k.filter).c_str(), need / (1 << 30), have / (1 << 30));
        fail(b);
    }
}

}  // namespace ridge::kbench
