#pragma once
// Hand-vectorized CPU kernels the oneDNN executor runs where oneDNN 2.6 has only a slow path for a
// shape the zoo needs: squeeze-excitation's per-(image, channel) scale and its gradient (oneDNN's
// binary primitive broadcasts (N,C,1,1) only in its reference implementation), global average
// pooling's gradient (oneDNN's pooling backward over a whole map is its reference kernel),
// softmax's gradient where oneDNN's jit softmax backward is missing (it needs AVX-512), max pooling
// in inference (oneDNN's AVX2 pooling reads at a quarter of memory speed), layernorm
// and its gradients (oneDNN's are portable C++ without vector code), SiLU and
// its gradient (oneDNN's swish is compute-bound at a quarter of memory speed), hardsigmoid and its
// gradient (oneDNN has none), DenseNet's concatenation fused with the batchnorm and ReLU that read
// it (inference) and its gradient (training: oneDNN's reorders of each piece took 2.5 times memory
// speed), batchnorm in training on small maps (oneDNN's primitive costs 20 to 50 us there), a
// linear layer on one row (oneDNN's brgemm inner product streams the weights at four fifths of
// memory speed), the weight gradient of a depthwise convolution in the channel-blocked layout its
// forward uses (oneDNN's is the reference implementation there, or a GEMM after reordering both
// activations), and a depthwise convolution at stride 1 with its data gradient in channels-last
// (convnext's; oneDNN's data gradient needs its weights reordered each step and ran at up to 8
// times its bound).
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

// A grouped 3x3 convolution with padding 1 and 4 or 8 channels a group (grouped_conv3x3): x
// (N,C,H,W), y (N,C,P,Q).
struct GroupedConv3x3 {
    int64_t N = 0, C = 0, H = 0, W = 0, P = 0, Q = 0;
    int64_t stride = 1;  // both axes
    int64_t block = 16;  // 16: nChw16c; 8: nChw8c; C: channels-last
    int64_t width = 4;   // channels a group, 4 or 8
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

// A 3x3 convolution at stride 1, dense and ungrouped (winograd3x3): x (N,C,H,W) and y (N,K,P,Q),
// each channel-blocked by 8 or 16 or channels-last (block C, or K, a multiple of 8). pad_t and
// pad_l are the padding above and left of the map; P and Q imply the bottom and right ones.
struct Winograd3x3 {
    int64_t N = 0, C = 0, H = 0, W = 0, K = 0, P = 0, Q = 0;
    int64_t pad_t = 1, pad_l = 1;
    int64_t block_x = 8, block_y = 8;
};

// A linear layer's product on M rows (linear_gemm): x (M,C), y (M,K), what follows it fused.
struct Gemm {
    int64_t M = 0, C = 0, K = 0;
    bool sum = false;   // y's previous content added: a residual held there
    bool relu = false;  // after the sum, a NaN taken to 0
};

}  // namespace ridge::simd

// The kernels sit in an inline namespace named by the build: `dispatch` for the library every
// caller uses (each leaf chosen at load time), and x86_64_v4, x86_64_v3 or x86_64 for the copies
// built for one instruction set (kernels/CMakeLists.txt), which bench/kernels declares itself.
#ifndef RIDGE_SIMD_ISA
#define RIDGE_SIMD_ISA dispatch
#endif

namespace ridge::simd::inline RIDGE_SIMD_ISA {

// y = x * s[n, c]; s is (N,C) plain. y may be x.
void scale_channels(const float* x, const float* s, float* y, const ChannelLayout& l);
// out[n, c] = sum over s of a[n, c, s] * b[n, c, s]; out is (N,C) plain.
void channel_dots(const float* a, const float* b, float* out, const ChannelLayout& l);
// out[n, c] = the mean over s of x[n, c, s] (global average pooling); out is (N,C) plain, so x in
// any layout (a blocked x whose channels pad the last block too) pools straight into rows an inner
// product reads.
void channel_means(const float* x, float* out, const ChannelLayout& l);
// y[n, c, s] = k * s[n, c] at every position s (global average pooling's gradient, k = 1 / HW);
// s is (N,C) plain.
void broadcast_channels(const float* s, float k, float* y, const ChannelLayout& l);
// y[n, c, s] += k * s[n, c]: the same gradient added to one already there (squeeze-excitation's
// pool, whose input the scale's gradient reached first).
void add_broadcast_channels(const float* s, float k, float* y, const ChannelLayout& l);

// y = the concatenation of the pieces x[0..pieces) along channels, x[i] with channels[i] of them,
// then y[n, c, s] * a[c] + b[c] and max(0, .) when relu: batchnorm in inference (and its ReLU)
// over a concatenation that is never written. The pieces are in y's layout: nchw (block 1),
// nhwc (block C: each piece's block is its own channel count) or nChw8c / nChw16c, where every
// channels[i] is a multiple of the block. a and b null: the concatenation alone (and no ReLU).
void concat_affine(const float* const* x, const int64_t* channels, int64_t pieces, const float* a, const float* b,
                   bool relu, float* y, const ChannelLayout& yl);

// The gradient of concat_affine's concatenation alone: each piece's channels of dy, in the same
// layouts, written to dx[i], or added to it where mode[i] is 2 (1: written, 0: no gradient, dx[i]
// not read). Memory-bound: one read of dy, one write of each dx (and a read where added).
void concat_backward(const float* dy, const int64_t* channels, int64_t pieces, const uint8_t* mode, float* const* dx,
                     const ChannelLayout& yl);

// Batchnorm in training over x (N,C,H,W) in layout l, whose block is a multiple of 8 (nChw8c,
// nChw16c, or channels-last with C a multiple of 8): each channel's mean and biased variance over
// N*HW written to mean and var (C), y = (x - mean) * gamma / sqrt(var + eps) + beta, and max(0, .)
// when relu. The backward reads the forward's x, mean and var, and its relu: dgamma and dbeta (C)
// written, and dx unless null, which may be dy.
void batchnorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,
                       bool relu, const ChannelLayout& l, float eps);
