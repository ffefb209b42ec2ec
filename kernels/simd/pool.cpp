// Max pooling in inference. oneDNN 2.6's jit:avx2 pooling ran at a quarter of memory speed on a
// 2-core Zen 3 (vgg13's first pool, 1x64x224x224 in nChw8c at 2x2 stride 2: 1.7 to 2.1 ms against
// a bound of 0.40 ms, where ONNX Runtime took 0.49 ms), and every max pool of googlenet and
// squeezenet was flagged at 4 to 9 times its bound. Memory-bound: one read of x (overlapping
// windows read a row again from cache), one write of y.
// x (N,C,H,W)  y (N,C,P,Q)
//
// Max pooling in training: the forward keeps each window's winning position (a byte an output,
// four windows' bytes packed in an int32 at each lane), and the backward routes dy by it, writing
// each row of dx once. Finding the maximum again in x, with no positions, the backward read x,
// zeroed dx and added into it at every element of each window (resnet50's stem pool at batch 8,
// nChw16c, 2 threads, caches flushed: 3.7-3.8 ms against 1.1 now).
//
// Average pooling, forward and backward, in channel blocks. oneDNN 2.6's AVX-512 pooling took 4
// to 12 times the bounds of inception_v3's 3x3 stride-1 pools in training at batch 8 on the 2-core
// Zen 5 (Mixed_5b.avgpool1, 8x192x35x35: forward 0.55 ms, backward 0.95, bound 0.13). A window's
// sum is separable: the sums down its rows at every column of the map, then across its columns.
// The backward gathers: an element of dx sums, over the windows that hold it, dy divided by their
// counts, and a window's count is its rows times its columns, so the same two passes run on dy.
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

// The lanes past C of a block's run of `positions` set to zero.
void zero_padding(float* row, int64_t positions, int64_t block, int64_t lanes) {
    if (lanes < block)
        for (int64_t i = 0; i < positions; ++i) std::fill(row + i * block + lanes, row + (i + 1) * block, 0.0f);
}

// Floats in each of max_row_plain's row buffers, on the stack (two of 16 KB).
constexpr int64_t kPlainRow = 4096;

// m, or v where v is greater or a NaN: a NaN wins and then stays, as in PyTorch's max pooling
// (vmaxps alone would keep m where v is a NaN). 16 lanes only where RIDGE_SIMD_WIDE: GCC lowers a
// select on a vector wider than the target in pieces. Compiled for the target itself, as is every
// helper that calls it: GCC lowers the select for the function it is written in, before inlining
// it into a leaf (without, the 16-lane path below made squeezenet1_1's pools at batch 16 take 54,
// 18 and 9 ms in place of 1.9, 1.1 and 0.3). A vector wider than the target's registers is taken
// in pieces of their width (in_registers, vec.h: the SSE2 build's 8-lane compare).
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V max_nan(V m, V v) {
    if constexpr (sizeof(V) > RIDGE_SIMD_VECTOR_BYTES)
        return in_registers<max_nan<RegisterVec>>(m, v);
    else
        return (v > m) | (v != v) ? v : m;
}

// Floats in max_row's column buffer, on the stack (32 KB).
constexpr int64_t kColumns = 8192;

// The window of output q (row h0's rows r_lo to r_hi) at every lane of one channel block,
// positions `width` floats apart; the window's columns clipped to the map.
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void max_window(const float* x, float* out, const MaxPool& d, int64_t width,
                                                  int64_t h0, int64_t r_lo, int64_t r_hi, int64_t q) {
    using V = Vec<8>;
    const int64_t w0 = q * d.stride_w - d.pad_l;
    const int64_t s_lo = std::max<int64_t>(0, -w0), s_hi = std::min(d.S, d.W - w0);
    const float* first = x + ((h0 + r_lo) * d.W + w0 + s_lo) * width;
    for (int64_t j = 0; j < width; j += 8) {
        V m = load<V>(first + j);
        for (int64_t r = r_lo; r < r_hi; ++r) {
            const float* row = x + ((h0 + r) * d.W + w0 + s_lo) * width + j;
            for (int64_t s = 0; s < s_hi - s_lo; ++s) m = max_nan(m, load<V>(row + s * width));
        }
        store(out + q * width + j, m);
    }
}

// The maximum down `rows` rows `row` floats apart, at one column from `top`.
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V max_down(const float* top, int64_t row, int64_t rows) {
    V m = load<V>(top);
    for (int64_t r = 1; r < rows; ++r) m = max_nan(m, load<V>(top + r * row));
    return m;
}
// The 3x3 stride-2 windows of one output row that lie inside the map's columns, at `lanes` lanes
// of a blocked map (positions `width` floats apart, the first window's top left at `top`): each
// column's maximum down the rows taken once, in registers, the last column of a window kept as the
// first of the next. max_row's column buffer stored every column's maximum and read it again, at
// about 9 cycles an input position on the 2-core Zen 5 with the map in cache; squeezenet1_1 at
// batch 16 (pools on 64x111x111, 128x55x55 and 256x27x27 in nChw16c), the unfused executor, two
// alternated runs each: 1.6-2.7 -> 1.4-1.6 ms, 1.0-1.4 -> 0.62-0.74, 0.33-0.58 -> 0.17-0.33; the
// whole net (ridge bench, three alternated runs) 41.2-43.9 -> 37.8-40.2 ms. Channels-last rows (64 to 256 floats a
// column) keep the buffer: a pass per 16 lanes read each row again, 0.77 -> 1.18 ms on 16x128x55x55.
template <int lanes>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void max_columns_3s2(const float* top, float* out, int64_t row, int64_t rows,
                                                       int64_t windows, int64_t width) {
    using V = Vec<lanes>;
    V carry = max_down<V>(top, row, rows);
    for (int64_t q = 0; q < windows; ++q) {
        const V a = max_down<V>(top + (2 * q + 1) * width, row, rows),
                b = max_down<V>(top + (2 * q + 2) * width, row, rows);
        store(out + q * width, max_nan(max_nan(carry, a), b));
        carry = b;
    }
}

