// Batchnorm in training on small maps: each channel's mean and biased variance over its N*HW
// values, y = (x - mean) * gamma / sqrt(var + eps) + beta (and max(0, .) where a ReLU is fused), and
// the gradients. oneDNN 2.6's primitive costs 20 to 50 us where the map is a few kilobytes (at
// batch 1: googlenet's inception4-5 batchnorms, shufflenet_v2's stage 4, resnet18's layer4): its
// own state is out of cache after the large layers around it (engine/backend/onednn/activation.cpp
// has the figures for ReLU), and it runs three passes with barriers between them.
//
// Eight channels at a time, one a lane: in nChw8c, nChw16c and channels-last (C a multiple of 8)
// a position holds eight neighbouring channels contiguous, `block` floats from the next position's.
// With AVX-512, sixteen where they fill a 64-byte line (nChw16c, channels-last on a multiple of
// 16): each pass then reads a line once, not once for each half. Lanes past C (a blocked
// layout's padding, zero) take gamma = beta = 0, so they write zeros.
//
// The mean is two passes as in layernorm.cpp: the deviations' own sum corrects the first pass's
// rounding, and the variance comes from the deviations, not from E[x^2] - mean^2. Each lane sums
// its N*HW values in one chain of floats; the executor gives it small maps, and with AVX-512
// 8-channel blocks of up to 2^16 floats each (engine/backend/onednn/norm.cpp).
//
// nChw8c with AVX-512 where HW is even: an image's block of 8 channels is HW / 2 pairs of
// positions, each pair one 64-byte line, walked as if nChw16c of twice the channels on half the
// positions (`pairs`): lanes j and j + 8 hold channel j at a pair's two positions, so each sum is
// folded across the halves before use, and per-channel values fill both. In 8 lanes a pass
// loaded half a line a position; oneDNN 2.6 runs nChw8c with its AVX2 kernel there.
//
// The backward recomputes the ReLU's mask from x and the saved mean and variance with the
// forward's own expression, so a fused ReLU needs no workspace and its mask is the forward's to
// the bit. With xhat = (x - mean) * r, r = 1 / sqrt(var + eps), and dy' = dy where the forward's
// output is positive (with a ReLU) or dy:
//   dbeta = sum dy',  dgamma = sum dy' * xhat,  dx = gamma * r * (dy' - dbeta / M - xhat * dgamma / M).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

// The lanes of a vector type: 8 channels a group, or with AVX-512 16, a whole 64-byte line.
template <class V>
constexpr int lanes_in = int(sizeof(V) / sizeof(float));

// The values from channel c0 of a per-channel vector, zero past C.
template <class V>
RIDGE_SIMD_INLINE V lanes_of(const float* v, int64_t c0, int64_t C) {
    float t[lanes_in<V>] = {};
    for (int j = 0; j < lanes_in<V> && c0 + j < C; ++j) t[j] = v[c0 + j];
    return load<V>(t);
}

template <class V>
RIDGE_SIMD_INLINE void store_lanes(float* v, V lanes, int64_t c0, int64_t C, bool pairs) {
    for (int j = 0; j < (pairs ? 8 : lanes_in<V>) && c0 + j < C; ++j) v[c0 + j] = lanes[j];
}

// A per-channel vector's values from channel c0, in both halves where `pairs`.
template <class V>
RIDGE_SIMD_INLINE V channels_of(const float* v, int64_t c0, int64_t C, bool pairs) {
    V out = lanes_of<V>(v, c0, C);
    if (pairs)
        for (int j = 8; j < lanes_in<V>; ++j) out[j] = out[j - 8];
    return out;
}

// Each channel's sum: where `pairs`, lane j's and lane j + 8's added, in both.
template <class V>
RIDGE_SIMD_INLINE V folded(V sum, bool pairs) {
    if (pairs)
        for (int j = 0; j + 8 < lanes_in<V>; ++j) sum[j] = sum[j + 8] = sum[j] + sum[j + 8];
    return sum;
}

// The layout a group walks, and its first channel there: x's own, or for `pairs` nChw16c of
// twice the channels on half the positions.
ChannelLayout walked(const ChannelLayout& l, bool pairs) {
    return pairs ? ChannelLayout{l.N, 2 * l.padded_channels(), l.HW / 2, 16} : l;
}

