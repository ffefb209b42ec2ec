// A concatenation of channels and the batchnorm after it in inference, y = x * a[c] + b[c] with
// a = gamma / sqrt(var + eps), b = beta - mean * a, and an optional ReLU. DenseNet reads every
// concatenation once, through a batchnorm and ReLU: run as one pass over the concatenation's
// inputs, the concatenated tensor is never written and read back (oneDNN 2.6's convolutions write
// a channel range of another tensor only in their reference implementation, so the concatenation
// cannot be built in place instead). Memory-bound: one read of x, one write of y. Without a and b
// it is the concatenation alone, a copy that oneDNN 2.6's simple concat does at a third to a half
// of the speed on channels-last rows of 64 to 256 channels. concat_plain joins pieces each in a
// layout of its own into plain y, a blocked piece by 8x8 transposes; concat_channels_last into
// channels-last y, a blocked piece by copies of its blocks.
// x[i] (N,C_i,H,W) in y's layout with C_i channels  y (N,C,H,W), C the sum of the C_i  a, b (C)
#include <omp.h>

#include <algorithm>
#include <utility>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
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
        for_units((positions + run - 1) / run, int(threads), [&](int64_t u) {
            const int64_t p = u * run, count = std::min(run, positions - p);
            int64_t c0 = 0;
            for (int64_t i = 0; i < pieces; c0 += channels[i++]) rows(i, p * channels[i], p * yl.C + c0, c0, count);
        });
    } else if (B == 1) {
        for_units(yl.N * yl.C, omp_get_max_threads(), [&](int64_t nc) {
            int64_t n = nc / yl.C, c = nc % yl.C;
            auto [i, k] = locate(channels, pieces, B, c);
            span(i, (n * channels[i] + k) * yl.HW, nc * yl.HW, c);
        });
    } else {
        const int64_t units = yl.blocks();
        for_units(yl.N * units * chunks, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / (units * chunks), cb = u / chunks % units, s0 = u % chunks * chunk;
            auto [i, k] = locate(channels, pieces, B, cb);
            block(i, (n * channels[i] + k * B) * yl.HW + s0 * B,
                  n * yl.batch_stride() + cb * yl.block_stride() + s0 * B, cb * B, std::min(chunk, yl.HW - s0));
        });
    }
}

// `count` channels (up to 8, within one block) of a channel block of HW positions, B lanes each
// (channels-last: B all the channels), from x, the first one's lane at position 0, into plain rows
// y[0..count), HW floats each: 8 positions a transpose, the last HW % 8 one at a time. The loads
// read a blocked layout's padding lanes past the last channel; a channels-last run short of 8 at the
// row's end (its first channel at `lane`) goes one at a time, as its loads would read past the
// tensor.
RIDGE_SIMD_LEAF void block_to_rows(const float* x, int64_t B, int64_t lane, int64_t count, float* const* y,
                                   int64_t HW) {
    int64_t s = 0;
    for (; lane + 8 <= B && s + 8 <= HW; s += 8) {
        Vec8 r[8];
        for (int i = 0; i < 8; ++i) r[i] = load<Vec8>(x + (s + i) * B);
        transpose8(r);
        for (int64_t c = 0; c < count; ++c) store(y[c] + s, r[c]);
    }
    for (; s < HW; ++s)
        for (int64_t c = 0; c < count; ++c) y[c][s] = x[s * B + c];
}

// Positions s0 to s1 of one image's piece `l` (x at the image's first float) into y's
// channels-last rows from `y`, C floats apart: a block's lanes at a position are contiguous, so
// a full block is 8-lane copies, and a last block that holds padding in part copies its channels
// alone (its padding would land on the next piece's); channels-last rows are copies; plain
// channels are turned around by 8x8 transposes, the edges one float at a time.
RIDGE_SIMD_LEAF void piece_to_rows(const float* x, const ChannelLayout& l, int64_t s0, int64_t s1, float* y,
                                   int64_t C) {
    if (l.block == l.C) {
        for (int64_t s = s0; s < s1; ++s) std::copy_n(x + s * l.C, l.C, y + s * C);
    } else if (l.block == 1) {
        for (int64_t k = 0; k < l.C; k += 8) {
            const int64_t count = std::min<int64_t>(8, l.C - k);
            int64_t s = s0;
            for (; count == 8 && s + 8 <= s1; s += 8) {
                Vec8 r[8];
                for (int c = 0; c < 8; ++c) r[c] = load<Vec8>(x + (k + c) * l.HW + s);
                transpose8(r);
                for (int i = 0; i < 8; ++i) store(y + (s + i) * C + k, r[i]);
            }
            for (; s < s1; ++s)
                for (int64_t c = 0; c < count; ++c) y[s * C + k + c] = x[(k + c) * l.HW + s];
        }
    } else {
        for (int64_t cb = 0; cb < l.blocks(); ++cb) {
            const int64_t count = std::min(l.block, l.C - cb * l.block);
            const float* in = x + cb * l.block_stride();
            float* out = y + cb * l.block;
            for (int64_t s = s0; s < s1; ++s) {
                if (count < l.block) {
                    std::copy_n(in + s * l.block, count, out + s * C);
                    continue;
                }
                for (int64_t j = 0; j < l.block; j += 8) store(out + s * C + j, load<Vec8>(in + s * l.block + j));
            }
        }
    }
}

