// A linear layer on few rows in inference, y = x w^T + b: the classifiers at batch 1 to 64, whose
// time is reading the weights once, or on more rows, their FMAs. The weights are in panels of 16
// output rows, each panel the rows' columns in order, 16 floats per column (oneDNN's AB16b16a): a
// thread reads one contiguous stream, which the prefetcher follows even where rows are short
// (regnet_y_400mf's 440 inputs), and each column is one vector times a broadcast input, no sums
// across lanes. On the 2-core EPYC this read AlexNet's 9216x4096 fc1 from memory at about 37 GB/s
// for one row, where oneDNN 2.6's brgemm inner product (in its AB16b64a) reached about 27. On
// several rows oneDNN's AVX2 inner product (gemm:jit) ran at a third of its bound: alexnet's fc1 at
// batch 16 took 18.8 ms on the 2-core Zen 3, against 6.0 for its weights once and 6.0 for its FMAs
// at peak.
// x (N,C)  w (K,C) in AB16b16a, C and K padded to 16 with zeros  b (K) or null  y (N,K)
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "kernels/simd/panel.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t panel = 16;

// Floats of one panel of the weights: 16 rows of C columns, C padded to 16.
constexpr int64_t panel_floats(int64_t C) { return (C + panel - 1) / panel * panel * panel; }

// [lo, hi) of `count` items for thread t of `threads`, in whole multiples of `unit`.
void share(int64_t count, int64_t unit, int t, int threads, int64_t& lo, int64_t& hi) {
    const int64_t units = (count + unit - 1) / unit;
    lo = std::min(count, units * t / threads * unit);
    hi = std::min(count, units * (t + 1) / threads * unit);
}

// Asks for the line `ahead` floats past p. The prefetches below run up to a chunk, two strips,
// (gemm_share's) a panel or (dots_block_wide's) three rows past the array's end, where a prefetch
// never faults but a pointer formed there would be undefined behaviour, so the address is formed
// as an integer.
RIDGE_SIMD_INLINE void prefetch_ahead(const float* p, int64_t ahead) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(p) + uintptr_t(ahead) * sizeof(float);
    __builtin_prefetch(reinterpret_cast<const void*>(at));
}

// out[j] = sum over c < C of w[c, j] * x[c] for one panel w (C, 16): two chains over c to hide the
// FMA latency, each a pair of 8-lane halves. Memory-bound, so 8 lanes cost nothing on AVX-512,
// and GCC keeps 16-lane accumulators in AVX2 registers only by spilling them every column (the
// AVX2 build ran at half the speed of the AVX-512 one).
//
// A panel of 2 * dots_ahead columns or more (32 KB) asks for the line dots_ahead columns (16 KB)
// on as it reads each: on one row the weights come from memory, and the hardware prefetcher alone
// kept each thread's stream well short of memory speed. `ridge-kernels linear-row`, one row, 2
// threads, caches flushed, 3 alternated rounds of 200 calls on the 2-core Zen 5, medians:
// 2304 -> 96 20-51 -> 18-21 us, 4096 -> 1000 263-279 -> 177-230, 1280 -> 1000 54-83 -> 55-66;
// `ridge bench vgg11` at batch 1, its three classifier linears 14.5-16.3 -> 13.6-14.9 ms (3
// alternated pairs; still 30-37 GB/s against a triad near 100). efficientnet_b7's squeezes
// (2304 -> 96) in the executor stayed level. Warm it costs 7 % (2304 -> 96 10.6-11.1 -> 11.5-11.9
// us), and on short panels, whose lines ahead are another panel's, it lost cold too (96 -> 2304
// 18-19 -> 20-23 us), hence the threshold.
constexpr int64_t dots_ahead = 256;

template <bool far>
RIDGE_SIMD_INLINE void panel_dots_any(const float* x, const float* w, int64_t C, float* out) {
    using V = Vec<8>;
    V a0 = {}, a1 = {}, b0 = {}, b1 = {};
    int64_t c = 0;
    for (; c + 2 <= C; c += 2, w += 2 * panel) {
        if (far) {
            prefetch_ahead(w, dots_ahead * panel);
            prefetch_ahead(w, (dots_ahead + 1) * panel);
        }
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
        b0 += load<V>(w + panel) * x[c + 1];
        b1 += load<V>(w + panel + 8) * x[c + 1];
    }
    if (c < C) {
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
    }
    store(out, a0 + b0);
    store(out + 8, a1 + b1);
}

RIDGE_SIMD_LEAF void panel_dots(const float* x, const float* w, int64_t C, float* out) {
    if (C >= 2 * dots_ahead)
        panel_dots_any<true>(x, w, C, out);
    else
        panel_dots_any<false>(x, w, C, out);
}

// The same for `BN` rows of x at once, over columns [c0, c1) of one panel, adding to out (BN,
// 16): each column's two weight vectors serve BN rows, 2 BN independent chains. Six rows need 12
// accumulators, 2 weight vectors and a broadcast, within AVX2's 16 registers; at four, GCC folded
// the weight loads into every FMA, and the loads, not the FMAs, set the pace. Each column is one
// 64-byte line, so the line `ahead` columns on is prefetched with it: the next chunk arrives while
// this one is multiplied, instead of every chunk's first pass waiting on memory (alexnet's fc1 at
// batch 16 on 2 threads of the Zen 3, alone: 59 GFLOP/s at four rows, 67 at six, 90 to 95 with the
// prefetch).
template <int BN>
RIDGE_SIMD_INLINE void panel_rows(const float* x, int64_t C, const float* w, int64_t c0, int64_t c1, float* out) {
    using V = Vec<8>;
    constexpr int64_t ahead = 256;
    V a[BN][2];
    for (int n = 0; n < BN; ++n) a[n][0] = load<V>(out + n * panel), a[n][1] = load<V>(out + n * panel + 8);
    for (int64_t c = c0; c < c1; ++c) {
        prefetch_ahead(w, (c + ahead) * panel);
        const V w0 = load<V>(w + c * panel), w1 = load<V>(w + c * panel + 8);
        for (int n = 0; n < BN; ++n) {
            const float xn = x[n * C + c];
            a[n][0] += w0 * xn;
            a[n][1] += w1 * xn;
        }
    }
    for (int n = 0; n < BN; ++n) store(out + n * panel, a[n][0]), store(out + n * panel + 8, a[n][1]);
}

