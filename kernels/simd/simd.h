#pragma once
// Hand-vectorized CPU kernels the oneDNN executor runs where oneDNN 2.6 has only a slow path for a
// shape the zoo needs: squeeze-excitation's per-(image, channel) scale and its gradient (oneDNN's
// binary primitive broadcasts (N,C,1,1) only in its reference implementation), global average
// pooling's gradient (oneDNN's pooling backward over a whole map is its reference kernel),
// softmax's gradient where oneDNN's jit softmax backward is missing (it needs AVX-512), max pooling
// in inference (oneDNN's AVX2 pooling reads at a quarter of memory speed), layernorm and its
// gradients (oneDNN's are portable C++ without vector code), SiLU and its gradient (oneDNN's swish
// is compute-bound at a quarter of memory speed), hardsigmoid and its gradient (oneDNN has none),
// DenseNet's concatenation fused with the batchnorm and ReLU that read it (inference) and its
// gradient (training: oneDNN's reorders of each piece took 2.5 times memory speed), batchnorm in
// training on small maps (oneDNN's primitive costs 20 to 50 us there), a linear layer on one row
// (oneDNN's brgemm inner product streams the weights at four fifths of memory speed), the weight
// gradient of a depthwise convolution in the channel-blocked layout its forward uses (oneDNN's is
// the reference implementation there, or a GEMM after reordering both activations) and its data
// gradient there (oneDNN's jit_dw took 3 to 10 times its bound), a depthwise convolution at stride
// 1 with its data gradient in channels-last (convnext's; oneDNN's data gradient needs its weights
// reordered each step and ran at up to 8 times its bound), and the copy from plain channels into
// nChw8c / nChw16c (oneDNN's reorder runs at a fraction of memory speed where the last block is
// part padding), a channel shuffle with it, and a strided 1x1 conv's data gradient added into one
// already there (oneDNN's spreads its product over a fresh dx, which a binary add then sums).
//
// They read and write the executor's layouts in place: plain nchw, channels-last nhwc, and the
// channel-blocked nChw8c / nChw16c whose channels are padded to the block with zeros (the padding
// of what they write is zero too). Each vector loop is compiled for AVX-512, AVX2+FMA and baseline
// x86-64 and chosen at run time, so one binary runs on any x86-64 host. Work is split over OpenMP
// threads (the executor's count). kernels/cpu holds the plain reference each is tested against.
#include <cstddef>
#include <cstdint>