void batchnorm_backward(const float* x, const float* dy, const float* gamma, const float* beta, const float* mean,
                        const float* var, bool relu, float* dx, float* dgamma, float* dbeta, const ChannelLayout& l,
                        float eps);

// y = x * sigmoid(x) (SiLU) and its gradient dx = dy * s * (1 + x * (1 - s)), s = sigmoid(x), from
// the input x, over n contiguous floats: elementwise, so any layout, whose zero padding stays zero.
// y may be x, dx may be dy. Relative error a few ulp (activation.cpp says how).
void silu_forward(const float* x, float* y, int64_t n);
void silu_backward(const float* x, const float* dy, float* dx, int64_t n);

// y = 1 / (1 + e^-x) (sigmoid) and its gradient dx = dy * y * (1 - y), from the output y, over n
// contiguous floats. Sigmoid(0) is 1/2: callers hand it no padding. y may be x, dx may be dy.
void sigmoid_forward(const float* x, float* y, int64_t n);
void sigmoid_backward(const float* y, const float* dy, float* dx, int64_t n);

// y = x where x > 0, else 0 (ReLU; a NaN gives 0, as the reference), and its gradient dx = dy where
// y > 0, else 0, from the output y, over n contiguous floats: any layout, whose zero padding stays
// zero. y may be x, dx may be dy.
void relu_forward(const float* x, float* y, int64_t n);
void relu_backward(const float* y, const float* dy, float* dx, int64_t n);

// y = min(max(x + 3, 0), 6) / 6 (hardsigmoid) and its gradient dx = dy / 6 where -3 < x < 3, else
// 0, over n contiguous floats. oneDNN 2.6 has no such eltwise (a post-op chain composes it), and
// its reference kernel took 20 to 35 us for squeeze-excitation's 16x672 gates. Hardsigmoid(0) is
// 1/2: a blocked layout's zero padding would not stay zero, so callers hand it no padding.
// y may be x, dx may be dy.
void hardsigmoid_forward(const float* x, float* y, int64_t n);
void hardsigmoid_backward(const float* x, const float* dy, float* dx, int64_t n);

// y = softmax of each of `rows` rows of n contiguous elements (e^(x - the row's max), over their
// sum); -inf gives 0, and a row all -inf NaN, as PyTorch's. y may be x.
void softmax_forward(const float* x, float* y, int64_t rows, int64_t n);
// dx = y * (dy - sum over the row of dy * y) for `rows` rows of n contiguous elements: softmax's
// gradient along the last dimension of a plain tensor, from its output y. dx may be dy.
void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t n);

// LayerNorm over `rows` rows of D contiguous floats: y = (x - mean) / sqrt(var + eps) * gamma + beta,
// each row's mean and biased variance written to mean and var (rows) for the backward, each unless
// null.
void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,
                       int64_t rows, int64_t D, float eps);
// Its gradients from the forward's x, mean and var: dx (rows, D), overwritten, or added to where
// add_dx (a residual's gradient that arrived first), or null where none is needed; dgamma, dbeta
// (D), overwritten; scratch of layernorm_backward_scratch floats.
size_t layernorm_backward_scratch(int64_t D, int threads);
void layernorm_backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* var,
                        float* dx, bool add_dx, float* dgamma, float* dbeta, float* scratch, int64_t rows, int64_t D,
                        float eps, int threads);