// One output row of 3x3 stride-1 windows padded by 1 on each side, as many as the map's columns
// (googlenet's branch pools), at `lanes` lanes from `top`, the windows' first row, positions
// `width` floats apart: each column's maximum down the rows taken once, the last two kept for the
// next window, and the padding's columns -inf, which no maximum keeps but a NaN still wins over.
// max_row's column buffer stored each column's maximum and read it again, and the two edge windows
// went one at a time. On the 2-core Zen 4, 2 threads, a warm map in a test program, 2 alternated
// runs each: nChw16c 16x832x7x7 390-415 -> 153-159 us (bound 111), 16x192x28x28 1.19-1.28 ms ->
// 0.48 (bound 0.41), 16x528x14x14 0.87-0.94 -> 0.35; channels-last (16 lanes a pass, the rows
// read again for each) 1x192x28x28 47-52 -> 32-33 us, 1x480x14x14 35 -> 20, 1x832x7x7 20 -> 9-10.
template <int lanes>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void max_row_3s1_same(const float* top, float* out, int64_t row, int64_t rows,
                                                        int64_t W, int64_t width) {
    using V = Vec<lanes>;
    V a = V{} - std::numeric_limits<float>::infinity(), b = max_down<V>(top, row, rows);
    for (int64_t q = 0; q + 1 < W; ++q) {
        const V c = max_down<V>(top + (q + 1) * width, row, rows);
        store(out + q * width, max_nan(max_nan(a, b), c));
        a = b, b = c;
    }
    store(out + (W - 1) * width, max_nan(a, b));
}

// The rows of x the output row after next reads first (that row's first row is h0 + 2 * stride),
// requested now, where x is larger than a core's L2 (max_row says why and what it gained).
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void prefetch_rows_after_next(const float* x, const MaxPool& d, int64_t width,
                                                                int64_t h0) {
    const int64_t next = h0 + 2 * d.stride_h, line = 64 / sizeof(float);
    const bool large = d.N * d.C * d.H * d.W * int64_t(sizeof(float)) > (int64_t(1) << 20);
    for (int64_t h = std::max(h0 + d.R, next); large && h < std::min(next + d.R, d.H); ++h)
        for (int64_t i = 0; i < d.W * width; i += line) __builtin_prefetch(x + h * d.W * width + i);
}

// One output row p of one channel block: positions `width` floats apart (8 or 16 lanes, or all C
// channels-last), x the block's map and y its output map. The windows inside the map's columns:
// - 3x3 at stride 1 padded by 1, one output a column, in any layout: max_row_3s1_same;
// - 3x3 at stride 2 in a blocked layout: max_columns_3s2;
// - where they overlap (stride below the kernel), in two passes over a column buffer: the maxima
//   down the window's rows at every column, then across each window's columns. A 3x3 window at
//   stride 1 took 4 maxima so instead of 8 (googlenet's branch pool on 1x256x28x28 channels-last
//   alone, 2-core Zen 5: one thread 127 -> 68 us, two 63 -> 51);
// - else (no overlap, or a row too wide for the buffer: over 1024 columns) four at a time: one
//   window's maxima form a chain of dependent selects whose latency, not the loads, set the pace
//   (googlenet's 3x3 stride-1 pools on 192x28x28, one thread: 0.32 to 0.35 ms a window at a time).
RIDGE_SIMD_LEAF void max_row(const float* x, float* y, const MaxPool& d, int64_t width, int64_t p) {
    using V = Vec<8>;
    const int64_t h0 = p * d.stride_h - d.pad_t;
    const int64_t r_lo = std::max<int64_t>(0, -h0), r_hi = std::min(d.R, d.H - h0);
    const int64_t step = d.stride_w * width;  // from one window to the next
    float* out = y + p * d.Q * width;
    // The rows the output row after next reads first, requested now, where x is larger than a
    // core's L2 (1 MB on Zen 4 and 5; at batch 1 the map, at larger batches all of x): a map just
    // written by the conv before is read from L3 or memory, and the windows' short runs of loads
    // kept too few misses in flight. googlenet at batch 1 on the 2-core Zen 5, three alternated
    // runs each, the next row's requested against none: maxpool2 (1x192x56x56 in nChw16c, 3x3
    // stride 2) 167-171 -> 110-137 us, maxpool1 (1x64x112x112 channels-last) 86-139 -> 88-100; alone
    // on a warm map 54 us, after 32 MB of other writes 156 -> 100. The pools on maps of 14x14 and
    // 28x28 up to 0.8 MB were level or a few us slower with it. Two rows ahead rather than one:
    // `ridge-kernels max-pool` (resnet50's, 16x64x112x112 in nChw16c, caches flushed, 2 threads),
    // 3 alternated pairs, medians 2.28, 2.34, 2.51 -> 2.20, 2.02, 1.90 ms, and with its buffers on
    // 64-byte lines as the executor's 1.40, 2.04, 2.25 -> 1.10, 1.91, 1.72; without any request
    // 3.1-3.9 (the former). In the nets (`ridge profile`, inference, alternated pairs) within the noise:
    // googlenet b1 0.55-0.62 -> 0.55-0.60 ms for its 13 pools, b16 9.5-11.0 -> 9.2-9.4,
    // squeezenet1_1 b16 3.0-3.6 -> 2.8-3.1, resnet50 b16 2.1-2.5 -> 2.0-2.4. The previous output
    // row asked for one of these rows already (3x3 at stride 1 or 2); asking for each row once (from
    // h0 + stride + R) was slower: the same case, 4 alternated pairs, 1.55-1.69 -> 1.75-2.05 ms.
    prefetch_rows_after_next(x, d, width, h0);
    // Windows qa to qb - 1 lie inside the map's columns: the first starts at or after column 0,
    // the last ends at or before column W.
    const int64_t qa = std::min(d.Q, (d.pad_l + d.stride_w - 1) / d.stride_w);
    const int64_t last = d.W + d.pad_l - d.S;
    const int64_t qb = last < 0 ? qa : std::max(qa, std::min(d.Q, last / d.stride_w + 1));
    const int64_t wa = qa * d.stride_w - d.pad_l, cols = (qb - qa - 1) * d.stride_w + d.S;
    if (d.S == 3 && d.stride_w == 1 && d.pad_l == 1 && d.Q == d.W) {
        const float* top = x + (h0 + r_lo) * d.W * width;
        int64_t j = 0;
        for (; RIDGE_SIMD_WIDE && j + 16 <= width; j += 16)
            max_row_3s1_same<16>(top + j, out + j, d.W * width, r_hi - r_lo, d.W, width);
        for (; j < width; j += 8) max_row_3s1_same<8>(top + j, out + j, d.W * width, r_hi - r_lo, d.W, width);
        return;
    }
    for (int64_t q = 0; q < qa; ++q) max_window(x, out, d, width, h0, r_lo, r_hi, q);
    if (d.S == 3 && d.stride_w == 2 && width <= 16 && qb > qa) {
        if (RIDGE_SIMD_WIDE && width == 16)
            max_columns_3s2<16>(x + ((h0 + r_lo) * d.W + wa) * 16, out + qa * 16, d.W * 16, r_hi - r_lo, qb - qa, 16);
        else
            for (int64_t j = 0; j < width; j += 8)
                max_columns_3s2<8>(x + ((h0 + r_lo) * d.W + wa) * width + j, out + qa * width + j, d.W * width,
                                   r_hi - r_lo, qb - qa, width);
    } else if (d.stride_w < d.S && qb > qa && cols * 8 <= kColumns) {
        alignas(32) float down[kColumns];
        const int64_t lanes = std::min(width, kColumns / cols / 8 * 8);
        for (int64_t j0 = 0; j0 < width; j0 += lanes) {
            const int64_t n = std::min(lanes, width - j0);
            for (int64_t c = 0; c < cols; ++c) {
                const float* top = x + ((h0 + r_lo) * d.W + wa + c) * width + j0;
                for (int64_t j = 0; j < n; j += 8) {
                    V m = load<V>(top + j);
                    for (int64_t r = 1; r < r_hi - r_lo; ++r) m = max_nan(m, load<V>(top + r * d.W * width + j));
                    store(down + c * n + j, m);
                }
            }
            for (int64_t q = qa; q < qb; ++q) {
                const float* first = down + (q - qa) * d.stride_w * n;
                for (int64_t j = 0; j < n; j += 8) {
                    V m = load<V>(first + j);
                    for (int64_t s = 1; s < d.S; ++s) m = max_nan(m, load<V>(first + s * n + j));
                    store(out + q * width + j0 + j, m);
                }
            }
        }
    } else {
        int64_t q = qa;
        for (; q + 4 <= qb; q += 4) {
            const int64_t w0 = q * d.stride_w - d.pad_l;
            for (int64_t j = 0; j < width; j += 8) {
                const float* first = x + ((h0 + r_lo) * d.W + w0) * width + j;
                V m0 = load<V>(first), m1 = load<V>(first + step), m2 = load<V>(first + 2 * step),
                  m3 = load<V>(first + 3 * step);
                for (int64_t r = r_lo; r < r_hi; ++r) {
                    const float* row = x + ((h0 + r) * d.W + w0) * width + j;
                    for (int64_t s = 0; s < d.S; ++s) {
                        const float* e = row + s * width;
                        m0 = max_nan(m0, load<V>(e));
                        m1 = max_nan(m1, load<V>(e + step));
                        m2 = max_nan(m2, load<V>(e + 2 * step));
                        m3 = max_nan(m3, load<V>(e + 3 * step));
                    }
                }
                float* o = out + q * width + j;
                store(o, m0), store(o + width, m1), store(o + 2 * width, m2), store(o + 3 * width, m3);
            }
        }
        for (; q < qb; ++q) max_window(x, out, d, width, h0, r_lo, r_hi, q);
    }
    for (int64_t q = qb; q < d.Q; ++q) max_window(x, out, d, width, h0, r_lo, r_hi, q);
}

