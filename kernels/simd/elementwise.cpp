// Squeeze-excitation's scale y = x * s[n, c] (a Mul) and the gate's gradient sum_s dy * x, which
// is also layer scale's per image, and the per-channel broadcast that is global average pooling's
// gradient, on the executor's layouts (simd.h). Memory-bound: one pass over x (and y, or the
// second operand); the broadcast only writes y.
// x, y, a, b (N,C,H,W) in ChannelLayout  s, out (N,C)
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/simd/means.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

// Rows of `width` lanes times one gate row: y[r, j] = x[r, j] * g[j].
template <int width>
RIDGE_SIMD_INLINE void scale_rows_fixed(const float* x, const float* g, float* y, int64_t rows) {
    using V = Vec<width>;
    V gv = load<V>(g);
    for (int64_t r = 0; r < rows; ++r) store(y + r * width, load<V>(x + r * width) * gv);
}

RIDGE_SIMD_LEAF void scale_rows(const float* x, const float* g, float* y, int64_t rows, int64_t width) {
    if (width == 16) return scale_rows_fixed<16>(x, g, y, rows);
    if (width == 8) return scale_rows_fixed<8>(x, g, y, rows);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < width; ++j) y[r * width + j] = x[r * width + j] * g[j];
}

RIDGE_SIMD_LEAF void scale_span(const float* x, float g, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * g;
}

// acc[j] += sum over rows of a[r, j] * b[r, j], two chains to hide the FMA latency.
template <int width>
RIDGE_SIMD_INLINE void dot_rows_fixed(const float* a, const float* b, float* acc, int64_t rows) {
    using V = Vec<width>;
    V s0 = {}, s1 = {};
    int64_t r = 0;
    for (; r + 1 < rows; r += 2) {
        s0 += load<V>(a + r * width) * load<V>(b + r * width);
        s1 += load<V>(a + (r + 1) * width) * load<V>(b + (r + 1) * width);
    }
    if (r < rows) s0 += load<V>(a + r * width) * load<V>(b + r * width);
    store(acc, load<V>(acc) + s0 + s1);
}

RIDGE_SIMD_LEAF void dot_rows(const float* a, const float* b, float* acc, int64_t rows, int64_t width) {
    if (width == 16) return dot_rows_fixed<16>(a, b, acc, rows);
    if (width == 8) return dot_rows_fixed<8>(a, b, acc, rows);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < width; ++j) acc[j] += a[r * width + j] * b[r * width + j];
}

RIDGE_SIMD_LEAF float dot_span(const float* a, const float* b, int64_t n) { return dot(a, b, n); }

// acc[j] += sum over rows of x[r, j], two chains to hide the add latency.
template <int width>
RIDGE_SIMD_INLINE void sum_rows_fixed(const float* x, float* acc, int64_t rows) {
    using V = Vec<width>;
    V s0 = {}, s1 = {};
    int64_t r = 0;
    for (; r + 1 < rows; r += 2) {
        s0 += load<V>(x + r * width);
        s1 += load<V>(x + (r + 1) * width);
    }
    if (r < rows) s0 += load<V>(x + r * width);
    store(acc, load<V>(acc) + s0 + s1);
}

RIDGE_SIMD_LEAF void sum_rows(const float* x, float* acc, int64_t rows, int64_t width) {
    if (width == 16) return sum_rows_fixed<16>(x, acc, rows);
    if (width == 8) return sum_rows_fixed<8>(x, acc, rows);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < width; ++j) acc[j] += x[r * width + j];
}

// acc[j] += sum over rows of x[r * stride + j], j < width: channels-last rows, a run of a row's
// channels each.
RIDGE_SIMD_LEAF void sum_strided_rows(const float* x, float* acc, int64_t rows, int64_t width, int64_t stride) {
    for (int64_t r = 0; r < rows; ++r, x += stride)
        for (int64_t j = 0; j < width; ++j) acc[j] += x[j];
}

RIDGE_SIMD_LEAF float sum_span(const float* x, int64_t n) {
    float s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
}

