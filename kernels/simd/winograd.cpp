// A 3x3 convolution at stride 1 as Winograd F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016), for hosts where oneDNN 2.6 has no Winograd kernel (AVX2).
//
// The output is cut into tiles of 4x4 positions; each reads a 6x6 patch of the input. The patch
// is taken to the transform domain (B^T d B), multiplied point by point with the transformed
// weights (G g G^T), summed over the input channels and brought back (A^T m A). At each of the 36
// points the sum over channels is a matrix product, tiles x C by C x K, and that is where the time
// goes: 36 multiplies per channel pair for 16 outputs, against 144 for the direct convolution.
//
// Training uses the same algebra backwards. The data gradient is this convolution over dy, with the
// weights turned by 180 degrees and their channels swapped. The weight gradient (winograd3x3_wgrad)
// takes dy's 4x4 tiles to the transform domain (A dy A^T), multiplies them at each point with the
// input's transformed patches, summed over the tiles (a product K x tiles by tiles x C), and
// brings the sums back to 3x3 (G^T dU G).
//
// Numerics: the transforms interpolate at 0, 1, -1, 2, -2 and infinity. Their coefficients (up to
// 8 in A, 5 in B, 1/24 in G) make the rounding error grow with the magnitudes summed, several
// times a direct convolution's (tests/test_onednn.cpp bounds it against a double-precision sum).
// Every output of a tile mixes its whole 6x6 patch, so a NaN or infinity in the input makes the
// tile's 16 outputs NaN, not only those whose windows hold it (as oneDNN's Winograd does).
//
// Layouts: x and y as ChannelLayout says, nChw8c / nChw16c or channels-last, read and written as
// vectors of 8 channels. The transformed input V is [point][tile][channel], so the product's rows
// are tiles and a row's channels are contiguous for the broadcasts; the weights U are
// [point][panel of 16 output channels][channel][16]; the products M are [point][tile][output
// channel]. Tiles are processed in chunks whose V and M stay in cache: the product then reads each
// chunk's U once per point from memory or L3. The weight gradient's Z (dy transformed) is
// [point][tile][output channel] and its sums dU [point][output channel][channel], summed over the
// chunks.
//
// Groups: each group is the same algorithm on its own channels, with U for each group in turn
// ([group][point][panel][channel][16 or 24]), and V, M and Z [tile][point][channel]. In
// the forward each thread takes whole (group, chunk of tiles) items, its V and M in its own
// scratch sized to stay in its L2 (Geometry says why they are tile-major there). A group's
// product is small (regnet_x_1_6gf's groups of 24: 24 x 24 at each point), so the transforms
// weigh as much as the product: its block3 conv, 16x408x14x14 in 17 groups, took 13 ms (4.5 ms in
// each transform) laid out as the ungrouped forward is, with a panel of U reading the input
// channels of every group its outputs fall in, against oneDNN's direct conv's 4.7; 6.8 ms by
// groups; 4.3 with the transforms below and tile-major V and M. Groups of 24 outputs then take
// one panel of 24 (panel.h's multiply_rows24), not two of 16 padded to 32. The weight gradient
// runs the groups one after the other.
#include <omp.h>

#include <algorithm>

#include "kernels/simd/panel.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

using V = Vec8;

constexpr int64_t points = 36;  // of a 6x6 patch
constexpr int64_t rows = 6;     // tiles the micro-kernel multiplies at once
constexpr int64_t panel = 16;   // output channels it writes: two 8-lane vectors

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