// One output row p of one channel's plain map (nchw), in two passes over a row buffer: the
// maxima down the window's rows, eight columns a vector, then across its columns at every column,
// of which the windows' starts are picked. Windows taken one float at a time, as before, ran at 10
// cycles an element on Zen 3 (alexnet's first pool, 1x64x55x55 at 3x3 stride 2, after a conv
// oneDNN runs in nchw on AVX2: 0.74 to 0.84 ms against a bound of 0.04, now 0.08): GCC made the
// NaN-aware scalar maximum a branch, mispredicted on every other element of real data.
RIDGE_SIMD_LEAF void max_row_plain(const float* x, float* y, const MaxPool& d, int64_t p) {
    using V = Vec<8>;
    alignas(32) float down[kPlainRow], across[kPlainRow];
    const int64_t h0 = p * d.stride_h - d.pad_t;
    const int64_t r_lo = std::max<int64_t>(0, -h0), r_hi = std::min(d.R, d.H - h0);
    // down[d.pad_l + w] for w in the map; -inf in the padding on either side, which no maximum
    // takes (every window holds an element of x).
    const int64_t starts = (d.Q - 1) * d.stride_w + 1, span = (starts + 7) / 8 * 8 + d.S - 1;
    const float lowest = -__builtin_inff();
    for (int64_t i = 0; i < d.pad_l; ++i) down[i] = lowest;
    for (int64_t i = d.pad_l + d.W; i < span; ++i) down[i] = lowest;
    const float* top = x + (h0 + r_lo) * d.W;
    // Vectors of 8 columns, the last one overlapping its neighbour rather than a scalar tail (0.15
    // ms with one for alexnet's 55 columns, 0.08 without).
    for (int64_t w0 = 0; d.W >= 8 && w0 < d.W; w0 += 8) {
        const int64_t w = std::min(w0, d.W - 8);
        V m = load<V>(top + w);
        for (int64_t r = 1; r < r_hi - r_lo; ++r) m = max_nan(m, load<V>(top + r * d.W + w));
        store(down + d.pad_l + w, m);
    }
    for (int64_t w = 0; d.W < 8 && w < d.W; ++w) {
        float m = top[w];
        for (int64_t r = 1; r < r_hi - r_lo; ++r) {
            const float v = top[r * d.W + w];
            m = v > m || v != v ? v : m;
        }
        down[d.pad_l + w] = m;
    }
    for (int64_t s0 = 0; s0 < starts; s0 += 8) {
        V m = load<V>(down + s0);
        for (int64_t s = 1; s < d.S; ++s) m = max_nan(m, load<V>(down + s0 + s));
        store(across + s0, m);
    }
    float* out = y + p * d.Q;
    for (int64_t q = 0; q < d.Q; ++q) out[q] = across[q * d.stride_w];
}

}  // namespace

