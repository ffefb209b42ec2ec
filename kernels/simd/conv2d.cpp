// A depthwise convolution: its weight gradient in the channel-blocked or channels-last layout, at
// stride 1 its forward and data gradient as a forward over dy, and at stride 1 or 2 its data
// gradient row by row; a grouped 3x3 convolution of 4 or 8 channels a group (with AVX-512 any
// multiple of 8): its forward (on planar copies of its rows below AVX-512 at stride 1, and with
// AVX-512 for groups of 8 at stride 1 and of 16 and more), and its data and weight gradient for
// groups of 4 at stride 1 (the data gradient a forward over dy, planar below AVX-512 too) and
// groups of 8 at stride 2 (with AVX-512 the data gradient on dx's four phases; simd.h).
//
// depthwise_wgrad: x (N,C,H,W) and dy (N,C,P,Q) in nChw{B}c or channels-last  dw (C,1,1,R,S) in
// Abcde{B}a or plain  db (C)
// A block of B channels is B independent 2-D correlations, so the vectors run across the block's
// channels; for each output row and each input row it meets, row() accumulates every tap of that
// kernel row in registers and adds them into the taps' sums once per row. Channels-last is read as
// blocks of 16 (or 8) channels whose positions lie C floats apart instead of B. Work is split over
// channel blocks, and over chunks of images when there are fewer blocks than twice the threads;
// each unit writes its partial sums to scratch, and a second pass adds the chunks into dw.
#include <omp.h>

#include <algorithm>
#include <type_traits>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t max_taps = 11;

// Where row h of channel block cb (of L lanes) of image n starts in an H x W map of d's layout:
// nChw{L}c where the layout's block is L (a block's positions L floats apart, the blocks of an
// image one after another), else channels-last (every position holds all C channels, the block
// an offset into it), whose positions are C floats apart.
inline int64_t block_row(const Depthwise& d, int64_t L, int64_t n, int64_t cb, int64_t h, int64_t H, int64_t W) {
    if (d.block == L) return ((n * ((d.C + L - 1) / L) + cb) * H + h) * W * L;
    return (n * H + h) * W * d.C + cb * L;
}

// The floats between two positions of a row in that layout.
inline int64_t position_floats(const Depthwise& d, int64_t L) { return d.block == L ? L : d.C; }

int64_t image_chunks(const Depthwise& d, int threads) {
    return wgrad_chunks((d.C + depthwise_lanes(d) - 1) / depthwise_lanes(d), d.N, threads);
}

// taps[s] += sum over q in [lo, hi) of dy[q] * x[q*stride + s*dilation - pad]: one tap's pass
// along a row, positions ps floats apart, two chains to hide the FMA latency.
template <int B>
RIDGE_SIMD_INLINE void tap_pass(const float* xrow, const float* dyrow, Vec<B>& tap, int64_t off, int64_t sw,
                                int64_t lo, int64_t hi, int64_t ps) {
    using V = Vec<B>;
    V s0 = {}, s1 = {};
    int64_t q = lo;
    for (; q + 1 < hi; q += 2) {
        s0 += load<V>(dyrow + q * ps) * load<V>(xrow + (q * sw + off) * ps);
        s1 += load<V>(dyrow + (q + 1) * ps) * load<V>(xrow + ((q + 1) * sw + off) * ps);
    }
    if (q < hi) s0 += load<V>(dyrow + q * ps) * load<V>(xrow + (q * sw + off) * ps);
    tap += s0 + s1;
}

// The output columns where each tap of a kernel row lands inside the input row, the same for
// every row (the per-tap passes below).
struct Columns {
    int64_t off[max_taps], lo[max_taps], hi[max_taps];
    explicit Columns(const Depthwise& d) {
        const int64_t sw = d.stride_w;
        for (int64_t s = 0; s < d.S; ++s) {
            off[s] = s * d.dil_w - d.pad_l;
            lo[s] = off[s] >= 0 ? 0 : (-off[s] + sw - 1) / sw;
            hi[s] = d.W - 1 - off[s] < 0 ? 0 : std::min(d.Q, (d.W - 1 - off[s]) / sw + 1);
        }
    }
};

// Output columns q0 .. q0 + count - 1 (count at most 4; `full`: 4, known when compiled) of one
// output row against one input row, at stride and dilation 1: the count dy vectors and the input
// positions they meet are loaded once, input position q0 + j - pad meeting dy[q0 + t] through tap
// s = j - t; positions in the padding are skipped. Two accumulator sets (t = 0, 1 and t = 2, 3),
// so 2 * S chains are in flight.
template <int B, int S, bool full>
RIDGE_SIMD_INLINE void columns4(const float* xrow, const float* dyrow, Vec<B>* acc0, Vec<B>* acc1, int64_t q0,
                                int64_t count, int64_t W, int64_t pad, int64_t ps) {
    using V = Vec<B>;
    V dv[4];
    for (int t = 0; t < 4; ++t) dv[t] = full || t < count ? load<V>(dyrow + (q0 + t) * ps) : V{};
#pragma GCC unroll 10
    for (int j = 0; j < S + 3; ++j) {
        const int64_t w = q0 + j - pad;
        if (w < 0 || w >= W) continue;
        const V xv = load<V>(xrow + w * ps);
#pragma GCC unroll 4
        for (int t = 0; t < 4; ++t) {
            const int s = j - t;
            if (s < 0 || s >= S || (!full && t >= count)) continue;
            (t < 2 ? acc0 : acc1)[s] += dv[t] * xv;
        }
    }
}

// One output row against one input row: taps[s] for every s. With stride and dilation 1 and a
// kernel width known at compile time, four output columns at a time (columns4), borders included:
// 4 dy vectors and the S + 3 input vectors they meet are loaded once for up to 4 * S FMAs. Small
// maps gain most: convnext's 7x7 map under a 7x7 kernel has no column where every tap lands
// inside, and one pass per tap over its few columns ran at 13 GFLOP/s on one Zen 4 core. Other
// shapes take one pass per tap.
template <int B, int S>
RIDGE_SIMD_INLINE void row(const float* xrow, const float* dyrow, Vec<B>* taps, const Depthwise& d,
                           const Columns& c, int64_t ps) {
    using V = Vec<B>;
    if constexpr (S > 0) {
        if (d.stride_w == 1 && d.dil_w == 1) {
            V acc0[S] = {}, acc1[S] = {};
            int64_t q = 0;
            for (; q + 4 <= d.Q; q += 4) columns4<B, S, true>(xrow, dyrow, acc0, acc1, q, 4, d.W, d.pad_l, ps);
            if (q < d.Q) columns4<B, S, false>(xrow, dyrow, acc0, acc1, q, d.Q - q, d.W, d.pad_l, ps);
            for (int t = 0; t < S; ++t) taps[t] += acc0[t] + acc1[t];
            return;
        }
    }
    for (int64_t t = 0; t < d.S; ++t) tap_pass<B>(xrow, dyrow, taps[t], c.off[t], d.stride_w, c.lo[t], c.hi[t], ps);
}

// Partial sums of channel block cb over images [n0, n1): acc holds R*S tap vectors, then the bias.
template <int B, int S>
RIDGE_SIMD_INLINE void unit(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                            int64_t n1) {
    using V = Vec<B>;
    const int64_t R = d.R, Sn = d.S;
    const int64_t ps = position_floats(d, B);
    V taps[max_taps * max_taps] = {};
    V bias = {};
    const Columns cols(d);
    for (int64_t n = n0; n < n1; ++n) {
        const float* xn = x + block_row(d, B, n, cb, 0, d.H, d.W);
        const float* dyn = dy + block_row(d, B, n, cb, 0, d.P, d.Q);
        for (int64_t p = 0; p < d.P; ++p) {
            const float* dyrow = dyn + p * d.Q * ps;
            for (int64_t q = 0; q < d.Q; ++q) bias += load<V>(dyrow + q * ps);
            for (int64_t r = 0; r < R; ++r) {
                int64_t ih = p * d.stride_h - d.pad_t + r * d.dil_h;
                if (ih < 0 || ih >= d.H) continue;
                row<B, S>(xn + ih * d.W * ps, dyrow, taps + r * Sn, d, cols, ps);
            }
        }
    }
    for (int64_t t = 0; t < R * Sn; ++t) store(acc + t * B, taps[t]);
    store(acc + R * Sn * B, bias);
}

template <int B>
RIDGE_SIMD_INLINE void unit_any(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb,
                                int64_t n0, int64_t n1) {
    if (d.S == 3) return unit<B, 3>(x, dy, acc, d, cb, n0, n1);
    if (d.S == 5) return unit<B, 5>(x, dy, acc, d, cb, n0, n1);
    if (d.S == 7) return unit<B, 7>(x, dy, acc, d, cb, n0, n1);
    unit<B, 0>(x, dy, acc, d, cb, n0, n1);
}

RIDGE_SIMD_LEAF void unit16(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                            int64_t n1) {
    unit_any<16>(x, dy, acc, d, cb, n0, n1);
}

RIDGE_SIMD_LEAF void unit8(const float* x, const float* dy, float* acc, const Depthwise& d, int64_t cb, int64_t n0,
                           int64_t n1) {
    unit_any<8>(x, dy, acc, d, cb, n0, n1);
}

// ---- depthwise conv at stride 1: the forward, and the data gradient as a forward ----