struct Geometry {
    int64_t tiles_h, tiles_w, tiles;  // tiles of an image down and across; of the batch
    int64_t Cg, Kg;                   // a group's input and output channels: C / G, K / G
    int64_t Cp;                       // input channels read: Cg rounded up to a vector
    int64_t pw, pr;                   // the product's panel of outputs and its rows a call
    int64_t Kp;                       // U's and M's output channels: Kg rounded up to a panel
    int64_t Ky;                       // output channels written: y's layout pads K to its block
    int64_t chunk;                    // tiles per pass, whole calls of the product (6 or 12 rows)
    // Floats from one point's matrix to the next in V (and Z), M, U and dU: each padded by a line
    // of 64 bytes. Unpadded they are often multiples of 4 KiB, and the 36 points of a tile or a
    // weight then fall in one set of the 8-way L1: transforming 512 x 512 weights took 8 ms
    // against a memset's 1.3 ms.
    int64_t vp, mp, up, dup;
    // Floats from one tile's row to the next in V (and Z) and M, and the floats each takes.
    int64_t vt, mt, vsize, msize;
};

constexpr int64_t skew = 16;

// c_round: V's channels rounded up to a vector (the forward), or to a panel (the weight gradient,
// whose product writes panels of 16 input channels).
Geometry geometry(const Winograd3x3& d, int64_t c_round = 8) {
    Geometry g{};
    g.tiles_h = (d.P + 3) / 4, g.tiles_w = (d.Q + 3) / 4, g.tiles = d.N * g.tiles_h * g.tiles_w;
    g.Cg = d.C / d.G, g.Kg = d.K / d.G;
    // Groups of 24 outputs (not of 48) in one panel of 24 on 4 rows (multiply_rows24), not two of
    // 16 with 8 of zeros.
    const bool by24 = d.G > 1 && g.Kg % 24 == 0 && g.Kg % 16 != 0;
    g.pw = by24 ? 24 : panel, g.pr = by24 ? 4 : rows;
    const int64_t step = by24 ? 12 : rows;  // chunks hold whole calls
    g.Cp = round_up(g.Cg, c_round), g.Kp = round_up(g.Kg, g.pw), g.Ky = round_up(d.K, d.block_y);
    // The product wants many rows a chunk: U's 36 x Cp x Kp floats are read once per chunk, and
    // each panel of U goes over all the chunk's rows of a point of V, which should stay in L2
    // (256 KiB of it: at most 64K / Cp rows). The transforms want a chunk's V and M in the two
    // cores' L2 and a little L3 (3 MiB), which for 64 channels is 170 rows. Timed alone on the
    // 2-core Zen 3 (noisy within 30 %): 64 -> 64 at 224x224 was fastest at 90 to 174 rows, 256 ->
    // 256 at 56x56 with all 196 tiles in one chunk, 512 -> 512 at 28x28 with its 49 tiles in one
    // (as 48 and 6, U came from memory twice: the product 8.3-10.5 against 7.4-7.9 ms, 3
    // alternated pairs); 192 rows otherwise. V and M stay within 16 MiB, or the 6 rows of one
    // micro-kernel call where C and K are too wide for that.
    const int64_t l2_rows = std::max(rows, (int64_t(64) << 10) / g.Cp);
    const int64_t cap = std::min(l2_rows, std::max(rows, (int64_t(16) << 20) / (points * 4 * (g.Cp + g.Kp))));
    const int64_t transforms = (int64_t(3) << 20) / (points * 4 * (g.Cp + g.Kp));
    int64_t most = g.tiles <= cap ? g.tiles : std::min(cap, std::max<int64_t>(192, transforms));
    // A group's V and M in 384 KiB, most of a Zen 3 core's 512 KiB of L2 (its U is small).
    if (d.G > 1) most = std::max(step, (int64_t(384) << 10) / (points * 4 * (g.Cp + g.Kp)) / step * step);
    const int64_t chunks = (g.tiles + most - 1) / most;
    g.chunk = round_up((g.tiles + chunks - 1) / chunks, step);
    g.up = round_up(g.Cg, 8) * g.Kp + skew, g.dup = g.Kg * g.Cp + skew;
    if (d.G == 1) {
        g.vp = g.chunk * g.Cp + skew, g.mp = g.chunk * g.Kp + skew, g.vt = g.Cp, g.mt = g.Kp;
        g.vsize = points * g.vp, g.msize = points * g.mp;
    } else {
        // Grouped, a tile's 36 points are adjacent rows: [tile][point][channel]. A transform's
        // 36 vectors of a tile then fall in a few KiB, not in 36 lines a matrix apart, each
        // missing L1: regnet_x_1_6gf's block2 conv (16x168x28x28 in groups of 24) took 3 ns an
        // element in each transform that way, alone on one core.
        g.vp = g.Cp, g.mp = g.Kp, g.vt = points * g.Cp, g.mt = points * g.Kp;
        g.vsize = g.chunk * g.vt, g.msize = g.chunk * g.mt;
    }
    return g;
}