// y = x w^T + b, then max(0, .) when relu: a linear layer on 1 to max_panel_rows rows in
// inference, the weights streamed once. x (N,C), b (K) or null, y (N,K); w (K,C) in oneDNN's
// AB16b16a (panels of 16 rows, each column of a panel 16 contiguous floats), K and C padded to 16
// with zeros.
constexpr int64_t max_panel_rows = 64;
void linear_panels(const float* x, const float* w, const float* b, bool relu, float* y, int64_t N, int64_t C,
                   int64_t K);
// y (M,K) = x (M,C) w^T + b (b (K) or null), then as d says y's previous content added and the
// ReLU: a linear layer on many rows in inference, w as linear_panels has it. scratch is
// linear_gemm_scratch(threads) floats, for `threads` threads or fewer.
size_t linear_gemm_scratch(int threads);
void linear_gemm(const float* x, const float* w, const float* b, float* y, float* scratch, const Gemm& d, int threads);
// A linear layer on few rows in training, w (K,C) plain or, transposed, (C,K): y (N,K) = x (N,C)
// w^T + b (b may be null); dx (N,C) = dy (N,K) w; dw = dy^T x (or its transpose, in w's layout) and
// db (K) = the column sums of dy (db may be null). Outputs are overwritten.
void linear_rows(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t C, int64_t K,
                 bool transposed, int threads);
void linear_rows_dgrad(const float* dy, const float* w, float* dx, int64_t N, int64_t C, int64_t K, bool transposed,
                       int threads);
void linear_rows_wgrad(const float* x, const float* dy, float* dw, float* db, int64_t N, int64_t C, int64_t K,
                       bool transposed, int threads);

// y = the maximum of each window of x (max pooling in inference), a NaN in a window winning as in
// PyTorch; the padded channels of a block stay zero. Supported where the layouts are as MaxPool
// says and every window holds at least one element of x.
bool max_pool_supported(const MaxPool& d);
void max_pool(const float* x, float* y, const MaxPool& d);
// Its gradient in training, dx (overwritten) from x and dy in the same layout, blocked or
// channels-last (not plain): each dy to the element of its window PyTorch's argmax names, the
// first maximum or the last NaN.
bool max_pool_backward_supported(const MaxPool& d);
void max_pool_backward(const float* x, const float* dy, float* dx, const MaxPool& d);

// A grouped 3x3 convolution with padding 1, stride 1 or 2, whose groups have `width` input and
// output channels, 4 or 8 (resnext50's first two stages: 128 channels in 32 groups, then 256):
// y = conv(x) + b, then max(0, .) when relu. x (N,C,H,W) and y (N,C,P,Q) both channel-blocked by 16
// or 8 or both channels-last (block C), C a multiple of 16 (below AVX-512 also of 8, blocked by 8
// or channels-last); w (C,width,3,3) plain, as PyTorch stores (K, C/G, R, S); b (C) or null;
// scratch: grouped_conv3x3_scratch floats for `threads` threads.
bool grouped_conv3x3_supported(const GroupedConv3x3& d);
size_t grouped_conv3x3_scratch(const GroupedConv3x3& d, int threads);
void grouped_conv3x3(const float* x, const float* w, const float* b, bool relu, float* y, float* scratch,
                     const GroupedConv3x3& d, int threads);
// Its gradients in training, for groups of 4 at stride 1 (P = H, Q = W), in the same layouts:
// dx = the data gradient from dy (overwritten; scratch: grouped4_dgrad_scratch floats for
// `threads` threads); dw (C,4,3,3) = the weight gradient, overwritten, with scratch of
// grouped4_wgrad_scratch floats. Both take d as groups of 4 whatever its width says.
size_t grouped4_dgrad_scratch(const GroupedConv3x3& d, int threads);
void grouped4_conv3x3_dgrad(const float* dy, const float* w, float* dx, float* scratch, const GroupedConv3x3& d,
                            int threads);
bool grouped4_wgrad_supported(const GroupedConv3x3& d);
size_t grouped4_wgrad_scratch(const GroupedConv3x3& d, int threads);
void grouped4_wgrad(const float* x, const float* dy, float* dw, float* scratch, const GroupedConv3x3& d,
                    int threads);
// Groups of 8 at stride 2 (regnet_y_400mf's first block of a stage, resnext50's layer2.0), in the
// same layouts, not nChw8c: dx from dy, overwritten, with packed of 9*8*C floats (the weights
// laid out with input and output channels exchanged); dw (C,8,3,3) overwritten, with
// grouped8_wgrad_scratch floats of scratch.
bool grouped8_backward_supported(const GroupedConv3x3& d);
void grouped8_conv3x3_dgrad(const float* dy, const float* w, float* dx, float* packed, const GroupedConv3x3& d);
size_t grouped8_wgrad_scratch(const GroupedConv3x3& d, int threads);
void grouped8_wgrad(const float* x, const float* dy, float* dw, float* scratch, const GroupedConv3x3& d,
                    int threads);