// One strip of `strip` outputs of a row (count of them stored), from w0 - the left padding, of one
// block of L channels: y[t] = bias + the sum over r, s of rows[r][w0 + t + s] * w[r][s]. rows[r] is
// the input row kernel row r reads (null in the padding), positions ps floats apart, W of them; wp
// the block's weights ([r][s][lane], read as w[R-1-r][S-1-s] when turned), bias its L lanes or
// null; with `add` the sums start from y's values instead (a gradient adding into one that
// arrived). The strip stays in registers while each input position it reaches is loaded once per
// kernel row and multiplied by the S taps held in registers; positions in the padding are skipped,
// not read as zeros, and a strip whose positions are all inside (`inside`) tests none.
template <int L, int S, int strip, bool inside>
RIDGE_SIMD_INLINE void dw_strip_at(const float* const* rows, int64_t R, int64_t ps, int64_t W, int64_t w0,
                                   const float* wp, bool turned, const float* bias, bool add, float* y,
                                   int64_t count) {
    using V = Vec<L>;
    V acc[strip];
#pragma GCC unroll 8
    for (int t = 0; t < strip; ++t) acc[t] = add && t < count ? load<V>(y + t * ps) : bias ? load<V>(bias) : V{};
    for (int64_t r = 0; r < R; ++r) {
        if (!rows[r]) continue;
        const float* wr = wp + (turned ? R - 1 - r : r) * S * L;
        V k[S];
#pragma GCC unroll 7
        for (int s = 0; s < S; ++s) k[s] = load<V>(wr + (turned ? S - 1 - s : s) * L);
        // The positions read are a run of the strip's from j0; the pointer steps through them
        // rather than holding an offset j * ps for each j, which GCC 12 kept in stack slots and
        // reloaded before each load (the time was level within the noise either way).
        const int64_t j0 = inside ? 0 : std::max<int64_t>(0, -w0);
        const float* in = rows[r] + (w0 + j0) * ps;
#pragma GCC unroll 16
        for (int j = 0; j < strip + S - 1; ++j) {
            if (!inside && (j < j0 || w0 + j >= W)) continue;
            const V v = load<V>(in);
            if (j + 1 < strip + S - 1 && (inside || w0 + j + 1 < W)) in += ps;  // never past the row's end
#pragma GCC unroll 7
            for (int s = 0; s < S; ++s) {
                const int t = j - s;  // input w0 + j reaches output t through tap s
                if (t >= 0 && t < strip) acc[t] += v * k[s];
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < strip; ++t)
        if (t < count) store(y + t * ps, acc[t]);
}

// Strips of `strip` outputs of a row, each for `blocks` channel blocks in turn (cs floats apart in
// x's rows and in y; their weights R*S*L apart, their biases L).
template <int L, int S, int strip>
RIDGE_SIMD_INLINE void dw_row(const float* const* rows, int64_t R, int64_t ps, int64_t W, int64_t Q, int64_t pad_l,
                              const float* wp, bool turned, const float* bias, bool add, float* y, int64_t blocks,
                              int64_t cs) {
    const float* rb[max_taps];
    for (int64_t q0 = 0; q0 < Q; q0 += strip) {
        const int64_t w0 = q0 - pad_l, count = std::min<int64_t>(strip, Q - q0);
        const bool inside = w0 >= 0 && w0 + strip + S - 1 <= W;
        for (int64_t c = 0; c < blocks; ++c) {
            for (int64_t r = 0; r < R; ++r) rb[r] = rows[r] ? rows[r] + c * cs : nullptr;
            const float* w = wp + c * R * S * L;
            const float* b = bias ? bias + c * L : nullptr;
            float* out = y + q0 * ps + c * cs;
            if (inside)
                dw_strip_at<L, S, strip, true>(rb, R, ps, W, w0, w, turned, b, add, out, count);
            else
                dw_strip_at<L, S, strip, false>(rb, R, ps, W, w0, w, turned, b, add, out, count);
        }
    }
}

// The strip that wastes fewest outputs of a row of Q (convnext's 56, 28, 14 and 7 take 7), ties to
// the longer: in 8 lanes 7 accumulators, 7 taps and an input vector fill 15 of AVX2's 16 registers
// (16 lanes on AVX2 or SSE builds need twice the registers and spill, as before). Strips of 8
// computed 8 outputs of a 7-wide map and 16 of a 14-wide one.
template <int L, int S>
RIDGE_SIMD_INLINE void dw_row_strips(const float* const* rows, int64_t R, int64_t ps, int64_t W, int64_t Q,
                                     int64_t pad_l, const float* wp, bool turned, const float* bias, bool add,
                                     float* y, int64_t blocks, int64_t cs) {
    auto waste = [Q](int64_t s) { return (Q + s - 1) / s * s - Q; };
    if (waste(7) <= waste(6) && waste(7) <= waste(5))
        return dw_row<L, S, 7>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
    if (waste(6) <= waste(5)) return dw_row<L, S, 6>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
    dw_row<L, S, 5>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
}

template <int L>
RIDGE_SIMD_INLINE void dw_row_any(const float* const* rows, int64_t R, int64_t S, int64_t ps, int64_t W, int64_t Q,
                                  int64_t pad_l, const float* wp, bool turned, const float* bias, bool add, float* y,
                                  int64_t blocks, int64_t cs) {
    if (S == 3) return dw_row_strips<L, 3>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
    if (S == 5) return dw_row_strips<L, 5>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
    dw_row_strips<L, 7>(rows, R, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
}

RIDGE_SIMD_LEAF void dw_row16(const float* const* rows, int64_t R, int64_t S, int64_t ps, int64_t W, int64_t Q,
                              int64_t pad_l, const float* wp, bool turned, const float* bias, bool add, float* y,
                              int64_t blocks, int64_t cs) {
    dw_row_any<16>(rows, R, S, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
}

RIDGE_SIMD_LEAF void dw_row8(const float* const* rows, int64_t R, int64_t S, int64_t ps, int64_t W, int64_t Q,
                             int64_t pad_l, const float* wp, bool turned, const float* bias, bool add, float* y,
                             int64_t blocks, int64_t cs) {
    dw_row_any<8>(rows, R, S, ps, W, Q, pad_l, wp, turned, bias, add, y, blocks, cs);
}

// y = conv(x) + b, or y += conv(x) where `add`, the weights w in the blocked layout of
// depthwise_lanes ([cb][r][s][lane], zeros past C), turned or not; b (C) or null. Blocked layouts:
// units of one output row of one channel block, rows of an image in order, so the R input rows a
// unit reads were mostly read by the one before it. Channels-last: units of one output row, each
// strip of it through every channel block in turn, so that the other half of a 64-byte line of x
// (two 8-lane blocks of a position) is read right after the first. A unit per row and block read a
// whole row's strips first: at 96 channels 7 x 56 lines 384 bytes apart, which fall in half of L1's
// 64 sets, some 12 lines a set against its 8 ways. With units of one row and one block, and strips
// of 8 whatever Q, on 2 threads of the Zen 3 (a test program at -O3, alternated calls, 2 runs):
// 8x96x56x56 7.2-7.4 against now 6.0-6.2 ms, 1x96x56x56 0.86-0.88 against 0.60-0.72, 16x768x7x7
// 1.59-1.62 against 1.31-1.37, 8x384x14x14 1.82-1.91 against 1.59-1.62. Where a map has fewer rows
// than two a thread (convnext's last stage at batch 1 on many cores), a row's blocks are shared out
// in even runs (not measured: this host has 2 cores, which every zoo net's rows keep busy).
void dw_run(const float* x, const float* w, bool turned, const float* b, bool add, float* y, const Depthwise& d,
            int threads) {
    const int64_t L = depthwise_lanes(d), CB = (d.C + L - 1) / L, RS = d.R * d.S;
    const bool blocked = d.block == L;
    const int64_t ps = position_floats(d, L);
    int64_t per_unit = 1;  // channel blocks a unit runs
    if (!blocked) {
        const int64_t rows = d.N * d.P, want = std::clamp<int64_t>((2 * threads + rows - 1) / rows, 1, CB);
        per_unit = std::min(CB, ((CB + want - 1) / want + 1) / 2 * 2);
    }
    const int64_t parts = (CB + per_unit - 1) / per_unit;  // units of an output row
    for_units(d.N * parts * d.P, threads, [&](int64_t u) {
        const int64_t n = u / (parts * d.P);
        const int64_t cb = blocked ? u / d.P % CB : u % parts * per_unit, p = blocked ? u % d.P : u / parts % d.P;
        const int64_t blocks = std::min(per_unit, CB - cb);
        const float* rows[max_taps];
        for (int64_t r = 0; r < d.R; ++r) {
            const int64_t h = p - d.pad_t + r;
            rows[r] = h >= 0 && h < d.H ? x + block_row(d, L, n, cb, h, d.H, d.W) : nullptr;
        }
        // The bias of a block that C ends inside, padded with zeros.
        float padded[16] = {};
        const float* bias = b ? b + cb * L : nullptr;
        if (b && (cb + 1) * L > d.C) {
            std::copy(b + cb * L, b + d.C, padded);
            bias = padded;
        }
        float* out = y + block_row(d, L, n, cb, p, d.P, d.Q);
        (L == 16 ? dw_row16 : dw_row8)(rows, d.R, d.S, ps, d.W, d.Q, d.pad_l, w + cb * RS * L, turned, bias, add,
                                       out, blocks, L);
        // The lanes past C in a padded last block took the input's padding times zero weights: NaN
        // where that padding held one (a gradient's may hold anything); a blocked tensor's padding
        // must read zero to the layers after it.
        const int64_t lanes = d.C - cb * L;
        if (blocked && lanes < L)
            for (int64_t q = 0; q < d.Q; ++q) std::fill(out + q * ps + lanes, out + q * ps + L, 0.0f);
    });
}

// The weights in dw_run's layout: w itself where blocked_weights, else packed from plain (C,1,R,S).
const float* dw_weights(const float* w, float* packed, const Depthwise& d) {
    if (d.blocked_weights) return w;
    const int64_t L = depthwise_lanes(d), CB = (d.C + L - 1) / L, RS = d.R * d.S;
    std::fill(packed, packed + CB * L * RS, 0.0f);
    for (int64_t c = 0; c < d.C; ++c)
        for (int64_t t = 0; t < RS; ++t) packed[(c / L * RS + t) * L + c % L] = w[c * RS + t];
    return packed;
}

// ---- depthwise conv: the data gradient, row by row ----

// All ones in a block's lanes below C. dy's lanes past C may hold anything (NaN times a zero
// weight is NaN); dx's must be zero, so each store is masked: a fill of the lanes after the row
// became a memset call per position.
template <int L>
RIDGE_SIMD_INLINE typename LaneBits<L>::type lanes_kept(int64_t lanes) {
    typename LaneBits<L>::type keep;
    for (int j = 0; j < L; ++j) keep[j] = j < lanes ? -1 : 0;
    return keep;
}

template <int L>
RIDGE_SIMD_INLINE void store_kept(float* out, Vec<L> v, typename LaneBits<L>::type keep) {
    typename LaneBits<L>::type b;
    __builtin_memcpy(&b, &v, sizeof b);
    b &= keep;
    __builtin_memcpy(&v, &b, sizeof v);
    store(out, v);
}

// Positions w0 .. w0 + T - 1 of a row of dx at stride 1 with "same" padding (pad_l = S / 2, Q = W),
// positions ps floats apart, of one block of L channels, the first `done` of them stored already:
// dx[w] (added to where `add`) = the sum over the `reach` dy rows that reach this row (rows[i],
// through kernel row taps[i]) and the taps s with 0 <= q = w + pad_l - s < W of rows[i][q] *
// wp[taps[i]][s]. The strip stays in registers while each dy position a row gives it is loaded
// once and multiplied by the S taps. `left`: the strip starts the row (w0 = 0), `right`: it ends it
// (w0 + T = W); which positions lie in the padding is then known as it is compiled, and nothing is
// tested. The forward's strip kernel over dy with the taps turned (dw_run) ran this before and
// tested each position of a strip that met an end: on a 7-wide map every strip. Alone, warm, 2
// threads on the Zen 5, medians of 300 alternated calls, us: nChw16c 8x960x7x7 (3x3) 79 -> 57,
// 8x1152x7x7 (5x5) 171 -> 137, 8x576x14x14 223 -> 155, 8x192x28x28 245 -> 180; the AVX2 build on
// nChw8c 8x960x7x7 213 -> 99, 8x576x14x14 381 -> 183 (a memset of dx: 8 to 44).
template <int L, int S, int T, bool left, bool right>
RIDGE_SIMD_INLINE void dw1_strip(const float* const* rows, int64_t shift, const int64_t* taps, int64_t reach,
                                 int64_t ps, int64_t w0, int64_t done, const float* wp,
                                 typename LaneBits<L>::type keep, bool add, float* dx) {
    using V = Vec<L>;
    constexpr int pad = S / 2, first = left ? pad : 0, last = right ? T + pad : T + S - 1;  // the j read
    V acc[T] = {};
    for (int64_t i = 0; i < reach; ++i) {
        const float* k = wp + taps[i] * S * L;
        V kv[S];
#pragma GCC unroll 7
        for (int s = 0; s < S; ++s) kv[s] = load<V>(k + s * L);
        // Position q = w0 - pad + j reaches output t through tap t + S - 1 - j; the pointer steps
        // through them (an offset j * ps each, GCC 12 kept in stack slots) and never past the row.
        const float* in = rows[i] + shift + (w0 - pad + first) * ps;
#pragma GCC unroll 16
        for (int j = first; j < last; ++j) {
            const V v = load<V>(in);
            if (j + 1 < last) in += ps;
#pragma GCC unroll 8
            for (int t = 0; t < T; ++t) {
                const int s = t + S - 1 - j;
                if (s >= 0 && s < S) acc[t] += v * kv[s];
            }
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
        if (t < done) continue;
        float* out = dx + (w0 + t) * ps;
        store_kept<L>(out, add ? acc[t] + load<V>(out) : acc[t], keep);
    }
}

// A row of dx at stride 1, W wide: one strip where W = T, else strips from each end and between
// them, each starting where the one before ended or, to stay inside the row, before that (its
// first positions then redone, not stored again). T <= W - S / 2 (dgrad_strip): the end strips'
// inner sides lie inside the row.
template <int L, int S, int T>
RIDGE_SIMD_INLINE void dw1_row(const float* const* rows, int64_t shift, const int64_t* taps, int64_t reach, int64_t ps,
                               int64_t W, const float* wp, int64_t lanes, bool add, float* dx) {
    const auto keep = lanes_kept<L>(lanes);
    auto strip = [&](auto left, auto right, int64_t w0, int64_t done) RIDGE_SIMD_LAMBDA {
        dw1_strip<L, S, T, decltype(left)::value, decltype(right)::value>(rows, shift, taps, reach, ps, w0, done, wp,
                                                                          keep, add, dx);
    };
    using yes = std::true_type;
    using no = std::false_type;
    if constexpr (T < 5) {
        strip(yes{}, yes{}, 0, 0);  // only a row of T (dgrad_strip)
    } else {
        if (W == T) return strip(yes{}, yes{}, 0, 0);
        strip(yes{}, no{}, 0, 0);
        int64_t end = T;  // positions stored
        while (end < W - T) {
            const int64_t w0 = std::max<int64_t>(S / 2, std::min(end, W - 2 * T));
            strip(no{}, no{}, w0, end - w0);
            end = w0 + T;
        }
        strip(no{}, yes{}, W - T, end - (W - T));
    }
}

// One row of dx, W positions ps floats apart, of one block of L channels: dx[w] (added to where
// `add`) = the sum over the taps s with w + pad_l - s = 2q, 0 <= q < Q, and over the RE dy rows
// that reach this row (rows[i], through kernel row taps[i]) of rows[i][q] * wp[taps[i]][s]. At
// stride 2 the taps that meet a position are those of its parity: inside the row, positions go in
// pairs from an even w + pad_l, whose even taps and the odd one's read the same dy positions; only
// the positions near the ends test q's range. ShuffleNet's 8x58x56x56 (3x3) on 2 threads, warm,
// against a memset of its dx (45-60 us): 205 us with the parity and range tested at every tap and
// the taps read through wp (reloaded after each store to dx, which may alias them); 141 with the
// taps in locals and the parities compiled apart; 106 with dx's lanes past C zeroed by a mask on
// each store rather than a fill after the row, which became a memset call per position; 90-103
// with a chain of sums per dy row (5x5 on 144 channels 23% faster, one image on one thread).
template <int L, int S, int RE>
RIDGE_SIMD_INLINE void dw2_row(const float* const* rows_at, int64_t shift, const int64_t* taps, int64_t ps, int64_t Q,
                               int64_t W, int64_t pad_l, const float* wp, int64_t lanes, bool add, float* dx) {
    using V = Vec<L>;
    const auto keep = lanes_kept<L>(lanes);
    auto put = [&](float* out, V v) RIDGE_SIMD_LAMBDA { store_kept<L>(out, v, keep); };
    const float* rows[RE];
    V k[RE][S];
    for (int i = 0; i < RE; ++i) {
        rows[i] = rows_at[i] + shift;
        for (int s = 0; s < S; ++s) k[i][s] = load<V>(wp + (taps[i] * S + s) * L);
    }
    auto at = [&](auto parity, auto edge, int64_t w) RIDGE_SIMD_LAMBDA {
        const int64_t u = w + pad_l;
        V acc = add ? load<V>(dx + w * ps) : V{};
#pragma GCC unroll 4
        for (int i = 0; i < RE; ++i)
#pragma GCC unroll 4
            for (int s = decltype(parity)::value; s < S; s += 2) {
                const int64_t q = (u - s) / 2;
                if (decltype(edge)::value && (u < s || q >= Q)) continue;
                acc += load<V>(rows[i] + q * ps) * k[i][s];
            }
        put(dx + w * ps, acc);
    };
    using even = std::integral_constant<int, 0>;
    using odd = std::integral_constant<int, 1>;
    using inside = std::false_type;
    auto at_edge = [&](int64_t w) RIDGE_SIMD_LAMBDA {
        if ((w + pad_l) & 1)
            at(odd{}, std::true_type{}, w);
        else
            at(even{}, std::true_type{}, w);
    };
    // Inside: every tap's q in [0, Q), from u = S - 1 (even: S is odd, and pad_l < S) to u = 2Q - 1.
    // In pairs from there, an even u = 2m, whose taps 2j and the odd one's 2j + 1 read the same dy
    // positions m - j: each loaded once.
    const int64_t lo = std::clamp<int64_t>(S - 1 - pad_l, 0, W), hi = std::clamp<int64_t>(2 * Q - pad_l, lo, W);
    for (int64_t w = 0; w < lo; ++w) at_edge(w);
    int64_t w = lo;
    for (; w + 1 < hi; w += 2) {
        const int64_t m = (w + pad_l) / 2;
        V e[RE], o[RE];
#pragma GCC unroll 4
        for (int i = 0; i < RE; ++i) {
            const float* r = rows[i] + m * ps;
            e[i] = V{}, o[i] = V{};
#pragma GCC unroll 4
            for (int j = 0; 2 * j < S; ++j) {
                const V v = load<V>(r - j * ps);
                e[i] += v * k[i][2 * j];
                if (2 * j + 1 < S) o[i] += v * k[i][2 * j + 1];
            }
        }
        V es = add ? load<V>(dx + w * ps) : V{}, os = add ? load<V>(dx + (w + 1) * ps) : V{};
#pragma GCC unroll 4
        for (int i = 0; i < RE; ++i) es += e[i], os += o[i];
        put(dx + w * ps, es);
        put(dx + (w + 1) * ps, os);
    }
    if (w < hi) at(even{}, inside{}, w);
    for (w = hi; w < W; ++w) at_edge(w);
}

template <int L, int S>
RIDGE_SIMD_INLINE void dw2_row_reach(const float* const* rows, int64_t shift, const int64_t* taps, int64_t reach,
                                     int64_t ps, int64_t Q, int64_t W, int64_t pad_l, const float* wp, int64_t lanes,
                                     bool add, float* dx) {
    switch (reach) {
        case 0:
            if (!add)
                for (int64_t w = 0; w < W; ++w) store(dx + w * ps, Vec<L>{});
            return;
        case 1: return dw2_row<L, S, 1>(rows, shift, taps, ps, Q, W, pad_l, wp, lanes, add, dx);
        case 2: return dw2_row<L, S, 2>(rows, shift, taps, ps, Q, W, pad_l, wp, lanes, add, dx);
        case 3: return dw2_row<L, S, 3>(rows, shift, taps, ps, Q, W, pad_l, wp, lanes, add, dx);
        default: return dw2_row<L, S, 4>(rows, shift, taps, ps, Q, W, pad_l, wp, lanes, add, dx);
    }
}

// Rows h0 .. h1 - 1 of dx of image n, each through channel blocks cb0 .. cb1 - 1.
struct RowRun {
    int64_t n, h0, h1, cb0, cb1;
};

// The run's rows, row(rows, shift, taps, reach, wp, lanes, out) each: the dy rows p with
// stride * p + r = h + pad_t for a kernel row r, where block cb0 has them (`shift` floats on, the
// block's), and the block's weights, lanes and row of dx: the row pointers are made once a row,
// which a channels-last run takes through all its blocks.
template <int L, class Row>
RIDGE_SIMD_INLINE void dgrad_rows(const Depthwise& d, const float* dy, const float* w, float* dx, const RowRun& run,
                                  Row&& row) {
    const int64_t RS = d.R * d.S;
    const int64_t dy_step = block_row(d, L, run.n, 1, 0, d.P, d.Q) - block_row(d, L, run.n, 0, 0, d.P, d.Q);
    const int64_t dx_step = block_row(d, L, run.n, 1, 0, d.H, d.W) - block_row(d, L, run.n, 0, 0, d.H, d.W);
    for (int64_t h = run.h0; h < run.h1; ++h) {
        const float* rows[max_taps];
        int64_t taps[max_taps], reach = 0;
        const int64_t u = h + d.pad_t;
        for (int64_t r = d.stride_h == 1 ? 0 : u & 1; r < d.R && r <= u; r += d.stride_h) {
            const int64_t p = d.stride_h == 1 ? u - r : (u - r) >> 1;
            if (p < d.P) rows[reach] = dy + block_row(d, L, run.n, run.cb0, p, d.P, d.Q), taps[reach++] = r;
        }
        float* out = dx + block_row(d, L, run.n, run.cb0, h, d.H, d.W);
        for (int64_t cb = run.cb0; cb < run.cb1; ++cb) {
            const int64_t k = cb - run.cb0;
            row(rows, k * dy_step, taps, reach, w + cb * RS * L, std::min<int64_t>(L, d.C - cb * L), out + k * dx_step);
        }
    }
}

// The run at stride 1 in strips of T.
template <int L, int S, int T>
RIDGE_SIMD_INLINE void dgrad_run1(const Depthwise& d, const float* dy, const float* w, float* dx, bool add,
                                  const RowRun& run) {
    const int64_t ps = position_floats(d, L);
    dgrad_rows<L>(d, dy, w, dx, run,
                  [&](const float* const* rows, int64_t shift, const int64_t* taps, int64_t reach, const float* wp,
                      int64_t lanes, float* out) RIDGE_SIMD_LAMBDA {
                      dw1_row<L, S, T>(rows, shift, taps, reach, ps, d.W, wp, lanes, add, out);
                  });
}

template <int L, int S>
RIDGE_SIMD_INLINE void dgrad_run_strips(const Depthwise& d, int64_t T, const float* dy, const float* w, float* dx,
                                        bool add, const RowRun& run) {
    if (d.stride_h == 2) {
        const int64_t ps = position_floats(d, L);
        return dgrad_rows<L>(d, dy, w, dx, run,
                             [&](const float* const* rows, int64_t shift, const int64_t* taps, int64_t reach,
                                 const float* wp, int64_t lanes, float* out) RIDGE_SIMD_LAMBDA {
                                 dw2_row_reach<L, S>(rows, shift, taps, reach, ps, d.Q, d.W, d.pad_l, wp, lanes, add,
                                                     out);
                             });
    }
    switch (T) {
        case 1: return dgrad_run1<L, S, 1>(d, dy, w, dx, add, run);
        case 2: return dgrad_run1<L, S, 2>(d, dy, w, dx, add, run);
        case 3: return dgrad_run1<L, S, 3>(d, dy, w, dx, add, run);
        case 4: return dgrad_run1<L, S, 4>(d, dy, w, dx, add, run);
        case 5: return dgrad_run1<L, S, 5>(d, dy, w, dx, add, run);
        case 6: return dgrad_run1<L, S, 6>(d, dy, w, dx, add, run);
        case 7: return dgrad_run1<L, S, 7>(d, dy, w, dx, add, run);
        default: return dgrad_run1<L, S, 8>(d, dy, w, dx, add, run);
    }
}

template <int L>
RIDGE_SIMD_INLINE void dgrad_run_any(const Depthwise& d, int64_t T, const float* dy, const float* w, float* dx,
                                     bool add, const RowRun& run) {
    if (d.S == 3) return dgrad_run_strips<L, 3>(d, T, dy, w, dx, add, run);
    if (d.S == 5) return dgrad_run_strips<L, 5>(d, T, dy, w, dx, add, run);
    dgrad_run_strips<L, 7>(d, T, dy, w, dx, add, run);
}

RIDGE_SIMD_LEAF void dgrad_run16(const Depthwise& d, int64_t T, const float* dy, const float* w, float* dx, bool add,
                                 const RowRun& run) {
    dgrad_run_any<16>(d, T, dy, w, dx, add, run);
}

RIDGE_SIMD_LEAF void dgrad_run8(const Depthwise& d, int64_t T, const float* dy, const float* w, float* dx, bool add,
                                const RowRun& run) {
    dgrad_run_any<8>(d, T, dy, w, dx, add, run);
}

// The strip of dw1_row: the row where it is 8 wide or less, else the one of 5 to 8 that redoes
// the fewest positions (ties to the longer), no wider than W - S / 2. 8 at most: a strip's T
// accumulators, S taps and an input fill at most 16 registers, AVX2's count, with 8 lanes.
int64_t dgrad_strip(const Depthwise& d) {
    if (d.W <= 8) return d.W;
    auto redone = [&](int64_t t) { return t > d.W - d.S / 2 ? d.W : (d.W + t - 1) / t * t - d.W; };
    int64_t best = 8;
    for (int64_t t = 7; t >= 5; --t)
        if (redone(t) < redone(best)) best = t;
    return best;
}

// ---- grouped 3x3 conv, groups of 4 channels ----

// A 16-lane vector holds 4 groups of 4 channels at one position. Output channel k of a group reads
// that group's 4 input channels, so each of them is spread over its group's 4 lanes (an in-lane
// shuffle) and multiplied by a vector of weights, one per output lane. Below AVX-512 the vectors
// are 8 lanes, two groups (GCC keeps 16-lane accumulators on AVX2 in memory, vec.h says why); a
// group is then a 128-bit half, which the shuffle stays within.
using V16 = Vec<16>;
typedef int32_t Lanes __attribute__((vector_size(64)));
typedef int32_t Lanes8 __attribute__((vector_size(32)));

template <int c>
RIDGE_SIMD_INLINE V16 spread(V16 v) {
    return __builtin_shuffle(v, Lanes{c, c, c, c, 4 + c, 4 + c, 4 + c, 4 + c, 8 + c, 8 + c, 8 + c, 8 + c, 12 + c,
                                      12 + c, 12 + c, 12 + c});
}
template <int c>
RIDGE_SIMD_INLINE Vec8 spread(Vec8 v) {
    return __builtin_shuffle(v, Lanes8{c, c, c, c, 4 + c, 4 + c, 4 + c, 4 + c});
}

template <class V>
RIDGE_SIMD_INLINE V spread_at(V v, int c) {
    switch (c) {
        case 0:
            return spread<0>(v);
        case 1:
            return spread<1>(v);
        case 2:
            return spread<2>(v);
        default:
            return spread<3>(v);
    }
}

// ReLU with a NaN giving 0, as the reference takes it. 16 lanes on the bits (vec.h's select says
// why): a lane is cleared where its sign bit is set or it is a NaN; 8 lanes a compare and ?:,
// one instruction each, NaN > 0 being false.
RIDGE_SIMD_INLINE V16 relu_of(V16 a) {
    const VI b = bits(a), clear = (b >> 31) | nan_lanes(a);
    return floats(b & ~clear);
}
RIDGE_SIMD_INLINE Vec8 relu_of(Vec8 a) { return a > 0 ? a : Vec8{}; }

constexpr int64_t strip4 = 8;  // output positions of a row held in registers

// One block of 16 output channels along `count` (at most strip) positions of an output row from
// q0: rows[r] the input row that kernel row r reads (null in the padding), positions `ps` floats
// apart, wp the block's packed weights (3x3 taps, 4 input channels, 16 lanes), bias its 16 (or
// null). Each input position is loaded and spread once and added into every output of the strip
// it reaches; those outside the map read zeros (the padding).
// V: V16, or Vec8 for 8 of a block's 16 output channels (wp and bias then start at the 8, and a
// tap's weights for an input channel are still 16 floats on).
template <int stride, class V>
RIDGE_SIMD_INLINE void grouped4_strip_fixed(const float* const* rows, int64_t ps, int64_t q0, int64_t W,
                                            const float* wp, const float* bias, bool relu, float* y, int64_t count) {
    constexpr int strip = strip4;
    V acc[strip];
    for (auto& a : acc) a = bias ? load<V>(bias) : V{};
    const int64_t w0 = q0 * stride - 1;
    for (int r = 0; r < 3; ++r) {
        if (!rows[r]) continue;
#pragma GCC unroll 17
        for (int j = 0; j < stride * (strip - 1) + 3; ++j) {
            const int64_t w = w0 + j;
            const V v = w >= 0 && w < W ? load<V>(rows[r] + w * ps) : V{};
            const V p0 = spread<0>(v), p1 = spread<1>(v), p2 = spread<2>(v), p3 = spread<3>(v);
#pragma GCC unroll 3
            for (int s = 0; s < 3; ++s) {
                const int d = j - s;  // input w reaches output q0 + t where w = (q0 + t) * stride - 1 + s
                if (d < 0 || d % stride != 0 || d / stride >= strip) continue;
                const float* k = wp + (r * 3 + s) * 64;
                acc[d / stride] +=
                    load<V>(k) * p0 + load<V>(k + 16) * p1 + load<V>(k + 32) * p2 + load<V>(k + 48) * p3;
            }
        }
    }
    for (int64_t t = 0; t < count; ++t) store(y + t * ps, relu ? relu_of(acc[t]) : acc[t]);
}

// Groups of 8 channels: one group's 8 output channels in an 8-lane vector, so each input channel
// is a scalar broadcast from memory (a load, no shuffle) into an FMA with one of the tap's 8 weight
// vectors, which stay in registers across the strip's outputs. The 16-lane spread that groups of 4
// take crosses 128-bit lanes here and cost as much as the FMAs. 16 outputs a strip: 16
// accumulators and 8 weights of the 32 registers AVX-512 has, 8 lanes an FMA at Zen 4's rate of
// 16-lane ones (two 256-bit pipes).
constexpr int64_t strip8 = 16;

// One group of 8 output channels along `count` (at most strip8) positions of an output row from
// q0: rows[r] the group's first channel in the input row kernel row r reads (null in the padding),
// wp the group's packed weights (for each tap and input channel its 8 output lanes, the next
// input channel's 16 floats on), bias its 8 (or null), y the group's first output channel.
// Positions outside the map read `zeros`, 8 of them, which come from the caller: with zeros the
// compiler can see, it picks each scalar by a branch and broadcasts it from a register (a
// shuffle) instead of from memory.
template <int stride>
RIDGE_SIMD_INLINE void grouped8_strip_fixed(const float* const* rows, int64_t ps, int64_t q0, int64_t W,
                                            const float* wp, const float* bias, bool relu, float* y, int64_t count,
                                            const float* zeros) {
    using V8 = Vec<8>;
    V8 acc[strip8];
    for (auto& a : acc) a = bias ? load<V8>(bias) : V8{};
    const int64_t w0 = q0 * stride - 1;
    for (int r = 0; r < 3; ++r) {
        if (!rows[r]) continue;
        for (int s = 0; s < 3; ++s) {
            V8 tap[8];  // the weights of tap (r, s), one vector per input channel
            for (int c = 0; c < 8; ++c) tap[c] = load<V8>(wp + ((r * 3 + s) * 8 + c) * 16);
#pragma GCC unroll 16
            for (int q = 0; q < strip8; ++q) {
                const int64_t w = w0 + q * stride + s;
                const float* v = w >= 0 && w < W ? rows[r] + w * ps : zeros;
                V8 sum = acc[q];
#pragma GCC unroll 8
                for (int c = 0; c < 8; ++c) sum += tap[c] * v[c];
                acc[q] = sum;
            }
        }
    }
    // An 8-lane compare and ?: is one instruction each in the AVX-512 and AVX2 builds (vec.h's
    // select is for 16 lanes, which AVX2 splits); NaN > 0 is false, so NaN gives 0 as the reference.
    for (int64_t q = 0; q < count; ++q) {
        const V8 a = acc[q];
        store(y + q * ps, relu ? (a > 0 ? a : V8{}) : a);
    }
}

// One strip of either kernel, by the group's width, the stride and the lanes of groups of 4 (zeros:
// groups of 8 only).
RIDGE_SIMD_LEAF void grouped_strip(const float* const* rows, int64_t ps, int64_t q0, int64_t W, const float* wp,
                                   const float* bias, bool relu, float* y, int64_t count, int64_t stride, int64_t width,
                                   int64_t lanes, const float* zeros) {
    if (width == 4 && lanes == 8) {
        if (stride == 1) return grouped4_strip_fixed<1, Vec8>(rows, ps, q0, W, wp, bias, relu, y, count);
        return grouped4_strip_fixed<2, Vec8>(rows, ps, q0, W, wp, bias, relu, y, count);
    }
    if (width == 4) {
        if (stride == 1) return grouped4_strip_fixed<1, V16>(rows, ps, q0, W, wp, bias, relu, y, count);
        return grouped4_strip_fixed<2, V16>(rows, ps, q0, W, wp, bias, relu, y, count);
    }
    grouped8_strip_fixed<2>(rows, ps, q0, W, wp, bias, relu, y, count, zeros);  // stride 1 runs a planar form
}

// One image's share of a block's weight gradient at stride 1, where the output map is the input's:
// acc[r][s][c] (16 output lanes each) += dy[p][q] * spread<c>(x[p + r - 1][q + s - 1]) over every
// output position. A kernel row at a time keeps its 12 sums in registers; each input position is
// loaded and spread once and meets the three outputs q = w + 1 - s it reaches. `ps` floats between
// positions (8, 16 or C), H rows of W.
// V: V16, or Vec8 for 8 of the block's 16 lanes (x, dy and acc then start at the 8). One spread at
// a time, dy read by the FMAs from memory: in the AVX2 build the 12 8-lane sums, the input and a
// spread then fit the 16 registers. With the four spreads made first, one sum lived on the stack:
// 8x128x56x56 in nChw8c on the 2-core Zen 3 took 3.4-3.8 ms against 2.3-2.6. (With 32 registers
// the AVX-512 build loads the three dy vectors once a position either way.) The row's two end
// positions, which meet one neighbour each, are peeled off, so the loop between has no branch and
// an infinite input there meets no made-up zero (0 * inf would be a NaN the reference lacks).
template <class V, bool left, bool right>
RIDGE_SIMD_INLINE void grouped4_wgrad_position(const float* x, const float* dy, int64_t ps, V (&a)[3][4]) {
    const V v = load<V>(x);
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) {
        const V sp = spread_at(v, c);
        a[1][c] += load<V>(dy) * sp;
        if (right) a[0][c] += load<V>(dy + ps) * sp;
        if (left) a[2][c] += load<V>(dy - ps) * sp;
    }
}

template <class V>
RIDGE_SIMD_INLINE void grouped4_wgrad_lanes(const float* x, const float* dy, float* acc, int64_t H, int64_t W,
                                            int64_t ps) {
    for (int r = 0; r < 3; ++r) {
        V a[3][4];
        for (int s = 0; s < 3; ++s)
            for (int c = 0; c < 4; ++c) a[s][c] = load<V>(acc + ((r * 3 + s) * 4 + c) * 16);
        for (int64_t p = 0; p < H; ++p) {
            const int64_t h = p + r - 1;
            if (h < 0 || h >= H) continue;
            const float *xr = x + h * W * ps, *g = dy + p * W * ps;
            if (W == 1) {
                grouped4_wgrad_position<V, false, false>(xr, g, ps, a);
                continue;
            }
            grouped4_wgrad_position<V, false, true>(xr, g, ps, a);
            for (int64_t w = 1; w + 1 < W; ++w) grouped4_wgrad_position<V, true, true>(xr + w * ps, g + w * ps, ps, a);
            grouped4_wgrad_position<V, true, false>(xr + (W - 1) * ps, g + (W - 1) * ps, ps, a);
        }
        for (int s = 0; s < 3; ++s)
            for (int c = 0; c < 4; ++c) store(acc + ((r * 3 + s) * 4 + c) * 16, a[s][c]);
    }
}

RIDGE_SIMD_LEAF void grouped4_wgrad_image(const float* x, const float* dy, float* acc, int64_t H, int64_t W, int64_t ps,
                                          int64_t lanes) {
    if (lanes == 16) return grouped4_wgrad_lanes<V16>(x, dy, acc, H, W, ps);
    grouped4_wgrad_lanes<Vec8>(x, dy, acc, H, W, ps);
}

// The gradients of groups of 8 at stride 2, where the output positions (p, q) meet the input at
// (2p - 1 + r, 2q - 1 + s).
//
// dx at one strip of `count` (at most strip8) positions of input row h from w0, even, for one group
// of 8 channels: dx[c][h][w] = the sum over k, r, s of w[k][c][r][s] dy[k][p][q] where
// 2p - 1 + r = h and 2q - 1 + s = w. rows[r] is the group's first channel in dy's row p for kernel
// row r (null where p is not a whole row of dy), wp the group's weights packed as the forward's with
// input and output channels exchanged ([r][s][k], for each its 8 input-channel lanes, the next k's
// 16 floats on); zeros as the forward's. With w0 even, a tap meets every other position of the
// strip, half of the 9 x 16 pairs, as half the positions of a row lie between two of dy's. (With
// the taps unrolled, or the odd positions fed by both of their taps from each dy value in turn, the
// compiler spilled sums and broadcasts to the stack: 1.2x slower on 8x48x112x112.)
RIDGE_SIMD_LEAF void grouped8_dgrad_strip(const float* const* rows, int64_t ps, int64_t w0, int64_t Q, const float* wp,
                                          float* dx, int64_t count, const float* zeros) {
    using V8 = Vec<8>;
    V8 acc[strip8] = {};
    for (int r = 0; r < 3; ++r) {
        if (!rows[r]) continue;
        for (int s = 0; s < 3; ++s) {
            V8 tap[8];
            for (int k = 0; k < 8; ++k) tap[k] = load<V8>(wp + ((r * 3 + s) * 8 + k) * 16);
#pragma GCC unroll 16
            for (int t = 0; t < strip8; ++t) {
                if ((t + 1 - s) % 2 != 0) continue;
                const int64_t q2 = w0 + t + 1 - s, q = q2 / 2;  // q2 = 2q
                const float* v = q2 >= 0 && q < Q ? rows[r] + q * ps : zeros;
                V8 sum = acc[t];
#pragma GCC unroll 8
                for (int k = 0; k < 8; ++k) sum += tap[k] * v[k];
                acc[t] = sum;
            }
        }
    }
    for (int64_t t = 0; t < count; ++t) store(dx + t * ps, acc[t]);
}

// One image's share of a block's weight gradient, both groups: acc[r][s][k][lane] += x[c][2p - 1 +
// r][2q - 1 + s] dy[k][p][q] over every output position, lane the input channel c of output
// channel k's group (lanes 0-7 the block's first group, 8-15 its second). For each output row, a
// kernel row and a group at a time: 24 8-lane sums in registers, and at each output position the
// three input positions it meets loaded once as vectors and each of its 8 dy values broadcast once
// into 3 FMAs. Broadcasting the input instead (8 channels at each of the 3 positions, one per FMA)
// and running the whole image per kernel row and group, which read the input 6 times over, it took
// 1.9-2.9 ms for 8x48x112x112 on the 2-core Zen 4 where this took 1.1-2.0, 0.56x-0.71x of it in
// each of 13 runs (the two alternated in one process; the host's speed varied between runs).
RIDGE_SIMD_LEAF void grouped8_wgrad_image(const float* x, const float* dy, float* acc, const GroupedConv3x3& d) {
    using V8 = Vec<8>;
    const int64_t ps = d.block;
    const float zeros[8] = {};
    for (int64_t p = 0; p < d.P; ++p)
        for (int r = 0; r < 3; ++r) {
            const int64_t h = 2 * p - 1 + r;
            if (h < 0 || h >= d.H) continue;
            for (int64_t g = 0; g < 16; g += 8) {
                const float *xr = x + h * d.W * ps + g, *gr = dy + p * d.Q * ps + g;
                V8 a[3][8];
#pragma GCC unroll 3
                for (int s = 0; s < 3; ++s)
#pragma GCC unroll 8
                    for (int k = 0; k < 8; ++k) a[s][k] = load<V8>(acc + ((r * 3 + s) * 8 + k) * 16 + g);
                // The next output row's new input rows (2p + 2 and 2p + 3 where the map has them), as
                // the forward's (grouped_run), once.
                const int64_t ahead =
                    r == 1 && g == 0 ? std::min<int64_t>(2, std::max<int64_t>(0, d.H - 2 * p - 2)) : 0;
                const float* next = ahead ? x + (2 * p + 2) * d.W * ps : x;  // past the map on the last rows
                for (int64_t q = 0; q < d.Q; ++q) {
                    for (int64_t w = 2 * q; w < std::min(2 * q + 2, d.W); ++w)
                        for (int64_t i = 0; i < ahead; ++i) __builtin_prefetch(next + (i * d.W + w) * ps, 0, 1);
                    V8 v[3];
#pragma GCC unroll 3
                    for (int s = 0; s < 3; ++s) {
                        const int64_t w = 2 * q - 1 + s;
                        v[s] = load<V8>(w >= 0 && w < d.W ? xr + w * ps : zeros);
                    }
                    const float* e = gr + q * ps;
#pragma GCC unroll 8
                    for (int k = 0; k < 8; ++k)
#pragma GCC unroll 3
                        for (int s = 0; s < 3; ++s) a[s][k] += v[s] * e[k];
                }
#pragma GCC unroll 3
                for (int s = 0; s < 3; ++s)
#pragma GCC unroll 8
                    for (int k = 0; k < 8; ++k) store(acc + ((r * 3 + s) * 8 + k) * 16 + g, a[s][k]);
            }
        }
}

// Position (n, h, w) of channel c (a multiple of 8) in a map of H x W: channel-blocked by 8 or 16
// or channels-last alike; an image holds C rounded up to whole blocks.
inline int64_t grouped_at(const GroupedConv3x3& d, int64_t n, int64_t c, int64_t h, int64_t w, int64_t H, int64_t W) {
    const int64_t Cp = (d.C + d.block - 1) / d.block * d.block;
    return (n * Cp + c / d.block * d.block) * H * W + (h * W + w) * d.block + c % d.block;
}

// The lanes groups of 4 take: 16 where the host runs AVX-512 and the layout's blocks hold 16
// (nChw16c, channels-last), else 8.
int64_t grouped4_lanes(const GroupedConv3x3& d) { return d.block != 8 && wide_vectors() ? 16 : 8; }

// Blocks of 16 channels are independent; with fewer than twice the threads, the images are split
// into chunks as well (as depthwise_wgrad's).
int64_t grouped_chunks(const GroupedConv3x3& d, int threads) {
    const int64_t blocks = d.C / 16;
    if (blocks >= 2 * threads) return 1;
    return std::min(d.N, (2 * threads + blocks - 1) / blocks);
}

// A grouped conv's weight gradient, in units of one block and one chunk of images, each summing
// into its own `per` floats of scratch: image(n, j, acc) adds image n's share of block j into acc.
// The chunks of a block are then added in order, and the sum of element i of block j goes to
// dw[place(j, i)].
template <class Image, class Place>
void grouped_wgrad_run(float* dw, float* scratch, const GroupedConv3x3& d, int threads, int64_t per, Image image,
                       Place place) {
    const int64_t blocks = d.C / 16, NC = grouped_chunks(d, threads);
    for_units(blocks * NC, threads, [&](int64_t u) {
        const int64_t j = u / NC, k = u % NC;
        float* acc = scratch + u * per;
        std::fill(acc, acc + per, 0.0f);
        for (int64_t n = d.N * k / NC; n < d.N * (k + 1) / NC; ++n) image(n, j, acc);
    });
    for_units(blocks, threads, [&](int64_t j) {
        for (int64_t i = 0; i < per; ++i) {
            float sum = 0;
            for (int64_t k = 0; k < NC; ++k) sum += scratch[(j * NC + k) * per + i];
            dw[place(j, i)] = sum;
        }
    });
}

// ---- grouped 3x3 conv below AVX-512: output positions as lanes ----

// Below AVX-512 a block of 8 channels (one group of 8, or two groups of 4) runs on a planar copy of
// its input rows, each channel's row contiguous, so that a vector holds 8 neighbouring output
// positions of one output channel. Each weight is then broadcast once for two position vectors,
// and each input vector loaded once for 4 output channels: 8 independent sums, where the forms
// above broadcast an input scalar (groups of 8) or spread it by a shuffle (groups of 4) for every
// FMA. On the 2-core Zen 3 the groups of 8 that way ran slower than oneDNN's jit:avx2
// (bench/runs/README.md); in a test program this form's sums ran 65 to 70 GFLOP/s on one core, the
// broadcast-per-FMA loop 33.
// A unit of work is one image's block over up to planar_rows output rows: its input rows are
// transposed into the copy 8x8 at a time, the outputs summed into planar rows, and those
// transposed back into y's layout with the bias and ReLU.
constexpr int64_t planar_rows = 16;

// The planar copy of one unit (stride 1: P = H, Q = W). Plane rows hold the padded positions
// u = w + 1 (0 and those past W are the padding's zeros). Input rows are copied 8 positions at a
// time, the last 8 reaching past W with zeros, so a row holds at least W rounded up to 8, plus 1.
struct Planar {
    int64_t Qp;       // output positions a row computes: Q rounded up to the tile's vectors
    int64_t L;        // floats of a plane row
    int64_t rows_in;  // input rows of a unit
    int64_t channel() const { return rows_in * L + 8; }  // + 8: planar_fill's last zeros
    int64_t out_channel() const { return planar_rows * Qp; }
    int64_t floats() const { return 8 * (channel() + out_channel()); }
};

Planar planar_of(const GroupedConv3x3& d) {
    Planar s;
    s.Qp = (d.Q + 7) / 8 * 8;
    s.L = std::max(s.Qp + 2, (d.W + 7) / 8 * 8 + 1);
    s.rows_in = planar_rows + 2;
    return s;
}

// Zeros over n floats from p, 8 at a time: up to 7 more past n. A std::fill of a few floats was a
// call to memset, two a plane row, 8 planes and 18 rows a unit: 208 channels at 14x14, 8 images,
// two threads took 0.80 ms with them and 0.70 with these stores.
RIDGE_SIMD_INLINE void zeros_from(float* p, int64_t n) {
    for (int64_t i = 0; i < n; i += 8) store(p + i, Vec8{});
}

// Input row `src` (8 channels at each of W positions, `ps` floats apart; null: a padding row) into
// the planes' row at dst, channel c's at dst + c * cs: 8 positions at a time, transposed, the last
// 8 read as far as W and zero past it.
RIDGE_SIMD_INLINE void planar_fill(const float* src, int64_t ps, int64_t W, float* dst, int64_t cs, int64_t L) {
    // Each row's zeros may run 7 floats into the next row (or the plane's slack), which that row
    // then writes: the rows are filled in order.
    const int64_t W8 = (W + 7) / 8 * 8;
    for (int c = 0; c < 8; ++c) {
        float* row = dst + c * cs;
        if (!src) {
            zeros_from(row, L);
        } else {
            row[0] = 0.0f;
            zeros_from(row + W8 + 1, L - W8 - 1);
        }
    }
    if (!src) return;
    for (int64_t w = 0; w < W; w += 8) {
        Vec8 r[8];
        for (int i = 0; i < 8; ++i) r[i] = w + i < W ? load<Vec8>(src + (w + i) * ps) : Vec8{};
        transpose8(r);
        for (int c = 0; c < 8; ++c) store(dst + c * cs + w + 1, r[c]);
    }
}

// Output channels k0..k0+3 of the unit's block (w their weights, G input channels each, which
// are the planes from `plane`) over RT output rows from i0 and VQ vectors of positions from q0,
// into the planar outputs yt (channel k's rows at yt + k * s.out_channel()).
template <int G, int RT, int VQ>
RIDGE_SIMD_INLINE void planar_tile(const float* plane, const Planar& s, const float* w, int64_t i0, int64_t q0,
                                   float* yt) {
    Vec8 acc[RT][VQ][4] = {};
    for (int c = 0; c < G; ++c)
        for (int r = 0; r < 3; ++r)
            for (int t = 0; t < 3; ++t) {
                Vec8 xv[RT][VQ];  // tap (r, t) of output position (p, q) reads row p + r at u = q + t
                for (int i = 0; i < RT; ++i)
                    for (int v = 0; v < VQ; ++v)
                        xv[i][v] = load<Vec8>(plane + c * s.channel() + (i0 + i + r) * s.L + q0 + t + 8 * v);
                for (int k = 0; k < 4; ++k) {
                    const float wk = w[(k * G + c) * 9 + r * 3 + t];
                    for (int i = 0; i < RT; ++i)
                        for (int v = 0; v < VQ; ++v) acc[i][v][k] += wk * xv[i][v];
                }
            }
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < RT; ++i)
            for (int v = 0; v < VQ; ++v) store(yt + k * s.out_channel() + (i0 + i) * s.Qp + q0 + 8 * v, acc[i][v][k]);
}

// The unit's output rows, 4 output channels at a time: two vectors of a row where Qp is a multiple
// of 16, else (maps of 8 positions, and 56 as resnext50's layer1) one vector of two rows, so a row
// of 56 computes 56 positions, not 64. On the 2-core Zen 3 (2 threads, 20 to 60 alternated calls),
// 8x128x56x56 in groups of 4 took 0.93-0.94 of the time of two vectors of a row over 64 positions
// in nChw8c (0.90 at batch 16, 0.94-0.95 at batch 1, 0.96-0.99 channels-last). 14x14 and 28x28
// (Qp 16 and 32) keep the pair of vectors: the two rows' tiles there ran 1.02 times slower in a
// first try.
template <int G>
RIDGE_SIMD_INLINE void planar_sums(const float* plane, const Planar& s, const float* w, int64_t rows, float* yt) {
    for (int64_t kb = 0; kb < 2; ++kb) {
        const float* in = plane + (G == 4 ? 4 * kb : 0) * s.channel();  // a group of 4 reads its own 4
        const float* wk = w + 4 * kb * G * 9;
        float* out = yt + 4 * kb * s.out_channel();
        if (s.Qp % 16 != 0) {
            int64_t i = 0;
            for (; i + 2 <= rows; i += 2)
                for (int64_t q0 = 0; q0 < s.Qp; q0 += 8) planar_tile<G, 2, 1>(in, s, wk, i, q0, out);
            if (i < rows)
                for (int64_t q0 = 0; q0 < s.Qp; q0 += 8) planar_tile<G, 1, 1>(in, s, wk, i, q0, out);
        } else {
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t q0 = 0; q0 < s.Qp; q0 += 16) planar_tile<G, 1, 2>(in, s, wk, i, q0, out);
        }
    }
}

// One output row of 8 channels from planar sums (channel c's Q positions at sums + c * cs, read 8 at
// a time, up to 7 past Q) into y's layout at out (positions ps floats apart), with the bias and the
// ReLU; pad: zeros into the 8 lanes after the channels too (a last nChw16c block half padding).
RIDGE_SIMD_INLINE void planar_row_out(const float* sums, int64_t cs, int64_t Q, Vec8 bias, bool relu, float* out,
                                      int64_t ps, bool pad) {
    for (int64_t q = 0; q < Q; q += 8) {
        Vec8 r[8];
        for (int c = 0; c < 8; ++c) r[c] = load<Vec8>(sums + c * cs + q);
        transpose8(r);
        for (int j = 0; j < 8 && q + j < Q; ++j) {
            const Vec8 v = r[j] + bias;
            store(out + (q + j) * ps, relu ? (v > 0 ? v : Vec8{}) : v);  // NaN > 0 is false: 0
            if (pad) store(out + (q + j) * ps + 8, Vec8{});
        }
    }
}

// One unit: image n, channels c0..c0+7, output rows p0..p0+rows-1; buf: Planar::floats().
RIDGE_SIMD_LEAF void planar_unit(const float* x, const float* w, const float* b, bool relu, float* y,
                                 const GroupedConv3x3& d, int64_t n, int64_t c0, int64_t p0, int64_t rows, float* buf) {
    const Planar s = planar_of(d);
    float* plane = buf;
    float* yt = buf + 8 * s.channel();
    for (int64_t i = 0; i < rows + 2; ++i) {
        const int64_t h = p0 - 1 + i;
        const float* src = h >= 0 && h < d.H ? x + grouped_at(d, n, c0, h, 0, d.H, d.W) : nullptr;
        planar_fill(src, d.block, d.W, plane + i * s.L, s.channel(), s.L);
    }
    const float* wg = w + c0 * d.width * 9;  // (C, width, 3, 3): the block's output channels
    if (d.width == 4)
        planar_sums<4>(plane, s, wg, rows, yt);
    else
        planar_sums<8>(plane, s, wg, rows, yt);

    const Vec8 bias = b ? load<Vec8>(b + c0) : Vec8{};
    for (int64_t i = 0; i < rows; ++i)  // Qp holds Q rounded up to 8
        planar_row_out(yt + i * s.Qp, s.out_channel(), d.Q, bias, relu, y + grouped_at(d, n, c0, p0 + i, 0, d.P, d.Q),
                       d.block, false);
}

// Whether the planar form runs: below AVX-512 (where the channel-vector forms' 8-lane variants are
// the slow ones) at stride 1. At stride 2 (the copy split into even and odd positions) it cost
// four input positions an output to copy, and on the 2-core Zen 3 it was slower than the forms
// above: regnet_y_400mf's block1-0 at batch 1 0.33 against 0.30 ms, block3-0 0.114 against 0.102.
bool planar_here(const GroupedConv3x3& d) { return !wide_vectors() && d.stride == 1; }

void planar_run(const float* x, const float* w, const float* b, bool relu, float* y, const GroupedConv3x3& d,
                float* scratch, int threads) {
    const int64_t per = planar_of(d).floats(), blocks = d.C / 8, chunks = (d.P + planar_rows - 1) / planar_rows;
#pragma omp parallel num_threads(threads)
    {
        float* buf = scratch + omp_get_thread_num() * per;
#pragma omp for schedule(static)
        for (int64_t u = 0; u < d.N * blocks * chunks; ++u) {
            const int64_t n = u / (blocks * chunks), j = u / chunks % blocks, p0 = u % chunks * planar_rows;
            planar_unit(x, w, b, relu, y, d, n, 8 * j, p0, std::min(planar_rows, d.P - p0), buf);
        }
    }
}

// ---- grouped 3x3 conv with AVX-512: output positions as 16 lanes, rows run together ----
//
// With AVX-512 the forms above hold a group of 8 in 8-lane vectors, half an FMA's width, and
// oneDNN 2.6's kernels for groups of 8 to 24 ran at 4 to 7 times their bound on the 2-core Zen 5
// (regnet_x_1_6gf's groups of 24, regnet_y_400mf's and resnext50's stride-2 convs). This form is
// the planar one's with 16 lanes, for groups of a multiple of 8 channels. A unit, one image's
// group over up to `rows` output rows, copies its input into planes, channel by channel; at stride
// 2 into four phase planes (odd and even rows by odd and even columns), so that every tap reads
// contiguous positions. A plane row holds L = W + 2 (stride 1) or Q + 1 (stride 2) positions, the
// padding's included, and output positions are numbered across rows the same way (f = i L + q),
// so a vector runs on into the next row: a 7-wide map fills its vectors nearly as well as a
// 56-wide one, at the cost of computing the padding's 1 or 2 columns. Plane row j holds input row
// stride (p0 + j) + e and its column u input column stride u + e, e -1 (stride 1, and stride 2's
// odd planes) or 0 (stride 2's even planes): tap (r, s) of output (i, q) then reads its plane at f
// plus an offset (stride 1: r L + s; stride 2: L where r = 2, 1 where s = 2).
struct Wide {
    int64_t G = 0;       // channels a group
    int64_t stride = 1;  // 1 or 2
    int64_t L = 0;       // floats of a plane row
    int64_t rows = 0;    // output rows of a unit (an image's last unit may have fewer)
    int64_t F = 0;       // output positions of a unit: rows L rounded up to 16
    int64_t planes() const { return stride == 1 ? 1 : 4; }
    // The farthest a tap reads past an output position, and 8 for the copy's and zeros' overrun.
    int64_t plane() const { return F + (stride == 1 ? 2 * L + 2 : L + 1) + 8; }
    int64_t rows_in(int64_t rows_out) const { return rows_out + (stride == 1 ? 2 : 1); }
    int64_t floats() const { return G * (planes() * plane() + F) + 16; }  // + 16: the epilogue's overrun
};

// About 768 output positions a unit (48 vectors), in as many units an image as that takes,
// balanced: a group of 24 at stride 2 on a 112-wide map then holds 24 x 4 planes of 754 floats
// (290 KB, in L2), while what a tile reads of a plane, 64 floats and its taps' reach (2L + 2, or
// L + 1 at stride 2), stays in L1.
Wide wide_of(const GroupedConv3x3& d) {
    Wide s;
    s.G = d.width;
    s.stride = d.stride;
    s.L = d.stride == 1 ? d.W + 2 : d.Q + 1;
    const int64_t chunks = std::max<int64_t>(1, (d.P * s.L + 767) / 768);
    s.rows = (d.P + chunks - 1) / chunks;
    s.F = (s.rows * s.L + 15) / 16 * 16;
    return s;
}

// Whether the 16-lane planar form runs: with AVX-512, for groups of 16, 24 ... channels, and
// groups of 8 at stride 1. Groups of 8 at stride 2 keep the strip form above: this form took 6.7
// to 8.7 ms for 16x256x56x56 (resnext50's layer2.0) against its 4.3 to 5.3 (2 threads, the 2-core
// Zen 5). There each input value meets only 18 products, so the copy costs as much as the sums, and
// more than its own time: copy and sums took 2.5 and 1.9 ms apart and 6.3 together (2.0 more where
// the sums read planes another copy had written). Why was not found.
bool wide_here(const GroupedConv3x3& d) {
    return wide_vectors() && d.width >= 8 && d.width % 8 == 0 && (d.width > 8 || d.stride == 1);
}

// The unit's planes (channel c's plane k at planes + c * cs + k * P) from image n's channels c0..c0
// + G - 1, input row by input row, each read once for all of the planes it goes to: at stride 2
// row h = 2 (p0 + j) - 1 is row j of the odd-row planes (k = 0, 1), h = 2 (p0 + j) row j of the
// even-row ones (k = 2, 3). Column u of a plane holds input column stride u + e (e -1 for the
// odd-column planes k = 0, 2, and at stride 1; 0 for k = 1, 3), 8 columns a transpose, zeros
// outside the map. A row's last transpose writes up to 7 zeros past it, into the rows after it,
// which are filled after it, or the plane's slack.
RIDGE_SIMD_INLINE void wide_fill(const float* x, const GroupedConv3x3& d, const Wide& s, int64_t n, int64_t c0,
                                 int64_t p0, int64_t rows_in, float* planes, int64_t cs, int64_t P) {
    // Locals: the stores below are memcpys, which may alias d and s, and would reload them.
    const int64_t L = s.L, st = s.stride, W = d.W, H = d.H, ps = d.block, G = s.G;
    const int64_t h0 = st * p0 - 1, rows = st * rows_in;
    for (int64_t t = 0; t < rows; ++t) {
        const int64_t h = h0 + t, j = t / st, k0 = st == 1 ? 0 : t % 2 * 2;
        for (int64_t e = -1; e < st - 1; ++e) {
            float* row = planes + (k0 + e + 1) * P + j * L;
            const int64_t u_lo = e < 0 ? 1 : 0;  // from u_lo on, st u + e >= 0
            for (int64_t c8 = 0; c8 < G; c8 += 8) {
                float* dst = row + c8 * cs;
                if (h < 0 || h >= H) {
                    for (int c = 0; c < 8; ++c) zeros_from(dst + c * cs, L);
                    continue;
                }
                const float* src = x + grouped_at(d, n, c0 + c8, h, 0, H, W);
                for (int64_t u0 = 0; u0 < L; u0 += 8) {
                    Vec8 r[8];
                    if (u0 >= u_lo && st * (u0 + 7) + e < W) {
                        const float* at = src + (st * u0 + e) * ps;
                        for (int i = 0; i < 8; ++i) r[i] = load<Vec8>(at + i * st * ps);
                    } else {
                        for (int i = 0; i < 8; ++i) {
                            const int64_t w = st * (u0 + i) + e;
                            r[i] = w >= 0 && w < W ? load<Vec8>(src + w * ps) : Vec8{};
                        }
                    }
                    transpose8(r);
                    for (int c = 0; c < 8; ++c) store(dst + c * cs + u0, r[c]);
                }
            }
        }
    }
}

// Output channels k0..k0 + 3 of the unit's group at VQ vectors of positions from f0, into yt
// (channel k's F sums at yt + k F): wk their weights, PyTorch's (4, G, 3, 3); tap[t] where tap t
// reads channel 0's planes, cs floats on for each next channel. Each position vector is loaded
// once for 4 channels and each weight broadcast once for VQ vectors: 4 VQ independent sums.
template <int VQ>
RIDGE_SIMD_INLINE void wide_tile(const float* planes, const int64_t (&tap)[9], int64_t cs, int64_t G, const float* wk,
                                 int64_t f0, float* yt, int64_t F) {
    V16 acc[VQ][4] = {};
    for (int64_t c = 0; c < G; ++c) {
        const float* in = planes + c * cs + f0;
        const float* wc = wk + c * 9;
#pragma GCC unroll 9
        for (int t = 0; t < 9; ++t) {
            V16 xv[VQ];
            for (int v = 0; v < VQ; ++v) xv[v] = load<V16>(in + tap[t] + 16 * v);
            for (int k = 0; k < 4; ++k) {
                const float wt = wc[k * G * 9 + t];
                for (int v = 0; v < VQ; ++v) acc[v][k] += wt * xv[v];
            }
        }
    }
    for (int k = 0; k < 4; ++k)
        for (int v = 0; v < VQ; ++v) store(yt + k * F + f0 + 16 * v, acc[v][k]);
}

// One unit: image n, group g, output rows p0.. (up to s.rows); buf: Wide::floats().
RIDGE_SIMD_LEAF void wide_unit(const float* x, const float* w, const float* b, bool relu, float* y,
                               const GroupedConv3x3& d, const Wide& s, int64_t n, int64_t g, int64_t p0, float* buf) {
    const int64_t G = s.G, P = s.plane(), cs = s.planes() * P, c0 = g * G;
    const int64_t rows = std::min(s.rows, d.P - p0), rows_in = s.rows_in(rows), F = (rows * s.L + 15) / 16 * 16;
    wide_fill(x, d, s, n, c0, p0, rows_in, buf, cs, P);
    // The positions past the rows feed only sums that are never stored; zeros keep them finite.
    for (int64_t c = 0; c < G; ++c)
        for (int64_t k = 0; k < s.planes(); ++k)
            zeros_from(buf + c * cs + k * P + rows_in * s.L, P - 8 - rows_in * s.L);
    int64_t tap[9];
    for (int r = 0; r < 3; ++r)
        for (int t = 0; t < 3; ++t)
            tap[r * 3 + t] = s.stride == 1 ? r * s.L + t : (2 * (r == 1) + (t == 1)) * P + (r == 2) * s.L + (t == 2);
    float* yt = buf + G * cs;
    for (int64_t k0 = 0; k0 < G; k0 += 4) {
        const float* wk = w + (c0 + k0) * G * 9;
        float* out = yt + k0 * s.F;
        int64_t f0 = 0;
        for (; f0 + 64 <= F; f0 += 64) wide_tile<4>(buf, tap, cs, G, wk, f0, out, s.F);
        if (F - f0 == 48) wide_tile<3>(buf, tap, cs, G, wk, f0, out, s.F);
        if (F - f0 == 32) wide_tile<2>(buf, tap, cs, G, wk, f0, out, s.F);
        if (F - f0 == 16) wide_tile<1>(buf, tap, cs, G, wk, f0, out, s.F);
    }
    // nChw16c with C an odd multiple of 8: the last block's padding lanes are written as zeros,
    // which a blocked layout's readers assume.
    const bool pad = d.block == 16 && d.C % 16 == 8;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t c8 = 0; c8 < G; c8 += 8)
            planar_row_out(yt + c8 * s.F + i * s.L, s.F, d.Q, b ? load<Vec8>(b + c0 + c8) : Vec8{}, relu,
                           y + grouped_at(d, n, c0 + c8, p0 + i, 0, d.P, d.Q), d.block, pad && c0 + c8 == d.C - 8);
}

void wide_run(const float* x, const float* w, const float* b, bool relu, float* y, const GroupedConv3x3& d,
              float* scratch, int threads) {
    const Wide s = wide_of(d);
    const int64_t groups = d.C / d.width, chunks = (d.P + s.rows - 1) / s.rows;
#pragma omp parallel num_threads(threads)
    {
        float* buf = scratch + omp_get_thread_num() * s.floats();
#pragma omp for schedule(static)
        for (int64_t u = 0; u < d.N * groups * chunks; ++u) {
            const int64_t n = u / (groups * chunks), g = u / chunks % groups, p0 = u % chunks * s.rows;
            wide_unit(x, w, b, relu, y, d, s, n, g, p0, buf);
        }
    }
}

// ---- grouped 3x3 conv of 8 channels a group at stride 2 with AVX-512: the data gradient ----
//
// Input position (h, w) = (2i + a, 2j + b) takes dy at (i, j) through kernel row 1 where a = 0, and
// through kernel rows 0 and 2 from dy rows i + 1 and i where a = 1; columns alike. So each of dx's
// four phases (a, b) is a stride-1 correlation of dy with 1, 2, 2 or 4 taps, and 16 neighbouring
// dy positions make a full vector of each phase: per input channel and dy channel, 4 dy vectors
// (at (i, j), (i, j + 1), (i + 1, j), (i + 1, j + 1)) meet 9 broadcast weights in 9 FMAs. (The
// strip form above holds a group in 8 lanes and skips half its taps at each position.) A unit,
// one image's block of 16 channels (two groups) over some rows of dy, copies those rows and the
// next into planes (a channel's row of Q positions, then a zero: dy past its last column), sums
// the four phases at positions numbered across the rows (f = i L + j, so a vector runs on into the
// next row), and transposes them back into dx's layout, each position's 16 channels (a 64-byte
// line in nChw16c) written by two stores in a row.
struct Phases {
    int64_t L = 0;     // floats of a plane row: Q + 1
    int64_t rows = 0;  // dy rows of a unit (an image's last unit may have fewer)
    int64_t F = 0;     // positions of a unit: rows L rounded up to 16
    // A channel's plane (cs floats): a unit's rows and the next, what a vector at F - 16 reads past
    // them (L + 1), the fill's overrun.
    int64_t plane() const { return F + L + 1 + 8; }
    // 16 channels' planes, then their sums in 4 phases; + 16: phases_row_out's overrun
    int64_t floats() const { return 16 * plane() + 4 * 16 * F + 16; }
};

// About 768 dy positions a unit, as the forward's wide form: a unit's planes and sums (about 250
// KB) stay in L2.
Phases phases_of(const GroupedConv3x3& d) {
    Phases s;
    s.L = d.Q + 1;
    const int64_t chunks = std::max<int64_t>(1, (d.P * s.L + 767) / 768);
    s.rows = (d.P + chunks - 1) / chunks;
    s.F = (s.rows * s.L + 15) / 16 * 16;
    return s;
}

// dy rows p0 .. p0 + rows (the last may be past the map: zeros) of image n's channels c0 .. c0 + 7
// into planes (channel k's at planes + k * cs), 8 positions a transpose. A row's last transpose
// writes up to 7 zeros from its column Q on, up to 6 of them into the next row, which is filled
// after it.
RIDGE_SIMD_INLINE void phases_fill(const float* dy, const GroupedConv3x3& d, int64_t L, int64_t n, int64_t c0,
                                   int64_t p0, int64_t rows, float* planes, int64_t cs) {
    const int64_t Q = d.Q, ps = d.block;
    for (int64_t i = 0; i <= rows; ++i) {
        float* row = planes + i * L;
        if (p0 + i >= d.P) {
            for (int k = 0; k < 8; ++k) zeros_from(row + k * cs, L);
            continue;
        }
        const float* src = dy + grouped_at(d, n, c0, p0 + i, 0, d.P, Q);
        for (int64_t q0 = 0; q0 < Q; q0 += 8) {
            Vec8 r[8];
            for (int t = 0; t < 8; ++t) r[t] = q0 + t < Q ? load<Vec8>(src + (q0 + t) * ps) : Vec8{};
            transpose8(r);
            for (int k = 0; k < 8; ++k) store(row + k * cs + q0, r[k]);
        }
        for (int k = 0; k < 8; ++k) row[k * cs + Q] = 0.0f;
    }
}

// Input channels c4 .. c4 + 3 of a group at positions f0 .. f0 + 15, all four phases: phase (a,
// b)'s channel c at sums + ((2a + b) 16 + c) F + f0. planes: the group's 8 dy channels, cs floats
// apart; wg: its weights, PyTorch's (8, 8, 3, 3), output channel k's for input channel c at wg +
// (8k + c) 9.
RIDGE_SIMD_INLINE void phases_tile(const float* planes, int64_t cs, int64_t L, const float* wg, int64_t c4, int64_t f0,
                                   float* sums, int64_t F) {
    V16 acc[4][4] = {};
    for (int k = 0; k < 8; ++k) {
        const float* at = planes + k * cs + f0;
        const V16 d00 = load<V16>(at), d01 = load<V16>(at + 1), d10 = load<V16>(at + L), d11 = load<V16>(at + L + 1);
        for (int c = 0; c < 4; ++c) {
            const float* t = wg + (8 * k + c4 + c) * 9;  // t[3r + s]
            acc[0][c] += t[4] * d00;
            acc[1][c] += t[3] * d01;
            acc[1][c] += t[5] * d00;
            acc[2][c] += t[1] * d10;
            acc[2][c] += t[7] * d00;
            acc[3][c] += t[0] * d11;
            acc[3][c] += t[2] * d10;
            acc[3][c] += t[6] * d01;
            acc[3][c] += t[8] * d00;
        }
    }
    for (int ph = 0; ph < 4; ++ph)
        for (int c = 0; c < 4; ++c) store(sums + (ph * 16 + c4 + c) * F + f0, acc[ph][c]);
}

// dx row h = 2i + a from the sums of phases (a, 0) and (a, 1) at row i's positions (from at, 16
// channels F floats apart each): 8 dy columns at a time, each phase's 16 channels as two
// transposes of 8, then the 16 positions they make stored in order, each position's two halves
// one after the other. (Each phase's 8 positions stored in turn, every other line, took 1.1 to 1.2
// times as long on resnext50's layer2.0 alone, 2 threads, caches flushed.) The last 8 columns
// read sums as far as column Q + 6.
RIDGE_SIMD_INLINE void phases_row_out(const float* at, int64_t F, int64_t W, float* out, int64_t ps) {
    for (int64_t j0 = 0; 2 * j0 < W; j0 += 8) {
        Vec8 v[2][2][8];  // [b][channels 0-7, 8-15][position]
        for (int64_t b = 0; b < 2; ++b) {
            const float* ph = at + b * 16 * F + j0;
            for (int c = 0; c < 8; ++c) v[b][0][c] = load<Vec8>(ph + c * F), v[b][1][c] = load<Vec8>(ph + (c + 8) * F);
            transpose8(v[b][0]);
            transpose8(v[b][1]);
        }
        for (int64_t t = 0; t < 16 && 2 * j0 + t < W; ++t) {
            float* o = out + (2 * j0 + t) * ps;
            store(o, v[t % 2][0][t / 2]);
            store(o + 8, v[t % 2][1][t / 2]);
        }
    }
}

// One unit: image n, channels 16 j .. 16 j + 15, dy rows p0 .. (up to s.rows); buf: Phases::floats().
RIDGE_SIMD_LEAF void phases_unit(const float* dy, const float* w, float* dx, const GroupedConv3x3& d, const Phases& s,
                                 int64_t n, int64_t j, int64_t p0, float* buf) {
    const int64_t cs = s.plane(), rows = std::min(s.rows, d.P - p0), F = (rows * s.L + 15) / 16 * 16;
    float* sums = buf + 16 * cs;
    for (int64_t g = 0; g < 2; ++g) {
        float* planes = buf + 8 * g * cs;
        phases_fill(dy, d, s.L, n, 16 * j + 8 * g, p0, rows, planes, cs);
        // Positions past the rows feed only sums that are never stored; zeros keep them finite.
        for (int k = 0; k < 8; ++k) zeros_from(planes + k * cs + (rows + 1) * s.L, cs - 8 - (rows + 1) * s.L);
        const float* wg = w + (16 * j + 8 * g) * 8 * 9;
        for (int64_t f0 = 0; f0 < F; f0 += 16)
            for (int64_t c4 = 0; c4 < 8; c4 += 4) phases_tile(planes, cs, s.L, wg, c4, f0, sums + 8 * g * s.F, s.F);
    }
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t a = 0; a < 2 && 2 * (p0 + i) + a < d.H; ++a)
            phases_row_out(sums + 2 * a * 16 * s.F + i * s.L, s.F, d.W,
                           dx + grouped_at(d, n, 16 * j, 2 * (p0 + i) + a, 0, d.H, d.W), d.block);
}