// 1 / sqrt(var + eps): the forward and the backward both take r, and gamma * r, from here.
template <class V>
RIDGE_SIMD_INLINE V inverse_std(V var, float eps) {
    V r;
    for (int j = 0; j < lanes_in<V>; ++j) r[j] = 1.0f / std::sqrt(var[j] + eps);
    return r;
}

// The forward's output before its ReLU, which the backward recomputes for the mask.
template <class V>
RIDGE_SIMD_INLINE V normalized(V x, V mean, V gain, V beta) {
    return (x - mean) * gain + beta;
}

// max(0, t), a NaN kept, and d where t is positive: selects, so compiled for the target (vec.h),
// as are the lambdas of the passes that call them.
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V relu_of(V t) {
    return t < V{} ? V{} : t;
}
template <class V>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE V where_positive(V t, V d) {
    return t > V{} ? d : V{};
}

// f(offset, k) at each of the group's N*HW positions, channels c0 on, k alternating 0 and 1 so
// that a sum can run in two chains: a single one waits on the add's latency at every position.
template <class F>
RIDGE_SIMD_LEAF RIDGE_SIMD_INLINE void each_position(const ChannelLayout& l, int64_t c0, F f) {
    for (int64_t n = 0; n < l.N; ++n) {
        int64_t o = l.offset(n, c0, 0), s = 0;
        for (; s + 2 <= l.HW; s += 2, o += 2 * l.block) f(o, 0), f(o + l.block, 1);
        if (s < l.HW) f(o, 0);
    }
}

template <class V>
RIDGE_SIMD_LEAF void forward_group(const float* x, const float* gamma, const float* beta, float* y, float* mean,
                                   float* var, bool relu, const ChannelLayout& l, int64_t c0, bool pairs, float eps) {
    const float M = float(l.N * l.HW);
    const ChannelLayout w = walked(l, pairs);
    const int64_t cw = pairs ? 2 * c0 : c0;
    V sum[2] = {};
    each_position(w, cw, [&](int64_t o, int k) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA { sum[k] += load<V>(x + o); });
    const V m0 = folded(sum[0] + sum[1], pairs) / M;
    V err[2] = {}, sq[2] = {};
    each_position(w, cw, [&](int64_t o, int k) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        const V d = load<V>(x + o) - m0;
        err[k] += d, sq[k] += d * d;
    });
    const V c = folded(err[0] + err[1], pairs) / M, m = m0 + c;
    V v = folded(sq[0] + sq[1], pairs) / M - c * c;
    v = v < V{} ? V{} : v;
    store_lanes(mean, m, c0, l.C, pairs);
    store_lanes(var, v, c0, l.C, pairs);
    const V gain = channels_of<V>(gamma, c0, l.C, pairs) * inverse_std(v, eps);
    const V b = channels_of<V>(beta, c0, l.C, pairs);
    each_position(w, cw, [&](int64_t o, int) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        const V t = normalized(load<V>(x + o), m, gain, b);
        store(y + o, relu ? relu_of(t) : t);  // a NaN stays NaN
    });
}

template <class V>
RIDGE_SIMD_LEAF void backward_group(const float* x, const float* dy, const float* gamma, const float* beta,
                                    const float* mean, const float* var, bool relu, float* dx, float* dgamma,
                                    float* dbeta, const ChannelLayout& l, int64_t c0, bool pairs, float eps) {
    const float M = float(l.N * l.HW);
    const ChannelLayout w = walked(l, pairs);
    const int64_t cw = pairs ? 2 * c0 : c0;
    const V m = channels_of<V>(mean, c0, l.C, pairs), r = inverse_std(channels_of<V>(var, c0, l.C, pairs), eps);
    const V gain = channels_of<V>(gamma, c0, l.C, pairs) * r, b = channels_of<V>(beta, c0, l.C, pairs);
    auto grad = [&](int64_t o, V xv) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        const V d = load<V>(dy + o);
        return relu ? where_positive(normalized(xv, m, gain, b), d) : d;
    };
    V sd[2] = {}, sdx[2] = {};
    each_position(w, cw, [&](int64_t o, int k) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        const V xv = load<V>(x + o), d = grad(o, xv);
        sd[k] += d, sdx[k] += d * (xv - m);
    });
    const V db = folded(sd[0] + sd[1], pairs), dg = folded(sdx[0] + sdx[1], pairs) * r;
    store_lanes(dbeta, db, c0, l.C, pairs);
    store_lanes(dgamma, dg, c0, l.C, pairs);
    if (!dx) return;
    const V k1 = db / M, k2 = dg * r / M;
    each_position(w, cw, [&](int64_t o, int) RIDGE_SIMD_LEAF RIDGE_SIMD_LAMBDA {
        const V xv = load<V>(x + o);
        store(dx + o, gain * (grad(o, xv) - k1 - (xv - m) * k2));
    });
}