// Rows of `width` lanes, each a copy of g.
template <int width>
RIDGE_SIMD_INLINE void fill_rows_fixed(const float* g, float* y, int64_t rows) {
    using V = Vec<width>;
    V gv = load<V>(g);
    for (int64_t r = 0; r < rows; ++r) store(y + r * width, gv);
}

RIDGE_SIMD_LEAF void fill_rows(const float* g, float* y, int64_t rows, int64_t width) {
    if (width == 16) return fill_rows_fixed<16>(g, y, rows);
    if (width == 8) return fill_rows_fixed<8>(g, y, rows);
    for (int64_t r = 0; r < rows; ++r) std::copy(g, g + width, y + r * width);
}

// g added to each row of `width` lanes.
template <int width>
RIDGE_SIMD_INLINE void add_rows_fixed(const float* g, float* y, int64_t rows) {
    using V = Vec<width>;
    V gv = load<V>(g);
    for (int64_t r = 0; r < rows; ++r) store(y + r * width, load<V>(y + r * width) + gv);
}

RIDGE_SIMD_LEAF void add_rows(const float* g, float* y, int64_t rows, int64_t width) {
    if (width == 16) return add_rows_fixed<16>(g, y, rows);
    if (width == 8) return add_rows_fixed<8>(g, y, rows);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < width; ++c) y[r * width + c] += g[c];
}

// Spatial chunks of this many positions split an (image, block) unit, so a few large images
// still spread over every thread.
constexpr int64_t chunk = 512;
constexpr int max_block = 16;  // blocked layouts: nChw8c, nChw16c

}  // namespace

void scale_channels(const float* x, const float* s, float* y, const ChannelLayout& l) {
    const int64_t CB = l.blocks(), B = l.block, chunks = (l.HW + chunk - 1) / chunk;
    if (B == 1) {
        for_units(l.N * l.C, omp_get_max_threads(), [&](int64_t nc) {
            scale_span(x + nc * l.HW, s[nc], y + nc * l.HW, l.HW);
        });
    } else if (B == l.C) {  // channels-last: the gate row is s's own row, no padding
        // Rows of all images, shared evenly: in chunks of 512 an image's few positions (ConvNeXt's
        // 14x14 and 7x7 at batch 1) were one thread's unit. 384 x 14 x 14 alone, 2 threads:
        // 59 -> 28 us with the caches flushed, 12.3 -> 7.8 us warm (medians of 50).
        const int64_t rows = l.N * l.HW, T = omp_get_max_threads();
        for_units(T, int(T), [&](int64_t t) {
            for (int64_t r = rows * t / T, end = rows * (t + 1) / T; r < end;) {
                const int64_t n = r / l.HW, stop = std::min(end, (n + 1) * l.HW);
                scale_rows(x + r * B, s + n * l.C, y + r * B, stop - r, B);
                r = stop;
            }
        });
    } else {
        for_units(l.N * CB * chunks, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / (CB * chunks), cb = u / chunks % CB, s0 = u % chunks * chunk;
            // The gate of one block, zero on the padded channels so y's padding stays zero.
            float g[max_block] = {};
            for (int64_t j = 0; j < B && cb * B + j < l.C; ++j) g[j] = s[n * l.C + cb * B + j];
            int64_t off = n * l.batch_stride() + cb * l.block_stride() + s0 * B;
            scale_rows(x + off, g, y + off, std::min(chunk, l.HW - s0), B);
        });
    }
}

namespace {

// A walk over the rows of x and y (every index but the last) in order: the row's offsets in each,
// its index found once and then stepped on like an odometer, no division per row.
struct RowWalk {
    const Strided &xl, &yl;
    int64_t at[Strided::most] = {}, xo = 0, yo = 0;