template <int... BN>
RIDGE_SIMD_INLINE void panel_rows_tail(int64_t rows, const float* x, int64_t C, const float* w, int64_t c0, int64_t c1,
                                       float* out, std::integer_sequence<int, BN...>) {
    ((rows == BN ? panel_rows<BN>(x, C, w, c0, c1, out) : void()), ...);
}

// The AVX-512 form of panel_rows: a column of the panel is one 16-lane vector, so a row takes one
// accumulator and a block of BN rows BN chains (up to 12: with the column and a broadcast, 14 of
// the 32 registers). 8-lane halves ran at half the width these cores have: efficientnet_b7's
// squeezes at batch 16 on the 2-core Zen 5 (3840 -> 160, 16 rows) reached about 100 GFLOP/s on
// them, as on linear_rows' dot products.
template <int BN>
RIDGE_SIMD_INLINE void panel_rows_wide(const float* x, int64_t C, const float* w, int64_t c0, int64_t c1, float* out) {
    using V = Vec<16>;
    constexpr int64_t ahead = 256;
    V a[BN];
    for (int n = 0; n < BN; ++n) a[n] = load<V>(out + n * panel);
    for (int64_t c = c0; c < c1; ++c) {
        prefetch_ahead(w, (c + ahead) * panel);
        const V wc = load<V>(w + c * panel);
        for (int n = 0; n < BN; ++n) a[n] += wc * x[n * C + c];
    }
    for (int n = 0; n < BN; ++n) store(out + n * panel, a[n]);
}

template <int... BN>
RIDGE_SIMD_INLINE void panel_rows_wide_any(int64_t rows, const float* x, int64_t C, const float* w, int64_t c0,
                                           int64_t c1, float* out, std::integer_sequence<int, BN...>) {
    ((rows == BN + 1 ? panel_rows_wide<BN + 1>(x, C, w, c0, c1, out) : void()), ...);
}

// out (N, 16) = x (N, C) times one panel, its columns in chunks small enough to stay in L1 while
// every block of rows reads them, so the weights come from memory once whatever N is. With
// AVX-512 the blocks are of equal size up to 12 rows (16 rows as 8 and 8, not 12 and 4 whose
// four chains would wait on the FMA latency); below it, six rows and a tail.
RIDGE_SIMD_LEAF void panel_dots_rows(const float* x, int64_t ldx, const float* w, int64_t N, int64_t C, float* out) {
    constexpr int64_t chunk = 256;  // columns: 16 KB of the panel
    constexpr int block = 6;
    constexpr int64_t wide_block = 12;
    const int64_t blocks = std::max<int64_t>(1, (N + wide_block - 1) / wide_block), rows = (N + blocks - 1) / blocks;
    for (int64_t i = 0; i < N * panel; ++i) out[i] = 0.0f;
    for (int64_t c0 = 0; c0 < C; c0 += chunk) {
        const int64_t c1 = std::min(C, c0 + chunk);
        if (wide_vectors()) {
            for (int64_t n = 0; n < N; n += rows)
                panel_rows_wide_any(std::min(rows, N - n), x + n * ldx, ldx, w, c0, c1, out + n * panel,
                                    std::make_integer_sequence<int, wide_block>{});
            continue;
        }
        int64_t n = 0;
        for (; n + block <= N; n += block) panel_rows<block>(x + n * ldx, ldx, w, c0, c1, out + n * panel);
        panel_rows_tail(N - n, x + n * ldx, ldx, w, c0, c1, out + n * panel, std::integer_sequence<int, 1, 2, 3, 4, 5>{});
    }
}

// y[n, k0 + j] = out[n, j] + b[k0 + j], then the ReLU (of NaN 0, as the reference takes it), for
// the panel's outputs below K; a whole panel's rows as vectors (an expansion's hundreds of panels
// had spent more on a scalar copy than on their products).
RIDGE_SIMD_LEAF void finish_panel(const float* out, const float* b, bool relu, float* y, int64_t N, int64_t K,
                                  int64_t k0) {
    if (k0 + panel <= K) {
        using V = Vec<8>;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t j = 0; j < panel; j += 8) {
                V v = load<V>(out + n * panel + j);
                if (b) v += load<V>(b + k0 + j);
                if (relu) v = v > 0 ? v : V{};
                store(y + n * K + k0 + j, v);
            }
        return;
    }
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0, k = k0; k < K; ++j, ++k) {
            const float v = b ? out[n * panel + j] + b[k] : out[n * panel + j];
            y[n * K + k] = relu && !(v > 0) ? 0.0f : v;
        }
}

