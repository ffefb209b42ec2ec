// A concatenation of channels and the batchnorm after it in inference, y = x * a[c] + b[c] with
// a = gamma / sqrt(var + eps), b = beta - mean * a, and an optional ReLU. DenseNet reads every
// concatenation once, through a batchnorm and ReLU: run as one pass over the concatenation's
// inputs, the concatenated tensor is never written and read back (oneDNN 2.6's convolutions write
// a channel range of another tensor only in their reference implementation, so the concatenation
// cannot be built in place instead). Memory-bound: one read of x, one write of y. Without a and b
// it is the concatenation alone, a copy that oneDNN 2.6's simple concat does at a third to a half
// of the speed on channels-last rows of 64 to 256 channels. concat_plain joins pieces each in a
// layout of its own into plain y, a blocked piece by 8x8 transposes.
// x[i] (N,C_i,H,W) in y's layout with C_i channels  y (N,C,H,W), C the sum of the C_i  a, b (C)
#include <omp.h>

#include <algorithm>
#include <utility>

#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

// A 16-channel block runs as two 8-lane halves: GCC lowers a select (the ReLU) on a vector twice
// the target's width lane by lane, which the AVX2 and baseline builds would do for 16 lanes. The
// kernel is memory-bound, so AVX-512 loses nothing by the narrower registers.
template <int width>
RIDGE_SIMD_INLINE void affine_rows_fixed(const float* x, const float* a, const float* b, bool relu, float* y,
                                         int64_t rows) {
    using V = Vec<8>;
    constexpr int halves = width / 8;
    V av[halves], bv[halves];
    for (int h = 0; h < halves; ++h) av[h] = load<V>(a + 8 * h), bv[h] = load<V>(b + 8 * h);
    const V zero = {};
    for (int64_t r = 0; r < rows; ++r)
        for (int h = 0; h < halves; ++h) {
            V v = load<V>(x + r * width + 8 * h) * av[h] + bv[h];
            // As std::max(v, 0) in the other layouts: a NaN stays NaN.
            store(y + r * width + 8 * h, relu ? (v < zero ? zero : v) : v);
        }
}

// Rows of a channel block (8 or 16 lanes), each lane its channel's affine.
RIDGE_SIMD_LEAF void affine_rows(const float* x, const float* a, const float* b, bool relu, float* y, int64_t rows,
                                 int64_t width) {
    if (!a) return void(std::copy_n(x, rows * width, y));
    if (width == 16) return affine_rows_fixed<16>(x, a, b, relu, y, rows);
    return affine_rows_fixed<8>(x, a, b, relu, y, rows);
}

// One channel's map in a plain layout.
RIDGE_SIMD_LEAF void affine_span(const float* x, const float* a, const float* b, bool relu, float* y, int64_t n) {
    if (!a) return void(std::copy_n(x, n, y));
    const float av = *a, bv = *b;  // y could alias a and b as far as the compiler knows
    if (relu)
        for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * av + bv, 0.0f);
    else
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * av + bv;
}

// Channels-last: `rows` positions of `width` channels, x's rows `xs` floats apart and y's `ys`,
// each element its own channel's affine. Plain loops: the vectorizer widens them per target.
RIDGE_SIMD_LEAF void affine_strided(const float* x, int64_t xs, const float* a, const float* b, bool relu, float* y,
                                    int64_t ys, int64_t rows, int64_t width) {
    for (int64_t r = 0; r < rows; ++r, x += xs, y += ys)
        if (!a)
            for (int64_t j = 0; j < width; ++j) y[j] = x[j];
        else if (relu)
            for (int64_t j = 0; j < width; ++j) y[j] = std::max(x[j] * a[j] + b[j], 0.0f);
        else
            for (int64_t j = 0; j < width; ++j) y[j] = x[j] * a[j] + b[j];
}

constexpr int64_t chunk = 512;  // positions per piece of work, so a few large images spread

// The affine's coefficients from channel c on; none for the concatenation alone.
const float* at(const float* v, int64_t c) { return v ? v + c : nullptr; }