    RowWalk(const Strided& x, const Strided& y, int64_t row) : xl(x), yl(y) {
        for (int64_t rest = row, k = xl.rank - 2; k >= 0; --k) {
            at[k] = rest % xl.dims[k], rest /= xl.dims[k];
            xo += at[k] * xl.strides[k], yo += at[k] * yl.strides[k];
        }
    }
    void next() {
        for (int k = xl.rank - 2; k >= 0; --k) {
            xo += xl.strides[k], yo += yl.strides[k];
            if (++at[k] < xl.dims[k]) return;
            xo -= at[k] * xl.strides[k], yo -= at[k] * yl.strides[k];
            at[k] = 0;
        }
    }
};

}  // namespace

// The rows split evenly over the threads in the order of the dimensions, y's memory order in the
// forward, so each thread writes one stream. vit_b_16's q at batch 1 (12 heads x 197 x 64 out of
// 197 x 2304) on the 2-core Zen 5, `ridge profile`, 4 alternated runs: 52-56 us, against 65-82 on
// oneDNN 2.6's reorder with an output scale; in x's order (one read stream a thread, twelve write
// streams) 55-66. Alone and warm it takes 12.4 us, at memory speed (ridge-kernels scale-strided).
// Where x's rows lie apart (q's rows of 64 floats 9 KB apart in its token rows), each row asks
// for the lines of the row `ahead` rows on in the thread's share: each row is in a page of its
// own, where the hardware prefetcher does not follow. vit_b_16's training step at batch 8 (`ridge
// profile`, 6 alternated pairs): its twelve q scalings 3.7-5.5 -> 2.9-3.8 ms in all (bounds of
// 0.10 ms each). The gradient reads dy's contiguous rows and writes dx's apart: asking for dx's
// lines ahead with write intent left it level or slower (2.5-3.1 -> 3.2-3.6 ms in 3 pairs), so it
// does not.
void scale_strided(const float* x, const Strided& xl, float s, float* y, const Strided& yl) {
    const int r = xl.rank;
    const int64_t n = xl.dims[r - 1];
    int64_t rows = 1;
    for (int k = 0; k + 1 < r; ++k) rows *= xl.dims[k];
    if (rows == 0 || n == 0) return;  // an empty tensor (and no division by a zero extent below)
    constexpr int64_t ahead = 8;
    // Whether x's rows are not one dense run (a dimension of size 1 may carry any stride).
    bool apart = false;
    for (int64_t k = r - 2, run = n; k >= 0; --k) {
        if (xl.dims[k] > 1 && xl.strides[k] != run) apart = true;
        run *= xl.dims[k];
    }
#pragma omp parallel
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        int64_t row = rows * t / T;
        const int64_t end = rows * (t + 1) / T;
        RowWalk at(xl, yl, row), later(xl, yl, std::min(rows - 1, row + ahead));
        for (; row < end; ++row) {
            if (apart && row + ahead < end) {
                for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(x + later.xo + i);
                later.next();
            }
            scale_span(x + at.xo, s, y + at.yo, n);
            at.next();
        }
    }
}

void channel_dots(const float* a, const float* b, float* out, const ChannelLayout& l) {
    const int64_t CB = l.blocks(), B = l.block;
    if (B == 1) {
        for_units(l.N * l.C, omp_get_max_threads(), [&](int64_t nc) {
            out[nc] = dot_span(a + nc * l.HW, b + nc * l.HW, l.HW);
        });
    } else if (B == l.C) {  // channels-last: each image's row of sums is its own accumulator
        for_units(l.N, omp_get_max_threads(), [&](int64_t n) {
            std::fill(out + n * l.C, out + (n + 1) * l.C, 0.0f);
            dot_rows(a + n * l.batch_stride(), b + n * l.batch_stride(), out + n * l.C, l.HW, B);
        });
    } else {
        for_units(l.N * CB, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / CB, cb = u % CB, off = n * l.batch_stride() + cb * l.block_stride();
            float acc[max_block] = {};
            dot_rows(a + off, b + off, acc, l.HW, B);
            for (int64_t j = 0; j < B && cb * B + j < l.C; ++j) out[n * l.C + cb * B + j] = acc[j];
        });
    }
}