// Units of work: each panel for a group of the rows. One group while the panels share out evenly
// among the threads, or there are many of them (the thread with one panel more then waits at most
// an eighth); otherwise the rows go in as many groups as there are threads, so that no thread
// multiplies a whole panel more than another. efficientnet_b7's 960 -> 40 squeezes at batch 16
// have three panels: on two threads one did two (nine of them flagged slow in both passes of a
// survey on the 2-core Zen 4, 22 to 36 us against a bound of 5). Rows in halves, each thread
// three half panels, one of them read by both threads: alone, 16 rows, 2 threads, warm 10.5 ->
// 8.0 us, weights evicted 16.6 -> 14.6; in `ridge profile efficientnet_b7 --batch 16`, 2
// alternated runs, features.4's nine squeezes 202 and 214 -> 195 and 180 us in all, 9 and 9 -> 7
// and 5 of them over 20 us. Not all of them under it yet: the weights come from memory.
int64_t row_groups(int64_t panels, int64_t N, int threads) {
    if (N == 1 || panels % threads == 0 || panels >= 8 * threads) return 1;
    return std::min<int64_t>(N, threads);
}

}  // namespace

void linear_panels(const float* x, int64_t ldx, const float* w, const float* b, bool relu, float* y, int64_t N,
                   int64_t C, int64_t K) {
    const int64_t panels = (K + panel - 1) / panel;
    const int threads = omp_get_max_threads();
    const int64_t groups = row_groups(panels, N, threads), units = panels * groups;
    auto unit = [&](int64_t u) {
        const int64_t i = u / groups;
        int64_t n0, n1;
        share(N, 1, int(u % groups), int(groups), n0, n1);
        const int64_t rows = n1 - n0;
        float out[max_panel_rows * panel];
        if (rows == 1)
            panel_dots(x + n0 * ldx, w + i * panel_floats(C), C, out);
        else
            panel_dots_rows(x + n0 * ldx, ldx, w + i * panel_floats(C), rows, C, out);
        finish_panel(out, b, relu, y + n0 * K, rows, K, i * panel);
    };
    // The threads finish together (team.h): on the classifiers' hundreds of MB a thread ended far
    // enough ahead to sleep, and the small ReLU after waited for it to wake. vgg11 at batch 16 on
    // the 2-core Zen 5, two alternated runs: classifier.relu1 32-40 -> 14-15 us (its bound 9),
    // the inner products level.
    for_units_together(units, threads, unit);
}

// A linear layer on many rows in inference (vit's 197 tokens an image, convnext's positions), on
// the same AB16b16a weights, as a blocked matrix product: for 256 columns of x at a time, blocks
// of at most 120 rows, packed, go past every panel of the thread's share, six rows at a time
// (panel.h's micro-kernel). A panel's 256 columns are 16 KB, which stay in L1 while the blocks of
// six rows read them; a packed block is 120 KB, which stays in L2 while the panels go by. Packed,
// each group of six rows is one stream of broadcasts (six floats a column) instead of six streams
// 4C bytes apart. vit_b_16's four linears at batch 1 on the 2-core Zen 3, 2 threads, against
// oneDNN's gemm:jit inner product in the same process, the median ratio of their sums over 12 to
// 30 alternated rounds, in runs an hour apart on that noisy host: 1.10 to 1.18 with x read in
// place, 0.94 to 1.12 packed, 0.94 to 1.04 packed and with y's tile prefetched (below).
namespace {

constexpr int64_t gemm_depth = 256;  // columns of x (rows of a panel) a pass
constexpr int64_t gemm_block = 120;  // rows of x a pass at most, a multiple of 6
constexpr int64_t gemm_rows = 6;     // rows of the micro-kernel

struct Range {
    int64_t lo, hi;
};

// Rows m of y and panels p, the rows packed into `packed` (gemm_block * gemm_depth floats) a
// block at a time, in groups of six: a group's column c is its six floats at c * 6 (fewer in the
// last group). The blocks are of equal size, not 120 and a remainder: vit's 197 rows as 102 and
// 95, not 120 and 77. A last panel past K is multiplied into a tile of its own and copied out, so
// y is never written past its K columns.
RIDGE_SIMD_LEAF void gemm_share(const float* x, const float* w, const float* b, float* y, float* packed, const Gemm& d,
                                Range m, Range p) {
    const int64_t C = d.C, K = d.K;
    const int64_t blocks = (m.hi - m.lo + gemm_block - 1) / gemm_block;
    const int64_t block = blocks ? ((m.hi - m.lo + blocks - 1) / blocks + gemm_rows - 1) / gemm_rows * gemm_rows : 0;
    for (int64_t c0 = 0; c0 < C; c0 += gemm_depth) {
        const int64_t depth = std::min(gemm_depth, C - c0);
        const bool add = c0 > 0 || d.sum, last = c0 + depth == C;
        for (int64_t r0 = m.lo; r0 < m.hi; r0 += block) {
            const int64_t r1 = std::min(m.hi, r0 + block);
            for (int64_t r = r0; r < r1; r += gemm_rows) {
                const int64_t n = std::min(gemm_rows, r1 - r);
                float* group = packed + (r - r0) * depth;
                for (int64_t c = 0; c < depth; ++c)
                    for (int64_t i = 0; i < n; ++i) group[c * n + i] = x[(r + i) * C + c0 + c];
            }
            for (int64_t j = p.lo; j < p.hi; ++j) {
                const int64_t k0 = j * panel, live = std::min(panel, K - k0);
                const float* wp = w + j * panel_floats(C) + c0 * panel;
                float bias[panel] = {};
                if (b && live < panel) std::copy(b + k0, b + K, bias);
                const float* bp = !b ? nullptr : live < panel ? bias : b + k0;
                // The first group reads the panel's columns from memory or L3 and the rest from
                // L1; each group asks for its share of the next panel's lines, so that panel is
                // near when its first group starts. On 2 threads of the Zen 3 it took vit_b_16's
                // 768 -> 2304 in 0.90 and convnext_tiny's 96 -> 384 (3136 rows) in 0.84 of the
                // time, the other vit shapes level (0.94 to 1.04); with the unrolled micro-kernel
                // vit's four shapes in 0.84 to 0.93 of the time before both.
                const int64_t groups = (r1 - r0 + gemm_rows - 1) / gemm_rows;
                const int64_t lines = (depth + groups - 1) / groups;
                for (int64_t r = r0; r < r1; r += gemm_rows) {
                    const int64_t n = std::min(gemm_rows, r1 - r);
                    const float* group = packed + (r - r0) * depth;
                    float* out = y + r * K + k0;
                    const int64_t g = (r - r0) / gemm_rows;
                    for (int64_t l = g * lines; l < std::min(depth, (g + 1) * lines); ++l)
                        prefetch_ahead(wp, panel_floats(C) + l * panel);
                    if (live == panel) {
                        // The tile's rows are asked for now and used after the products: on
                        // 3072 outputs a thread's 1.2 MB of y is out of L2 by the next pass.
                        for (int64_t i = 0; i < n; ++i) __builtin_prefetch(out + i * K, 1);
                        multiply_rows(n, group, 1, n, wp, panel, depth, out, K, add);
                        if (last) finish_tile(out, K, n, bp, d.relu);
                        continue;
                    }
                    float tile[gemm_rows * panel];
                    for (int64_t i = 0; i < n; ++i)
                        for (int64_t k = 0; k < panel; ++k) tile[i * panel + k] = k < live ? out[i * K + k] : 0.0f;
                    multiply_rows(n, group, 1, n, wp, panel, depth, tile, panel, add);
                    if (last) finish_tile(tile, panel, n, bp, d.relu);
                    for (int64_t i = 0; i < n; ++i)
                        for (int64_t k = 0; k < live; ++k) out[i * K + k] = tile[i * panel + k];
                }
            }
        }
    }
}

}  // namespace