// The piece that holds unit u (a channel, or a block of B channels) of the concatenation, and the
// unit's index in it.
std::pair<int64_t, int64_t> locate(const int64_t* channels, int64_t pieces, int64_t B, int64_t u) {
    int64_t i = 0;
    while (i + 1 < pieces && u >= channels[i] / B) u -= channels[i++] / B;
    return {i, u};
}

RIDGE_SIMD_LEAF void copy_or_add(const float* x, float* y, int64_t n, bool add) {
    if (!add) return void(std::copy_n(x, n, y));
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

// `rows` rows of `width`, x's `xs` floats apart and y's `ys`.
RIDGE_SIMD_LEAF void copy_or_add_rows(const float* x, int64_t xs, float* y, int64_t ys, int64_t rows, int64_t width,
                                      bool add) {
    for (int64_t r = 0; r < rows; ++r, x += xs, y += ys)
        if (add)
            for (int64_t j = 0; j < width; ++j) y[j] += x[j];
        else
            for (int64_t j = 0; j < width; ++j) y[j] = x[j];
}

// The walks over a concatenation y of pieces in y's layout, shared by concat_affine and its
// gradient, in one parallel region for the whole concatenation: a region per piece costs the team
// a wake-up each, and DenseNet's last concatenations have 25 and more pieces. Each call names a
// piece i, where one run starts in the piece (xo) and in y (yo), and y's channel c it starts at:
//   rows(i, xo, yo, c, count)   channels-last: `count` positions of the piece's channels[i]
//                               channels, rows channels[i] floats apart in the piece and C in y;
//   span(i, xo, yo, c)          plain: channel c's HW positions;
//   block(i, xo, yo, c, count)  channel blocks: `count` positions of B channels.
template <class Rows, class Span, class Block>
void walk(const int64_t* channels, int64_t pieces, const ChannelLayout& yl, Rows rows, Span span, Block block) {
    const int64_t B = yl.block, chunks = (yl.HW + chunk - 1) / chunk;
    if (B == yl.C && B > 1) {  // channels-last (or a single block): each piece's row of channels
        // Positions run on from one image into the next, so the N*HW of them split evenly over the
        // team. By image, resnet50's last maps at batch 1 (49 positions of 2048 channels) were one
        // run that one thread did alone while the other waited.
        const int64_t positions = yl.N * yl.HW, threads = omp_get_max_threads();
        if (positions == 0) return;
        const int64_t runs = ((positions + chunk - 1) / chunk + threads - 1) / threads * threads;
        const int64_t run = std::max<int64_t>(1, (positions + runs - 1) / runs);
#pragma omp parallel for schedule(static)
        for (int64_t p = 0; p < positions; p += run) {
            const int64_t count = std::min(run, positions - p);
            int64_t c0 = 0;
            for (int64_t i = 0; i < pieces; c0 += channels[i++]) rows(i, p * channels[i], p * yl.C + c0, c0, count);
        }
    } else if (B == 1) {
#pragma omp parallel for schedule(static)
        for (int64_t nc = 0; nc < yl.N * yl.C; ++nc) {
            int64_t n = nc / yl.C, c = nc % yl.C;
            auto [i, k] = locate(channels, pieces, B, c);
            span(i, (n * channels[i] + k) * yl.HW, nc * yl.HW, c);
        }
    } else {
        const int64_t units = yl.blocks();
#pragma omp parallel for schedule(static)
        for (int64_t u = 0; u < yl.N * units * chunks; ++u) {
            int64_t n = u / (units * chunks), cb = u / chunks % units, s0 = u % chunks * chunk;
            auto [i, k] = locate(channels, pieces, B, cb);
            block(i, (n * channels[i] + k * B) * yl.HW + s0 * B,
                  n * yl.batch_stride() + cb * yl.block_stride() + s0 * B, cb * B, std::min(chunk, yl.HW - s0));
        }
    }
}

// `count` channels (up to 8, within one block) of a channel block of HW positions, B lanes each
// (channels-last: B all the channels), from x, the first one's lane at position 0, into plain rows
// from y, HW floats apart: 8 positions a transpose, the last HW % 8 one at a time. The loads read a
// blocked layout's padding lanes past the last channel; a channels-last run short of 8 at the row's
// end (its first channel at `lane`) goes one at a time, as its loads would read past the tensor.
RIDGE_SIMD_LEAF void block_to_rows(const float* x, int64_t B, int64_t lane, int64_t count, float* y, int64_t HW) {
    int64_t s = 0;
    for (; lane + 8 <= B && s + 8 <= HW; s += 8) {
        Vec8 r[8];
        for (int i = 0; i < 8; ++i) r[i] = load<Vec8>(x + (s + i) * B);
        transpose8(r);
        for (int64_t c = 0; c < count; ++c) store(y + c * HW + s, r[c]);
    }
    for (; s < HW; ++s)
        for (int64_t c = 0; c < count; ++c) y[c * HW + s] = x[s * B + c];
}

}  // namespace