// B^T applied to six values along one axis.
RIDGE_SIMD_INLINE void input_1d(const V* d, int64_t stride, V* o, int64_t ostride) {
    const V d0 = d[0], d1 = d[stride], d2 = d[2 * stride], d3 = d[3 * stride], d4 = d[4 * stride],
            d5 = d[5 * stride];
    o[0] = 4 * d0 - 5 * d2 + d4;
    o[ostride] = d3 + d4 - 4 * (d1 + d2);
    o[2 * ostride] = d4 - d3 + 4 * (d1 - d2);
    o[3 * ostride] = d4 - d2 + 2 * (d3 - d1);
    o[4 * ostride] = d4 - d2 + 2 * (d1 - d3);
    o[5 * ostride] = 4 * d1 - 5 * d3 + d5;
}

// A^T applied to six values along one axis.
RIDGE_SIMD_INLINE void output_1d(const V* m, int64_t stride, V* o, int64_t ostride) {
    const V m0 = m[0], m1 = m[stride], m2 = m[2 * stride], m3 = m[3 * stride], m4 = m[4 * stride],
            m5 = m[5 * stride];
    const V a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
    o[0] = m0 + a + c;
    o[ostride] = b + 2 * e;
    o[2 * ostride] = a + 4 * c;
    o[3 * ostride] = b + 8 * e + m5;
}

// A (the transpose of A^T) applied to four values along one axis: an output tile's gradient taken
// to the transform domain.
RIDGE_SIMD_INLINE void gradient_1d(const V* y, int64_t stride, V* o, int64_t ostride) {
    const V y0 = y[0], y1 = y[stride], y2 = y[2 * stride], y3 = y[3 * stride];
    const V e = y0 + y2, f = y1 + y3, g = y0 + 4 * y2, h = 2 * y1 + 8 * y3;
    o[0] = y0;
    o[ostride] = e + f;
    o[2 * ostride] = e - f;
    o[3 * ostride] = g + h;
    o[4 * ostride] = g - h;
    o[5 * ostride] = y3;
}

// G^T applied to six values along one axis: a weight's gradient from the transform domain back to
// three taps.
RIDGE_SIMD_INLINE void weight_1d(const V* m, int64_t stride, V* o, int64_t ostride) {
    const V m0 = m[0], m1 = m[stride], m2 = m[2 * stride], m3 = m[3 * stride], m4 = m[4 * stride],
            m5 = m[5 * stride];
    o[0] = 0.25f * m0 - (m1 + m2) / 6 + (m3 + m4) / 24;
    o[ostride] = (m2 - m1) / 6 + (m3 - m4) / 12;
    o[2 * ostride] = (m3 + m4) / 6 - (m1 + m2) / 6 + m5;
}