void phases_run(const float* dy, const float* w, float* dx, const GroupedConv3x3& d, float* scratch, int threads) {
    const Phases s = phases_of(d);
    const int64_t blocks = d.C / 16, chunks = (d.P + s.rows - 1) / s.rows;
#pragma omp parallel num_threads(threads)
    {
        float* buf = scratch + omp_get_thread_num() * s.floats();
#pragma omp for schedule(static)
        for (int64_t u = 0; u < d.N * blocks * chunks; ++u) {
            const int64_t n = u / (blocks * chunks), j = u / chunks % blocks, p0 = u % chunks * s.rows;
            phases_unit(dy, w, dx, d, s, n, j, p0, buf);
        }
    }
}

// y = conv(x) with weights already packed: packed[j][r][s][c][lane], block j's 16 output lanes.
// Groups of 8 run a block's two groups one after the other on the same strip, so the second finds
// the input lines the first brought in (with the two far apart, regnet_y_400mf's 16x48x112x112
// input was read twice from memory: 7.1 against 4.3 ms).
void grouped_run(const float* x, const float* packed, const float* b, bool relu, float* y, const GroupedConv3x3& d,
                 int threads) {
    const int64_t width = d.width, strip = width == 4 ? strip4 : strip8, B = d.block;
    const int64_t lanes = width == 4 ? grouped4_lanes(d) : 8;  // output channels of one strip
    const int64_t blocks = (d.C + 15) / 16, strips = (d.Q + strip - 1) / strip;
    const float zeros[8] = {};
    for_units(d.N * blocks * d.P * strips, threads, [&](int64_t u) {
        const int64_t n = u / (blocks * d.P * strips), j = u / (d.P * strips) % blocks, p = u / strips % d.P;
        const int64_t q0 = u % strips * strip, count = std::min(strip, d.Q - q0);
        // At stride 2 every output row reads two input rows no row before it read: the input
        // streams in at twice stride 1's rate for the same arithmetic, faster than the hardware
        // prefetcher brought it (16x48x112x112 in groups of 8 on the 2-core Zen 4: 4.1-4.3 ms
        // from memory, 2.65 with the input in cache). So each strip prefetches its part of the
        // next output row's two new rows, with low locality (prefetcht2): 2.95-3.3 ms; into L1
        // (prefetcht0), 3.8-4.0. One row ahead was the best of 1, 2, 4 and 8. Groups of 4 at
        // stride 2 (16x128x56x56, 3 alternated pairs) went 1.42-1.55 -> 1.06-1.52 ms.
        if (d.stride == 2 && p + 1 < d.P)
            for (int64_t h = 2 * p + 2; h < std::min(2 * p + 4, d.H); ++h) {
                const float* row = x + grouped_at(d, n, 16 * j, h, 0, d.H, d.W);
                for (int64_t w = std::max<int64_t>(0, 2 * q0 - 1); w < std::min(d.W, 2 * (q0 + strip)); ++w)
                    __builtin_prefetch(row + w * B, 0, 1);
            }
        for (int64_t c0 = 16 * j; c0 < std::min(16 * j + 16, d.C); c0 += lanes) {
            const float* rows[3];
            for (int r = 0; r < 3; ++r) {
                const int64_t h = p * d.stride - 1 + r;
                rows[r] = h >= 0 && h < d.H ? x + grouped_at(d, n, c0, h, 0, d.H, d.W) : nullptr;
            }
            const float* wp = packed + j * 9 * 16 * width + c0 % 16;
            const float* bias = b ? b + c0 : nullptr;
            grouped_strip(rows, B, q0, d.W, wp, bias, relu, y + grouped_at(d, n, c0, p, q0, d.P, d.Q), count,
                          d.stride, width, lanes, zeros);
        }
        // nChw16c with C an odd multiple of 8 (groups of 8 only): the last block's padding lanes
        // are written as zeros, which a blocked layout's readers assume.
        if (B == 16 && d.C % 16 != 0 && j == blocks - 1)
            for (int64_t q = 0; q < count; ++q) store(y + grouped_at(d, n, d.C, p, q0 + q, d.P, d.Q), Vec8{});
    });
}

}  // namespace