namespace ridge::simd {

// An activation (N,C,H,W) in one of the executor's layouts. Element (n, c, s), s = h*W + w, is at
//   n*batch_stride() + (c / block)*block_stride() + s*block + c % block
// plain: block 1; nhwc: block C (one block of every channel); nChw8c / nChw16c: block 8 / 16.
struct ChannelLayout {
    int64_t N = 0, C = 0, HW = 0;
    int64_t block = 1;
    int64_t blocks() const { return (C + block - 1) / block; }
    int64_t padded_channels() const { return blocks() * block; }
    int64_t block_stride() const { return HW * block; }
    int64_t batch_stride() const { return padded_channels() * HW; }
    int64_t offset(int64_t n, int64_t c, int64_t s) const {
        return n * batch_stride() + c / block * block_stride() + s * block + c % block;
    }
};

// A depthwise convolution (groups = C = K): x (N,C,H,W) and dy (N,C,P,Q) both channel-blocked
// by `block` (8 or 16) or both channels-last (block C, a multiple of 8), w (C,1,1,R,S).
struct Depthwise {
    int64_t N = 0, C = 0, H = 0, W = 0, P = 0, Q = 0, R = 0, S = 0;
    int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0, dil_h = 1, dil_w = 1;
    int64_t block = 16;
    // dw in the blocked weight layout of the vector width (oneDNN's Abcde8a / Abcde16a: channel
    // blocks of R*S*lanes, padded; lanes = depthwise_lanes: the block, or in channels-last 16 or 8),
    // else plain (C,1,1,R,S).
    bool blocked_weights = true;
};

// A max pooling window (max_pool) over x (N,C,H,W) into y (N,C,P,Q), both plain (block 1), both
// channel-blocked by `block` (8 or 16) or both channels-last (block C, a multiple of 8). The
// padding is where a window reaches past the map (ceil mode's last window too): it never wins.
struct MaxPool {
    int64_t N = 0, C = 0, H = 0, W = 0, P = 0, Q = 0, R = 0, S = 0;
    int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0;
    int64_t block = 8;
};

// An average pooling window (avg_pool) over x (N,C,H,W) into y (N,C,P,Q), both channel-blocked by
// `block` (8 or 16; channels-last of 8 or 16 channels is the same bytes). Not channels-last of
// more: a pass a 16-lane part of its positions, as max_row takes them, was slower than oneDNN's
// pooling there (inception_v3's nine pools at batch 1 in inference on the 2-core Zen 5, 0.55-0.56
// -> 0.69-0.75 ms, two alternated pairs). A window divides by R*S where it counts the padding
// (include_pad: no window reaches past the padded map, pad_t + H + pad_b rows by pad_l + W + pad_r
// columns, as ceil mode's last can), else by the elements of x it holds.
struct AvgPool {
    int64_t N = 0, C = 0, H = 0, W = 0, P = 0, Q = 0, R = 0, S = 0;
    int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0;
    int64_t block = 16;
    bool include_pad = true;
    int64_t pad_b = 0, pad_r = 0;  // the padded map's extent where the padding counts
};

// A grouped 3x3 convolution with padding 1 and 4 or 8 channels a group, or with AVX-512 any
// multiple of 8 (grouped_conv3x3): x (N,C,H,W), y (N,C,P,Q).
struct GroupedConv3x3 {
    int64_t N = 0, C = 0, H = 0, W = 0, P = 0, Q = 0;
    int64_t stride = 1;  // both axes
    int64_t block = 16;  // 16: nChw16c; 8: nChw8c; C: channels-last
    int64_t width = 4;   // channels a group: 4, 8, or with AVX-512 16, 24 ...
};

// A convolution of few input channels, a net's first on the image (image_conv, image_conv_wgrad):
// x (N,C,H,W) plain, y and dy (N,K,P,Q) blocked by `block` (8 or 16) or channels-last (block K, a
// multiple of 8).
// pad_t and pad_l are the padding above and left of the map; P and Q imply the bottom and right ones.
struct ImageConv {
    int64_t N = 0, C = 0, H = 0, W = 0, K = 0, P = 0, Q = 0, R = 0, S = 0;
    int64_t stride_h = 1, stride_w = 1, pad_t = 0, pad_l = 0;
    int64_t block = 8;
};

// A 1x1 convolution without padding (strided1x1_dgrad): x (N,C,H,W) and y (N,K,P,Q), both
// channel-blocked by `block` (8 or 16), P and Q as the strides give them.
struct Strided1x1 {
    int64_t N = 0, C = 0, H = 0, W = 0, K = 0, P = 0, Q = 0;
    int64_t stride_h = 2, stride_w = 2;
    int64_t block = 16;
};

// A 3x3 convolution at stride 1, dense (winograd3x3): x (N,C,H,W) and y (N,K,P,Q), each
// channel-blocked by 8 or 16 or channels-last (block C, or K, a multiple of 8), in G groups of C/G
// input and K/G output channels. pad_t and pad_l are the padding above and left of the map; P and
// Q imply the bottom and right ones.
struct Winograd3x3 {
    int64_t N = 0, C = 0, H = 0, W = 0, K = 0, P = 0, Q = 0;
    int64_t pad_t = 1, pad_l = 1;
    int64_t block_x = 8, block_y = 8;
    int64_t G = 1;
};

// A linear layer's product on M rows (linear_gemm): x (M,C), y (M,K), what follows it fused.
struct Gemm {
    int64_t M = 0, C = 0, K = 0;
    bool sum = false;   // y's previous content added: a residual held there
    bool relu = false;  // after the sum, a NaN taken to 0
};

// A tensor of up to 6 dimensions laid out by strides (in floats), its last dimension contiguous:
// a region of a larger tensor (ViT's q of the packed in_proj output) or a plain one.
struct Strided {
    static constexpr int most = 6;
    int rank = 0;
    int64_t dims[most] = {};
    int64_t strides[most] = {};
};

}  // namespace ridge::simd