// V's rows for items [i0, i1) of (tile, block of 8 of the group's input channels, from c0 on);
// tiles from `count` on (the chunk's rows past its last tile) and channels from the group's C/G on
// (V's padding to Cp; ungrouped, past x's last block) are zero.
RIDGE_SIMD_LEAF void transform_input(const float* x, float* v, const Winograd3x3& d, const Geometry& g, int64_t first,
                                     int64_t count, int64_t c0, int64_t i0, int64_t i1) {
    // d's and g's fields in locals: the stores through float* below could alias them, and GCC
    // reloaded them for every element.
    const int64_t H = d.H, W = d.W, bx = d.block_x, vp = g.vp, tiles_w = g.tiles_w;
    const int64_t CB = g.Cp / 8, per_image = g.tiles_h * tiles_w;
    const ChannelLayout xl{d.N, d.C, H * W, bx};
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / CB, c = i % CB * 8;
        // Each row of the patch transformed across (B^T along w), its six results kept as a
        // column of `across`; then each column down (B^T along h), straight into V. The row
        // before the column, so only `across` goes through the stack: with the whole patch
        // loaded first, both passes through it, and d's fields reloaded, the ungrouped forward
        // took 7-15 % longer (16x16x55x55 to 64, squeezenet1_1's expand, 14.3 -> 12.2 ms and
        // 9.1 -> 8.3 in two runs; 16x128x28x28 to 128 17.6 -> 15.6; 2 threads, medians of 21
        // alternated calls, this and the output transform's change together).
        V across[36];
        if (t < count && c < g.Cg) {
            const int64_t tile = first + t, n = tile / per_image;
            const int64_t h0 = tile % per_image / tiles_w * 4 - d.pad_t, w0 = tile % tiles_w * 4 - d.pad_l;
            const float* image = x + xl.offset(n, c0 + c, 0);
            const bool interior = h0 >= 0 && w0 >= 0 && h0 + 6 <= H && w0 + 6 <= W;
#pragma GCC unroll 6
            for (int64_t r = 0; r < 6; ++r) {
                const int64_t h = h0 + r;
                V row[6];
                if (interior) {
                    const float* at = image + (h * W + w0) * bx;
#pragma GCC unroll 6
                    for (int64_t s = 0; s < 6; ++s) row[s] = load<V>(at + s * bx);
                } else {
                    for (int64_t s = 0; s < 6; ++s) {
                        const bool inside = h >= 0 && h < H && w0 + s >= 0 && w0 + s < W;
                        row[s] = inside ? load<V>(image + (h * W + w0 + s) * bx) : V{};
                    }
                }
                input_1d(row, 1, across + r, 6);
            }
        } else {
            std::fill(across, across + 36, V{});
        }
        float* to = v + t * g.vt + c;
#pragma GCC unroll 6
        for (int64_t b = 0; b < 6; ++b) {
            V down[6];
            input_1d(across + b * 6, 1, down, 1);
#pragma GCC unroll 6
            for (int64_t a = 0; a < 6; ++a) store(to + (a * 6 + b) * vp, down[a]);
        }
    }
}

// M for items [i0, i1) of (point, panel), over the chunk's first `used` rows.
RIDGE_SIMD_LEAF void multiply(const float* v, const float* u, float* m, const Geometry& g, int64_t used, int64_t i0,
                              int64_t i1) {
    const int64_t panels = g.Kp / g.pw;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = i / panels, j = i % panels;
        const float* a = v + p * g.vp;
        const float* b = u + p * g.up + j * g.Cp * g.pw;
        float* out = m + p * g.mp + j * g.pw;
        if (g.pw == 24)
            for (int64_t t = 0; t < used; t += 4) multiply_rows24(a + t * g.vt, g.vt, b, g.Cp, out + t * g.mt, g.mt);
        else
            for (int64_t t = 0; t < used; t += rows)
                multiply_rows<rows>(a + t * g.vt, g.vt, 1, b, panel, g.Cp, out + t * g.mt, g.mt, false);
    }
}