int64_t depthwise_lanes(const Depthwise& d) {
    // One block holding every channel is channels-last as well, whose width is free to choose.
    if ((d.block == 8 || d.block == 16) && d.block != d.C) return d.block;
    return d.C % 16 == 0 && wide_vectors() ? 16 : 8;
}

bool depthwise_wgrad_supported(const Depthwise& d) {
    const bool layout = d.block == 8 || d.block == 16 || (d.block == d.C && d.C % 8 == 0);
    return layout && d.R >= 1 && d.S >= 1 && d.R <= max_taps && d.S <= max_taps;
}

size_t depthwise_wgrad_scratch(const Depthwise& d, int threads) {
    int64_t CB = (d.C + depthwise_lanes(d) - 1) / depthwise_lanes(d);
    return size_t(image_chunks(d, threads) * CB * (d.R * d.S + 1) * depthwise_lanes(d));
}

void depthwise_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Depthwise& d,
                     int threads) {
    const int64_t B = depthwise_lanes(d), CB = (d.C + B - 1) / B, NC = image_chunks(d, threads);
    const int64_t RS = d.R * d.S, per = (RS + 1) * B;
    for_units(CB * NC, threads, [&](int64_t u) {
        int64_t cb = u / NC, k = u % NC;
        int64_t n0 = d.N * k / NC, n1 = d.N * (k + 1) / NC;
        (B == 16 ? unit16 : unit8)(x, dy, scratch + u * per, d, cb, n0, n1);
    });
    // The chunks added into the first in order, then copied out: no division per element (on a
    // 7x7 map, C768, one image, one thread, the call took 124 us with a division-per-element pass
    // here, 54 without).
    for_units(CB, threads, [&](int64_t cb) {
        float* part = scratch + cb * NC * per;
        for (int64_t k = 1; k < NC; ++k)
            for (int64_t i = 0; i < per; ++i) part[i] += part[k * per + i];
        const int64_t lanes = std::min(B, d.C - cb * B);  // the channels of the block
        if (d.blocked_weights)
            std::copy(part, part + RS * B, dw + cb * RS * B);
        else
            for (int64_t j = 0; j < lanes; ++j)
                for (int64_t t = 0; t < RS; ++t) dw[(cb * B + j) * RS + t] = part[t * B + j];
        if (db) std::copy(part + RS * B, part + RS * B + lanes, db + cb * B);
    });
}