namespace {

// One image's channel block cb of x for gate_backward, in 8-lane pieces position by position (so
// each line of x and dx is met once whatever dy's blocking): two sums a piece, even and odd
// positions, to hide the FMA's latency. A piece whose channels dy's padded blocks do not hold (a
// last block of 16 half past C, dy in blocks of 8) is zero, as x's padding is.
RIDGE_SIMD_LEAF void gate_grad_block(const float* x, const float* dy, int64_t dy_block, const float* s, float* dx,
                                     float* ds, const ChannelLayout& l, int64_t n, int64_t cb) {
    const int64_t B = l.block, pieces = B / 8;
    const int64_t at = n * l.batch_stride() + cb * l.block_stride();
    const ChannelLayout dyl{l.N, l.C, l.HW, dy_block};
    const float* from[2] = {nullptr, nullptr};  // each piece's first position in dy; null: none
    Vec8 gate[2] = {}, even[2] = {}, odd[2] = {};
    for (int64_t j = 0; j < pieces; ++j) {
        const int64_t c0 = cb * B + j * 8;
        if (c0 < dyl.padded_channels()) from[j] = dy + dyl.offset(n, c0, 0);
        float g[8] = {};
        for (int64_t k = 0; k < 8 && c0 + k < l.C; ++k) g[k] = s[n * l.C + c0 + k];
        gate[j] = load<Vec8>(g);
    }
    const float* xb = x + at;
    float* dxb = dx ? dx + at : nullptr;
    auto position = [&](int64_t p, Vec8* sums) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        for (int64_t j = 0; j < pieces; ++j) {
            const Vec8 d = from[j] ? load<Vec8>(from[j] + p * dy_block) : Vec8{};
            if (dxb) store(dxb + p * B + j * 8, d * gate[j]);
            sums[j] += d * load<Vec8>(xb + p * B + j * 8);
        }
    };
    int64_t p = 0;
    for (; p + 1 < l.HW; p += 2) position(p, even), position(p + 1, odd);
    if (p < l.HW) position(p, even);
    if (!ds) return;
    for (int64_t j = 0; j < pieces; ++j) {
        const Vec8 sum = even[j] + odd[j];
        for (int64_t k = 0; k < 8 && cb * B + j * 8 + k < l.C; ++k) ds[n * l.C + cb * B + j * 8 + k] = sum[k];
    }
}

}  // namespace

void gate_backward(const float* x, const float* dy, int64_t dy_block, const float* s, float* dx, float* ds,
                   const ChannelLayout& l) {
    for_units(l.N * l.blocks(), omp_get_max_threads(), [&](int64_t u) {
        gate_grad_block(x, dy, dy_block, s, dx, ds, l, u / l.blocks(), u % l.blocks());
    });
}

void channel_means(const float* x, float* out, const ChannelLayout& l) {
    const int64_t CB = l.blocks(), B = l.block;
    const float k = 1.0f / float(l.HW);
    if (B == 1) {
        for_units(l.N * l.C, omp_get_max_threads(), [&](int64_t nc) { out[nc] = k * sum_span(x + nc * l.HW, l.HW); });
    } else if (B == l.C && l.N < std::min(omp_get_max_threads(), split_most_threads)) {
        // Channels-last with fewer images than threads: each thread sums its own range of positions
        // (means.h). One image a thread had left the map at batch 1 to one thread, which read the half
        // the other core had written, and the gate's multiplication after (scale_channels, in place,
        // its rows split as here at batch 1) then wrote that half back from the other core.
        // efficientnet_b0 at batch 1 on the 2-core Zen 5, `ridge bench`'s per-layer pass, two
        // alternated runs: its first pool (32 x 112 x 112) 72-81 -> 36-38 us, the gate after it
        // 137-143 -> 16 us (26 with every step on one thread).
        means_by_positions(l, out, [x, C = l.C](int64_t at, int64_t rows, int64_t w, float* sums) {
            sum_strided_rows(x + at, sums, rows, w, C);
        });
    } else if (B == l.C) {  // channels-last: each image's row of sums is its own accumulator
        for_units(l.N, omp_get_max_threads(), [&](int64_t n) {
            float* row = out + n * l.C;
            std::fill(row, row + l.C, 0.0f);
            sum_rows(x + n * l.batch_stride(), row, l.HW, B);
            for (int64_t c = 0; c < l.C; ++c) row[c] *= k;
        });
    } else {
        // The threads finish together (team.h). schedule(dynamic) ended them together too, but
        // took efficientnet_b7's 55 pools at batch 8 from 55-58 to 77-80 ms in all (2 alternated
        // runs each), a thread no longer reading the blocks its own core had cached.
        for_units_together(l.N * CB, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / CB, cb = u % CB;
            float acc[max_block] = {};
            sum_rows(x + n * l.batch_stride() + cb * l.block_stride(), acc, l.HW, B);
            for (int64_t j = 0; j < B && cb * B + j < l.C; ++j) out[n * l.C + cb * B + j] = k * acc[j];
        });
    }
}