bool max_pool_supported(const MaxPool& d) {
    const bool layout = d.block == 1 || d.block == 8 || d.block == 16 || (d.block == d.C && d.C % 8 == 0);
    const bool shape = d.N > 0 && d.C > 0 && d.H > 0 && d.W > 0 && d.P > 0 && d.Q > 0 && d.R > 0 && d.S > 0 &&
                       d.stride_h > 0 && d.stride_w > 0 && d.pad_t >= 0 && d.pad_l >= 0;
    // Each window starts inside the map: padding under the kernel, and the last window's first row
    // and column within it.
    const bool windows = d.pad_t < d.R && d.pad_l < d.S && (d.P - 1) * d.stride_h - d.pad_t < d.H &&
                         (d.Q - 1) * d.stride_w - d.pad_l < d.W;
    // A plain map's row, with its padding and the last vector's overhang, fits the row buffers.
    const bool row = d.block != 1 || std::max(d.pad_l + d.W, (d.Q - 1) * d.stride_w + 8 + d.S) <= kPlainRow;
    return layout && shape && windows && row;
}

void max_pool(const float* x, float* y, const MaxPool& d) {
    if (d.block == 1) {
        for_units(d.N * d.C * d.P, omp_get_max_threads(), [&](int64_t u) {
            const int64_t p = u % d.P, nc = u / d.P;
            max_row_plain(x + nc * d.H * d.W, y + nc * d.P * d.Q, d, p);
        });
        return;
    }
    const ChannelLayout xl{d.N, d.C, d.H * d.W, d.block}, yl{d.N, d.C, d.P * d.Q, d.block};
    const int64_t CB = xl.blocks(), rows = d.N * CB * d.P;
    for_units(rows, omp_get_max_threads(), [&](int64_t u) {
        const int64_t p = u % d.P, nb = u / d.P, n = nb / CB, cb = nb % CB;
        max_row(x + n * xl.batch_stride() + cb * xl.block_stride(), y + n * yl.batch_stride() + cb * yl.block_stride(),
                d, d.block, p);
    });
}