// y for items [i0, i1) of (tile, block of 8 of the Ky output channels from k0 on): A^T m A, the
// bias, then the sum (y held the addend) and the ReLU, which takes a NaN to 0 as the reference
// kernel does.
RIDGE_SIMD_LEAF void transform_output(const float* m, const float* b, bool sum, bool relu, float* y,
                                      const Winograd3x3& d, const Geometry& g, int64_t first, int64_t k0, int64_t Ky,
                                      int64_t i0, int64_t i1) {
    // In locals, as in transform_input.
    const int64_t P = d.P, Q = d.Q, K = d.K, by = d.block_y, mp = g.mp, tiles_w = g.tiles_w;
    const int64_t KB = Ky / 8, per_image = g.tiles_h * tiles_w;
    const ChannelLayout yl{d.N, K, P * Q, by};
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / KB, local = i % KB * 8, k = k0 + local;
        // Lanes past K are zero in U, but a NaN or infinity in the patch makes them NaN (0 times
        // NaN): they are cleared below, so the padding of y's last block stays zero. A block wholly
        // past K (y's block of 16 padding K past a multiple of 8) has no columns in M to read
        // where a group's panel of 24 ends at K.
        const int64_t live = std::clamp<int64_t>(K - k, 0, 8);
        // Each row of M's 6x6 brought back across (A^T along the transform's second axis) as
        // it is read, then each of the four columns down.
        V across[24], out[16] = {};
        const float* from = m + t * g.mt + local;
        if (live > 0) {
#pragma GCC unroll 6
            for (int64_t a = 0; a < 6; ++a) {
                V row[6];
#pragma GCC unroll 6
                for (int64_t b = 0; b < 6; ++b) row[b] = load<V>(from + (a * 6 + b) * mp);
                output_1d(row, 1, across + a, 6);
            }
#pragma GCC unroll 4
            for (int64_t s = 0; s < 4; ++s) output_1d(across + s * 6, 1, out + s, 4);
        }
        V bias{};
        if (b && k + 8 <= K)
            bias = load<V>(b + k);
        else if (b)  // the channels past K (a block's padding) have none
            for (int64_t j = 0; j < 8 && k + j < K; ++j) bias[j] = b[k + j];
        const int64_t tile = first + t, n = tile / per_image;
        const int64_t h0 = tile % per_image / tiles_w * 4, w0 = tile % tiles_w * 4;
        float* image = y + yl.offset(n, k, 0);
        const int64_t rows_in = std::min<int64_t>(4, P - h0), cols_in = std::min<int64_t>(4, Q - w0);
        for (int64_t r = 0; r < rows_in; ++r)
            for (int64_t s = 0; s < cols_in; ++s) {
                float* to = image + ((h0 + r) * Q + w0 + s) * by;
                V o = out[r * 4 + s] + bias;
                if (sum) o += load<V>(to);
                if (relu) o = o > 0 ? o : V{};
                if (live < 8)
                    for (int64_t j = live; j < 8; ++j) o[j] = 0;
                store(to, o);
            }
    }
}

// Z's rows (Z = A dy A^T, [point][tile][output channel], tile-major where grouped) for items
// [i0, i1) of (tile, block of 8 of the group's output channels, from k0 on); positions past P and
// Q, and channels past K (the padding of dy's last block), count as zero.
RIDGE_SIMD_LEAF void transform_gradient(const float* dy, float* z, const Winograd3x3& d, const Geometry& g,
                                        int64_t first, int64_t k0, int64_t i0, int64_t i1) {
    const int64_t KB = (g.Kg + 7) / 8, PQ = d.P * d.Q, per_image = g.tiles_h * g.tiles_w;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / KB, k = i % KB * 8;
        const int64_t tile = first + t, n = tile / per_image;
        const int64_t h0 = tile % per_image / g.tiles_w * 4, w0 = tile % g.tiles_w * 4;
        const float* image = dy + ChannelLayout{d.N, d.K, PQ, d.block_y}.offset(n, k0 + k, 0);
        const int64_t live = std::min<int64_t>(8, g.Kg - k);
        V tile_dy[16], columnwise[24], zz[36];
        for (int64_t r = 0; r < 4; ++r)
            for (int64_t s = 0; s < 4; ++s) {
                const int64_t h = h0 + r, w = w0 + s;
                V v = h < d.P && w < d.Q ? load<V>(image + (h * d.Q + w) * d.block_y) : V{};
                for (int64_t j = live; j < 8; ++j) v[j] = 0;
                tile_dy[r * 4 + s] = v;
            }
        for (int64_t s = 0; s < 4; ++s) gradient_1d(tile_dy + s, 4, columnwise + s, 4);
        for (int64_t r = 0; r < 6; ++r) gradient_1d(columnwise + r * 4, 1, zz + r * 6, 1);
        for (int64_t p = 0; p < points; ++p) store(z + p * g.mp + t * g.mt + k, zz[p]);
    }
}

