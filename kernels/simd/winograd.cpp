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
    int64_t Cp;                       // input channels read: C rounded up to a vector
    int64_t Kp;                       // U's and M's output channels: K rounded up to a panel
    int64_t Ky;                       // output channels written: y's layout pads K to its block
    int64_t chunk;                    // tiles per pass, a multiple of `rows`
    // Floats from one point's matrix to the next in V (and Z), M, U and dU: each padded by a line
    // of 64 bytes. Unpadded they are often multiples of 4 KiB, and the 36 points of a tile or a
    // weight then fall in one set of the 8-way L1: transforming 512 x 512 weights took 8 ms
    // against a memset's 1.3 ms.
    int64_t vp, mp, up, dup;
};

constexpr int64_t skew = 16;

// c_round: V's channels rounded up to a vector (the forward), or to a panel (the weight gradient,
// whose product writes panels of 16 input channels).
Geometry geometry(const Winograd3x3& d, int64_t c_round = 8) {
    Geometry g{};
    g.tiles_h = (d.P + 3) / 4, g.tiles_w = (d.Q + 3) / 4, g.tiles = d.N * g.tiles_h * g.tiles_w;
    g.Cp = round_up(d.C, c_round), g.Kp = round_up(d.K, panel), g.Ky = round_up(d.K, d.block_y);
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
    const int64_t most = g.tiles <= cap ? g.tiles : std::min(cap, std::max<int64_t>(192, transforms));
    const int64_t chunks = (g.tiles + most - 1) / most;
    g.chunk = round_up((g.tiles + chunks - 1) / chunks, rows);
    g.vp = g.chunk * g.Cp + skew, g.mp = g.chunk * g.Kp + skew;
    g.up = round_up(d.C, 8) * g.Kp + skew, g.dup = d.K * g.Cp + skew;
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

// V's rows for items [i0, i1) of (tile, block of 8 input channels); tiles from `count` on (the
// chunk's rows past its last tile) and channels from C on (past x's last block) are zero.
RIDGE_SIMD_CLONES void transform_input(const float* x, float* v, const Winograd3x3& d, const Geometry& g,
                                       int64_t first, int64_t count, int64_t i0, int64_t i1) {
    const int64_t CB = g.Cp / 8, HW = d.H * d.W, per_image = g.tiles_h * g.tiles_w;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / CB, c = i % CB * 8;
        V patch[36], rowwise[36];
        if (t < count && c < d.C) {
            const int64_t tile = first + t, n = tile / per_image;
            const int64_t h0 = tile % per_image / g.tiles_w * 4 - d.pad_t, w0 = tile % g.tiles_w * 4 - d.pad_l;
            const float* image = x + ChannelLayout{d.N, d.C, HW, d.block_x}.offset(n, c, 0);
            for (int64_t r = 0; r < 6; ++r)
                for (int64_t s = 0; s < 6; ++s) {
                    const int64_t h = h0 + r, w = w0 + s;
                    const bool inside = h >= 0 && h < d.H && w >= 0 && w < d.W;
                    patch[r * 6 + s] = inside ? load<V>(image + (h * d.W + w) * d.block_x) : V{};
                }
        } else {
            std::fill(patch, patch + 36, V{});
        }
        for (int64_t s = 0; s < 6; ++s) input_1d(patch + s, 6, rowwise + s, 6);
        for (int64_t r = 0; r < 6; ++r) input_1d(rowwise + r * 6, 1, patch + r * 6, 1);
        for (int64_t p = 0; p < points; ++p) store(v + p * g.vp + t * g.Cp + c, patch[p]);
    }
}

// M for items [i0, i1) of (point, panel), over the chunk's first `used` rows.
RIDGE_SIMD_CLONES void multiply(const float* v, const float* u, float* m, const Geometry& g, int64_t used, int64_t i0,
                                int64_t i1) {
    const int64_t panels = g.Kp / panel;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = i / panels, j = i % panels;
        const float* a = v + p * g.vp;
        const float* b = u + p * g.up + j * g.Cp * panel;
        float* out = m + p * g.mp + j * panel;
        for (int64_t t = 0; t < used; t += rows)
            multiply_rows<rows>(a + t * g.Cp, g.Cp, 1, b, panel, g.Cp, out + t * g.Kp, g.Kp, false);
    }
}