namespace {

// The first and one past the last of the windows at `stride` from -pad, `size` wide, that hold
// position i of a map (none: first == last).
struct Span {
    int64_t first, last;
};
Span windows_holding(int64_t i, int64_t size, int64_t stride, int64_t pad, int64_t count) {
    const int64_t lo = i + pad - size + 1;  // a window starting at or after here holds i
    const int64_t last = std::min(count, (i + pad) / stride + 1);
    // Past the last window's reach (a caller's P or Q below the map's own count) the span is empty,
    // not reversed: a reversed one read rows of dy past its end.
    return {std::min(last, lo <= 0 ? 0 : (lo + stride - 1) / stride), last};
}

// The elements of x a window from `start` holds along an axis of `extent`.
int64_t inside(int64_t start, int64_t size, int64_t extent) {
    return std::min(start + size, extent) - std::max<int64_t>(start, 0);
}

// The lines `ahead` floats past rows [from, to) of a block's map, `row` floats each, requested now.
// A thread's units go through x (and y) in address order, a row of a block at a time and the
// blocks of an image one after another, so these are what a unit some rows later reads first. A
// map just written by the layer before is read from L3 or memory, and a row's short run of loads
// (1 KB at 17x17) kept too few misses in flight (max_row says the same of max pools).
constexpr int64_t ahead = 4096;
void prefetch_rows(const float* map, int64_t from, int64_t to, int64_t row) {
    for (int64_t i = from * row; i < to * row; i += 64 / int64_t(sizeof(float))) __builtin_prefetch(map + i + ahead);
}

// The sum of n vectors `step` floats apart from `at`. Unrolled for the windows' usual extents: a
// loop of a window's length per output took about 16 cycles an output on one Zen 5 core, its
// control more than its loads and adds.
template <class V, int n>
RIDGE_SIMD_INLINE V sum_of(const float* at, int64_t step) {
    V sum = load<V>(at);
    for (int i = 1; i < n; ++i) sum += load<V>(at + i * step);
    return sum;
}
template <class V>
RIDGE_SIMD_INLINE V sum_of(const float* at, int64_t step, int64_t n) {
    switch (n) {
        case 1:
            return sum_of<V, 1>(at, step);
        case 2:
            return sum_of<V, 2>(at, step);
        case 3:
            return sum_of<V, 3>(at, step);
        default:
            V sum = sum_of<V, 3>(at, step);
            for (int64_t i = 3; i < n; ++i) sum += load<V>(at + i * step);
            return sum;
    }
}

template <class V>
constexpr int64_t lanes_of = int64_t(sizeof(V) / sizeof(float));

// to[i * lanes] = the sum of n vectors `step` floats apart from from + i * B, for i < count: the
// sums down a window's rows at each column, or along a gradient's windows.
template <class V, int n>
RIDGE_SIMD_INLINE void sums_along(const float* from, int64_t B, int64_t step, int64_t count, float* to) {
    for (int64_t i = 0; i < count; ++i) store(to + i * lanes_of<V>, sum_of<V, n>(from + i * B, step));
}
template <class V>
RIDGE_SIMD_INLINE void sums_along(const float* from, int64_t B, int64_t step, int64_t count, float* to, int64_t n) {
    switch (n) {
        case 1:
            return sums_along<V, 1>(from, B, step, count, to);
        case 2:
            return sums_along<V, 2>(from, B, step, count, to);
        case 3:
            return sums_along<V, 3>(from, B, step, count, to);
        default:
            for (int64_t i = 0; i < count; ++i) store(to + i * lanes_of<V>, sum_of<V>(from + i * B, step, n));
    }
}

// out[q * B] = k times the sum of the S columns of down from (q * stride - pad) for q in [qa, qb):
// windows that lie inside the map.
template <class V, int S>
RIDGE_SIMD_INLINE void across(const float* down, int64_t stride, int64_t pad, int64_t qa, int64_t qb, float k,
                              float* out, int64_t B) {
    constexpr int64_t L = lanes_of<V>;
    for (int64_t q = qa; q < qb; ++q) store(out + q * B, sum_of<V, S>(down + (q * stride - pad) * L, L) * k);
}

// One output row p of one channel block's map, `lanes` of its `block` lanes from lane j. The
// window's fields are read into locals once: store() may alias anything, so the compiler reloaded
// them from d after every store (30 cycles an output on one Zen 5 core, 8 with locals).
template <int lanes>
RIDGE_SIMD_LEAF void avg_row(const float* x, float* y, const AvgPool& d, int64_t p, int64_t j) {
    using V = Vec<lanes>;
    alignas(64) float down[kColumns];
    const int64_t W = d.W, Q = d.Q, S = d.S, B = d.block, sw = d.stride_w, pl = d.pad_l;
    const int64_t h0 = p * d.stride_h - d.pad_t, r_lo = std::max<int64_t>(0, -h0), r_hi = std::min(d.R, d.H - h0);
    if (j == 0) {
        prefetch_rows(x, std::max<int64_t>(h0 + d.R - d.stride_h, 0), h0 + d.R, W * B);
        prefetch_rows(y, p, p + 1, Q * B);
    }
    const int64_t width = std::min(W, (Q - 1) * sw - pl + S);  // the columns windows reach
    const int64_t rows = r_hi - r_lo, row = W * B;
    sums_along<V>(x + (h0 + r_lo) * row + j, B, row, width, down, rows);
    const bool include = d.include_pad;
    const float whole = 1.0f / float((include ? d.R : rows) * S);  // a window of S columns
    float* out = y + p * Q * B + j;
    auto edge = [&](int64_t q) {
        const int64_t w0 = q * sw - pl, s_lo = std::max<int64_t>(0, -w0), s_hi = std::min(S, W - w0);
        const int64_t cols = s_hi - s_lo;
        const float k = include || cols == S ? whole : 1.0f / float(rows * cols);
        store(out + q * B, sum_of<V>(down + (w0 + s_lo) * lanes, lanes, cols) * k);
    };
    // Windows qa to qb - 1 lie inside the map's columns.
    const int64_t qa = std::min(Q, (pl + sw - 1) / sw), last = W + pl - S;
    const int64_t qb = last < 0 ? qa : std::max(qa, std::min(Q, last / sw + 1));
    for (int64_t q = 0; q < qa; ++q) edge(q);
    if (S == 2)
        across<V, 2>(down, sw, pl, qa, qb, whole, out, B);
    else if (S == 3)
        across<V, 3>(down, sw, pl, qa, qb, whole, out, B);
    else
        for (int64_t q = qa; q < qb; ++q) edge(q);
    for (int64_t q = qb; q < Q; ++q) edge(q);
}

// One row h of dx in one channel block, `lanes` lanes from lane j: down[q], the windows holding
// row h at column q, each dy over its rows (over the window's whole count where it counts the
// padding), then across the windows holding each column, each over its columns. Where every
// window holding the row, or the column, has the same count (all but the edges), one multiply
// after the sum.
// spans[i]: the windows holding row, or column, i (windows_holding, made once a call: its division by
// the stride at every column took a third of the backward's time).
template <int lanes>
RIDGE_SIMD_LEAF void avg_row_backward(const float* dy, float* dx, const AvgPool& d, const Span* row_spans,
                                      const Span* col_spans, int64_t h, int64_t j) {
    using V = Vec<lanes>;
    alignas(64) float down[kColumns];
    const int64_t H = d.H, W = d.W, Q = d.Q, R = d.R, S = d.S, B = d.block;
    const int64_t sh = d.stride_h, sw = d.stride_w, pt = d.pad_t, pl = d.pad_l;
    const bool include = d.include_pad;
    const Span ps = row_spans[h];
    if (j == 0) {
        prefetch_rows(dy, h == 0 ? ps.first : std::max(ps.first, row_spans[h - 1].last), ps.last, Q * B);
        prefetch_rows(dx, h, h + 1, W * B);
    }
    const int64_t row = Q * B;
    auto rows_of = [&](int64_t p) { return include ? R * S : inside(p * sh - pt, R, H); };
    bool even = true;  // every window holding row h has the same count
    for (int64_t p = ps.first; p < ps.last; ++p) even = even && rows_of(p) == rows_of(ps.first);
    const int64_t n = ps.last - ps.first;
    const float k = n > 0 ? 1.0f / float(rows_of(ps.first)) : 0.0f;
    const float* first = dy + ps.first * row + j;
    float scale = 1.0f;  // what down still needs multiplied by: the rows' 1 / count where even
    if (n == 0) {
        std::fill(down, down + Q * lanes, 0.0f);
    } else if (even) {
        sums_along<V>(first, B, row, Q, down, n);
        scale = k;
    } else {
        for (int64_t q = 0; q < Q; ++q) {
            V sum = {};
            for (int64_t p = ps.first; p < ps.last; ++p)
                sum += load<V>(dy + p * row + q * B + j) * (1.0f / float(rows_of(p)));
            store(down + q * lanes, sum);
        }
    }
    const float whole = include ? scale : scale / float(S);  // windows of S columns
    float* out = dx + h * W * B + j;
    for (int64_t w = 0; w < W; ++w) {
        const Span qs = col_spans[w];
        const bool full = include || (qs.first * sw - pl >= 0 && (qs.last - 1) * sw - pl + S <= W);
        V sum = {};
        if (qs.first < qs.last && full) {
            sum = sum_of<V>(down + qs.first * lanes, lanes, qs.last - qs.first) * whole;
        } else {
            for (int64_t q = qs.first; q < qs.last; ++q)
                sum += load<V>(down + q * lanes) * (scale / float(inside(q * sw - pl, S, W)));
        }
        store(out + w * B, sum);
    }
}

// f(x's block map, y's block map, row, first lane) for each row of `rows` of every block of
// every image, maps of N images and C channels in blocks of `block` (channels-last: C): 16 lanes a
// pass where the build has them and the block is a multiple of 16, else 8. A unit is a run of a
// block's rows writing about 16 KB: a row a unit on inception_v3's 8x8 maps (512 bytes of output)
// was 8192 units of a few hundred cycles each, their start-up as long as their work.
template <class Row16, class Row8>
void each_block_row(int64_t N, int64_t C, int64_t block, int64_t x_hw, int64_t y_hw, int64_t rows, const float* x,
                    float* y, Row16 row16, Row8 row8) {
    const ChannelLayout xl{N, C, x_hw, block}, yl{N, C, y_hw, block};
    const int64_t CB = xl.blocks(), row = y_hw / rows;  // row: the positions of an output row
    const int64_t per = std::clamp<int64_t>(4096 / (row * block), 1, rows), runs = (rows + per - 1) / per;
    for_units(N * CB * runs, omp_get_max_threads(), [&](int64_t u) {
        const int64_t r0 = u % runs * per, r1 = std::min(rows, r0 + per), nb = u / runs, n = nb / CB, cb = nb % CB;
        const float* in = x + n * xl.batch_stride() + cb * xl.block_stride();
        float* out = y + n * yl.batch_stride() + cb * yl.block_stride();
        for (int64_t r = r0; r < r1; ++r) {
            if (RIDGE_SIMD_WIDE && block % 16 == 0)
                for (int64_t j = 0; j < block; j += 16) row16(in, out, r, j);
            else
                for (int64_t j = 0; j < block; j += 8) row8(in, out, r, j);
        }
        zero_padding(out + r0 * row * block, (r1 - r0) * row, block, std::min(block, C - cb * block));
    });
}

}  // namespace