// dU (point, output channel, input channel; Cp apart) += Z^T V over the chunk's `count` tiles (=
// where add is false), for items [i0, i1) of (point, panel of 16 input channels, block of six
// output channels) of a group: the panel of V stays in L1 while the blocks of Z go by.
RIDGE_SIMD_LEAF void multiply_gradient(const float* z, const float* v, float* du, const Geometry& g, int64_t count,
                                       bool add, int64_t i0, int64_t i1) {
    const int64_t panels = g.Cp / panel, blocks = (g.Kg + rows - 1) / rows;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = i / (panels * blocks), j = i / blocks % panels, k = i % blocks * rows;
        const float* a = z + p * g.mp + k;
        const float* b = v + p * g.vp + j * panel;
        float* m = du + p * g.dup + k * g.Cp + j * panel;
        multiply_rows(std::min(rows, g.Kg - k), a, 1, g.mt, b, g.vt, count, m, g.Cp, add);
    }
}

// A group's dw (K/G,C/G,3,3) plain = G^T dU G for items [i0, i1) of (output channel, block of 8
// input channels).
RIDGE_SIMD_LEAF void transform_weight_gradient(const float* du, float* dw, const Geometry& g, int64_t i0, int64_t i1) {
    const int64_t CB = (g.Cg + 7) / 8;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t k = i / CB, c = i % CB * 8;
        V m[36], rowwise[18], out[9];
        for (int64_t p = 0; p < points; ++p) m[p] = load<V>(du + p * g.dup + k * g.Cp + c);
        for (int64_t a = 0; a < 6; ++a) weight_1d(m + a * 6, 1, rowwise + a * 3, 1);
        for (int64_t s = 0; s < 3; ++s) weight_1d(rowwise + s, 3, out + s, 3);
        for (int64_t j = 0; j < 8 && c + j < g.Cg; ++j)
            for (int64_t t = 0; t < 9; ++t) dw[(k * g.Cg + c + j) * 9 + t] = out[t][j];
    }
}

// db[k] = the sum of dy over the batch and positions, for items [i0, i1) of blocks of 8 channels.
RIDGE_SIMD_LEAF void bias_gradient(const float* dy, float* db, const Winograd3x3& d, int64_t i0, int64_t i1) {
    const ChannelLayout yl{d.N, d.K, d.P * d.Q, d.block_y};
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t k = i * 8;
        V acc{};
        for (int64_t n = 0; n < d.N; ++n) {
            const float* from = dy + yl.offset(n, k, 0);
            for (int64_t s = 0; s < d.P * d.Q; ++s) acc += load<V>(from + s * d.block_y);
        }
        for (int64_t j = 0; j < 8 && k + j < d.K; ++j) db[k + j] = acc[j];
    }
}

