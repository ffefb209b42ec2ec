// A convolution reading few channels, a net's first on the image, as a matrix product whose rows
// are output positions and whose terms are the taps (c, r, s).
//
// image_conv: x (N,C,H,W) plain  w (K,C,R,S) plain, packed by image_conv_weights  b (K)
// y (N,K,P,Q) in nChw8c, nChw16c or channels-last
// oneDNN 2.6 runs alexnet's 11x11 stride 4 on 3 channels as its GEMM convolution (gemm:jit): on
// the 2-core Zen 3, 2.4 to 2.8 ms at batch 1 in the net against a bound of 0.69, writing a plain
// output the next conv reorders. Here each output row's input rows are copied once with their
// padding, and panel.h's 6 x 16 micro-kernel multiplies groups of up to six positions of the row,
// read in place, by a panel of 16 output channels of the weights (packed once in inference),
// writing y's layout directly with the bias and a ReLU.
#include <omp.h>

#include <algorithm>

#include "kernels/simd/panel.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t panel = 16;      // output channels a product
constexpr int64_t group_rows = 6;  // output positions a product

int64_t terms(const ImageConv& d) { return d.C * d.R * d.S; }
// Floats of a padded input row: every column an output row's windows reach.
int64_t row_floats(const ImageConv& d) { return (d.Q - 1) * d.stride_w + d.S; }

// The C * R input rows under output row p of image n into rows (row_floats apart), element j of
// row (c, r) being x[n][c][p * stride_h - pad_t + r][j - pad_l], zero outside the map.
void pad_rows(const float* x, float* rows, const ImageConv& d, int64_t n, int64_t p) {
    const int64_t L = row_floats(d), lo = std::min(L, d.pad_l), hi = std::clamp(d.W + d.pad_l, lo, L);
    for (int64_t c = 0; c < d.C; ++c)
        for (int64_t r = 0; r < d.R; ++r, rows += L) {
            const int64_t h = p * d.stride_h - d.pad_t + r;
            if (h < 0 || h >= d.H) {
                std::fill(rows, rows + L, 0.0f);
                continue;
            }
            const float* in = x + ((n * d.C + c) * d.H + h) * d.W;
            std::fill(rows, rows + lo, 0.0f);
            if (hi > lo) std::copy(in + (lo - d.pad_l), in + (hi - d.pad_l), rows + lo);
            std::fill(rows + hi, rows + L, 0.0f);
        }
}

// Output row p of image n: its input rows padded into `rows`, then each group of up to six
// positions times each panel of 16 channels, the terms as C * R runs of S taps (one input row
// (c, r) each): a position's taps of a run are contiguous there, and positions stride_w floats
// apart, so the micro-kernel reads them in place. On one core of the Zen 3, alexnet's first conv
// took 2.4 ms with an im2col of the positions (0.9 of it packing), 2.1 with the accumulators
// taken through y between runs, and 1.6 to 1.8 (78 to 89 GFLOP/s) so.
RIDGE_SIMD_LEAF void output_row(const float* x, const float* u, const float* b, bool relu, float* y, float* rows,
                                const ImageConv& d, int64_t n, int64_t p) {
    const int64_t T = terms(d), L = row_floats(d), PQ = d.P * d.Q, runs = d.C * d.R;
    pad_rows(x, rows, d, n, p);
    // Position m's first 8 channels of panel k0: positions are ldm floats apart, a position's
    // second 8 channels half floats after its first.
    const bool nhwc = d.block == d.K;
    const int64_t ldm = nhwc ? d.K : d.block, half = d.block == 8 && !nhwc ? PQ * 8 : 8;
    auto at = [&](int64_t k0, int64_t m) {
        return nhwc ? y + (n * PQ + m) * d.K + k0 : y + (n * d.K + k0) * PQ + m * d.block;
    };
    // Groups of equal size: 55 positions as 5 of 6 and 5 of 5, not 9 of 6 and 1 of 1.
    const int64_t groups = (d.Q + group_rows - 1) / group_rows;
    for (int64_t k0 = 0; k0 < d.K; k0 += panel)
        for (int64_t j = 0; j < groups; ++j) {
            const int64_t q0 = d.Q * j / groups, g = d.Q * (j + 1) / groups - q0;
            float* out = at(k0, p * d.Q + q0);
            const float* a = rows + q0 * d.stride_w;
            multiply_rows(g, a, d.stride_w, 1, u + k0 * T, panel, d.S, out, ldm, false, half, runs, L);
            finish_tile(out, ldm, g, b ? b + k0 : nullptr, relu, half);
        }
}

}  // namespace

bool image_conv_supported(const ImageConv& d) {
    const bool layout = d.K >= panel && d.K % panel == 0 && (d.block == 8 || d.block == 16 || d.block == d.K);
    return layout && d.N >= 1 && d.C >= 1 && d.H >= 1 && d.W >= 1 && d.R >= 1 && d.S >= 1 && d.P >= 1 && d.Q >= 1 &&
           d.stride_h >= 1 && d.stride_w >= 1 && d.pad_t >= 0 && d.pad_l >= 0;
}

size_t image_conv_weights_size(const ImageConv& d) { return size_t(d.K * terms(d)); }

void image_conv_weights(const float* w, float* u, const ImageConv& d) {
    const int64_t T = terms(d);
    for (int64_t k = 0; k < d.K; ++k)
        for (int64_t t = 0; t < T; ++t) u[(k / panel * T + t) * panel + k % panel] = w[k * T + t];
}

size_t image_conv_scratch(const ImageConv& d, int threads) { return size_t(threads * d.C * d.R * row_floats(d)); }

void image_conv(const float* x, const float* u, const float* b, bool relu, float* y, float* scratch, const ImageConv& d,
                int threads) {
    const int64_t per = d.C * d.R * row_floats(d);
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t i = 0; i < d.N * d.P; ++i)
        output_row(x, u, b, relu, y, scratch + omp_get_thread_num() * per, d, i / d.P, i % d.P);
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