bool depthwise_conv_supported(const Depthwise& d) {
    const bool taps = d.S == 3 || d.S == 5 || d.S == 7;
    return depthwise_wgrad_supported(d) && taps && d.P >= 1 && d.Q >= 1 && d.stride_h == 1 && d.stride_w == 1 &&
           d.dil_h == 1 && d.dil_w == 1 && d.pad_t >= 0 && d.pad_t < d.R && d.pad_l >= 0 && d.pad_l < d.S &&
           d.P == d.H + 1 - d.R + 2 * d.pad_t && d.Q == d.W + 1 - d.S + 2 * d.pad_l;
}

size_t depthwise_conv_packed(const Depthwise& d) {
    const int64_t L = depthwise_lanes(d);
    return d.blocked_weights ? 0 : size_t((d.C + L - 1) / L * L * d.R * d.S);
}

void depthwise_conv(const float* x, const float* w, const float* b, float* y, float* packed, const Depthwise& d,
                    int threads) {
    dw_run(x, dw_weights(w, packed, d), false, b, false, y, d, threads);
}

// dx[h][w] = the sum over r, s of dy[h + pad_t - r][w + pad_l - s] w[r][s]: the forward over dy
// with the taps turned half a circle and the padding R - 1 - pad_t, S - 1 - pad_l, which maps the
// P x Q gradient back onto H x W.
void depthwise_conv_dgrad(const float* dy, const float* w, float* dx, bool add, float* packed, const Depthwise& d,
                          int threads) {
    Depthwise g = d;
    g.H = d.P, g.W = d.Q, g.P = d.H, g.Q = d.W, g.pad_t = d.R - 1 - d.pad_t, g.pad_l = d.S - 1 - d.pad_l;
    dw_run(dy, dw_weights(w, packed, d), true, nullptr, add, dx, g, threads);
}