// y = conv(x) + b (b (K) or null), then y's previous content added where sum (a residual held
// there) and max(0, .) where relu, as Winograd F(4x4, 3x3) (winograd.cpp), for paddings of 0 to 2
// on each side. u holds the transformed weights, winograd3x3_weights_size floats, which
// winograd3x3_weights writes from w (K,C,3,3) plain; with data_gradient, from the weights (C,K,3,3)
// of a forward conv whose data gradient d is (dy in, dx out, paddings 2 - the forward's), turned by
// 180 degrees. scratch is winograd3x3_scratch floats. The padded channels of y's last block are written zero. A NaN or
// infinity in x makes every output of the 4x4 tiles whose 6x6 patch holds it NaN.
bool winograd3x3_supported(const Winograd3x3& d);
size_t winograd3x3_weights_size(const Winograd3x3& d);
void winograd3x3_weights(const float* w, float* u, const Winograd3x3& d, bool data_gradient = false);
size_t winograd3x3_scratch(const Winograd3x3& d);
void winograd3x3(const float* x, const float* u, const float* b, bool sum, bool relu, float* y, float* scratch,
                 const Winograd3x3& d, int threads);
// The weight gradient of that conv as Winograd F(4x4, 3x3): dw (K,C,3,3) plain and, where db is
// not null, db (K), from x and dy (N,K,P,Q) in d's layouts; both overwritten. scratch is
// winograd3x3_wgrad_scratch floats.
size_t winograd3x3_wgrad_scratch(const Winograd3x3& d);
void winograd3x3_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Winograd3x3& d,
                       int threads);

// A depthwise convolution at stride 1, dilation 1, S of 3, 5 or 7, R up to 11, padding under the
// kernel's size and the same on both sides: y = conv(x) + b (b (C) or null), and its data gradient
// dx from dy (both overwritten), in the layouts of depthwise_wgrad (below). w is in the blocked
// weight layout of depthwise_lanes where blocked_weights (read in place), else plain (C,1,R,S) and
// first packed into `packed`, depthwise_conv_packed floats (0 when blocked). Its shapes are a subset
// of depthwise_wgrad's.
bool depthwise_conv_supported(const Depthwise& d);
size_t depthwise_conv_packed(const Depthwise& d);
void depthwise_conv(const float* x, const float* w, const float* b, float* y, float* packed, const Depthwise& d,
                    int threads);
void depthwise_conv_dgrad(const float* dy, const float* w, float* dx, float* packed, const Depthwise& d, int threads);

// Block 8 or 16, or channels-last with C a multiple of 8; R and S at most 11.
bool depthwise_wgrad_supported(const Depthwise& d);
// The width of its vectors, which a blocked dw has for its block: the block where C spans more
// than one, else (channels-last, or a single block, the same bytes) 16 where C allows and the
// host runs the AVX-512 build, else 8.
int64_t depthwise_lanes(const Depthwise& d);
// Floats of scratch depthwise_wgrad needs with `threads` threads.
size_t depthwise_wgrad_scratch(const Depthwise& d, int threads);
// dw = sum over n, p, q of dy * x at the tap's input position; db (C) = sum of dy, when not null.
// Both are overwritten.
void depthwise_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Depthwise& d,
                     int threads);

// y = conv(x) + b (b (K) or null), then max(0, .) where relu: an ImageConv of any kernel, stride
// and padding, K a multiple of 16, y in the layout of d.block (nChw8c, nChw16c or channels-last,
// block K). u holds the weights packed in panels of 16 output channels, image_conv_weights_size
// floats, which image_conv_weights writes from w (K,C,R,S) plain; scratch is image_conv_scratch
// floats for `threads` threads.
bool image_conv_supported(const ImageConv& d);
size_t image_conv_weights_size(const ImageConv& d);
void image_conv_weights(const float* w, float* u, const ImageConv& d);
size_t image_conv_scratch(const ImageConv& d, int threads);
void image_conv(const float* x, const float* u, const float* b, bool relu, float* y, float* scratch, const ImageConv& d,
                int threads);

// The weight gradient of an ImageConv: dw (K,C,R,S) plain = the sum over n, p, q of dy times the
// input under each tap, and db (K) = the sum of dy where db is not null; both overwritten. S of 3,
// 5, 7 or 11, any R, stride and padding; scratch is image_conv_wgrad_scratch floats.
bool image_conv_wgrad_supported(const ImageConv& d);
size_t image_conv_wgrad_scratch(const ImageConv& d, int threads);
void image_conv_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const ImageConv& d,
                      int threads);

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