namespace {

// y = k * s broadcast, or y += it where add.
void broadcast(const float* s, float k, float* y, const ChannelLayout& l, bool add) {
    const int64_t CB = l.blocks(), B = l.block, chunks = (l.HW + chunk - 1) / chunk;
    if (B == 1) {
        for_units(l.N * l.C, omp_get_max_threads(), [&](int64_t nc) {
            float* row = y + nc * l.HW;
            const float v = k * s[nc];
            if (add)
                for (int64_t i = 0; i < l.HW; ++i) row[i] += v;
            else
                std::fill(row, row + l.HW, v);
        });
    } else if (B == l.C) {  // channels-last: every position holds the image's row of values
        for_units(l.N * chunks, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / chunks, s0 = u % chunks * chunk, rows = std::min(chunk, l.HW - s0);
            float* row = y + n * l.batch_stride() + s0 * B;
            for (int64_t r = 0; r < rows; ++r, row += B)
                for (int64_t c = 0; c < B; ++c) row[c] = (add ? row[c] : 0.0f) + k * s[n * l.C + c];
        });
    } else {
        for_units(l.N * CB * chunks, omp_get_max_threads(), [&](int64_t u) {
            int64_t n = u / (CB * chunks), cb = u / chunks % CB, s0 = u % chunks * chunk;
            float g[max_block] = {};  // zero on the padded channels, which stay zero
            for (int64_t j = 0; j < B && cb * B + j < l.C; ++j) g[j] = k * s[n * l.C + cb * B + j];
            float* at = y + n * l.batch_stride() + cb * l.block_stride() + s0 * B;
            if (add)
                add_rows(g, at, std::min(chunk, l.HW - s0), B);
            else
                fill_rows(g, at, std::min(chunk, l.HW - s0), B);
        });
    }
}

}  // namespace

void broadcast_channels(const float* s, float k, float* y, const ChannelLayout& l) { broadcast(s, k, y, l, false); }

void add_broadcast_channels(const float* s, float k, float* y, const ChannelLayout& l) { broadcast(s, k, y, l, true); }

namespace {

// f(from, to) over [0, n) in parts of whole 64-byte lines, a thread each, from 256 KB on (below,
// one thread does it before a region of two has started). Nothing where n is 0: an empty
// tensor's pointers may be null, which memcpy and memset may not take.
template <class F>
void each_part(int64_t n, int threads, F f) {
    if (n <= 0) return;
    const int64_t parts = std::clamp<int64_t>(n / (64 * 1024), 1, std::max(threads, 1));
    for_units(parts, threads, [&](int64_t k) {
        f(n * k / parts / 16 * 16, k + 1 == parts ? n : n * (k + 1) / parts / 16 * 16);
    });
}

}  // namespace

void copy_floats(const float* x, float* y, int64_t n, int threads) {
    each_part(n, threads, [&](int64_t from, int64_t to) {
        std::memcpy(y + from, x + from, size_t(to - from) * sizeof(float));
    });
}

void zero_floats(float* y, int64_t n, int threads) {
    each_part(n, threads,
              [&](int64_t from, int64_t to) { std::memset(y + from, 0, size_t(to - from) * sizeof(float)); });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