size_t linear_gemm_scratch(int threads) { return size_t(threads) * gemm_block * gemm_depth; }

void linear_gemm(const float* x, const float* w, const float* b, float* y, float* scratch, const Gemm& d, int threads) {
    const int64_t panels = (d.K + panel - 1) / panel;
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        float* packed = scratch + t * gemm_block * gemm_depth;
        // Rows where each thread has a block of them or more: each packs only its own (on
        // convnext_tiny's 3136 rows at batch 1, 96 -> 384 and back, both threads packing every row
        // made the net slower than oneDNN's inner products). On fewer rows (vit's 197 at batch 1),
        // panels where they share out evenly or are many: every thread reads all of x (packing it
        // again), each its own weights; else groups of six rows.
        const bool by_rows = d.M >= team * gemm_block || (panels % team != 0 && panels < 8 * team);
        Range m{0, d.M}, p{0, panels};
        if (by_rows)
            share(d.M, gemm_rows, t, team, m.lo, m.hi);
        else
            share(panels, 1, t, team, p.lo, p.hi);
        gemm_share(x, w, b, y, packed, d, m, p);
    }
}

// A linear layer on few rows in training (squeeze-excitation's two at a training batch: 8 rows,
// 16 to 1152 channels squeezed to 4 to 240): forward and both gradients as three shapes of work
// over a weight matrix M (R, L) stored with its long side L contiguous. A squeeze (C -> K, C > K)
// keeps w as PyTorch does, (K, C); an expansion (K > C) keeps it transposed, (C, K). Its forward
// and data gradient are then dot products along L or sums of M's rows, and its weight gradient
// outer products, each vectorized along L and blocked over rows so that the FMA chains are
// independent. A first version with one dot product per output, a sum across lanes for each, took
// 0.14 ms on efficientnet_b0's 48 -> 1152 expansion at batch 8 (9216 outputs of length 48) in
// `ridge bench`'s per-layer pass, and 0.04 ms as sums of rows (6 us alone with its data in cache).
namespace {

// 8 lanes: GCC lowers 16-lane vectors to memory on AVX2 (a 16-lane version of these kernels, built
// for x86-64-v3, ran at 9 GFLOP/s against 70 for AVX-512 on the 2-core EPYC), while on Zen 4 an
// AVX-512 FMA is two 256-bit halves anyway.
using V = Vec<8>;
constexpr int64_t W = 8;
typedef int32_t Lanes __attribute__((vector_size(32)));

// Lane j of the result: lane j of x where bit h of j is clear, of y where it is set, plus the lane
// whose index differs from j in bit h, from the same vector.
template <int h, int... j>
RIDGE_SIMD_INLINE V fold(V x, V y, std::integer_sequence<int, j...>) {
    return __builtin_shuffle(x, y, Lanes{(j & h ? W + j : j)...}) +
           __builtin_shuffle(x, y, Lanes{(j & h ? W + (j ^ h) : j ^ h)...});
}
template <int h>
RIDGE_SIMD_INLINE V fold(V x, V y) {
    return fold<h>(x, y, std::make_integer_sequence<int, W>{});
}

// Lane i: the sum across lanes of a[i], in three levels of shuffles and adds for all eight (a
// chain of 7 scalar adds each cost more than the products on short rows).
RIDGE_SIMD_INLINE V gather_sums(const V* a) {
    const V q0 = fold<4>(a[0], a[4]), q1 = fold<4>(a[1], a[5]), q2 = fold<4>(a[2], a[6]), q3 = fold<4>(a[3], a[7]);
    return fold<1>(fold<2>(q0, q2), fold<2>(q1, q3));
}

// The dot products' last 8 floats of L again, from l (< L), the lanes already summed cleared in
// both operands (so an infinity there adds 0 x 0, not 0 x inf).
template <int BN, int BR>
RIDGE_SIMD_INLINE void add_last_lanes(V* acc, const float* const* ap, const float* const* mp, int64_t l, int64_t L) {
    Lanes keep;
    for (int k = 0; k < W; ++k) keep[k] = k + L - l >= W ? -1 : 0;
    V m[BR];
    for (int i = 0; i < BR; ++i) m[i] = (V)((Lanes)load<V>(mp[i] + L - W) & keep);
    for (int j = 0; j < BN; ++j) {
        const V v = (V)((Lanes)load<V>(ap[j] + L - W) & keep);
        for (int i = 0; i < BR; ++i) acc[j * BR + i] += v * m[i];
    }
}

// The BN x BR chains' sums across lanes, plus the bias, into out's rows n0.. and columns r..,
// those past `rows` and `count` (computed from the last row again) not stored.
template <int BN, int BR>
RIDGE_SIMD_INLINE void store_dots(const V* acc, const float* bias, float* out, int64_t n0, int64_t rows, int64_t r,
                                  int64_t count, int64_t R) {
    for (int h = 0; h < BN * BR; h += 8) {
        const V s = gather_sums(acc + h);
        for (int q = 0; q < 8; ++q) {
            const int j = (h + q) / BR, i = (h + q) % BR;
            if (j < rows && i < count) out[(n0 + j) * R + r + i] = s[q] + (bias ? bias[r + i] : 0.0f);
        }
    }
}

// out[n, r] = a[n] . M[r] (+ bias[r]) for the `rows` rows of a from n0 and the `count` rows of M
// from r, BN x BR = 8 or 16 of them at a time (the missing ones are computed from the last row
// again and not stored). Each step along L loads BN + BR vectors for BN x BR independent FMA
// chains. M's vectors are loaded a step ahead: loaded where they are used, GCC folds them into each
// FMA as a memory operand, loading each once per row of a (at 2 x 4, 10 loads per 8 FMAs instead
// of 6). The
// tail of L is the last 8 floats again, the lanes already summed cleared in both operands (so an
// infinity there adds 0 x 0, not 0 x inf), or zero-padded copies where L < 8.
template <int BN, int BR>
RIDGE_SIMD_INLINE void dots_block(const float* a, const float* M, const float* bias, float* out, int64_t n0,
                                  int64_t rows, int64_t r, int64_t count, int64_t R, int64_t L) {
    constexpr int chains = BN * BR;
    static_assert(chains == 8 || chains == 16);
    const float* ap[BN];
    const float* mp[BR];
    for (int j = 0; j < BN; ++j) ap[j] = a + (n0 + std::min<int64_t>(j, rows - 1)) * L;
    for (int i = 0; i < BR; ++i) mp[i] = M + (r + std::min<int64_t>(i, count - 1)) * L;
    V acc[chains] = {};
    int64_t l = 0;
    if (L >= W) {
        V m[BR];
        for (int i = 0; i < BR; ++i) m[i] = load<V>(mp[i]);
        for (;; l += W) {
            const bool last = l + 2 * W > L;
            V next[BR] = {};
            if (!last)
                for (int i = 0; i < BR; ++i) next[i] = load<V>(mp[i] + l + W);
            for (int j = 0; j < BN; ++j) {
                const V v = load<V>(ap[j] + l);
                for (int i = 0; i < BR; ++i) acc[j * BR + i] += v * m[i];
            }
            if (last) break;
            for (int i = 0; i < BR; ++i) m[i] = next[i];
        }
        l += W;
        if (l < L) add_last_lanes<BN, BR>(acc, ap, mp, l, L);
    } else {
        float ta[BN][W] = {}, tm[BR][W] = {};
        for (int i = 0; i < BR; ++i) __builtin_memcpy(tm[i], mp[i], size_t(L) * sizeof(float));
        for (int j = 0; j < BN; ++j) __builtin_memcpy(ta[j], ap[j], size_t(L) * sizeof(float));
        for (int j = 0; j < BN; ++j)
            for (int i = 0; i < BR; ++i) acc[j * BR + i] += load<V>(ta[j]) * load<V>(tm[i]);
    }
    store_dots<BN, BR>(acc, bias, out, n0, rows, r, count, R);
}

// dots_block with 16-lane steps, for AVX-512: the same BN x BR chains, each a 16-lane
// accumulator while 16 floats of L are left, folded to 8 lanes (its halves added) for the last 8
// to 15 and the sums across lanes; 24 of the 32 registers at 4 x 4. `ahead`, where not null, is
// the next block's rows of M, asked for a line of each per step: in inference a squeeze's weights
// come from memory (the net's other weights and maps went through the caches since the last
// step), and the prefetchers start each block's four new streams late. Alone on the 2-core Zen 5,
// two threads, weights evicted before each run, five alternated runs (8-lane blocks / 16-lane /
// 16-lane with `ahead`): efficientnet_b7's 2304 -> 96 on 8 rows 42-51 / 41-47 / 32-40 us, its
// 3840 -> 160 92-108 / 82-100 / 73-76, efficientnet_b0's 1152 -> 48 on 16 rows 23-25 / 20-24 /
// 20-24. In the nets the small squeezes' times are set by the steps around them on this host.
template <int BN, int BR>
RIDGE_SIMD_INLINE void dots_block_wide(const float* a, const float* M, const float* bias, float* out, int64_t n0,
                                       int64_t rows, int64_t r, int64_t count, int64_t R, int64_t L,
                                       const float* ahead) {
    using V16 = Vec<16>;
    constexpr int chains = BN * BR;
    static_assert(chains == 8 || chains == 16);
    const float* ap[BN];
    const float* mp[BR];
    for (int j = 0; j < BN; ++j) ap[j] = a + (n0 + std::min<int64_t>(j, rows - 1)) * L;
    for (int i = 0; i < BR; ++i) mp[i] = M + (r + std::min<int64_t>(i, count - 1)) * L;
    V16 wide[chains] = {};
    const int64_t steps = L / 16;
    V16 m[BR];
    for (int i = 0; i < BR; ++i) m[i] = load<V16>(mp[i]);
    for (int64_t s = 0; s < steps; ++s) {
        const int64_t l = s * 16;
        V16 next[BR] = {};
        if (s + 1 < steps)
            for (int i = 0; i < BR; ++i) next[i] = load<V16>(mp[i] + l + 16);
        if (ahead)
            for (int i = 0; i < BR; ++i) prefetch_ahead(ahead, i * L + l);
        for (int j = 0; j < BN; ++j) {
            const V16 v = load<V16>(ap[j] + l);
            for (int i = 0; i < BR; ++i) wide[j * BR + i] += v * m[i];
        }
        for (int i = 0; i < BR; ++i) m[i] = next[i];
    }
    V acc[chains];
    for (int c = 0; c < chains; ++c)
        acc[c] = __builtin_shufflevector(wide[c], wide[c], 0, 1, 2, 3, 4, 5, 6, 7) +
                 __builtin_shufflevector(wide[c], wide[c], 8, 9, 10, 11, 12, 13, 14, 15);
    int64_t l = steps * 16;
    if (l + W <= L) {
        for (int j = 0; j < BN; ++j) {
            const V v = load<V>(ap[j] + l);
            for (int i = 0; i < BR; ++i) acc[j * BR + i] += v * load<V>(mp[i] + l);
        }
        l += W;
    }
    if (l < L) add_last_lanes<BN, BR>(acc, ap, mp, l, L);
    store_dots<BN, BR>(acc, bias, out, n0, rows, r, count, R);
}

// One row of a: 8 rows of M at a time. Otherwise blocks of 4 rows of M, each swept by the rows of a
// (from L1 after the first sweep) 4 at a time where AVX-512 gives 32 vector registers, 8 loads per
// 16 FMAs instead of 6 per 8, and 2 at a time for the last 1 to 3 and on AVX2, whose 16 registers
// about hold 2 x 4. In efficientnet_b7's per-layer pass at batch 16 in inference (one run each,
// median over a stage's squeezes and runs), its squeezes took 33 against 41 us at 1344 -> 56
// (bound 11 us), 69 against 90 at 2304 -> 96, 165 against 199 at 3840 -> 160; alone with its
// weights in cache, 1344 -> 56 took 15 against 19 us.
RIDGE_SIMD_LEAF void dots(const float* a, const float* M, const float* bias, float* out, int64_t N, int64_t R,
                          int64_t L, int64_t r0, int64_t r1) {
    if (N == 1) {
        for (int64_t r = r0; r < r1; r += 8) dots_block<1, 8>(a, M, bias, out, 0, 1, r, r1 - r, R, L);
        return;
    }
    const bool wide = wide_vectors();
    for (int64_t r = r0; r < r1; r += 4)
        for (int64_t n = 0; n < N;)
            if (wide && N - n >= 4) {
                if (L >= 16)
                    dots_block_wide<4, 4>(a, M, bias, out, n, N - n, r, r1 - r, R, L,
                                          n == 0 && r + 4 < r1 ? M + (r + 4) * L : nullptr);
                else
                    dots_block<4, 4>(a, M, bias, out, n, N - n, r, r1 - r, R, L);
                n += 4;
            } else {
                dots_block<2, 4>(a, M, bias, out, n, N - n, r, r1 - r, R, L);
                n += 2;
            }
}

// out[j, l..l + U W) = bias[l..] (or 0) + sum over k < K of coef[j cj + k ck] M[k, l..] for the
// `rows` rows j from 0 (B at a time, the missing ones computed from the last row again and not
// stored): B x U independent FMA chains, each step loading U vectors of M and B coefficients.
// The columns go by in strips, each reading one short piece of every row of M, which the
// hardware prefetchers did not keep ahead of; in training M (a squeeze-excitation's weights)
// comes from memory. So each step asks for the same row's piece two strips on. On the 2-core
// Zen 4, 8 rows of 110 -> 440 with M evicted, two threads: 33-46 us without, 18-19 with it, and
// one strip on 19-31 (alternated runs, a noisy host). Past the range it fetches a neighbour's
// columns, the next row or bytes past M: a prefetch never faults.
template <int B, int U>
RIDGE_SIMD_INLINE void sums_block(const float* coef, int64_t cj, int64_t ck, const float* M, const float* bias,
                                  float* out, int64_t rows, int64_t K, int64_t L, int64_t l) {
    const float* cp[B];
    for (int j = 0; j < B; ++j) cp[j] = coef + std::min<int64_t>(j, rows - 1) * cj;
    V acc[B][U];
    for (int j = 0; j < B; ++j)
        for (int u = 0; u < U; ++u) acc[j][u] = bias ? load<V>(bias + l + u * W) : V{};
    for (int64_t k = 0; k < K; ++k) {
        for (int u = 0; u < U; ++u) prefetch_ahead(M, k * L + l + (2 * U + u) * W);
        V m[U];
        for (int u = 0; u < U; ++u) m[u] = load<V>(M + k * L + l + u * W);
        for (int j = 0; j < B; ++j) {
            const float c = cp[j][k * ck];
            for (int u = 0; u < U; ++u) acc[j][u] += c * m[u];
        }
    }
    for (int j = 0; j < rows && j < B; ++j)
        for (int u = 0; u < U; ++u) store(out + j * L + l + u * W, acc[j][u]);
}

// sums_block over columns [l0, l1) of `rows` rows: blocks of B rows by U vectors, then single
// vectors; a last partial vector is computed again from l1 - 8, rewriting the same values, and a
// range narrower than a vector goes one column at a time.
template <int B, int U>
RIDGE_SIMD_INLINE void across_columns(const float* coef, int64_t cj, int64_t ck, const float* M, const float* bias,
                                      float* out, int64_t rows, int64_t K, int64_t L, int64_t l0, int64_t l1) {
    int64_t l = l0;
    for (; l + U * W <= l1; l += U * W) sums_block<B, U>(coef, cj, ck, M, bias, out, rows, K, L, l);
    for (; l + W <= l1; l += W) sums_block<B, 1>(coef, cj, ck, M, bias, out, rows, K, L, l);
    if (l < l1 && l1 - l0 >= W) {
        sums_block<B, 1>(coef, cj, ck, M, bias, out, rows, K, L, l1 - W);
    } else {
        for (; l < l1; ++l)
            for (int64_t j = 0; j < std::min<int64_t>(rows, B); ++j) {
                float s = bias ? bias[l] : 0.0f;
                for (int64_t k = 0; k < K; ++k) s += coef[j * cj + k * ck] * M[k * L + l];
                out[j * L + l] = s;
            }
    }
}

// In blocks of B rows (B = 4 or 8) while that many are left, each over all its columns, then a
// block of 4 or a single row, so that no block computes more than 3 rows it does not store. A
// single row takes 8 vectors at a time, whose chains would otherwise be too few to hide the FMA
// latency; 8 rows take one, so that a batch of 8 reads M once: in blocks of 4 rows by 2 vectors,
// mobilenet_v3_large's 960 x 240 squeeze took 79 us for its data gradient against 67 (it streams
// the weights from memory).
RIDGE_SIMD_LEAF void sums(const float* coef, int64_t cj, int64_t ck, const float* M, const float* bias, float* out,
                          int64_t rows, int64_t K, int64_t L, int64_t l0, int64_t l1, int B) {
    for (int64_t j = 0; j < rows;) {
        const float* c = coef + j * cj;
        float* o = out + j * L;
        const int64_t left = rows - j;
        if (left == 1) {
            across_columns<1, 8>(c, cj, ck, M, bias, o, 1, K, L, l0, l1);
            j += 1;
        } else if (B == 8 && left >= 8) {
            across_columns<8, 1>(c, cj, ck, M, bias, o, left, K, L, l0, l1);
            j += 8;
        } else {
            across_columns<4, 2>(c, cj, ck, M, bias, o, left, K, L, l0, l1);
            j += 4;
        }
    }
}

// Rows of sums over a matrix M too large for the caches: a classifier's weights at a training
// batch, C-major as oneDNN's inner product keeps them (VGG's 4096 x 4096, alexnet's 9216 x 4096).
// sums walks a strip of columns down every row of M, 32 bytes from each row a row's length apart.
// Here a block of 16 rows of M goes by tiles of 2048 columns instead, each row a stream the
// prefetchers follow, and the rows' partial sums wait in out (N x 2048 floats, in L2), loaded and
// stored once a block. The products are added in the same order as in sums (over M's rows, from
// the bias); the two agreed bit for bit on every shape timed here. Alone on the 2-core Zen 3, 8
// rows, M evicted, best of 3 (strips against streamed): 4096 x 4096 14.6 against 8.6 ms, 9216 x
// 4096 40 against 21, 4096 x 1000 3.5 against 2.0, 2048 x 1000 1.5 against 0.9; 1024 x 1000 and
// squeeze-excitation's 160 x 3840 were level (0.46 and 0.26 ms), so below 4 MiB the strips
// stay. Blocks of 8 rows or tiles of 1024 columns were slower, a row-major split of the rows
// between the threads level, huge pages and prefetches ahead in the row no faster: it reads M at
// about 8 GB/s, against 17.8 for a plain sweep, and a layout of its own (panels, as linear_panels
// reads in inference) would be the next step.
constexpr int64_t stream_rows = 16;
constexpr int64_t stream_tile = 2048;              // columns
constexpr int64_t stream_from = int64_t(4) << 20;  // bytes of M

// 4 rows of out by U vectors from column l: their sums over M's rows [k0, k1) added to what out
// holds, or to the bias (or 0) where k0 is 0. Each step loads U vectors of M and broadcasts 4
// coefficients for 4 x U independent FMA chains (4 x 3 and the 3 vectors of M take 15 of AVX2's
// 16 registers; 4 x 2 ran 4096 x 4096 in 11.7 against 8.8 ms). A block of fewer rows computes the
// last again and does not store it.
template <int U>
RIDGE_SIMD_INLINE void stream_block(const float* coef, int64_t R, const float* M, const float* bias, float* out,
                                    int64_t rows, int64_t L, int64_t k0, int64_t k1, int64_t l) {
    const float* cp[4];
    float* op[4];
    for (int j = 0; j < 4; ++j) {
        cp[j] = coef + std::min<int64_t>(j, rows - 1) * R;
        op[j] = out + std::min<int64_t>(j, rows - 1) * L + l;
    }
    V acc[4][U];
    for (int j = 0; j < 4; ++j)
        for (int u = 0; u < U; ++u)
            acc[j][u] = k0 > 0 ? load<V>(op[j] + u * W) : bias ? load<V>(bias + l + u * W) : V{};
    for (int64_t k = k0; k < k1; ++k) {
        V m[U];
        for (int u = 0; u < U; ++u) m[u] = load<V>(M + k * L + l + u * W);
        for (int j = 0; j < 4; ++j) {
            const float c = cp[j][k];
            for (int u = 0; u < U; ++u) acc[j][u] += c * m[u];
        }
    }
    for (int j = 0; j < 4 && j < rows; ++j)
        for (int u = 0; u < U; ++u) store(op[j] + u * W, acc[j][u]);
}

// out[n, l] = sum over r of coef[n, r] M[r, l] (+ bias[l]) for l in [l0, l1): blocks of 3
// vectors, then single vectors, then single columns, none computed twice (out accumulates).
RIDGE_SIMD_LEAF void streamed_sums(const float* coef, const float* M, const float* bias, float* out, int64_t N,
                                   int64_t R, int64_t L, int64_t l0, int64_t l1) {
    for (int64_t t0 = l0; t0 < l1; t0 += stream_tile) {
        const int64_t t1 = std::min(l1, t0 + stream_tile);
        for (int64_t k0 = 0; k0 < R; k0 += stream_rows) {
            const int64_t k1 = std::min(R, k0 + stream_rows);
            int64_t l = t0;
            for (; l + 3 * W <= t1; l += 3 * W)
                for (int64_t j = 0; j < N; j += 4)
                    stream_block<3>(coef + j * R, R, M, bias, out + j * L, N - j, L, k0, k1, l);
            for (; l + W <= t1; l += W)
                for (int64_t j = 0; j < N; j += 4)
                    stream_block<1>(coef + j * R, R, M, bias, out + j * L, N - j, L, k0, k1, l);
            for (; l < t1; ++l)
                for (int64_t j = 0; j < N; ++j) {
                    float s = k0 > 0 ? out[j * L + l] : bias ? bias[l] : 0.0f;
                    for (int64_t k = k0; k < k1; ++k) s += coef[j * R + k] * M[k * L + l];
                    out[j * L + l] = s;
                }
        }
    }
}

// out[n, l] = sum over r of coef[n, r] M[r, l] (+ bias[l]), l in [l0, l1): rows of sums of M's rows.
void combos(const float* coef, const float* M, const float* bias, float* out, int64_t N, int64_t R, int64_t L,
            int64_t l0, int64_t l1) {
    if (R * L * int64_t(sizeof(float)) >= stream_from)
        streamed_sums(coef, M, bias, out, N, R, L, l0, l1);
    else
        sums(coef, R, 1, M, bias, out, N, R, L, l0, l1, N >= 8 ? 8 : 4);
}

// out[l] = the sum of a's rows n = 0, 1, ... at column l, for l in [l0, l1) of a (N, L): four
// vectors of columns in flight down the rows, then one, then single columns, each column's adds in
// row order (the order of a plain loop over n).
RIDGE_SIMD_LEAF void column_share(const float* a, int64_t N, int64_t L, int64_t l0, int64_t l1, float* out) {
    int64_t l = l0;
    for (; l + 4 * W <= l1; l += 4 * W) {
        V s[4] = {};
        for (int64_t n = 0; n < N; ++n)
            for (int u = 0; u < 4; ++u) s[u] += load<V>(a + n * L + l + u * W);
        for (int u = 0; u < 4; ++u) store(out + l + u * W, s[u]);
    }
    for (; l + W <= l1; l += W) {
        V s{};
        for (int64_t n = 0; n < N; ++n) s += load<V>(a + n * L + l);
        store(out + l, s);
    }
    for (; l < l1; ++l) {
        float s = 0;
        for (int64_t n = 0; n < N; ++n) s += a[n * L + l];
        out[l] = s;
    }
}

// out[r, l] = sum over n of coef[n, r] v[n, l] for r in [r0, r1), every l: outer products.
void outer(const float* coef, const float* v, float* out, int64_t N, int64_t R, int64_t L, int64_t r0, int64_t r1) {
    if (r1 > r0) sums(coef + r0, 1, R, v, nullptr, out + r0 * L, r1 - r0, N, L, 0, L, 4);
}

}  // namespace