int64_t groups(const ChannelLayout& l) { return l.padded_channels() / 8; }

// The groups one thread takes together: both of a 64-byte line where a position's 16 channels
// fill one (nChw16c, or channels-last with C a multiple of 16), else one. Two threads writing the
// halves of the same lines passed each line between their cores at every position. A test
// program on the 2-core Zen 4, warm maps in nChw16c, 2 threads: 8x16x28x28 (googlenet's
// inception3a.branch3.0 in its training step at batch 8), one group a thread, forward 235-250 us
// -> 37-38 on one thread, backward level (50-60 us); 8x48x14x14 (3 blocks: the middle one split)
// forward 78-84 -> 18-20 us, backward 33-40 -> 22-25; an even count of blocks level. In googlenet's
// training step at batch 8 (2 alternated runs each), its map read cold from the conv before:
// inception3a.branch3.0.bn forward 79-91 -> 62-63 us, inception4a's (8x16x14x14) 28-31 -> 22-25.
// With AVX-512 such a pair is one group of 16 lanes, each line read once a pass: the same test
// program, 8x16x28x28 forward 32 -> 18 us, backward 43 -> 23, 8x24x14x14 10 -> 7, 8x48x14x14 21 ->
// 12; in googlenet's step (2 alternated runs) inception3a.branch3.0.bn 51-52 -> 36-38 us forward,
// 71-72 -> 37 backward, inception4b's and 4c's (8x24x14x14) 31-32 -> 24-27 forward.
int64_t per_thread(const ChannelLayout& l) { return l.block % 16 == 0 ? 2 : 1; }

// Runs group(Lanes{}, c0, pairs) over the map's groups of channels, per_thread(l) of them a
// thread's unit: Lanes is std::type_identity of the vector type, Vec16 for a unit's pair with
// AVX-512 (or a block of nChw8c walked in pairs of positions), else Vec8 for each group.
template <class Group>
void each_unit(const ChannelLayout& l, Group group) {
    const int64_t per = per_thread(l);
    const bool wide = RIDGE_SIMD_WIDE && per == 2, pairs = RIDGE_SIMD_WIDE && l.block == 8 && l.HW % 2 == 0;
    for_units(groups(l) / per, omp_get_max_threads(), [&](int64_t u) {
        if (wide || pairs) {
            group(std::type_identity<Vec16>{}, (wide ? 16 : 8) * u, pairs);
            return;
        }
        for (int64_t g = u * per; g < (u + 1) * per; ++g) group(std::type_identity<Vec8>{}, 8 * g, false);
    });
}

}  // namespace

void batchnorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,
                       bool relu, const ChannelLayout& l, float eps) {
    each_unit(l, [&](auto lanes, int64_t c0, bool pairs) {
        forward_group<typename decltype(lanes)::type>(x, gamma, beta, y, mean, var, relu, l, c0, pairs, eps);
    });
}

void batchnorm_backward(const float* x, const float* dy, const float* gamma, const float* beta, const float* mean,
                        const float* var, bool relu, float* dx, float* dgamma, float* dbeta, const ChannelLayout& l,
                        float eps) {
    each_unit(l, [&](auto lanes, int64_t c0, bool pairs) {
        backward_group<typename decltype(lanes)::type>(x, dy, gamma, beta, mean, var, relu, dx, dgamma, dbeta, l,
                                                       c0, pairs, eps);
    });
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