bool avg_pool_supported(const AvgPool& d) {
    const bool shape = d.N > 0 && d.C > 0 && d.H > 0 && d.W > 0 && d.P > 0 && d.Q > 0 && d.R > 0 && d.S > 0 &&
                       d.stride_h > 0 && d.stride_w > 0 && d.pad_t >= 0 && d.pad_l >= 0;
    // Each window starts inside the map (at least one element of x, so no count is 0), and where
    // the padding counts, ends inside the padded map (its count is then R * S).
    const bool windows = d.pad_t < d.R && d.pad_l < d.S && (d.P - 1) * d.stride_h - d.pad_t < d.H &&
                         (d.Q - 1) * d.stride_w - d.pad_l < d.W;
    const bool counted = !d.include_pad || ((d.P - 1) * d.stride_h + d.R <= d.pad_t + d.H + d.pad_b &&
                                            (d.Q - 1) * d.stride_w + d.S <= d.pad_l + d.W + d.pad_r);
    const bool columns = std::max(d.W, d.Q) * 16 <= kColumns;
    return shape && (d.block == 8 || d.block == 16) && windows && counted && columns;
}

void avg_pool(const float* x, float* y, const AvgPool& d) {
    each_block_row(
        d.N, d.C, d.block, d.H * d.W, d.P * d.Q, d.P, x, y,
        [&](const float* in, float* out, int64_t p, int64_t j) { avg_row<16>(in, out, d, p, j); },
        [&](const float* in, float* out, int64_t p, int64_t j) { avg_row<8>(in, out, d, p, j); });
}

void avg_pool_backward(const float* dy, float* dx, const AvgPool& d) {
    std::vector<Span> rows, cols;
    for (int64_t h = 0; h < d.H; ++h) rows.push_back(windows_holding(h, d.R, d.stride_h, d.pad_t, d.P));
    for (int64_t w = 0; w < d.W; ++w) cols.push_back(windows_holding(w, d.S, d.stride_w, d.pad_l, d.Q));
    each_block_row(
        d.N, d.C, d.block, d.P * d.Q, d.H * d.W, d.H, dy, dx,
        [&](const float* in, float* out, int64_t h, int64_t j) {
            avg_row_backward<16>(in, out, d, rows.data(), cols.data(), h, j);
        },
        [&](const float* in, float* out, int64_t h, int64_t j) {
            avg_row_backward<8>(in, out, d, rows.data(), cols.data(), h, j);
        });
}