// U for items [i0, i1) of (group, panel of pw output channels, 4 input channels): G g G^T of each
// (k, c) of the group, zeros for the padding of its C and K; w is (K,C/G,3,3), a group's U after the
// one before. For the data gradient, w is the forward conv's weights (C,K/G,3,3), whose output
// channels are d's input channels: g (k, c) is its (c, k) turned by 180 degrees. The four
// channels' 36 points are stored as runs of 256 bytes: one channel's alone are 36 lines in as many
// places, which took several times a memset's time.
constexpr int64_t weight_channels = 4;
RIDGE_SIMD_LEAF void transform_weights(const float* w, float* u, const Geometry& g, bool data_gradient, int64_t i0,
                                       int64_t i1) {
    static constexpr float G[6][3] = {{1.0f / 4, 0, 0},
                                      {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                      {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                      {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                      {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                      {0, 0, 1}};
    const int64_t blocks = g.Cp / weight_channels, panels = g.Kp / g.pw, pw = g.pw;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t group = i / (panels * blocks), j = i / blocks % panels, c0 = i % blocks * weight_channels;
        const float* wg = w + group * g.Kg * g.Cg * 9;
        alignas(32) float out[points][weight_channels * 24];  // [point][channel][pw]
        for (int64_t dc = 0; dc < weight_channels; ++dc) {
            const int64_t c = c0 + dc;
            alignas(32) float taps[9][24] = {};
            const int64_t lanes = c < g.Cg ? std::min(pw, g.Kg - j * pw) : 0;
            for (int64_t lane = 0; lane < lanes; ++lane) {
                const int64_t k = j * pw + lane;
                if (data_gradient)
                    for (int t = 0; t < 9; ++t) taps[t][lane] = wg[(c * g.Kg + k) * 9 + 8 - t];
                else
                    for (int t = 0; t < 9; ++t) taps[t][lane] = wg[(k * g.Cg + c) * 9 + t];
            }
            for (int64_t part = 0; part < pw; part += 8) {
                V tap[9], gg[6][3];
                for (int t = 0; t < 9; ++t) tap[t] = load<V>(taps[t] + part);
                for (int a = 0; a < 6; ++a)
                    for (int s = 0; s < 3; ++s)
                        gg[a][s] = G[a][0] * tap[s] + G[a][1] * tap[3 + s] + G[a][2] * tap[6 + s];
                for (int a = 0; a < 6; ++a)
                    for (int b = 0; b < 6; ++b)
                        store(out[a * 6 + b] + dc * pw + part,
                              gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2]);
            }
        }
        for (int64_t pt = 0; pt < points; ++pt)
            for (int64_t e = 0; e < weight_channels * pw; e += 8)
                store(u + (group * points + pt) * g.up + (j * g.Cp + c0) * pw + e, load<V>(out[pt] + e));
    }
}

bool vector_layout(int64_t block, int64_t channels) {
    return block == 8 || block == 16 || (block == channels && channels % 8 == 0);
}

}  // namespace

bool winograd3x3_supported(const Winograd3x3& d) {
    if (d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 || d.K < 1 || d.P < 1 || d.Q < 1 || d.G < 1) return false;
    // A group's channels are whole vectors of x and y, so that no vector mixes two groups.
    if (d.G > 1 && (d.C % (8 * d.G) != 0 || d.K % (8 * d.G) != 0)) return false;
    // A padding of 0 to 2 on each side (the bottom and right ones are what P and Q imply), so every
    // window overlaps the map.
    const int64_t pad_b = d.P + 2 - d.H - d.pad_t, pad_r = d.Q + 2 - d.W - d.pad_l;
    for (int64_t pad : {d.pad_t, d.pad_l, pad_b, pad_r})
        if (pad < 0 || pad > 2) return false;
    return vector_layout(d.block_x, d.C) && vector_layout(d.block_y, d.K);
}

size_t winograd3x3_weights_size(const Winograd3x3& d) { return size_t(d.G * points * geometry(d).up); }

// In float, so that training can transform its weights every step.
void winograd3x3_weights(const float* w, float* u, const Winograd3x3& d, bool data_gradient) {
    const Geometry g = geometry(d);
    const int64_t n = d.G * (g.Kp / g.pw) * (g.Cp / weight_channels);
#pragma omp parallel
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        transform_weights(w, u, g, data_gradient, n * id / team, n * (id + 1) / team);
    }
}

size_t winograd3x3_scratch(const Winograd3x3& d, int threads) {
    const Geometry g = geometry(d);
    return size_t((d.G > 1 ? threads : 1) * (g.vsize + g.msize));
}