bool depthwise_dgrad_supported(const Depthwise& d) {
    // At most 7 rows of dy reach a row of dx at stride 1, 4 at stride 2 (dw2_row_reach's cases).
    const bool taps = (d.S == 3 || d.S == 5 || d.S == 7) && d.R <= 7;
    const int64_t stride = d.stride_h;
    if (stride == 1 && d.pad_l != d.S / 2) return false;  // dw1_row's strips know the padding as compiled
    // The window within the padded map first: past it, P's division rounds -1 / 2 up to 0.
    return depthwise_wgrad_supported(d) && taps && d.blocked_weights && (stride == 1 || stride == 2) &&
           d.stride_w == stride && d.dil_h == 1 && d.dil_w == 1 && d.pad_t >= 0 && d.pad_t < d.R && d.pad_l >= 0 &&
           d.pad_l < d.S && d.H + 2 * d.pad_t >= d.R && d.W + 2 * d.pad_l >= d.S &&
           d.P == (d.H + 2 * d.pad_t - d.R) / stride + 1 && d.Q == (d.W + 2 * d.pad_l - d.S) / stride + 1;
}

// In a blocked layout, units of an image's rows of one channel block in order (all of them, or a
// share where there are fewer image blocks than twice the threads); channels-last, units of one
// row through its blocks in order, so a line that two 8-lane blocks share is written by one thread,
// one block after the other. Units of one row and block, each choosing its strip, spent about a
// third of the kernel's time on a 7x7 map (8x960x7x7, one thread, sampled) finding their place
// and their strip: some eight 64-bit divisions a row.
void depthwise_dgrad(const float* dy, const float* w, float* dx, bool add, const Depthwise& d, int threads) {
    const int64_t L = depthwise_lanes(d), CB = (d.C + L - 1) / L, T = dgrad_strip(d);
    const auto run = L == 16 ? dgrad_run16 : dgrad_run8;
    if (d.block != L) {
        for_units(d.N * d.H, threads, [&](int64_t u) {
            const int64_t h = u % d.H;
            run(d, T, dy, w, dx, add, {u / d.H, h, h + 1, 0, CB});
        });
        return;
    }
    const int64_t shares = std::clamp<int64_t>((2 * threads + d.N * CB - 1) / (d.N * CB), 1, d.H);
    for_units(d.N * CB * shares, threads, [&](int64_t u) {
        const int64_t k = u % shares, cb = u / shares % CB;
        run(d, T, dy, w, dx, add, {u / (shares * CB), d.H * k / shares, d.H * (k + 1) / shares, cb, cb + 1});
    });
}

