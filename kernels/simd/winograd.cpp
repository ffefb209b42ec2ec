// A 3x3 convolution at stride 1 as Winograd F(4x4, 3x3) (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016), for hosts where oneDNN 2.6 has no Winograd kernel (AVX2).
//
// The output is cut into tiles of 4x4 positions; each reads a 6x6 patch of the input. The patch
// is taken to the transform domain (B^T d B), multiplied point by point with the transformed
// weights (G g G^T), summed over the input channels and brought back (A^T m A). At each of the 36
// points the sum over channels is a matrix product, tiles x C by C x K, and that is where the time
// goes: 36 multiplies per channel pair for 16 outputs, against 144 for the direct convolution.
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
// chunk's U once per point from memory or L3.
#include <algorithm>
#include <omp.h>

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
};

Geometry geometry(const Winograd3x3& d) {
    Geometry g{};
    g.tiles_h = (d.P + 3) / 4, g.tiles_w = (d.Q + 3) / 4, g.tiles = d.N * g.tiles_h * g.tiles_w;
    g.Cp = round_up(d.C, 8), g.Kp = round_up(d.K, panel), g.Ky = round_up(d.K, d.block_y);
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

// V's rows for items [i0, i1) of (tile, block of 8 input channels); tiles from `count` on (the
// chunk's rows past its last tile) are zero.
RIDGE_SIMD_CLONES void transform_input(const float* x, float* v, const Winograd3x3& d, const Geometry& g,
                                       int64_t first, int64_t count, int64_t i0, int64_t i1) {
    const int64_t CB = g.Cp / 8, HW = d.H * d.W, per_image = g.tiles_h * g.tiles_w;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t t = i / CB, c = i % CB * 8;
        V patch[36], rowwise[36];
        if (t < count) {
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
        for (int64_t p = 0; p < points; ++p) store(v + (p * g.chunk + t) * g.Cp + c, patch[p]);
    }
}

// m (rows x 16) = a (rows x Cp, rows lda apart) times b (Cp x 16): twelve accumulators, two
// vectors of b and a broadcast in the sixteen AVX2 registers. The unrolling is asked for: GCC 12 at
// -O2 kept the accumulators in memory (a loop over rows), and a broadcast written 0 + s cost an add.
template <int R>
RIDGE_SIMD_INLINE void multiply_rows(const float* a, int64_t lda, const float* b, int64_t Cp, float* m, int64_t ldm) {
    V acc0[R], acc1[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc0[i] = acc1[i] = V{};
    for (int64_t c = 0; c < Cp; ++c) {
        const V b0 = load<V>(b + c * panel), b1 = load<V>(b + c * panel + 8);
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
            const float s = a[i * lda + c];
            const V ai = {s, s, s, s, s, s, s, s};
            acc0[i] += ai * b0;
            acc1[i] += ai * b1;
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
        store(m + i * ldm, acc0[i]);
        store(m + i * ldm + 8, acc1[i]);
    }
}

// M for items [i0, i1) of (point, panel), over the chunk's first `used` rows.
RIDGE_SIMD_CLONES void multiply(const float* v, const float* u, float* m, const Geometry& g, int64_t used, int64_t i0,
                                int64_t i1) {
    const int64_t panels = g.Kp / panel;
    for (int64_t i = i0; i < i1; ++i) {
        const int64_t p = i / panels, j = i % panels;
        const float* a = v + p * g.chunk * g.Cp;
        const float* b = u + (p * panels + j) * g.Cp * panel;
        float* out = m + p * g.chunk * g.Kp + j * panel;
        for (int64_t t = 0; t < used; t += rows) multiply_rows<rows>(a + t * g.Cp, g.Cp, b, g.Cp, out + t * g.Kp, g.Kp);
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
        for (int64_t p = 0; p < points; ++p) mm[p] = load<V>(m + (p * g.chunk + t) * g.Kp + k);
        for (int64_t s = 0; s < 6; ++s) output_1d(mm + s, 6, columnwise + s, 6);
        for (int64_t r = 0; r < 4; ++r) output_1d(columnwise + r * 6, 1, out + r * 4, 1);
        V bias{};
        if (b)  // the channels past K (a block's padding) have none
            for (int64_t j = 0; j < 8 && k + j < d.K; ++j) bias[j] = b[k + j];
        // Lanes past K are zero in U, but a NaN or infinity in the patch makes them NaN (0 times
        // NaN): they are cleared, so the padding of y's last block stays zero.
        const int64_t live = std::min<int64_t>(8, d.K - k);
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

size_t winograd3x3_weights_size(const Winograd3x3& d) {
    return size_t(points * round_up(d.C, 8) * round_up(d.K, panel));
}

// G g G^T for each (k, c), computed in double and rounded once; zeros for the padding of C and K.
void winograd3x3_weights(const float* w, float* u, const Winograd3x3& d) {
    const int64_t Cp = round_up(d.C, 8), panels = round_up(d.K, panel) / panel;
    std::fill(u, u + winograd3x3_weights_size(d), 0.0f);
    static const double G[6][3] = {{1.0 / 4, 0, 0},
                                   {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                   {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                   {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                   {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                   {0, 0, 1}};
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < d.K; ++k)
        for (int64_t c = 0; c < d.C; ++c) {
            const float* g = w + (k * d.C + c) * 9;
            double gg[6][3] = {};
            for (int i = 0; i < 6; ++i)
                for (int s = 0; s < 3; ++s)
                    for (int r = 0; r < 3; ++r) gg[i][s] += G[i][r] * g[r * 3 + s];
            for (int i = 0; i < 6; ++i)
                for (int j = 0; j < 6; ++j) {
                    double t = 0;
                    for (int s = 0; s < 3; ++s) t += gg[i][s] * G[j][s];
                    u[(((i * 6 + j) * panels + k / panel) * Cp + c) * panel + k % panel] = float(t);
                }
        }
}

size_t winograd3x3_scratch(const Winograd3x3& d) {
    const Geometry g = geometry(d);
    return size_t(points * g.chunk * (g.Cp + g.Kp));
}

void winograd3x3(const float* x, const float* u, const float* b, bool sum, bool relu, float* y, float* scratch,
                 const Winograd3x3& d, int threads) {
    const Geometry g = geometry(d);
    float* v = scratch;
    float* m = scratch + points * g.chunk * g.Cp;
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