namespace {

// max_pool_argmax's positions: for each output row of a channel block, the windows in groups of
// four columns, the group's four positions packed in the bytes of one int32 vector (column q in
// the byte q % 4, from the lowest). A byte a lane in y's own layout would have taken a widening
// from bytes to int32 lanes to compare, which GCC 12 makes a scalar loop under a target attribute
// (16 byte extractions and inserts for every vector; resnet50's stem pool backward at batch 8
// took 4.8 to 5.5 ms so, against oneDNN's 1.7 to 1.9); shifts and a mask on int32 lanes are one
// instruction each (on LaneBits, vec.h).
int64_t position_groups(const MaxPool& d) { return (d.Q + 3) / 4; }

// The maxima of `n` windows `step` floats apart (one or four at a time: one window's maxima form a
// chain of dependent compares and selects, whose latency set the pace alone), `rows` rows by
// `cols` columns from `first`, the element of the window's row r0 and column s0 (past its
// padding), by max_pool's rule (a later element takes a window only when greater, or a NaN), with
// the position that won in the whole window's numbering; stored at `out`, `width` floats apart,
// and the positions packed into `packed` from byte `byte` on.
template <int lanes, int n>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void argmax_windows(const float* first, int64_t step, int64_t row, int64_t width,
                                                      int64_t r0, int64_t rows, int64_t s0, int64_t cols, int64_t S,
                                                      float* out, typename LaneBits<lanes>::type& packed, int byte) {
    using V = Vec<lanes>;
    using I = typename LaneBits<lanes>::type;
    V m[n];
    I e[n];
    for (int k = 0; k < n; ++k) m[k] = load<V>(first + k * step), e[k] = I{} + int32_t(r0 * S + s0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t s = 0; s < cols; ++s) {
            const float* at = first + r * row + s * width;
            const I here = I{} + int32_t((r0 + r) * S + s0 + s);
            for (int k = 0; k < n; ++k) {
                const V v = load<V>(at + k * step);
                const I take = (v > m[k]) | (v != v);
                m[k] = take ? v : m[k];
                e[k] = take ? here : e[k];
            }
        }
    for (int k = 0; k < n; ++k) {
        store(out + k * width, m[k]);
        packed |= e[k] << int32_t(8 * (byte + k));
    }
}

// One output row p of one channel block, `lanes` lanes from lane j, positions `width` floats apart
// (the block, or C channels-last): each window's maximum and the position that won, into the
// block's positions `at`, a group of four windows at a time where the four lie inside the map's
// columns. One window at a time, resnet50's stem pool at batch 8 (8x64x112x112 in nChw16c) took
// 2.3-2.5 ms on one Zen 5 core, against 1.6-1.7 four at a time.
template <int lanes>
RIDGE_SIMD_LEAF void argmax_row(const float* x, float* y, int32_t* at, const MaxPool& d, int64_t width, int64_t p,
                                int64_t j) {
    using I = typename LaneBits<lanes>::type;
    const int64_t W = d.W, S = d.S, Q = d.Q, sw = d.stride_w, pl = d.pad_l, groups = position_groups(d);
    const int64_t h0 = p * d.stride_h - d.pad_t, row = W * width;
    const int64_t r_lo = std::max<int64_t>(0, -h0), rows = std::min(d.R, d.H - h0) - r_lo;
    if (j == 0) prefetch_rows_after_next(x, d, width, h0);
    const float* top = x + (h0 + r_lo) * row + j;  // the windows' first row inside the map
    float* out = y + p * Q * width + j;
    for (int64_t g = 0; g < groups; ++g) {
        I packed = {};
        const int64_t w0 = 4 * g * sw - pl;  // the group's first window's first column
        if (w0 >= 0 && 4 * g + 3 < Q && w0 + 3 * sw + S <= W) {
            argmax_windows<lanes, 4>(top + w0 * width, sw * width, row, width, r_lo, rows, 0, S, S, out + 4 * g * width,
                                     packed, 0);
        } else {
            for (int64_t q = 4 * g; q < std::min(Q, 4 * g + 4); ++q) {
                const int64_t wq = q * sw - pl, s_lo = std::max<int64_t>(0, -wq), s_hi = std::min(S, W - wq);
                argmax_windows<lanes, 1>(top + (wq + s_lo) * width, 0, row, width, r_lo, rows, s_lo, s_hi - s_lo, S,
                                         out + q * width, packed, int(q % 4));
            }
        }
        __builtin_memcpy(at + (p * groups + g) * width + j, &packed, sizeof packed);
    }
}

// The columns of max_pool_backward's row buffer: from the first window's first column (-pad_l)
// to the last window's last, or the map's last column, whichever is later.
int64_t argmax_row_columns(const MaxPool& d) {
    return std::max((d.Q - 1) * d.stride_w + d.S, d.pad_l + d.W);
}

// A window row's position at window q, as the column of the window it names in row h (0 to S - 1,
// else outside), from `lo` = S times the row of the window that row h is.
template <int lanes>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE typename LaneBits<lanes>::type column_of(const int32_t* row, int64_t q,
                                                                           int64_t width, int32_t lo) {
    typename LaneBits<lanes>::type packed;
    __builtin_memcpy(&packed, row + q / 4 * width, sizeof packed);
    return (packed >> int32_t(8 * (q % 4)) & 255) - lo;
}

// Which of max_pool_backward's row kernels takes a pool: argmax_row_backward_3s2, _apart, or else
// argmax_row_backward's row buffer.
bool three_by_two(const MaxPool& d) { return d.R == 3 && d.S == 3 && d.stride_h == 2 && d.stride_w == 2; }
bool apart(const MaxPool& d) { return d.R <= d.stride_h && d.S <= d.stride_w; }

// argmax_row_backward for 3x3 windows at stride 2 (the stems' and googlenet's pools): a row of dx
// that some window holds lies in one or two rows of windows, a column in one window of a row, or
// two that share it. Each column's sum is made in registers, the shared column's first part
// carried from one window to the next, and stored once into dx; the order of the terms is a
// scatter's (rows of windows, then windows). The row buffer's pass stores each shared column and
// loads it again at the next window (resnet50's stem pool at batch 1 on one Zen 5 core, 2
// alternated runs: 0.136-0.138 ms through the buffer, 0.123-0.128 carried).
template <int lanes>
RIDGE_SIMD_LEAF void argmax_row_backward_3s2(const int32_t* at, const float* dy, float* dx, const MaxPool& d,
                                             Span windows, int64_t width, int64_t h, int64_t j) {
    using V = Vec<lanes>;
    const int64_t Q = d.Q, W = d.W, pl = d.pad_l, groups = position_groups(d);
    float* out = dx + h * W * width + j;
    const int64_t p0 = windows.first, p1 = windows.last - 1;  // p1 == p0: one row of windows
    const int32_t lo0 = int32_t((h - (p0 * d.stride_h - d.pad_t)) * 3);
    const int32_t lo1 = int32_t((h - (p1 * d.stride_h - d.pad_t)) * 3);
    const int32_t* at0 = at + p0 * groups * width + j;
    const int32_t* at1 = at + p1 * groups * width + j;
    const float* g0 = dy + p0 * Q * width + j;
    const float* g1 = dy + p1 * Q * width + j;
    const bool two = p1 != p0;
    // Column c of the windows' span is column c - pl of the map; c = 2q to 2q + 2 for window q.
    auto put = [&](int64_t c, V v) RIDGE_SIMD_LAMBDA {
        if (c >= pl && c - pl < W) store(out + (c - pl) * width, v);
    };
    V carry0 = {}, carry1 = {};
    for (int64_t q = 0; q < Q; ++q) {
        const auto e0 = column_of<lanes>(at0, q, width, lo0);
        const V v0 = load<V>(g0 + q * width);
        V first = carry0 + (e0 == 0 ? v0 : V{}), middle = e0 == 1 ? v0 : V{};
        carry0 = e0 == 2 ? v0 : V{};
        if (two) {
            const auto e1 = column_of<lanes>(at1, q, width, lo1);
            const V v1 = load<V>(g1 + q * width);
            first = first + carry1 + (e1 == 0 ? v1 : V{});
            middle = middle + (e1 == 1 ? v1 : V{});
            carry1 = e1 == 2 ? v1 : V{};
        }
        put(2 * q, first);
        put(2 * q + 1, middle);
    }
    put(2 * Q, two ? carry0 + carry1 : carry0);
    // Map columns past the windows' span (a stride-2 pool whose last column no window reads).
    for (int64_t c = 2 * Q + 1; c < W + pl; ++c) put(c, V{});
}

// argmax_row_backward for windows that do not overlap (kernel at most the stride: the VGGs' and
// googlenet's 2x2 at stride 2), on a row of dx that a row of windows holds: an element of dx lies
// in one window or none, so each is its
// window's dy or zero, stored at once. The row buffer's zeroing, adds and copy made the VGGs' pool
// gradients slower than oneDNN's (vgg11's first at batch 8 on the 2-core Zen 5, 8x64x224x224:
// 4.2-4.8 ms against 3.1-3.2).
template <int lanes>
RIDGE_SIMD_LEAF void argmax_row_backward_apart(const int32_t* at, const float* dy, float* dx, const MaxPool& d,
                                               Span windows, int64_t width, int64_t h, int64_t j) {
    using V = Vec<lanes>;
    const int64_t Q = d.Q, W = d.W, S = d.S, sw = d.stride_w, pl = d.pad_l, groups = position_groups(d);
    float* out = dx + h * W * width + j;
    const int64_t p = windows.first;
    const int32_t lo = int32_t((h - (p * d.stride_h - d.pad_t)) * S);
    const int32_t* row = at + p * groups * width + j;
    const float* g = dy + p * Q * width + j;
    // Window q's columns, from q * sw - pl: S of its own, then sw - S no window reads.
    for (int64_t q = 0; q < Q; ++q) {
        const auto e = column_of<lanes>(row, q, width, lo);
        const V v = load<V>(g + q * width);
        for (int64_t s = 0; s < sw; ++s) {
            const int64_t w = q * sw - pl + s;
            if (w >= 0 && w < W) store(out + w * width, s < S && e == int32_t(s) ? v : V{});
        }
    }
    for (int64_t w = std::max<int64_t>(0, Q * sw - pl); w < W; ++w) store(out + w * width, V{});  // past the last
}

// One row h of dx in one channel block, `lanes` lanes from lane j: for each row p of windows that
// holds row h, in order, each window adds dy, at each lane, into the column of row h where its
// maximum was (none where it was in another row), in a row buffer from column -pad_l; then the
// buffer's map columns are dx's row. Each element so gets the windows' dy in the order a scatter
// through them adds it. dx is written once, where a scatter zeroes it first and adds into it
// window by window. A gather at each column over the windows holding it, their positions decoded
// and their columns' bounds found at each, was no faster (resnet50's stem pool at batch 1 on one
// Zen 5 core: 0.24-0.26 ms, against 0.18-0.25 through the buffer).
template <int lanes>
RIDGE_SIMD_LEAF void argmax_row_backward(const int32_t* at, const float* dy, float* dx, const MaxPool& d,
                                         const Span* rows, int64_t width, int64_t h, int64_t j) {
    using V = Vec<lanes>;
    using I = typename LaneBits<lanes>::type;
    alignas(64) float buffer[kColumns];
    const int64_t Q = d.Q, S = d.S, sw = d.stride_w, groups = position_groups(d);
    std::fill(buffer, buffer + argmax_row_columns(d) * lanes, 0.0f);
    for (int64_t p = rows[h].first; p < rows[h].last; ++p) {
        // Row h is row r of these windows: positions r * S to r * S + S - 1 lie in it.
        const int32_t lo = int32_t((h - (p * d.stride_h - d.pad_t)) * S);
        const float* g = dy + p * Q * width + j;
        for (int64_t q = 0; q < Q; ++q) {
            I packed;
            __builtin_memcpy(&packed, at + (p * groups + q / 4) * width + j, sizeof packed);
            const I e = (packed >> int32_t(8 * (q % 4)) & 255) - lo;
            const V gq = load<V>(g + q * width);
            float* column = buffer + q * sw * lanes;
            for (int32_t s = 0; s < int32_t(S); ++s)
                store(column + s * lanes, load<V>(column + s * lanes) + (e == s ? gq : V{}));
        }
    }
    float* out = dx + h * d.W * width + j;
    for (int64_t w = 0; w < d.W; ++w) store(out + w * width, load<V>(buffer + (w + d.pad_l) * lanes));
}

// Row h of dx in one channel block, `lanes` lanes from lane j, by the row kernel that takes the
// pool; zeros where no row of windows holds it (a stride past the kernel, or floor mode's last
// rows).
template <int lanes>
RIDGE_SIMD_LEAF void argmax_backward_row(const int32_t* at, const float* dy, float* dx, const MaxPool& d,
                                         const Span* rows, int64_t h, int64_t j) {
    const Span windows = rows[h];
    if (windows.first == windows.last) {
        float* out = dx + h * d.W * d.block + j;
        for (int64_t w = 0; w < d.W; ++w) store(out + w * d.block, Vec<lanes>{});
    } else if (three_by_two(d)) {
        argmax_row_backward_3s2<lanes>(at, dy, dx, d, windows, d.block, h, j);
    } else if (apart(d)) {
        argmax_row_backward_apart<lanes>(at, dy, dx, d, windows, d.block, h, j);
    } else {
        argmax_row_backward<lanes>(at, dy, dx, d, rows, d.block, h, j);
    }
}

}  // namespace