// y for items [i0, i1) of (tile, block of 8 output channels): A^T m A, the bias, then the sum
// (y held the addend) and the ReLU, which takes a NaN to 0 as the reference kernel does.
RIDGE_SIMD_CLONES void transform_output(const float* m, const float* b, bool sum, bool relu, float* y,
                                        const Winograd3x3& d, const Geometry& g, int64_t first, int64_t i0,
                                        int64_t i1) {
    const int64_t KB = g.Ky / 8, PQ = d.P * d.Q, per_image = g.tiles_h * g.tiles_w;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / KB, k = i % KB * 8;
        V mm[36], columnwise[24], out[16];
        for (int64_t p = 0; p < points; ++p) mm[p] = load<V>(m + p * g.mp + t * g.Kp + k);
        for (int64_t s = 0; s < 6; ++s) output_1d(mm + s, 6, columnwise + s, 6);
        for (int64_t r = 0; r < 4; ++r) output_1d(columnwise + r * 6, 1, out + r * 4, 1);
        V bias{};
        if (b)  // the channels past K (a block's padding) have none
            for (int64_t j = 0; j < 8 && k + j < d.K; ++j) bias[j] = b[k + j];
        // Lanes past K are zero in U, but a NaN or infinity in the patch makes them NaN (0 times
        // NaN): they are cleared, so the padding of y's last block stays zero.
        // A block wholly past K (y's block of 16 padding K past a multiple of 8) has none.
        const int64_t live = std::clamp<int64_t>(d.K - k, 0, 8);
        const int64_t tile = first + t, n = tile / per_image;
        const int64_t h0 = tile % per_image / g.tiles_w * 4, w0 = tile % g.tiles_w * 4;
        float* image = y + ChannelLayout{d.N, d.K, PQ, d.block_y}.offset(n, k, 0);
        for (int64_t r = 0; r < 4 && h0 + r < d.P; ++r)
            for (int64_t s = 0; s < 4 && w0 + s < d.Q; ++s) {
                float* to = image + ((h0 + r) * d.Q + w0 + s) * d.block_y;
                V o = out[r * 4 + s] + bias;
                if (sum) o += load<V>(to);
                if (relu) o = o > 0 ? o : V{};
                for (int64_t j = live; j < 8; ++j) o[j] = 0;
                store(to, o);
            }
    }
}

// Z's rows (Z = A dy A^T, [point][tile][output channel], Kp apart) for items [i0, i1) of (tile,
// block of 8 output channels below K); positions past P and Q, and channels past K (the padding
// of dy's last block), count as zero.
RIDGE_SIMD_CLONES void transform_gradient(const float* dy, float* z, const Winograd3x3& d, const Geometry& g,
                                          int64_t first, int64_t i0, int64_t i1) {
    const int64_t KB = (d.K + 7) / 8, PQ = d.P * d.Q, per_image = g.tiles_h * g.tiles_w;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / KB, k = i % KB * 8;
        const int64_t tile = first + t, n = tile / per_image;
        const int64_t h0 = tile % per_image / g.tiles_w * 4, w0 = tile % g.tiles_w * 4;
        const float* image = dy + ChannelLayout{d.N, d.K, PQ, d.block_y}.offset(n, k, 0);
        const int64_t live = std::min<int64_t>(8, d.K - k);
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
        for (int64_t p = 0; p < points; ++p) store(z + p * g.mp + t * g.Kp + k, zz[p]);
    }
}

// dU (point, output channel, input channel; Cp apart) += Z^T V over the chunk's `count` tiles (=
// where add is false), for items [i0, i1) of (point, panel of 16 input channels, block of six
// output channels): the panel of V stays in L1 while the blocks of Z go by.
RIDGE_SIMD_CLONES void multiply_gradient(const float* z, const float* v, float* du, const Winograd3x3& d,
                                         const Geometry& g, int64_t count, bool add, int64_t i0, int64_t i1) {
    const int64_t panels = g.Cp / panel, blocks = (d.K + rows - 1) / rows;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = i / (panels * blocks), j = i / blocks % panels, k = i % blocks * rows;
        const float* a = z + p * g.mp + k;
        const float* b = v + p * g.vp + j * panel;
        float* m = du + p * g.dup + k * g.Cp + j * panel;
        multiply_rows(std::min(rows, d.K - k), a, 1, g.Kp, b, g.Cp, count, m, g.Cp, add);
    }
}