bool grouped_conv3x3_supported(const GroupedConv3x3& d) {
    const bool layout = d.block == 8 || d.block == 16 || d.block == d.C;
    const bool map = d.N >= 1 && d.H >= 1 && d.W >= 1 && (d.stride == 1 || d.stride == 2) &&
                     d.P == (d.H - 1) / d.stride + 1 && d.Q == (d.W - 1) / d.stride + 1;
    // The planar forms take sets of 8 channels: C a multiple of 8 (regnet_y_400mf's 104 and 440
    // channels) where the layout's blocks are 8 or all C, or with AVX-512 16 as well (the last
    // block's padding written as zeros).
    if (wide_here(d)) return layout && map && d.C % d.width == 0;
    // The strip form takes whole blocks of 16, or with groups of 8 in nChw16c a last block of 8
    // (regnet_y_400mf's stride-2 convs on 104 and 440 channels).
    const bool channels = d.C % 16 == 0 || (planar_here(d) && d.C % 8 == 0 && d.block != 16) ||
                          (d.width == 8 && d.block == 16 && d.C % 8 == 0 && !planar_here(d));
    return (d.width == 4 || d.width == 8) && channels && layout && map;
}

size_t grouped_conv3x3_scratch(const GroupedConv3x3& d, int threads) {
    if (wide_here(d)) return size_t(threads * wide_of(d).floats());
    return size_t(planar_here(d) ? threads * planar_of(d).floats() : 9 * d.width * ((d.C + 15) / 16 * 16));
}