void concat_plain(const float* const* x, const int64_t* channels, const int64_t* blocks, int64_t pieces, float* y,
                  int64_t N, int64_t HW) {
    int64_t C = 0, units = 0;  // units: runs of up to 8 of a piece's channels, an image's
    for (int64_t i = 0; i < pieces; ++i) C += channels[i], units += (channels[i] + 7) / 8;
#pragma omp parallel for schedule(static)
    for (int64_t u = 0; u < N * units; ++u) {
        const int64_t n = u / units;
        int64_t g = u % units, i = 0, c0 = 0;  // c0: piece i's first channel in y
        while (g >= (channels[i] + 7) / 8) g -= (channels[i] + 7) / 8, c0 += channels[i++];
        const int64_t k = 8 * g, count = std::min<int64_t>(8, channels[i] - k), B = blocks[i];
        const float* in = x[i] + ChannelLayout{N, channels[i], HW, B}.offset(n, k, 0);
        float* out = y + (n * C + c0 + k) * HW;
        if (B == 1)
            std::copy_n(in, count * HW, out);
        else
            block_to_rows(in, B, k % B, count, out, HW);
    }
}

void concat_affine(const float* const* x, const int64_t* channels, int64_t pieces, const float* a, const float* b,
                   bool relu, float* y, const ChannelLayout& yl) {
    walk(
        channels, pieces, yl,
        [&](int64_t i, int64_t xo, int64_t yo, int64_t c, int64_t count) {
            affine_strided(x[i] + xo, channels[i], at(a, c), at(b, c), relu, y + yo, yl.C, count, channels[i]);
        },
        [&](int64_t i, int64_t xo, int64_t yo, int64_t c) {
            affine_span(x[i] + xo, at(a, c), at(b, c), relu, y + yo, yl.HW);
        },
        [&](int64_t i, int64_t xo, int64_t yo, int64_t c, int64_t count) {
            affine_rows(x[i] + xo, at(a, c), at(b, c), relu, y + yo, count, yl.block);
        });
}

void concat_backward(const float* dy, const int64_t* channels, int64_t pieces, const uint8_t* mode, float* const* dx,
                     const ChannelLayout& yl) {
    walk(
        channels, pieces, yl,
        [&](int64_t i, int64_t xo, int64_t yo, int64_t, int64_t count) {
            if (mode[i])
                copy_or_add_rows(dy + yo, yl.C, dx[i] + xo, channels[i], count, channels[i], mode[i] == 2);
        },
        [&](int64_t i, int64_t xo, int64_t yo, int64_t) {
            if (mode[i]) copy_or_add(dy + yo, dx[i] + xo, yl.HW, mode[i] == 2);
        },
        [&](int64_t i, int64_t xo, int64_t yo, int64_t, int64_t count) {
            if (mode[i]) copy_or_add(dy + yo, dx[i] + xo, count * yl.block, mode[i] == 2);
        });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