bool max_pool_backward_supported(const MaxPool& d) {
    const bool buffer = !three_by_two(d) && !apart(d);  // argmax_row_backward's row buffer
    return max_pool_supported(d) && d.block != 1 && d.R * d.S <= 256 &&
           (!buffer || argmax_row_columns(d) * 16 <= kColumns);
}

int64_t max_pool_positions_size(const MaxPool& d) {
    const ChannelLayout yl{d.N, d.C, d.P * position_groups(d), d.block};
    return d.N * yl.batch_stride();
}

void max_pool_argmax(const float* x, float* y, int32_t* at, const MaxPool& d) {
    const ChannelLayout xl{d.N, d.C, d.H * d.W, d.block}, yl{d.N, d.C, d.P * d.Q, d.block},
        al{d.N, d.C, d.P * position_groups(d), d.block};
    const int64_t CB = xl.blocks();
    for_units(d.N * CB * d.P, omp_get_max_threads(), [&](int64_t u) {
        const int64_t p = u % d.P, nb = u / d.P, n = nb / CB, cb = nb % CB;
        const float* in = x + n * xl.batch_stride() + cb * xl.block_stride();
        float* out = y + n * yl.batch_stride() + cb * yl.block_stride();
        int32_t* pos = at + n * al.batch_stride() + cb * al.block_stride();
        if (RIDGE_SIMD_WIDE && d.block % 16 == 0)
            for (int64_t j = 0; j < d.block; j += 16) argmax_row<16>(in, out, pos, d, d.block, p, j);
        else
            for (int64_t j = 0; j < d.block; j += 8) argmax_row<8>(in, out, pos, d, d.block, p, j);
    });
}

void max_pool_backward(const int32_t* at, const float* dy, float* dx, const MaxPool& d) {
    std::vector<Span> rows;
    for (int64_t h = 0; h < d.H; ++h) rows.push_back(windows_holding(h, d.R, d.stride_h, d.pad_t, d.P));
    const ChannelLayout yl{d.N, d.C, d.P * d.Q, d.block}, al{d.N, d.C, d.P * position_groups(d), d.block};
    // The block map's positions: dy's block map is `blocks` blocks into dy.
    auto positions = [&](const float* in) {
        const int64_t blocks = (in - dy) / yl.block_stride();
        return at + blocks * al.block_stride();
    };
    each_block_row(
        d.N, d.C, d.block, d.P * d.Q, d.H * d.W, d.H, dy, dx,
        [&](const float* in, float* out, int64_t h, int64_t j) {
            argmax_backward_row<16>(positions(in), in, out, d, rows.data(), h, j);
        },
        [&](const float* in, float* out, int64_t h, int64_t j) {
            argmax_backward_row<8>(positions(in), in, out, d, rows.data(), h, j);
        });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