namespace {

// Groups: each thread takes its share of (group, chunk) items whole, in its own V and M.
void grouped_forward(const float* x, const float* u, const float* b, bool sum, bool relu, float* y, float* scratch,
                     const Winograd3x3& d, const Geometry& g, int threads) {
    const int64_t chunks = (g.tiles + g.chunk - 1) / g.chunk, items = d.G * chunks;
#pragma omp parallel num_threads(threads)
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        float* v = scratch + id * (g.vsize + g.msize);
        float* m = v + g.vsize;
        for (int64_t i = items * id / team; i < items * (id + 1) / team; ++i) {
            const int64_t group = i / chunks, first = i % chunks * g.chunk;
            const int64_t count = std::min(g.chunk, g.tiles - first), used = round_up(count, g.pr);
            transform_input(x, v, d, g, first, count, group * g.Cg, 0, used * (g.Cp / 8));
            multiply(v, u + group * points * g.up, m, g, used, 0, points * (g.Kp / g.pw));
            // The last group also zeroes the padding of y's last block.
            const int64_t written = group + 1 < d.G ? g.Kg : g.Kg + g.Ky - d.K;
            transform_output(m, b, sum, relu, y, d, g, first, group * g.Kg, written, 0, count * (written / 8));
        }
    }
}

}  // namespace

void winograd3x3(const float* x, const float* u, const float* b, bool sum, bool relu, float* y, float* scratch,
                 const Winograd3x3& d, int threads) {
    const Geometry g = geometry(d);
    if (d.G > 1) return grouped_forward(x, u, b, sum, relu, y, scratch, d, g, threads);
    float* v = scratch;
    float* m = scratch + g.vsize;
    // Two barriers a chunk: the product reads V whole, the output transform M whole. The next
    // chunk's input transform may overwrite V while others still transform outputs; its product,
    // which overwrites M, waits behind the next barrier.
#pragma omp parallel num_threads(threads)
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        for (int64_t first = 0; first < g.tiles; first += g.chunk) {
            const int64_t count = std::min(g.chunk, g.tiles - first), used = round_up(count, rows);
            int64_t n = used * (g.Cp / 8);
            transform_input(x, v, d, g, first, count, 0, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            n = points * (g.Kp / panel);
            multiply(v, u, m, g, used, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            n = count * (g.Ky / 8);
            transform_output(m, b, sum, relu, y, d, g, first, 0, g.Ky, n * id / team, n * (id + 1) / team);
        }
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA

namespace ridge::simd::inline RIDGE_SIMD_ISA {

size_t winograd3x3_wgrad_scratch(const Winograd3x3& d) {
    const Geometry g = geometry(d, panel);
    return size_t(g.vsize + g.msize + points * g.dup);
}

void winograd3x3_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Winograd3x3& d,
                       int threads) {
    const Geometry g = geometry(d, panel);
    float* v = scratch;
    float* z = v + g.vsize;
    float* du = z + g.msize;
    // As winograd3x3: the transforms of a chunk, a barrier, the product, a barrier. dU sums over
    // every chunk, so only the barrier after the last one's product lets it be read; the next
    // group's transforms may then overwrite V and Z, not dU before its own barrier.
#pragma omp parallel num_threads(threads)
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        for (int64_t group = 0; group < d.G; ++group) {
            for (int64_t first = 0; first < g.tiles; first += g.chunk) {
                const int64_t count = std::min(g.chunk, g.tiles - first);
                int64_t n = count * (g.Cp / 8);
                transform_input(x, v, d, g, first, count, group * g.Cg, n * id / team, n * (id + 1) / team);
                n = count * ((g.Kg + 7) / 8);
                transform_gradient(dy, z, d, g, first, group * g.Kg, n * id / team, n * (id + 1) / team);
#pragma omp barrier
                n = points * (g.Cp / panel) * ((g.Kg + rows - 1) / rows);
                multiply_gradient(z, v, du, g, count, first > 0, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            }
            const int64_t n = g.Kg * ((g.Cg + 7) / 8);
            transform_weight_gradient(du, dw + group * g.Kg * g.Cg * 9, g, n * id / team, n * (id + 1) / team);
        }
        const int64_t n = (d.K + 7) / 8;
        if (db) bias_gradient(dy, db, d, n * id / team, n * (id + 1) / team);
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