// dw (K,C,3,3) plain = G^T dU G for items [i0, i1) of (output channel, block of 8 input channels).
RIDGE_SIMD_CLONES void transform_weight_gradient(const float* du, float* dw, const Winograd3x3& d,
                                                 const Geometry& g, int64_t i0, int64_t i1) {
    const int64_t CB = (d.C + 7) / 8;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t k = i / CB, c = i % CB * 8;
        V m[36], rowwise[18], out[9];
        for (int64_t p = 0; p < points; ++p) m[p] = load<V>(du + p * g.dup + k * g.Cp + c);
        for (int64_t a = 0; a < 6; ++a) weight_1d(m + a * 6, 1, rowwise + a * 3, 1);
        for (int64_t s = 0; s < 3; ++s) weight_1d(rowwise + s, 3, out + s, 3);
        for (int64_t j = 0; j < 8 && c + j < d.C; ++j)
            for (int64_t t = 0; t < 9; ++t) dw[(k * d.C + c + j) * 9 + t] = out[t][j];
    }
}

// db[k] = the sum of dy over the batch and positions, for items [i0, i1) of blocks of 8 channels.
RIDGE_SIMD_CLONES void bias_gradient(const float* dy, float* db, const Winograd3x3& d, int64_t i0, int64_t i1) {
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

// U for items [i0, i1) of (panel of 16 output channels, 4 input channels): G g G^T of each (k, c),
// zeros for the padding of C and K. For the data gradient, w is the forward conv's weights, whose
// output channels are d's input channels: g (k, c) is its (c, k) turned by 180 degrees. The four
// channels' 36 points are stored as runs of 256 bytes: one channel's alone are 36 lines in as many
// places, which took several times a memset's time.
constexpr int64_t weight_channels = 4;
RIDGE_SIMD_CLONES void transform_weights(const float* w, float* u, const Winograd3x3& d, const Geometry& g,
                                         bool data_gradient, int64_t i0, int64_t i1) {
    static constexpr float G[6][3] = {{1.0f / 4, 0, 0},
                                      {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                      {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                      {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                      {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                      {0, 0, 1}};
    const int64_t blocks = g.Cp / weight_channels;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t j = i / blocks, c0 = i % blocks * weight_channels;
        alignas(32) float out[points][weight_channels][panel];
        for (int64_t dc = 0; dc < weight_channels; ++dc) {
            const int64_t c = c0 + dc;
            alignas(32) float taps[9][panel] = {};
            const int64_t lanes = c < d.C ? std::min(panel, d.K - j * panel) : 0;
            for (int64_t lane = 0; lane < lanes; ++lane) {
                const int64_t k = j * panel + lane;
                if (data_gradient)
                    for (int t = 0; t < 9; ++t) taps[t][lane] = w[(c * d.K + k) * 9 + 8 - t];
                else
                    for (int t = 0; t < 9; ++t) taps[t][lane] = w[(k * d.C + c) * 9 + t];
            }
            for (int half = 0; half < 2; ++half) {
                V tap[9], gg[6][3];
                for (int t = 0; t < 9; ++t) tap[t] = load<V>(taps[t] + half * 8);
                for (int a = 0; a < 6; ++a)
                    for (int s = 0; s < 3; ++s)
                        gg[a][s] = G[a][0] * tap[s] + G[a][1] * tap[3 + s] + G[a][2] * tap[6 + s];
                for (int a = 0; a < 6; ++a)
                    for (int b = 0; b < 6; ++b)
                        store(out[a * 6 + b][dc] + half * 8,
                              gg[a][0] * G[b][0] + gg[a][1] * G[b][1] + gg[a][2] * G[b][2]);
            }
        }
        for (int64_t pt = 0; pt < points; ++pt)
            for (int64_t e = 0; e < weight_channels * panel; e += 8)
                store(u + pt * g.up + (j * g.Cp + c0) * panel + e, load<V>(&out[pt][0][0] + e));
    }
}

bool vector_layout(int64_t block, int64_t channels) {
    return block == 8 || block == 16 || (block == channels && channels % 8 == 0);
}

}  // namespace

bool winograd3x3_supported(const Winograd3x3& d) {
    if (d.N < 1 || d.C < 1 || d.H < 1 || d.W < 1 || d.K < 1 || d.P < 1 || d.Q < 1) return false;
    // A padding of 0 to 2 on each side (the bottom and right ones are what P and Q imply), so every
    // window overlaps the map.
    const int64_t pad_b = d.P + 2 - d.H - d.pad_t, pad_r = d.Q + 2 - d.W - d.pad_l;
    for (int64_t pad : {d.pad_t, d.pad_l, pad_b, pad_r})
        if (pad < 0 || pad > 2) return false;
    return vector_layout(d.block_x, d.C) && vector_layout(d.block_y, d.K);
}

size_t winograd3x3_weights_size(const Winograd3x3& d) { return size_t(points * geometry(d).up); }

// In float, so that training can transform its weights every step.
void winograd3x3_weights(const float* w, float* u, const Winograd3x3& d, bool data_gradient) {
    const Geometry g = geometry(d);
    const int64_t n = g.Kp / panel * (g.Cp / weight_channels);
#pragma omp parallel
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        transform_weights(w, u, d, g, data_gradient, n * id / team, n * (id + 1) / team);
    }
}

size_t winograd3x3_scratch(const Winograd3x3& d) {
    const Geometry g = geometry(d);
    return size_t(points * (g.vp + g.mp));
}

void winograd3x3(const float* x, const float* u, const float* b, bool sum, bool relu, float* y, float* scratch,
                 const Winograd3x3& d, int threads) {
    const Geometry g = geometry(d);
    float* v = scratch;
    float* m = scratch + points * g.vp;
    // Two barriers a chunk: the product reads V whole, the output transform M whole. The next
    // chunk's input transform may overwrite V while others still transform outputs; its product,
    // which overwrites M, waits behind the next barrier.
#pragma omp parallel num_threads(threads)
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        for (int64_t first = 0; first < g.tiles; first += g.chunk) {
            const int64_t count = std::min(g.chunk, g.tiles - first), used = round_up(count, rows);
            int64_t n = used * (g.Cp / 8);
            transform_input(x, v, d, g, first, count, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            n = points * (g.Kp / panel);
            multiply(v, u, m, g, used, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            n = count * (g.Ky / 8);
            transform_output(m, b, sum, relu, y, d, g, first, n * id / team, n * (id + 1) / team);
        }
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA

namespace ridge::simd::inline RIDGE_SIMD_ISA {

size_t winograd3x3_wgrad_scratch(const Winograd3x3& d) {
    const Geometry g = geometry(d, panel);
    return size_t(points * (g.vp + g.mp + g.dup));
}

void winograd3x3_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Winograd3x3& d,
                       int threads) {
    const Geometry g = geometry(d, panel);
    float* v = scratch;
    float* z = v + points * g.vp;
    float* du = z + points * g.mp;
    // As winograd3x3: the transforms of a chunk, a barrier, the product, a barrier. dU sums over
    // every chunk, so only the last barrier's end reads it.
#pragma omp parallel num_threads(threads)
    {
        const int64_t id = omp_get_thread_num(), team = omp_get_num_threads();
        for (int64_t first = 0; first < g.tiles; first += g.chunk) {
            const int64_t count = std::min(g.chunk, g.tiles - first);
            int64_t n = count * (g.Cp / 8);
            transform_input(x, v, d, g, first, count, n * id / team, n * (id + 1) / team);
            n = count * ((d.K + 7) / 8);
            transform_gradient(dy, z, d, g, first, n * id / team, n * (id + 1) / team);
#pragma omp barrier
            n = points * (g.Cp / panel) * ((d.K + rows - 1) / rows);
            multiply_gradient(z, v, du, d, g, count, first > 0, n * id / team, n * (id + 1) / team);
#pragma omp barrier
        }
        int64_t n = d.K * ((d.C + 7) / 8);
        transform_weight_gradient(du, dw, d, g, n * id / team, n * (id + 1) / team);
        n = (d.K + 7) / 8;
        if (db) bias_gradient(dy, db, d, n * id / team, n * (id + 1) / team);
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