// The kernels sit in an inline namespace: x86_64_v4, x86_64_v3 or x86_64 for the builds for one
// instruction set each (kernels/CMakeLists.txt), and `dispatch` for what every caller uses, where
// the loader binds each kernel to one build (dispatch.cpp). kernels.inc declares them in the
// namespace RIDGE_SIMD_ISA names; builds.h includes it again for each build.
#ifndef RIDGE_SIMD_ISA
#define RIDGE_SIMD_ISA dispatch
#endif

#include "kernels/simd/kernels.inc"

// Every kernel of kernels.inc by name, X(ns, name) each: dispatch.cpp's choice of a build, and
// bench/kernels' table of each build's kernels, come from this one list.
// clang-format off
#define RIDGE_SIMD_KERNELS(X, ns) \
    X(ns, scale_channels) X(ns, channel_dots) X(ns, gate_backward) X(ns, channel_means) X(ns, broadcast_channels) \
    X(ns, add_broadcast_channels) X(ns, scale_strided) X(ns, copy_floats) X(ns, zero_floats) \
    X(ns, concat_affine) X(ns, concat_plain) X(ns, concat_channels_last) X(ns, plain_to_blocked) \
    X(ns, shuffle2_channels_last) X(ns, concat_backward) X(ns, batchnorm_forward) X(ns, batchnorm_backward) \
    X(ns, silu_forward) X(ns, silu_backward) X(ns, silu_channel_means) X(ns, gelu_forward) X(ns, gelu_backward) X(ns, sigmoid_forward) X(ns, sigmoid_backward) X(ns, relu_forward) \
    X(ns, relu_backward) X(ns, relu_backward_reblocked) \
    X(ns, hardsigmoid_forward) X(ns, hardsigmoid_backward) X(ns, softmax_forward) X(ns, softmax_backward) \
    X(ns, layernorm_forward) X(ns, layernorm_channels_forward) X(ns, layernorm_backward_scratch) X(ns, layernorm_backward) \
    X(ns, linear_panels) X(ns, linear_gemm_scratch) X(ns, linear_gemm) X(ns, linear_rows) X(ns, linear_rows_dgrad) \
    X(ns, linear_rows_wgrad) X(ns, column_sums) \
    X(ns, max_pool_supported) X(ns, max_pool) X(ns, max_pool_backward_supported) X(ns, max_pool_positions_size) \
    X(ns, max_pool_argmax) X(ns, max_pool_backward) \
    X(ns, avg_pool_supported) X(ns, avg_pool) X(ns, avg_pool_backward) \
    X(ns, grouped_conv3x3_supported) X(ns, grouped_conv3x3_scratch) X(ns, grouped_conv3x3) \
    X(ns, grouped4_dgrad_scratch) X(ns, grouped4_conv3x3_dgrad) X(ns, grouped4_wgrad_supported) \
    X(ns, grouped4_wgrad_scratch) X(ns, grouped4_wgrad) \
    X(ns, grouped8_backward_supported) X(ns, grouped8_dgrad_scratch) X(ns, grouped8_conv3x3_dgrad) \
    X(ns, grouped8_wgrad_scratch) X(ns, grouped8_wgrad) \
    X(ns, winograd3x3_supported) X(ns, winograd3x3_weights_size) X(ns, winograd3x3_weights) \
    X(ns, winograd3x3_scratch) X(ns, winograd3x3) \
    X(ns, winograd3x3_wgrad_scratch) X(ns, winograd3x3_wgrad) \
    X(ns, depthwise_conv_supported) X(ns, depthwise_conv_packed) X(ns, depthwise_conv) X(ns, depthwise_conv_dgrad) \
    X(ns, depthwise_dgrad_supported) X(ns, depthwise_dgrad) \
    X(ns, depthwise_wgrad_supported) X(ns, depthwise_lanes) X(ns, depthwise_wgrad_scratch) X(ns, depthwise_wgrad) \
    X(ns, image_conv_supported) X(ns, image_conv_weights_size) X(ns, image_conv_weights) X(ns, image_conv_scratch) \
    X(ns, image_conv) \
    X(ns, image_conv_wgrad_supported) X(ns, image_conv_wgrad_scratch) X(ns, image_conv_wgrad) \
    X(ns, strided1x1_dgrad_supported) X(ns, strided1x1_packed) X(ns, strided1x1_dgrad)
// clang-format on

namespace ridge::simd {

// The build the dispatch runs on this CPU: "x86-64-v4", "x86-64-v3" or "x86-64".
const char* dispatched_isa();

}  // namespace ridge::simd