// Positions s0 to s1 of 8 rows of a plain map (row[c] the first float of one channel's, null for a
// channel of the block's padding, written as zeros) into 8 consecutive lanes of a block (y the
// first lane's float at position 0, B floats a position), by 8x8 transposes.
RIDGE_SIMD_LEAF void rows_to_block(const float* const (&row)[8], int64_t s0, int64_t s1, float* y, int64_t B) {
    int64_t s = s0;
    for (; s + 8 <= s1; s += 8) {
        Vec8 r[8];
        for (int c = 0; c < 8; ++c) r[c] = row[c] ? load<Vec8>(row[c] + s) : Vec8{};
        transpose8(r);
        for (int i = 0; i < 8; ++i) store(y + (s + i) * B, r[i]);
    }
    for (; s < s1; ++s)
        for (int c = 0; c < 8; ++c) y[s * B + c] = row[c] ? row[c][s] : 0.0f;
}

// One position's shuffled channels 2j + g from j0: a[j] and b[j] (x's two groups from j0) zipped
// into y[2j] and y[2j + 1], 8 of each a vector pair, the last ones one at a time.
RIDGE_SIMD_LEAF void zip_row(const float* a, const float* b, int64_t pairs, float* y) {
    typedef int32_t L8 __attribute__((vector_size(32)));
    int64_t j = 0;
    for (; j + 8 <= pairs; j += 8) {
        const Vec8 u = load<Vec8>(a + j), v = load<Vec8>(b + j);
        store(y + 2 * j, __builtin_shuffle(u, v, L8{0, 8, 1, 9, 2, 10, 3, 11}));
        store(y + 2 * j + 8, __builtin_shuffle(u, v, L8{4, 12, 5, 13, 6, 14, 7, 15}));
    }
    for (; j < pairs; ++j) y[2 * j] = a[j], y[2 * j + 1] = b[j];
}

}  // namespace

void shuffle2_channels_last(const float* x, int64_t C, int64_t positions, int64_t start, int64_t L, float* y) {
    const int64_t j0 = start / 2, half = C / 2;
    for_units(positions, omp_get_max_threads(), [&](int64_t s) {
        zip_row(x + s * C + j0, x + s * C + half + j0, L / 2, y + s * L);
    });
}

void concat_channels_last(const float* const* x, const int64_t* channels, const int64_t* blocks, int64_t pieces,
                          float* y, int64_t N, int64_t HW) {
    int64_t C = 0;
    for (int64_t i = 0; i < pieces; ++i) C += channels[i];
    // Units of 64 positions: every piece's rows of a unit go to one thread, whose writes then fill
    // whole rows of y.
    constexpr int64_t chunk = 64;
    const int64_t chunks = (HW + chunk - 1) / chunk;
    for_units(N * chunks, omp_get_max_threads(), [&](int64_t u) {
        const int64_t n = u / chunks, s0 = u % chunks * chunk, s1 = std::min(HW, s0 + chunk);
        int64_t c0 = 0;
        for (int64_t i = 0; i < pieces; c0 += channels[i++]) {
            const ChannelLayout l{N, channels[i], HW, blocks[i]};
            piece_to_rows(x[i] + l.offset(n, 0, 0), l, s0, s1, y + n * HW * C + c0, C);
        }
    });
}

void plain_to_blocked(const float* x, float* y, const ChannelLayout& yl, const int64_t* from) {
    // Units of a block and up to 1024 positions of an image: a unit writes whole 64-byte lines of a
    // 16-channel block (its two 8-lane halves one after the other, the lines still in L1) and reads
    // each of its rows in runs long enough for the prefetcher. Units of 8 channels (each line
    // half-written, another unit finishing it) and of 128 positions (16 rows read in short runs)
    // were slower than oneDNN's reorder on 16x64x56x56 (384 against 343 us; 442-458 against
    // 383-485); these reach 0.8-0.95x its speed there and pass it on smaller maps (plan.cpp).
    constexpr int64_t chunk = 1024;
    const int64_t blocks = yl.blocks(), chunks = (yl.HW + chunk - 1) / chunk;
    for_units(yl.N * blocks * chunks, omp_get_max_threads(), [&](int64_t u) {
        const int64_t n = u / (blocks * chunks), s0 = u % chunks * chunk, s1 = std::min(yl.HW, s0 + chunk);
        for (int64_t k = u / chunks % blocks * yl.block, end = k + yl.block; k < end; k += 8) {
            const float* row[8];
            for (int64_t c = k; c < k + 8; ++c)
                row[c - k] = c < yl.C ? x + (n * yl.C + (from ? from[c] : c)) * yl.HW : nullptr;
            rows_to_block(row, s0, s1, y + yl.offset(n, k, 0), yl.block);
        }
    });
}

void concat_plain(const float* const* x, const int64_t* channels, const int64_t* blocks, int64_t pieces, float* y,
                  int64_t N, int64_t HW, const int64_t* to) {
    int64_t C = 0, units = 0;  // units: runs of up to 8 of a piece's channels, an image's
    for (int64_t i = 0; i < pieces; ++i) C += channels[i], units += (channels[i] + 7) / 8;
    for_units(N * units, omp_get_max_threads(), [&](int64_t u) {
        const int64_t n = u / units;
        int64_t g = u % units, i = 0, c0 = 0;  // c0: piece i's first channel in y
        while (g >= (channels[i] + 7) / 8) g -= (channels[i] + 7) / 8, c0 += channels[i++];
        const int64_t k = 8 * g, count = std::min<int64_t>(8, channels[i] - k), B = blocks[i];
        const float* in = x[i] + ChannelLayout{N, channels[i], HW, B}.offset(n, k, 0);
        float* out[8];
        for (int64_t c = 0; c < count; ++c) out[c] = y + (n * C + (to ? to[c0 + k + c] : c0 + k + c)) * HW;
        if (B == 1)
            for (int64_t c = 0; c < count; ++c) std::copy_n(in + c * HW, HW, out[c]);
        else
            block_to_rows(in, B, k % B, count, out, HW);
    });
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