void grouped_conv3x3(const float* x, const float* w, const float* b, bool relu, float* y, float* scratch,
                     const GroupedConv3x3& d, int threads) {
    if (wide_here(d)) return wide_run(x, w, b, relu, y, d, scratch, threads);
    if (planar_here(d)) return planar_run(x, w, b, relu, y, d, scratch, threads);
    // packed[j][r][s][c][lane] = w[16j + lane][c][r][s]
    float* packed = scratch;
    const int64_t width = d.width;
    for (int64_t k = 0; k < d.C; ++k)
        for (int64_t c = 0; c < width; ++c)
            for (int64_t t = 0; t < 9; ++t)
                packed[((k / 16 * 9 + t) * width + c) * 16 + k % 16] = w[(k * width + c) * 9 + t];
    grouped_run(x, packed, b, relu, y, d, threads);
}

// dx[c][h][w] = sum over k, r, s of w[k][c][r][s] dy[k][h + 1 - r][w + 1 - s]: the same conv over dy
// with each group's 4x4 weights transposed and the taps turned half a circle (r, s -> 2 - r, 2 - s),
// so the forward runs it, in whichever form it takes. Below AVX-512 that is the planar form: on the
// 2-core Zen 3 (2 threads, 20 to 40 alternated calls, medians) it took 0.75 to 0.82 of the spread
// form's time in nChw8c (8x128x56x56, resnext50's layer1: 4.3 against 5.2 ms; 8x256x28x28;
// 1x128x56x56) and 0.64 channels-last.
size_t grouped4_dgrad_scratch(const GroupedConv3x3& d, int threads) {
    GroupedConv3x3 groups_of_4 = d;
    groups_of_4.width = 4;
    return size_t(9 * 4 * d.C) + grouped_conv3x3_scratch(groups_of_4, threads);
}

void grouped4_conv3x3_dgrad(const float* dy, const float* w, float* dx, float* scratch, const GroupedConv3x3& d,
                            int threads) {
    GroupedConv3x3 groups_of_4 = d;  // the weights below are for 4, whatever d says
    groups_of_4.width = 4;
    // turned[c][k % 4][8 - t] = w[k][c % 4][t]: (C, 4, 3, 3), as the forward reads its weights
    float* turned = scratch;
    for (int64_t c = 0; c < d.C; ++c)
        for (int64_t k4 = 0; k4 < 4; ++k4)
            for (int64_t t = 0; t < 9; ++t)
                turned[(c * 4 + k4) * 9 + 8 - t] = w[((c / 4 * 4 + k4) * 4 + c % 4) * 9 + t];
    grouped_conv3x3(dy, turned, nullptr, false, dx, scratch + 9 * 4 * d.C, groups_of_4, threads);
}

bool grouped4_wgrad_supported(const GroupedConv3x3& d) {
    return d.width == 4 && d.stride == 1 && d.C % 16 == 0 && grouped_conv3x3_supported(d);
}

size_t grouped4_wgrad_scratch(const GroupedConv3x3& d, int threads) {
    return size_t(d.C / 16 * grouped_chunks(d, threads) * 9 * 64);
}

void grouped4_wgrad(const float* x, const float* dy, float* dw, float* scratch, const GroupedConv3x3& d,
                    int threads) {
    const int64_t lanes = grouped4_lanes(d);
    grouped_wgrad_run(
        dw, scratch, d, threads, 9 * 64,
        [&](int64_t n, int64_t j, float* acc) {
            for (int64_t c0 = 16 * j; c0 < 16 * j + 16; c0 += lanes) {
                const int64_t at = grouped_at(d, n, c0, 0, 0, d.H, d.W);  // stride 1: dy's map is x's
                grouped4_wgrad_image(x + at, dy + at, acc + c0 % 16, d.H, d.W, d.block, lanes);
            }
        },
        // dw[16j + lane][c][r][s], PyTorch's (K, C/G, R, S), from the sums' [r][s][c][lane]
        [](int64_t j, int64_t i) { return ((16 * j + i % 16) * 4 + i / 16 % 4) * 9 + i / 64; });
}

bool grouped8_backward_supported(const GroupedConv3x3& d) {
    return d.width == 8 && d.stride == 2 && d.block != 8 && d.C % 16 == 0 && grouped_conv3x3_supported(d);
}

size_t grouped8_dgrad_scratch(const GroupedConv3x3& d, int threads) {
    return wide_vectors() ? size_t(phases_of(d).floats() * threads) : size_t(9 * 8 * d.C);
}

void grouped8_conv3x3_dgrad(const float* dy, const float* w, float* dx, float* scratch, const GroupedConv3x3& d,
                            int threads) {
    if (wide_vectors()) return phases_run(dy, w, dx, d, scratch, threads);
    float* packed = scratch;
    // packed[j][r][s][k][lane] = w[k of input channel c's group][c % 8][r][s] for c = 16j + lane
    for (int64_t c = 0; c < d.C; ++c)
        for (int64_t k = 0; k < 8; ++k)
            for (int64_t t = 0; t < 9; ++t)
                packed[((c / 16 * 9 + t) * 8 + k) * 16 + c % 16] = w[((c / 8 * 8 + k) * 8 + c % 8) * 9 + t];
    const int64_t blocks = d.C / 16, strips = (d.W + strip8 - 1) / strip8;
    const float zeros[8] = {};
    for_units(d.N * blocks * d.H * strips, threads, [&](int64_t u) {
        const int64_t n = u / (blocks * d.H * strips), j = u / (d.H * strips) % blocks, h = u / strips % d.H;
        const int64_t w0 = u % strips * strip8, count = std::min(strip8, d.W - w0);
        for (int64_t c0 = 16 * j; c0 < 16 * j + 16; c0 += 8) {
            const float* rows[3];
            for (int r = 0; r < 3; ++r) {
                const int64_t p2 = h + 1 - r, p = p2 / 2;  // p2 = 2p
                rows[r] = p2 >= 0 && p2 % 2 == 0 && p < d.P ? dy + grouped_at(d, n, c0, p, 0, d.P, d.Q) : nullptr;
            }
            grouped8_dgrad_strip(rows, d.block, w0, d.Q, packed + j * 9 * 8 * 16 + c0 % 16,
                                 dx + grouped_at(d, n, c0, h, w0, d.H, d.W), count, zeros);
        }
    });
}

size_t grouped8_wgrad_scratch(const GroupedConv3x3& d, int threads) {
    return size_t(d.C / 16 * grouped_chunks(d, threads) * 9 * 8 * 16);
}

void grouped8_wgrad(const float* x, const float* dy, float* dw, float* scratch, const GroupedConv3x3& d,
                    int threads) {
    grouped_wgrad_run(
        dw, scratch, d, threads, 9 * 8 * 16,
        [&](int64_t n, int64_t j, float* acc) {
            grouped8_wgrad_image(x + grouped_at(d, n, 16 * j, 0, 0, d.H, d.W),
                                 dy + grouped_at(d, n, 16 * j, 0, 0, d.P, d.Q), acc, d);
        },
        // dw[k][c][r][s], PyTorch's (K, C/G, R, S), from the sums' [r][s][k % 8][group lane]
        [](int64_t j, int64_t i) { return ((16 * j + i % 16 / 8 * 8 + i / 16 % 8) * 8 + i % 8) * 9 + i / 128; });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