void linear_rows(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t C, int64_t K,
                 bool transposed, int threads) {
    for_units(threads, threads, [&](int64_t u) {
        const int t = int(u);
        int64_t lo, hi;
        if (transposed) {  // w (C, K): y rows are sums of w's rows
            share(K, 16, t, threads, lo, hi);
            combos(x, w, b, y, N, C, K, lo, hi);
        } else {  // w (K, C): y is dot products along C
            share(K, 8, t, threads, lo, hi);
            dots(x, w, b, y, N, K, C, lo, hi);
        }
    });
}

void linear_rows_dgrad(const float* dy, const float* w, float* dx, int64_t N, int64_t C, int64_t K, bool transposed,
                       int threads) {
    for_units(threads, threads, [&](int64_t u) {
        const int t = int(u);
        int64_t lo, hi;
        if (transposed) {  // w (C, K): dx is dot products along K
            share(C, 8, t, threads, lo, hi);
            dots(dy, w, nullptr, dx, N, C, K, lo, hi);
        } else {  // w (K, C): dx rows are sums of w's rows
            share(C, 16, t, threads, lo, hi);
            combos(dy, w, nullptr, dx, N, K, C, lo, hi);
        }
    });
}

void linear_rows_wgrad(const float* x, const float* dy, float* dw, float* db, int64_t N, int64_t C, int64_t K,
                       bool transposed, int threads) {
    for_units(threads, threads, [&](int64_t u) {
        const int t = int(u);
        int64_t lo, hi;
        if (transposed) {  // dw (C, K) = x^T dy
            share(C, 4, t, threads, lo, hi);
            outer(x, dy, dw, N, C, K, lo, hi);
        } else {  // dw (K, C) = dy^T x
            share(K, 4, t, threads, lo, hi);
            outer(dy, x, dw, N, K, C, lo, hi);
        }
        if (db) {
            share(K, W, t, threads, lo, hi);
            column_share(dy, N, K, lo, hi, db);
        }
    });
}

void column_sums(const float* a, int64_t N, int64_t L, float* out, int threads) {
    for_units(threads, threads, [&](int64_t u) {
        int64_t lo, hi;
        share(L, 4 * W, int(u), threads, lo, hi);
        column_share(a, N, L, lo, hi, out);
    });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
