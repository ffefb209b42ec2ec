// kernels/simd's kernels alone against sums in double (or the layout's index formula), on each
// build of them this CPU runs: the dispatch library the executor calls, and the copies built for
// x86-64-v4, x86-64-v3 and baseline x86-64 (bench/kernels/simd_variants.h). An AVX-512 host thus
// also checks the AVX2 code that AVX2 hosts run (Winograd, image_conv and max pooling in training
// are routed to kernels/simd only below AVX-512), which the executor's tests there never reach.
// test_onednn checks where the executor routes each kernel; test_kernel_bench the kernels the bench
// times.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/kernels/simd_variants.h"
#include "kernels/simd/simd.h"
#include "kernels/simd/team.h"

using namespace ridge;
using kbench::runnable_simd_variants;
using kbench::SimdVariant;

namespace {

// A conv the Winograd kernels' tests run: its shape, the paddings on each side, the channel blocks
// of x and y (8, 16, or C / K for channels-last), the threads and the groups.
struct WinogradCase {
    int64_t N, C, H, W, K, pad_t, pad_l, pad_b, pad_r, block_x, block_y;
    int threads = 2;
    int64_t G = 1;
};

// Uniform floats in [-1, 1) from a seeded linear congruential generator: the same values on every
// host and build, so a failing case reruns as it failed.
struct Uniform {
    unsigned seed;
    float operator()() {
        seed = seed * 1664525u + 1013904223u;
        return -1 + 2 * float(seed >> 8) / float(1 << 24);
    }
};

}  // namespace

// kernels/simd's Winograd F(4x4, 3x3) conv alone, against the sum in double: blocked layouts whose
// channels pad the last block (C and K not multiples of the block; x's padding holds 1000, which
// must not reach y, the addend's 5, which y's padding must not keep), channels-last in and out,
// paddings of 0 to 2 that differ by side, maps not a multiple of the 4x4 tile, the bias, the
// residual sum and the ReLU, 144 tiles of 512 channels in two chunks, and 312 in three whose last
// is shorter, on 1, 2 and 3 threads (winograd.cpp). Grouped: groups of 24 (not a whole panel of U),
// 16 and 8, in blocked layouts and channels-last, the last group's block of 16 half padding (with
// the sum and the ReLU), uneven paddings, more outputs than inputs a group, regnet_x_1_6gf's block3
// conv (17 groups of 24), and three chunks a group, the last shorter. The scratch starts as NaN:
// every element the kernel reads, it must have written. The error allowed is relative to the sum of
// the terms' magnitudes: the transforms' coefficients (up to 8) amplify rounding in proportion to
// them, not to the result.
TEST_CASE("winograd3x3 matches the convolution summed in double, in every layout, padding and post-op") {
    const std::vector<WinogradCase> cases = {
        {2, 20, 9, 11, 24, 1, 1, 1, 1, 8, 8},           {1, 24, 10, 7, 40, 1, 1, 1, 1, 16, 16},
        {1, 16, 7, 13, 16, 0, 0, 0, 0, 16, 16},         {2, 8, 6, 5, 8, 2, 2, 2, 2, 8, 8},
        {1, 16, 8, 9, 24, 0, 1, 1, 2, 16, 24},          {1, 24, 5, 6, 20, 2, 0, 1, 2, 24, 8},
        {1, 16, 8, 9, 20, 1, 1, 1, 1, 16, 16},          {1, 512, 48, 48, 8, 1, 1, 1, 1, 8, 8},
        {2, 512, 49, 45, 24, 1, 1, 1, 1, 8, 8, 1},      {2, 512, 49, 45, 24, 1, 1, 1, 1, 8, 8, 3},
        {2, 72, 9, 11, 72, 1, 1, 1, 1, 8, 8, 2, 3},     {1, 48, 10, 7, 48, 1, 1, 1, 1, 16, 16, 3, 3},
        {1, 64, 8, 9, 64, 1, 1, 1, 1, 64, 64, 2, 8},    {2, 40, 7, 6, 40, 0, 1, 1, 2, 8, 8, 1, 5},
        {2, 72, 9, 8, 72, 1, 1, 1, 1, 16, 16, 2, 3},    {1, 32, 6, 6, 64, 1, 1, 1, 1, 16, 16, 2, 2},
        {2, 408, 14, 14, 408, 1, 1, 1, 1, 8, 8, 2, 17}, {1, 48, 40, 37, 48, 1, 1, 1, 1, 8, 8, 2, 2},
    };
    auto value = [](int64_t i, int64_t m) { return float((i * 37) % m) / float(m) - 0.5f; };
    const int64_t tail = 64;
    double worst = 0;
    for (const WinogradCase& e : cases) {
        const int64_t N = e.N, C = e.C, H = e.H, W = e.W, K = e.K, wc = C / e.G, wk = K / e.G;
        const int64_t P = H + e.pad_t + e.pad_b - 2, Q = W + e.pad_l + e.pad_r - 2;
        const simd::Winograd3x3 d{N, C, H, W, K, P, Q, e.pad_t, e.pad_l, e.block_x, e.block_y, e.G};
        const simd::ChannelLayout xl{N, C, H * W, e.block_x}, yl{N, K, P * Q, e.block_y};
        std::vector<float> x(size_t(N * xl.batch_stride()), 1000.0f), w(size_t(K * wc * 9)), b(static_cast<size_t>(K));
        for (int64_t n = 0; n < N; ++n)
            for (int64_t c = 0; c < C; ++c)
                for (int64_t s = 0; s < H * W; ++s) x[size_t(xl.offset(n, c, s))] = value((n * C + c) * H * W + s, 17);
        for (size_t i = 0; i < w.size(); ++i) w[i] = value(int64_t(i), 13) / 4;
        for (size_t i = 0; i < b.size(); ++i) b[i] = value(int64_t(i), 7);
        // The conv plus bias in double and the sum of its terms' magnitudes, (N,K,P,Q) plain, once
        // for every build: under the sanitizers the sums took most of the test's time.
        std::vector<double> conv(size_t(N * K * P * Q)), mag(conv.size());
        for (int64_t n = 0; n < N; ++n)
            for (int64_t k = 0; k < K; ++k)
                for (int64_t p = 0; p < P; ++p)
                    for (int64_t q = 0; q < Q; ++q) {
                        double want = b[size_t(k)], size = std::abs(want);
                        for (int64_t cl = 0; cl < wc; ++cl)
                            for (int64_t r = 0; r < 3; ++r)
                                for (int64_t t = 0; t < 3; ++t) {
                                    const int64_t h = p - e.pad_t + r, col = q - e.pad_l + t, c = k / wk * wc + cl;
                                    if (h < 0 || h >= H || col < 0 || col >= W) continue;
                                    const double term = double(w[size_t(((k * wc + cl) * 3 + r) * 3 + t)]) *
                                                        x[size_t(xl.offset(n, c, h * W + col))];
                                    want += term, size += std::abs(term);
                                }
                        const size_t i = size_t(((n * K + k) * P + p) * Q + q);
                        conv[i] = want, mag[i] = size;
                    }
        for (const SimdVariant& v : runnable_simd_variants()) {
            CAPTURE(v.isa);
            REQUIRE(v.winograd3x3_supported(d));
            std::vector<float> u(v.winograd3x3_weights_size(d));
            std::vector<float> scratch(v.winograd3x3_scratch(d, e.threads), std::numeric_limits<float>::quiet_NaN());
            v.winograd3x3_weights(w.data(), u.data(), d, false);
            const bool large = C > 64;
            for (int post = large && N > 1 ? 3 : 0; post < (large && N == 1 ? 1 : 4); ++post) {
                const bool sum = post & 1, relu = post & 2;
                INFO("N ", N, " C ", C, " ", H, "x", W, " K ", K, " G ", e.G, " padding ", e.pad_t, ",", e.pad_l, ",",
                     e.pad_b, ",", e.pad_r, " blocks ", e.block_x, ",", e.block_y, " sum ", sum, " relu ", relu,
                     " threads ", e.threads);
                std::vector<float> y(size_t(N * yl.batch_stride() + tail), -7.0f);
                std::fill(y.begin(), y.end() - tail, 5.0f);
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t k = 0; k < K; ++k)
                        for (int64_t s = 0; s < P * Q; ++s)
                            y[size_t(yl.offset(n, k, s))] = sum ? value(n * K * P * Q + s + k, 11) : 9.0f;
                const std::vector<float> addend = y;
                v.winograd3x3(x.data(), u.data(), b.data(), sum, relu, y.data(), scratch.data(), d, e.threads);
                int64_t wrong = 0;
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t k = 0; k < K; ++k)
                        for (int64_t s = 0; s < P * Q; ++s) {
                            const size_t o = size_t(yl.offset(n, k, s)), i = size_t((n * K + k) * P * Q + s);
                            double want = conv[i], size = mag[i];
                            if (sum) want += addend[o], size += std::abs(addend[o]);
                            if (relu) want = std::max(want, 0.0);
                            const double err = std::abs(y[o] - want) / (1 + size);
                            worst = std::max(worst, err);
                            wrong += err > 1e-5;
                        }
                int64_t padding = 0;
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t k = K; k < yl.padded_channels(); ++k)
                        for (int64_t s = 0; s < P * Q; ++s) padding += y[size_t(yl.offset(n, k, s))] != 0.0f;
                CHECK(wrong == 0);
                CHECK(padding == 0);
                CHECK(std::all_of(y.end() - tail, y.end(), [](float f) { return f == -7.0f; }));
            }
        }
    }
    MESSAGE("winograd3x3: largest error over (1 + the terms' magnitudes) ", worst);
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        // A NaN in x: the outputs of the tiles whose 6x6 patch holds it are NaN (a ReLU makes them 0),
        // the others right, and the padding of y's last block zero.
        {
            const simd::Winograd3x3 d{1, 8, 12, 12, 12, 12, 12, 1, 1, 8, 8};  // 3x3 tiles; K pads 12 -> 16
            std::vector<float> x(8 * 144, 0.5f), w(12 * 8 * 9, 0.25f), b(12, 0.0f);
            x[size_t((2 * 12 + 2) * 8 + 3)] = std::numeric_limits<float>::quiet_NaN();  // (h, w) = (2, 2), channel 3
            std::vector<float> u(v.winograd3x3_weights_size(d)), scratch(v.winograd3x3_scratch(d, 2));
            v.winograd3x3_weights(w.data(), u.data(), d, false);
            for (bool relu : {false, true}) {
                std::vector<float> y(16 * 144, -7.0f);
                v.winograd3x3(x.data(), u.data(), b.data(), false, relu, y.data(), scratch.data(), d, 2);
                int64_t wrong = 0, padding = 0;
                for (int64_t k = 0; k < 16; ++k)
                    for (int64_t p = 0; p < 12; ++p)
                        for (int64_t q = 0; q < 12; ++q) {
                            const float got = y[size_t((k / 8 * 144 + p * 12 + q) * 8 + k % 8)];
                            if (k >= 12) {
                                padding += got != 0.0f;
                                continue;
                            }
                            // Tile (0, 0) reads input rows and columns -1 to 4; the next ones start at 3.
                            const bool touched = p < 4 && q < 4;
                            const int64_t taps = (p == 0 || p == 11 ? 2 : 3) * (q == 0 || q == 11 ? 2 : 3);
                            if (touched)
                                wrong += relu ? got != 0.0f : !std::isnan(got);
                            else
                                wrong += !(std::abs(got - 0.5f * 0.25f * 8 * float(taps)) <= 1e-5f);  // a NaN fails too
                        }
                CHECK_MESSAGE(wrong == 0, "relu ", relu);
                CHECK(padding == 0);
            }
        }
        // A conv of more input channels than L2 holds rows for (C > 65536) still gets chunks, of one
        // micro-kernel's 6 rows (it was a division by zero), and one of 8 -> 256 channels over 8192 tiles
        // keeps V and M within 16 MiB (it took all tiles at once: 300 MB).
        const simd::Winograd3x3 wide{1, 65544, 64, 64, 8, 64, 64, 1, 1, 8, 8};
        REQUIRE(v.winograd3x3_supported(wide));
        CHECK(v.winograd3x3_scratch(wide, 2) == size_t(36 * (6 * (65544 + 16) + 2 * 16)));  // a line of skew each
        const simd::Winograd3x3 many{2, 8, 256, 256, 256, 256, 256, 1, 1, 8, 8};
        CHECK(v.winograd3x3_scratch(many, 2) * sizeof(float) <= (size_t(16) << 20));
        // Refused: a padding past 2 on a side (a window off the map), below 0, and channels-last
        // channels that are not whole vectors. Fields: N C H W K P Q pad_t pad_l block_x block_y.
        CHECK_FALSE(v.winograd3x3_supported({1, 8, 6, 6, 8, 8, 6, 1, 1, 8, 8}));
        CHECK_FALSE(v.winograd3x3_supported({1, 8, 6, 6, 8, 6, 8, 1, 3, 8, 8}));
        CHECK_FALSE(v.winograd3x3_supported({1, 12, 6, 6, 8, 6, 6, 1, 1, 12, 8}));
        CHECK_FALSE(v.winograd3x3_supported({1, 8, 6, 6, 12, 6, 6, 1, 1, 8, 12}));
        CHECK_FALSE(v.winograd3x3_supported({1, 8, 6, 6, 8, 6, 6, -1, 1, 8, 8}));
        // Groups whose channels are not whole vectors (4 and 12 a group), and a G that does not
        // divide C and K.
        CHECK_FALSE(v.winograd3x3_supported({1, 32, 6, 6, 32, 6, 6, 1, 1, 8, 8, 8}));
        CHECK_FALSE(v.winograd3x3_supported({1, 24, 6, 6, 48, 6, 6, 1, 1, 8, 8, 2}));
        CHECK_FALSE(v.winograd3x3_supported({1, 48, 6, 6, 48, 6, 6, 1, 1, 8, 8, 5}));
    }
}

namespace {

// A conv on the image of image_conv's and image_conv_wgrad's tests.
struct ImageCase {
    int64_t N, C, H, W, K, R, S, stride, pad, block;  // block 0: channels-last
    int threads;
    int64_t more = 0;                  // padding below and right of the map beyond `pad`
    int64_t stride_w = 0, pad_l = -1;  // where not 0 and -1: across, apart from stride and pad
};

simd::ImageConv image_conv_of(const ImageCase& t) {
    simd::ImageConv d{.N = t.N,
                      .C = t.C,
                      .H = t.H,
                      .W = t.W,
                      .K = t.K,
                      .R = t.R,
                      .S = t.S,
                      .stride_h = t.stride,
                      .stride_w = t.stride_w ? t.stride_w : t.stride,
                      .pad_t = t.pad,
                      .pad_l = t.pad_l >= 0 ? t.pad_l : t.pad,
                      .block = t.block ? t.block : t.K};
    d.P = (t.H + 2 * t.pad + t.more - t.R) / t.stride + 1;
    d.Q = (t.W + 2 * d.pad_l + t.more - t.S) / d.stride_w + 1;
    return d;
}

// Element (n, k, p, q) of y or dy (N,K,P,Q) in d's layout.
size_t output_at(const simd::ImageConv& d, int64_t n, int64_t k, int64_t p, int64_t q) {
    const int64_t B = d.block;
    return size_t(B == d.K ? ((n * d.P + p) * d.Q + q) * d.K + k
                           : (((n * (d.K / B) + k / B) * d.P + p) * d.Q + q) * B + k % B);
}

}  // namespace

// image_conv_wgrad against sums in double: dy in nChw8c, nChw16c and channels-last (whose 16-lane
// form runs on AVX-512 hosts where K allows), every kernel width it takes, strides 1 to 4,
// paddings that put whole kernel rows and columns outside the map, more padding below and right
// than above and left, maps narrower than the kernel,
// one or several images over 1 to 3 threads (image chunks where there are few channel blocks), with
// and without a bias. dw and db start as NaN: every element must be written. Errors relative to
// the sum of the terms' magnitudes.
TEST_CASE("image_conv_wgrad matches its sums in double") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        const ImageCase cases[] = {{1, 3, 20, 17, 16, 3, 3, 1, 1, 8, 2},    {2, 3, 23, 23, 24, 7, 7, 2, 3, 0, 2},
                                   {1, 3, 30, 30, 16, 11, 11, 4, 2, 8, 1},  {1, 3, 17, 13, 32, 5, 5, 1, 2, 16, 2},
                                   {3, 3, 9, 9, 16, 7, 7, 2, 3, 8, 3},      {2, 1, 6, 5, 8, 3, 3, 1, 2, 8, 1},
                                   {2, 4, 4, 9, 32, 3, 5, 1, 0, 0, 2},      {1, 2, 5, 4, 16, 5, 7, 3, 4, 16, 2},
                                   {2, 3, 11, 10, 16, 3, 3, 2, 1, 8, 2, 2}, {1, 3, 15, 15, 24, 7, 7, 2, 0, 0, 2, 5}};
        for (const ImageCase& t : cases)
            for (bool bias : {true, false}) {
                CAPTURE(t.K);
                CAPTURE(t.S);
                CAPTURE(t.block);
                CAPTURE(bias);
                const simd::ImageConv d = image_conv_of(t);
                REQUIRE(v.image_conv_wgrad_supported(d));
                auto dy_at = [&](int64_t n, int64_t k, int64_t p, int64_t q) { return output_at(d, n, k, p, q); };
                std::vector<float> x(size_t(t.N * t.C * t.H * t.W)), dy(size_t(t.N * t.K * d.P * d.Q));
                Uniform next{7};
                for (std::vector<float>* a : {&x, &dy})
                    for (float& e : *a) e = next();
                std::vector<float> dw(size_t(t.K * t.C * t.R * t.S), NAN), db(size_t(t.K), NAN);
                std::vector<float> scratch(v.image_conv_wgrad_scratch(d, t.threads), NAN);
                v.image_conv_wgrad(x.data(), dy.data(), dw.data(), bias ? db.data() : nullptr, scratch.data(), d,
                                   t.threads);
                int wrong = 0;
                for (int64_t k = 0; k < t.K; ++k) {
                    double sum_b = 0, mag_b = 0;
                    for (int64_t n = 0; n < t.N; ++n)
                        for (int64_t p = 0; p < d.P; ++p)
                            for (int64_t q = 0; q < d.Q; ++q) {
                                sum_b += dy[dy_at(n, k, p, q)], mag_b += std::fabs(dy[dy_at(n, k, p, q)]);
                            }
                    if (bias && !(std::fabs(db[size_t(k)] - sum_b) <= 1e-5 * mag_b + 1e-6) && wrong++ < 3)
                        MESSAGE("db[", k, "] ", db[size_t(k)], " against ", sum_b);
                    for (int64_t c = 0; c < t.C; ++c)
                        for (int64_t r = 0; r < t.R; ++r)
                            for (int64_t s = 0; s < t.S; ++s) {
                                double sum = 0, mag = 0;
                                for (int64_t n = 0; n < t.N; ++n)
                                    for (int64_t p = 0; p < d.P; ++p)
                                        for (int64_t q = 0; q < d.Q; ++q) {
                                            const int64_t h = p * t.stride - t.pad + r, w = q * t.stride - t.pad + s;
                                            if (h < 0 || h >= t.H || w < 0 || w >= t.W) continue;
                                            const double term = double(dy[dy_at(n, k, p, q)]) *
                                                                x[size_t(((n * t.C + c) * t.H + h) * t.W + w)];
                                            sum += term, mag += std::fabs(term);
                                        }
                                const float got = dw[size_t(((k * t.C + c) * t.R + r) * t.S + s)];
                                if (!(std::fabs(got - sum) <= 1e-5 * mag + 1e-6) && wrong++ < 3)
                                    MESSAGE("dw[", k, ", ", c, ", ", r, ", ", s, "] ", got, " against ", sum);
                            }
                }
                CHECK(wrong == 0);
            }
        simd::ImageConv d{
            .N = 1, .C = 3, .H = 8, .W = 8, .K = 16, .P = 8, .Q = 8, .R = 3, .S = 3, .pad_t = 1, .pad_l = 1};
        CHECK(v.image_conv_wgrad_supported(d));
        for (auto change : {+[](simd::ImageConv& e) { e.S = 4; }, +[](simd::ImageConv& e) { e.block = 4; },
                            +[](simd::ImageConv& e) { e.K = 12; }, +[](simd::ImageConv& e) { e.block = 12, e.K = 12; },
                            +[](simd::ImageConv& e) { e.stride_w = 0; }, +[](simd::ImageConv& e) { e.pad_l = -1; }}) {
            simd::ImageConv e = d;
            change(e);
            CHECK_FALSE(v.image_conv_wgrad_supported(e));
        }
    }
}

// image_conv against sums in double: y in nChw8c, nChw16c and channels-last, kernels of 1x1 to
// 16x16 (runs of taps of any length), strides 1 to 16 and unequal across the axes, paddings that
// put whole kernel rows and columns outside the map, unequal above and left and more below and
// right, maps narrower than the kernel, rows of 1 to 12 positions (groups of 1 to 6), 1 to 4 input
// channels, one or several images over 1 to 3 threads, with and without a bias and a ReLU. y
// starts as NaN: every element must be written. Errors relative to the sum of the terms'
// magnitudes.
TEST_CASE("image_conv matches its sums in double") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        const ImageCase cases[] = {
            {1, 3, 31, 31, 16, 11, 11, 4, 2, 8, 2},       {2, 3, 23, 23, 32, 7, 7, 2, 3, 0, 2},
            {2, 3, 13, 9, 16, 3, 5, 1, 2, 8, 2, 0, 3, 0}, {1, 2, 10, 4, 32, 3, 4, 3, 1, 0, 2, 0, 1, 0},
            {1, 3, 9, 11, 48, 3, 3, 1, 1, 16, 3},         {3, 1, 6, 5, 16, 5, 5, 1, 2, 8, 2, 1},
            {1, 4, 4, 9, 32, 3, 5, 1, 0, 0, 1},           {2, 2, 5, 4, 16, 5, 7, 3, 4, 16, 2},
            {1, 3, 32, 32, 32, 16, 16, 16, 0, 8, 2},      {2, 3, 12, 12, 16, 4, 4, 4, 0, 0, 3},
            {1, 3, 7, 7, 16, 1, 1, 1, 0, 8, 1},           {1, 3, 15, 15, 16, 7, 7, 2, 0, 16, 2, 5}};
        for (const ImageCase& t : cases)
            for (bool bias : {true, false})
                for (bool relu : {true, false}) {
                    CAPTURE(t.K);
                    CAPTURE(t.S);
                    CAPTURE(t.stride);
                    CAPTURE(t.stride_w);
                    CAPTURE(t.block);
                    CAPTURE(bias);
                    CAPTURE(relu);
                    const simd::ImageConv d = image_conv_of(t);
                    REQUIRE(v.image_conv_supported(d));
                    auto y_at = [&](int64_t n, int64_t k, int64_t p, int64_t q) { return output_at(d, n, k, p, q); };
                    std::vector<float> x(size_t(t.N * t.C * t.H * t.W)), w(size_t(t.K * t.C * t.R * t.S)),
                        b(size_t(t.K));
                    Uniform next{5};
                    for (std::vector<float>* a : {&x, &w, &b})
                        for (float& e : *a) e = next();
                    std::vector<float> u(v.image_conv_weights_size(d), NAN), y(size_t(t.N * t.K * d.P * d.Q), NAN);
                    std::vector<float> scratch(v.image_conv_scratch(d, t.threads), NAN);
                    v.image_conv_weights(w.data(), u.data(), d);
                    v.image_conv(x.data(), u.data(), bias ? b.data() : nullptr, relu, y.data(), scratch.data(), d,
                                 t.threads);
                    int wrong = 0;
                    for (int64_t n = 0; n < t.N; ++n)
                        for (int64_t k = 0; k < t.K; ++k)
                            for (int64_t p = 0; p < d.P; ++p)
                                for (int64_t q = 0; q < d.Q; ++q) {
                                    double sum = bias ? b[size_t(k)] : 0.0, mag = std::fabs(sum);
                                    for (int64_t c = 0; c < t.C; ++c)
                                        for (int64_t r = 0; r < t.R; ++r)
                                            for (int64_t s = 0; s < t.S; ++s) {
                                                const int64_t h = p * t.stride - t.pad + r,
                                                              col = q * d.stride_w - d.pad_l + s;
                                                if (h < 0 || h >= t.H || col < 0 || col >= t.W) continue;
                                                const double term =
                                                    double(x[size_t(((n * t.C + c) * t.H + h) * t.W + col)]) *
                                                    w[size_t(((k * t.C + c) * t.R + r) * t.S + s)];
                                                sum += term, mag += std::fabs(term);
                                            }
                                    if (relu) sum = std::max(sum, 0.0);
                                    const float got = y[y_at(n, k, p, q)];
                                    if (!(std::fabs(got - sum) <= 1e-5 * mag + 1e-6) && wrong++ < 3)
                                        MESSAGE("y[", n, ", ", k, ", ", p, ", ", q, "] ", got, " against ", sum);
                                }
                    CHECK(wrong == 0);
                }
        simd::ImageConv d{
            .N = 1, .C = 3, .H = 8, .W = 8, .K = 16, .P = 8, .Q = 8, .R = 3, .S = 3, .pad_t = 1, .pad_l = 1};
        CHECK(v.image_conv_supported(d));
        for (auto change : {+[](simd::ImageConv& e) { e.K = 24, e.block = 8; },
                            +[](simd::ImageConv& e) { e.block = 4; }, +[](simd::ImageConv& e) { e.K = 0, e.block = 0; },
                            +[](simd::ImageConv& e) { e.block = 12, e.K = 12; }, +[](simd::ImageConv& e) { e.S = 0; },
                            +[](simd::ImageConv& e) { e.stride_w = 0; }, +[](simd::ImageConv& e) { e.pad_l = -1; }}) {
            simd::ImageConv e = d;
            change(e);
            CHECK_FALSE(v.image_conv_supported(e));
        }
    }
}

// strided1x1_dgrad against sums in double: nChw8c and nChw16c, C and K that leave part of their
// last block (dy's padding holds 1000, which must not reach dx; written, dx's padding must be zero,
// added to, as it was), strides 2, 3 and (2, 1) on maps the stride does not divide, a row of fewer
// than 8 positions and one of more than 16, on 1 and 3 threads. Written, dx starts as NaN: every
// element must be written, zero where no output read x; added to, dx starts as other values,
// which the positions no output read must keep.
TEST_CASE("strided1x1_dgrad matches its sums in double, written or added to") {
    struct Case {
        int64_t N, C, H, W, K, stride_h, stride_w, block;
        int threads;
    };
    const Case cases[] = {{2, 20, 7, 9, 24, 2, 2, 8, 3},   {1, 32, 12, 12, 48, 2, 2, 16, 2},
                          {2, 13, 11, 38, 5, 2, 2, 16, 1}, {1, 40, 10, 7, 17, 3, 3, 8, 2},
                          {3, 24, 5, 6, 16, 2, 1, 16, 3},  {1, 104, 9, 9, 40, 2, 2, 16, 2}};
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        for (const Case& t : cases)
            for (bool add : {false, true}) {
                CAPTURE(t.C);
                CAPTURE(t.K);
                CAPTURE(t.W);
                CAPTURE(t.block);
                CAPTURE(add);
                const int64_t L = t.block, CB = (t.C + L - 1) / L, KB = (t.K + L - 1) / L;
                const simd::Strided1x1 d{.N = t.N, .C = t.C, .H = t.H, .W = t.W, .K = t.K,
                                         .P = (t.H - 1) / t.stride_h + 1, .Q = (t.W - 1) / t.stride_w + 1,
                                         .stride_h = t.stride_h, .stride_w = t.stride_w, .block = L};
                REQUIRE(v.strided1x1_dgrad_supported(d));
                const simd::ChannelLayout xl{t.N, t.C, t.H * t.W, L}, yl{t.N, t.K, d.P * d.Q, L};
                std::vector<float> dy(size_t(t.N * KB * L * d.P * d.Q), 1000.0f), w(size_t(t.K * t.C));
                std::vector<float> dx(size_t(t.N * CB * L * t.H * t.W), NAN), before;
                Uniform next{7};
                for (float& e : w) e = next();
                for (int64_t n = 0; n < t.N; ++n)
                    for (int64_t k = 0; k < t.K; ++k)
                        for (int64_t s = 0; s < d.P * d.Q; ++s) dy[size_t(yl.offset(n, k, s))] = next();
                if (add) {
                    std::fill(dx.begin(), dx.end(), 0.0f);  // the padding channels' zeros
                    for (int64_t n = 0; n < t.N; ++n)
                        for (int64_t c = 0; c < t.C; ++c)
                            for (int64_t s = 0; s < t.H * t.W; ++s) dx[size_t(xl.offset(n, c, s))] = next();
                }
                before = dx;
                std::vector<float> packed(v.strided1x1_packed(d), NAN);
                v.strided1x1_dgrad(dy.data(), w.data(), dx.data(), packed.data(), add, d, t.threads);
                int wrong = 0;
                for (int64_t n = 0; n < t.N; ++n)
                    for (int64_t c = 0; c < CB * L; ++c)
                        for (int64_t h = 0; h < t.H; ++h)
                            for (int64_t col = 0; col < t.W; ++col) {
                                const size_t at = size_t(xl.offset(n, c, h * t.W + col));
                                double want = add ? before[at] : 0.0, mag = std::fabs(want);
                                if (c < t.C && h % t.stride_h == 0 && col % t.stride_w == 0)
                                    for (int64_t k = 0; k < t.K; ++k) {
                                        const int64_t s = h / t.stride_h * d.Q + col / t.stride_w;
                                        const double term =
                                            double(w[size_t(k * t.C + c)]) * dy[size_t(yl.offset(n, k, s))];
                                        want += term, mag += std::fabs(term);
                                    }
                                if (!(std::fabs(dx[at] - want) <= 1e-5 * mag + 1e-6) && wrong++ < 3)
                                    MESSAGE("dx[", n, ", ", c, ", ", h, ", ", col, "] ", dx[at], " against ", want);
                            }
                CHECK(wrong == 0);
            }
        simd::Strided1x1 d{.N = 1, .C = 8, .H = 4, .W = 4, .K = 8, .P = 2, .Q = 2, .block = 8};
        CHECK(v.strided1x1_dgrad_supported(d));
        for (auto change : {+[](simd::Strided1x1& e) { e.block = 4; }, +[](simd::Strided1x1& e) { e.P = 3; },
                            +[](simd::Strided1x1& e) { e.Q = 1; }, +[](simd::Strided1x1& e) { e.stride_w = 0; },
                            +[](simd::Strided1x1& e) { e.K = 0; }}) {
            simd::Strided1x1 e = d;
            change(e);
            CHECK_FALSE(v.strided1x1_dgrad_supported(e));
        }
    }
}

// grouped8_conv3x3_dgrad (groups of 8, stride 2, padding 1) against the sums in double: with
// AVX-512 the phase form (kernels/simd/conv2d.cpp), below it the strip form. Odd and even maps (an
// odd map's last row and column of dx take fewer taps), one position, a 2x2 map (one dy position
// meeting every phase), channels-last with 3 threads, maps split into units of rows of dy (35 rows
// of 36 plane floats, about 768 a unit: two units, 18 and 17 rows; 40 rows of 41: three), 17
// columns (a last set of 8 with one) and 8 (whole sets: the zero past a plane row is the fill's own
// store). dx and the scratch start as NaN: the kernel must write every element of dx and read only
// scratch it wrote.
TEST_CASE("grouped8_conv3x3_dgrad matches its sums in double, blocked and channels-last") {
    struct Case {
        int64_t N, C, H, W, block;
        int threads;
    };
    const Case cases[] = {{2, 32, 9, 13, 16, 2}, {1, 48, 10, 8, 48, 3},  {3, 16, 70, 70, 16, 2},
                          {1, 32, 1, 1, 16, 1},  {1, 16, 2, 2, 16, 2},   {1, 16, 80, 80, 16, 2},
                          {2, 64, 16, 33, 64, 2}, {1, 16, 6, 16, 16, 2}};
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        for (const Case& t : cases) {
            CAPTURE(t.C);
            CAPTURE(t.H);
            CAPTURE(t.W);
            CAPTURE(t.block);
            const simd::GroupedConv3x3 d{t.N, t.C, t.H, t.W, (t.H - 1) / 2 + 1, (t.W - 1) / 2 + 1, 2, t.block, 8};
            REQUIRE(v.grouped8_backward_supported(d));
            const simd::ChannelLayout xl{t.N, t.C, t.H * t.W, t.block}, yl{t.N, t.C, d.P * d.Q, t.block};
            std::vector<float> dy(size_t(yl.batch_stride() * t.N)), w(size_t(t.C * 8 * 9));
            std::vector<float> dx(size_t(xl.batch_stride() * t.N), NAN);
            std::vector<float> scratch(v.grouped8_dgrad_scratch(d, t.threads), NAN);
            Uniform next{11};
            for (float& e : dy) e = next();
            for (float& e : w) e = next();
            v.grouped8_conv3x3_dgrad(dy.data(), w.data(), dx.data(), scratch.data(), d, t.threads);
            int wrong = 0;
            for (int64_t n = 0; n < t.N; ++n)
                for (int64_t c = 0; c < t.C; ++c)
                    for (int64_t h = 0; h < t.H; ++h)
                        for (int64_t col = 0; col < t.W; ++col) {
                            double want = 0, mag = 0;
                            for (int64_t k = c / 8 * 8; k < c / 8 * 8 + 8; ++k)
                                for (int64_t r = 0; r < 3; ++r)
                                    for (int64_t s = 0; s < 3; ++s) {
                                        const int64_t p2 = h + 1 - r, q2 = col + 1 - s;  // 2p, 2q
                                        if (p2 < 0 || q2 < 0 || p2 % 2 || q2 % 2 || p2 / 2 >= d.P || q2 / 2 >= d.Q)
                                            continue;
                                        const double term = double(w[size_t(((k * 8 + c % 8) * 3 + r) * 3 + s)]) *
                                                            dy[size_t(yl.offset(n, k, p2 / 2 * d.Q + q2 / 2))];
                                        want += term, mag += std::fabs(term);
                                    }
                            const float got = dx[size_t(xl.offset(n, c, h * t.W + col))];
                            if (!(std::fabs(got - want) <= 1e-5 * mag + 1e-6) && wrong++ < 3)
                                MESSAGE("dx[", n, ", ", c, ", ", h, ", ", col, "] ", got, " against ", want);
                        }
            CHECK(wrong == 0);
        }
    }
}

// relu_backward_reblocked against dx = dy where y > 0 written out, y in nChw16c and dy in nChw8c
// and the other way round: 72 channels (RegNetX's: whole blocks of 8, a last block of 16 half
// padding) and 20 (padding in both), 1 and 3 threads. dy's padding holds 1000 and y's padding
// zero; dx starts as NaN and must come out in y's layout, its padding zero. A NaN or a zero in y
// gives 0.
TEST_CASE("relu_backward_reblocked takes dy from the other channel block") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        for (int64_t C : {72, 20})
            for (int64_t block : {16, 8})
                for (int threads : {1, 3}) {
                    CAPTURE(C);
                    CAPTURE(block);
                    const int64_t N = 2, HW = 5 * 7, dy_block = 24 - block;
                    const simd::ChannelLayout yl{N, C, HW, block}, dyl{N, C, HW, dy_block};
                    std::vector<float> y(size_t(N * yl.padded_channels() * HW), 0.0f);
                    std::vector<float> dy(size_t(N * dyl.padded_channels() * HW), 1000.0f);
                    std::vector<float> dx(y.size(), NAN);
                    Uniform next{3};
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < C; ++c)
                            for (int64_t s = 0; s < HW; ++s) {
                                const float r = next();
                                y[size_t(yl.offset(n, c, s))] = (c + s) % 11 == 0 ? NAN : (c + s) % 7 == 0 ? 0.0f : r;
                                dy[size_t(dyl.offset(n, c, s))] = next();
                            }
                    v.relu_backward_reblocked(y.data(), dy.data(), dy_block, dx.data(), yl, threads);
                    int wrong = 0;
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < yl.padded_channels(); ++c)
                            for (int64_t s = 0; s < HW; ++s) {
                                const float yv = y[size_t(yl.offset(n, c, s))];
                                const float want = c < C && yv > 0 ? dy[size_t(dyl.offset(n, c, s))] : 0.0f;
                                const float got = dx[size_t(yl.offset(n, c, s))];
                                if (!(got == want) && wrong++ < 3)
                                    MESSAGE("dx[", n, ", ", c, ", ", s, "] ", got, " against ", want);
                            }
                    CHECK(wrong == 0);
                }
    }
}

// gate_backward's dx = dy * s and ds = sum of dy * x in one pass, against sums in double: x in
// blocks of 8 or 16 and dy in either, C leaving part of the last block of 16 (40), a whole 8 of
// it (24) or part of a block of 8 (20), odd and even positions, dx or ds alone. dy's padding holds 1000, which must not reach
// ds; dx and ds start as NaN, and dx's padded channels must come out zero.
TEST_CASE("gate_backward matches its sums in double, dy in x's channel blocks or the other") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        for (int64_t C : {40, 24, 20})
            for (int64_t block : {16, 8})
                for (int64_t dy_block : {16, 8})
                    for (int64_t HW : {7 * 7, 6})
                        for (int outputs : {3, 1, 2}) {  // bits: dx, ds
                            CAPTURE(C);
                            CAPTURE(block);
                            CAPTURE(dy_block);
                            CAPTURE(HW);
                            CAPTURE(outputs);
                            const int64_t N = 3;
                            const simd::ChannelLayout xl{N, C, HW, block}, dyl{N, C, HW, dy_block};
                            std::vector<float> x(size_t(N * xl.padded_channels() * HW), 0.0f);
                            std::vector<float> dy(size_t(N * dyl.padded_channels() * HW), 1000.0f);
                            std::vector<float> s(size_t(N * C)), dx(x.size(), NAN), ds(s.size(), NAN);
                            Uniform next{11};
                            for (float& e : s) e = next();
                            for (int64_t n = 0; n < N; ++n)
                                for (int64_t c = 0; c < C; ++c)
                                    for (int64_t p = 0; p < HW; ++p) {
                                        x[size_t(xl.offset(n, c, p))] = next();
                                        dy[size_t(dyl.offset(n, c, p))] = next();
                                    }
                            const bool want_dx = outputs & 1, want_ds = outputs & 2;
                            v.gate_backward(x.data(), dy.data(), dy_block, s.data(), want_dx ? dx.data() : nullptr,
                                            want_ds ? ds.data() : nullptr, xl);
                            int wrong = 0;
                            for (int64_t n = 0; n < N; ++n)
                                for (int64_t c = 0; c < xl.padded_channels(); ++c) {
                                    double sum = 0, size = 0;
                                    for (int64_t p = 0; p < HW; ++p) {
                                        const float d = c < C ? dy[size_t(dyl.offset(n, c, p))] : 0.0f;
                                        const float got = dx[size_t(xl.offset(n, c, p))];
                                        const float want = c < C ? d * s[size_t(n * C + c)] : 0.0f;
                                        if (want_dx && !(got == want) && wrong++ < 3)
                                            MESSAGE("dx[", n, ", ", c, ", ", p, "] ", got, " against ", want);
                                        if (!want_dx && !std::isnan(got) && wrong++ < 3) MESSAGE("dx written");
                                        const double term = double(d) * x[size_t(xl.offset(n, c, p))];
                                        sum += term, size += std::abs(term);
                                    }
                                    if (c >= C) continue;
                                    const float got = ds[size_t(n * C + c)];
                                    const bool ok = want_ds ? std::abs(got - sum) <= 1e-6 * (1 + size) : std::isnan(got);
                                    if (!ok && wrong++ < 3) MESSAGE("ds[", n, ", ", c, "] ", got, " against ", sum);
                                }
                            CHECK(wrong == 0);
                        }
    }
}

// The gradients of a 3x3 stride-1 conv as Winograd (training below AVX-512): winograd3x3 over dy
// with the weights transformed for the data gradient, and winograd3x3_wgrad, against sums in
// double. C and K that leave part of their last block (x's padding 1000 and dy's 5 must not leak),
// also a whole padding vector of a block of 16 (20 channels), C not a multiple of the weight
// gradient's panel of 16, K not of its six rows, paddings of 0 to 2 uneven, channels-last x or dy,
// and tiles in several chunks on 1 and 3 threads; groups as in the forward's test, in blocked and
// channels-last layouts, one in three chunks a group (dU summed over them). Errors relative to the
// sum of the terms' magnitudes, as above.
TEST_CASE("winograd3x3's data gradient and winograd3x3_wgrad match their sums in double") {
    const std::vector<WinogradCase> cases = {
        {2, 20, 9, 11, 22, 1, 1, 1, 1, 8, 8},        {1, 24, 10, 7, 40, 1, 1, 1, 1, 16, 16},
        {1, 16, 7, 13, 16, 0, 0, 0, 0, 16, 16},      {2, 8, 6, 5, 8, 2, 2, 2, 2, 8, 8},
        {1, 16, 8, 9, 24, 0, 1, 1, 2, 16, 16},       {1, 24, 5, 6, 16, 2, 0, 1, 2, 24, 16},
        {1, 20, 9, 10, 24, 1, 1, 1, 1, 16, 24},      {1, 16, 7, 9, 20, 1, 1, 1, 1, 16, 16},
        {2, 512, 33, 33, 13, 1, 1, 1, 1, 8, 8, 1},   {2, 512, 33, 33, 13, 1, 1, 1, 1, 8, 8, 3},
        {2, 72, 9, 11, 72, 1, 1, 1, 1, 8, 8, 2, 3},  {1, 32, 7, 9, 48, 1, 1, 1, 1, 16, 16, 1, 2},
        {1, 48, 6, 7, 24, 0, 1, 2, 1, 8, 8, 3, 3},   {1, 48, 8, 8, 48, 1, 1, 1, 1, 48, 48, 2, 2},
        {2, 72, 9, 8, 72, 1, 1, 1, 1, 16, 16, 2, 3}, {1, 48, 40, 37, 48, 1, 1, 1, 1, 8, 8, 2, 2},
    };
    auto value = [](int64_t i, int64_t m) { return float((i * 37) % m) / float(m) - 0.5f; };
    double worst_dx = 0, worst_dw = 0;
    for (const WinogradCase& e : cases) {
        const int64_t N = e.N, C = e.C, H = e.H, W = e.W, K = e.K, wc = C / e.G, wk = K / e.G;
        const int64_t P = H + e.pad_t + e.pad_b - 2, Q = W + e.pad_l + e.pad_r - 2;
        INFO("N ", N, " C ", C, " ", H, "x", W, " K ", K, " G ", e.G, " padding ", e.pad_t, ",", e.pad_l, ",", e.pad_b,
             ",", e.pad_r, " blocks ", e.block_x, ",", e.block_y, " threads ", e.threads);
        const simd::Winograd3x3 d{N, C, H, W, K, P, Q, e.pad_t, e.pad_l, e.block_x, e.block_y, e.G};
        const simd::Winograd3x3 back{N, K, P, Q, C, H, W, 2 - e.pad_t, 2 - e.pad_l, e.block_y, e.block_x, e.G};
        const simd::ChannelLayout xl{N, C, H * W, e.block_x}, yl{N, K, P * Q, e.block_y};
        std::vector<float> x(size_t(N * xl.batch_stride()), 1000.0f), dy(size_t(N * yl.batch_stride()), 5.0f);
        std::vector<float> w(size_t(K * wc * 9));
        for (int64_t n = 0; n < N; ++n) {
            for (int64_t c = 0; c < C; ++c)
                for (int64_t s = 0; s < H * W; ++s) x[size_t(xl.offset(n, c, s))] = value((n * C + c) * H * W + s, 17);
            for (int64_t k = 0; k < K; ++k)
                for (int64_t s = 0; s < P * Q; ++s) dy[size_t(yl.offset(n, k, s))] = value((n * K + k) * P * Q + s, 11);
        }
        for (size_t i = 0; i < w.size(); ++i) w[i] = value(int64_t(i), 13) / 4;
        // The gradients in double with the sums of their terms' magnitudes, once for every build:
        // dx (N,C,H,W), dw (K,C/G,3,3) and db (K), plain.
        std::vector<double> dx_want(size_t(N * C * H * W)), dx_mag(dx_want.size());
        std::vector<double> dw_want(w.size()), dw_mag(w.size()), db_want(static_cast<size_t>(K));
        for (int64_t n = 0; n < N; ++n)
            for (int64_t k = 0; k < K; ++k)
                for (int64_t p = 0; p < P; ++p)
                    for (int64_t q = 0; q < Q; ++q) {
                        const double g = dy[size_t(yl.offset(n, k, p * Q + q))];
                        db_want[size_t(k)] += g;
                        for (int64_t cl = 0; cl < wc; ++cl)
                            for (int64_t r = 0; r < 3; ++r)
                                for (int64_t t = 0; t < 3; ++t) {
                                    const int64_t h = p - e.pad_t + r, col = q - e.pad_l + t, c = k / wk * wc + cl;
                                    if (h < 0 || h >= H || col < 0 || col >= W) continue;
                                    const size_t wi = size_t(((k * wc + cl) * 3 + r) * 3 + t);
                                    const size_t xi = size_t(((n * C + c) * H + h) * W + col);
                                    const double to_x = double(w[wi]) * g,
                                                 to_w = double(x[size_t(xl.offset(n, c, h * W + col))]) * g;
                                    dx_want[xi] += to_x, dx_mag[xi] += std::abs(to_x);
                                    dw_want[wi] += to_w, dw_mag[wi] += std::abs(to_w);
                                }
                    }
        for (const SimdVariant& v : runnable_simd_variants()) {
            CAPTURE(v.isa);
            REQUIRE(v.winograd3x3_supported(d));
            REQUIRE(v.winograd3x3_supported(back));
            // The data gradient: dx's padded channels come out zero, as the forward's do.
            std::vector<float> u(v.winograd3x3_weights_size(back)), scratch(v.winograd3x3_scratch(back, e.threads));
            std::vector<float> dx(x.size(), 3.0f);
            v.winograd3x3_weights(w.data(), u.data(), back, true);
            v.winograd3x3(dy.data(), u.data(), nullptr, false, false, dx.data(), scratch.data(), back, e.threads);
            int64_t wrong = 0, padding = 0;
            for (int64_t n = 0; n < N; ++n)
                for (int64_t c = 0; c < xl.padded_channels(); ++c)
                    for (int64_t s = 0; s < H * W; ++s) {
                        const float got = dx[size_t(xl.offset(n, c, s))];
                        if (c >= C) {
                            padding += got != 0.0f;
                            continue;
                        }
                        const size_t i = size_t((n * C + c) * H * W + s);
                        const double err = std::abs(got - dx_want[i]) / (1 + dx_mag[i]);
                        worst_dx = std::max(worst_dx, err);
                        wrong += err > 1e-5;
                    }
            CHECK(wrong == 0);
            CHECK(padding == 0);

            // The weight gradient and the bias's, into buffers with a sentinel past their ends.
            const size_t tail = 16;
            std::vector<float> dw(w.size() + tail, -7.0f), db(size_t(K) + tail, -7.0f);
            std::vector<float> wscratch(v.winograd3x3_wgrad_scratch(d), std::numeric_limits<float>::quiet_NaN());
            v.winograd3x3_wgrad(x.data(), dy.data(), dw.data(), db.data(), wscratch.data(), d, e.threads);
            wrong = 0;
            for (int64_t k = 0; k < K; ++k)
                wrong += !(std::abs(db[size_t(k)] - db_want[size_t(k)]) <= 1e-4);  // NaN fails
            for (size_t i = 0; i < w.size(); ++i) {
                const double err = std::abs(dw[i] - dw_want[i]) / (1 + dw_mag[i]);
                worst_dw = std::max(worst_dw, err);
                wrong += err > 1e-5;
            }
            CHECK(wrong == 0);
            CHECK(std::all_of(dw.end() - tail, dw.end(), [](float f) { return f == -7.0f; }));
            CHECK(std::all_of(db.end() - tail, db.end(), [](float f) { return f == -7.0f; }));
        }
    }
    MESSAGE("winograd3x3 data gradient: largest error over (1 + the terms' magnitudes) ", worst_dx,
            "; winograd3x3_wgrad: ", worst_dw);
}

// kernels/simd's concat_backward and concat_affine in each of their layouts, against the layout's
// index formula (simd.h): pieces of unequal width written, added into, and one without a gradient
// left alone, over more positions than one of the kernel's chunks, and on two threads over 3
// images of 5 positions, where channels-last splits its 15 positions at 8, inside the second image;
// and concat_affine of one piece in place.
TEST_CASE(
    "concat_affine and concat_backward join and split a concatenation in plain, channels-last and blocked layouts") {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    for (const SimdVariant& v : runnable_simd_variants())
        for (const auto& [N, HW] : {std::pair<int64_t, int64_t>{2, 600}, {3, 5}}) {
            CAPTURE(v.isa);
            CAPTURE(HW);
            const int64_t pieces = 3;
            for (int64_t block : {int64_t(1), int64_t(0), int64_t(8), int64_t(16)}) {  // 0: channels-last
                const std::vector<int64_t> channels = block == 1 || block == 0
                                                          ? std::vector<int64_t>{3, 5, 2}
                                                          : std::vector<int64_t>{block, 2 * block, block};
                const int64_t C = channels[0] + channels[1] + channels[2];
                const simd::ChannelLayout yl{N, C, HW, block ? block : C};
                auto at = [&](const simd::ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
                    return n * l.batch_stride() + c / l.block * l.block_stride() + s * l.block + c % l.block;
                };
                std::vector<float> dy(size_t(N * C * HW));
                for (size_t i = 0; i < dy.size(); ++i) dy[i] = float(i % 977) * 0.5f - 100.0f;
                std::vector<std::vector<float>> dx, before;
                for (int64_t c : channels) dx.emplace_back(size_t(N * c * HW), 0.0f);
                for (auto& v : dx)
                    for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 13) - 6.0f;
                before = dx;
                const std::vector<uint8_t> mode = {1, 2, 0};
                std::vector<float*> ptr = {dx[0].data(), dx[1].data(), dx[2].data()};
                v.concat_backward(dy.data(), channels.data(), pieces, mode.data(), ptr.data(), yl);
                int64_t c0 = 0;
                for (int64_t i = 0; i < pieces; c0 += channels[size_t(i++)]) {
                    const simd::ChannelLayout xl{N, channels[size_t(i)], HW, block ? block : channels[size_t(i)]};
                    int64_t wrong = 0;
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < channels[size_t(i)]; ++c)
                            for (int64_t s = 0; s < HW; ++s) {
                                const size_t k = size_t(at(xl, n, c, s));
                                const float g = dy[size_t(at(yl, n, c0 + c, s))];
                                const float want = mode[size_t(i)] == 1   ? g
                                                   : mode[size_t(i)] == 2 ? before[size_t(i)][k] + g
                                                                          : before[size_t(i)][k];
                                wrong += dx[size_t(i)][k] != want;
                            }
                    CHECK_MESSAGE(wrong == 0, "block ", block, " piece ", i);
                }
                // The forward walks the same runs: the pieces concatenated through y = 2x + c,
                // exact in float, with the ReLU.
                std::vector<float> a(static_cast<size_t>(C), 2.0f), b(static_cast<size_t>(C)), y(dy.size(), -1.0f);
                for (int64_t c = 0; c < C; ++c) b[size_t(c)] = float(c);
                const std::vector<const float*> in = {dx[0].data(), dx[1].data(), dx[2].data()};
                v.concat_affine(in.data(), channels.data(), pieces, a.data(), b.data(), true, y.data(), yl);
                int64_t wrong = 0;
                c0 = 0;
                for (int64_t i = 0; i < pieces; c0 += channels[size_t(i++)]) {
                    const simd::ChannelLayout xl{N, channels[size_t(i)], HW, block ? block : channels[size_t(i)]};
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < channels[size_t(i)]; ++c)
                            for (int64_t s = 0; s < HW; ++s) {
                                const float x = dx[size_t(i)][size_t(at(xl, n, c, s))];
                                wrong += y[size_t(at(yl, n, c0 + c, s))] != std::max(2.0f * x + float(c0 + c), 0.0f);
                            }
                }
                CHECK_MESSAGE(wrong == 0, "concat_affine, block ", block);
                // One piece over itself (the inference batchnorm writes over its input), bit for
                // bit as into another buffer.
                const simd::ChannelLayout one{N, channels[1], HW, block ? block : channels[1]};
                std::vector<float> over = dx[1], apart(dx[1].size());
                const float* first = over.data();
                v.concat_affine(&first, &channels[1], 1, a.data(), b.data(), false, apart.data(), one);
                v.concat_affine(&first, &channels[1], 1, a.data(), b.data(), false, over.data(), one);
                CHECK_MESSAGE(over == apart, "concat_affine in place, block ", block);
            }
        }
    // No positions: nothing to split and nothing written (N*HW == 0 once divided by zero).
    for (const SimdVariant& v : runnable_simd_variants()) {
        const int64_t C = 8;
        float none = 1.0f;
        const float* in = &none;
        v.concat_affine(&in, &C, 1, nullptr, nullptr, false, &none, simd::ChannelLayout{0, C, 5, C});
        CHECK(none == 1.0f);
    }
    omp_set_num_threads(threads);
}

// kernels/simd's concat_plain and concat_channels_last against the layouts' index formula
// (simd.h): plain, nChw8c, nChw16c and channels-last pieces of 58 (shufflenet_v2's), 5, 13 and 16
// channels, whose last blocks hold padding (filled with a value that must not show), the
// channels-last piece last, so a run that read past its rows would read past the tensor (the
// sanitizer job's case), on maps of 49, 19 and 130 positions (transposes of 8 and a tail of 1 and
// 3; 130: three units of concat_channels_last's 64 positions, the last of 2), 3 images on 2
// threads and 1. concat_plain also with its channels mapped back from a shuffle of 2 groups (its
// use in a channel shuffle's backward): the concatenation's channel c into y's (c % 2)*C/2 + c/2.
TEST_CASE("concat_plain and concat_channels_last join pieces each in its own layout") {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    for (const SimdVariant& v : runnable_simd_variants())
        for (const auto& [N, HW] : {std::pair<int64_t, int64_t>{3, 49}, {1, 19}, {2, 8}, {1, 130}})
            for (int how : {0, 1, 2}) {  // plain, channels-last, plain unshuffled
                const bool rows = how == 1, mapped = how == 2;
                CAPTURE(v.isa);
                CAPTURE(HW);
                CAPTURE(how);
                const std::vector<int64_t> channels = {58, 5, 13, 16, 58, 58}, blocks = {16, 1, 8, 16, 1, 58};
                const int64_t pieces = int64_t(channels.size());
                int64_t C = 0;
                for (int64_t c : channels) C += c;
                std::vector<std::vector<float>> x;
                std::vector<const float*> in;
                for (int64_t i = 0; i < pieces; ++i) {
                    const simd::ChannelLayout l{N, channels[size_t(i)], HW, blocks[size_t(i)]};
                    x.emplace_back(size_t(N * l.batch_stride()), 1e9f);  // the padding lanes keep 1e9
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < l.C; ++c)
                            for (int64_t s = 0; s < HW; ++s)
                                x.back()[size_t(l.offset(n, c, s))] = float(((n * 7 + i) * 131 + c * 17 + s) % 1009);
                    in.push_back(x.back().data());
                }
                std::vector<int64_t> to(static_cast<size_t>(C));
                for (int64_t c = 0; c < C; ++c) to[size_t(c)] = mapped ? c % 2 * (C / 2) + c / 2 : c;
                std::vector<float> y(size_t(N * C * HW + 16), -7.0f);
                if (rows)
                    v.concat_channels_last(in.data(), channels.data(), blocks.data(), pieces, y.data(), N, HW);
                else
                    v.concat_plain(in.data(), channels.data(), blocks.data(), pieces, y.data(), N, HW,
                                   mapped ? to.data() : nullptr);
                const simd::ChannelLayout yl{N, C, HW, rows ? C : 1};
                int64_t wrong = 0, c0 = 0;
                for (int64_t i = 0; i < pieces; c0 += channels[size_t(i++)]) {
                    const simd::ChannelLayout l{N, channels[size_t(i)], HW, blocks[size_t(i)]};
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < l.C; ++c)
                            for (int64_t s = 0; s < HW; ++s)
                                wrong += y[size_t(yl.offset(n, to[size_t(c0 + c)], s))] !=
                                         x[size_t(i)][size_t(l.offset(n, c, s))];
                }
                CHECK(wrong == 0);
                CHECK(std::count(y.end() - 16, y.end(), -7.0f) == 16);  // nothing written past y
            }
    omp_set_num_threads(threads);
}

// kernels/simd's shuffle2_channels_last against the shuffle's index rule: the shuffled channel
// 2j + g is channel g*C/2 + j, over 116 and 58 channels (shufflenet_v2's: halves of 29 pairs, so
// 8-pair vectors and a tail; 58 cut at 28 as a part starts and ends on a group), parts from 0,
// from the middle and the whole, on 37 positions, one float past each part that must stay as it
// was.
TEST_CASE("shuffle2_channels_last permutes each position's channels into a part of the shuffle") {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t C : {116, 58})
            for (const auto& [start, L] : {std::pair<int64_t, int64_t>{0, C / 4 * 2}, {C / 4 * 2, C - C / 4 * 2},
                                           {0, C}, {2, 6}}) {
                CAPTURE(v.isa);
                CAPTURE(C);
                CAPTURE(start);
                CAPTURE(L);
                const int64_t positions = 37;
                std::vector<float> x(size_t(positions * C)), y(size_t(positions * L + 1), -7.0f);
                for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 29) % 1013);
                v.shuffle2_channels_last(x.data(), C, positions, start, L, y.data());
                int64_t wrong = 0;
                for (int64_t s = 0; s < positions; ++s)
                    for (int64_t i = 0; i < L; ++i) {
                        const int64_t o = start + i, g = o % 2, j = o / 2;
                        wrong += y[size_t(s * L + i)] != x[size_t(s * C + g * C / 2 + j)];
                    }
                CHECK(wrong == 0);
                CHECK(y.back() == -7.0f);
            }
    omp_set_num_threads(threads);
}

// kernels/simd's plain_to_blocked against the layouts' index formula, as the reorder (no `from`)
// and as a shuffle of 2 and 4 groups into blocks (from[c] = (c % G) * C / G + c / G): 116 channels
// (a last block of 4 of 16, of 4 of 8: padding that must be written zero), 24 (whole blocks of 8,
// a half of 16), 8; maps of 49 positions (8-position transposes and a tail), 3 (the tail only),
// 300, and 1500 (two units of up to 1024 positions, the second of 476); 1 to 3 images on 2
// threads; nothing written past y.
TEST_CASE("plain_to_blocked reorders and shuffles plain channels into nChw8c and nChw16c") {
    const int threads = omp_get_max_threads();
    omp_set_num_threads(2);
    for (const SimdVariant& v : runnable_simd_variants())
        for (const auto& [N, C, HW] : {std::tuple<int64_t, int64_t, int64_t>{1, 116, 49}, {2, 24, 3}, {3, 8, 300},
                                       {1, 116, 1500}, {2, 24, 49}})
            for (int64_t block : {8, 16})
                for (int64_t G : {1, 2, 4}) {
                    CAPTURE(v.isa);
                    CAPTURE(N);
                    CAPTURE(C);
                    CAPTURE(HW);
                    CAPTURE(block);
                    CAPTURE(G);
                    const simd::ChannelLayout yl{N, C, HW, block};
                    std::vector<float> x(size_t(N * C * HW));
                    for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 37) % 1019) + 1.0f;
                    std::vector<int64_t> from(static_cast<size_t>(C));
                    for (int64_t c = 0; c < C; ++c) from[size_t(c)] = c % G * (C / G) + c / G;
                    std::vector<float> y(size_t(N * yl.batch_stride() + 16), -7.0f);
                    v.plain_to_blocked(x.data(), y.data(), yl, G == 1 ? nullptr : from.data());
                    int64_t wrong = 0, padding = 0;
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t s = 0; s < HW; ++s) {
                            for (int64_t c = 0; c < C; ++c)
                                wrong += y[size_t(yl.offset(n, c, s))] != x[size_t((n * C + from[size_t(c)]) * HW + s)];
                            for (int64_t c = C; c < yl.padded_channels(); ++c)
                                padding += y[size_t(yl.offset(n, c, s))] != 0.0f;
                        }
                    CHECK(wrong == 0);
                    CHECK(padding == 0);
                    CHECK(std::count(y.end() - 16, y.end(), -7.0f) == 16);
                }
    omp_set_num_threads(threads);
}

// kernels/simd's max_pool against the window's maximum written out, in nchw, nChw8c, nChw16c and
// channels-last: 20 channels pad the last block of 8 and 16 (the padding must stay zero), 480
// channels-last on the 29-column map overflow max_row's column buffer (27 columns of 480 floats:
// it takes the channels in parts of 296 and 184), odd maps
// at stride 1 and 2, padding, ceil mode's last window past the map (11 -> 6 at 3x3 stride 2), a
// window whose axes differ in kernel, stride and padding, and a NaN that must win its windows as in
// PyTorch. The windows it must refuse: padding as large as the kernel, a last window wholly past
// the map (each on either axis), an empty map, and a plain row longer than its buffers.
TEST_CASE("max_pool takes each window's maximum in blocked and channels-last layouts, a NaN winning") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        struct Window {
            int64_t H, W, R, S, stride, pad, P, Q;
        };
        // P, Q as PyTorch gives them: floor((H + 2 pad - R) / stride) + 1, or ceil in ceil mode.
        const std::vector<Window> windows = {
            {11, 11, 3, 3, 2, 0, 6, 6},  // ceil mode: the last window holds 1 row and column
            {12, 9, 2, 2, 2, 0, 6, 4},   // vgg's, W odd: floor
            {9, 10, 3, 3, 2, 1, 5, 5},   // resnet's stem pool, with padding
            {7, 7, 3, 3, 1, 1, 7, 7},    // googlenet's branch pool
            {5, 6, 1, 1, 1, 0, 5, 6},    // one element a window
            {5, 29, 3, 3, 2, 1, 3, 15},  // rows wider than a vector, a tail of 5 (alexnet's first pool)
            {4, 17, 3, 3, 1, 1, 4, 17},  // the same at stride 1
            {3, 1, 3, 3, 1, 1, 3, 1},    // googlenet's window on one column: both edges at once
            {1, 2, 3, 3, 1, 1, 1, 2},    // and on one row of two
            {10, 11, 2, 2, 3, 0, 3, 4},  // stride past the kernel
        };
        // And one whose axes differ in kernel, stride and padding: 3x2, stride (2, 1), padding (1, 0).
        const int64_t H = 12, W = 9, P = 6, Q = 8;
        const int64_t N = 2;
        int64_t cases = 0;
        for (int64_t C : {int64_t(20), int64_t(16), int64_t(24), int64_t(480)})
            for (int64_t block : {int64_t(1), int64_t(8), int64_t(16), C})
                for (size_t i = 0; i <= windows.size(); ++i) {
                    if (block == C && C % 8) continue;
                    const bool uneven = i == windows.size();
                    const Window w = uneven ? Window{H, W, 3, 2, 2, 1, P, Q} : windows[i];
                    const int64_t stride_w = uneven ? 1 : w.stride, pad_l = uneven ? 0 : w.pad;
                    const simd::MaxPool d{N, C, w.H, w.W, w.P, w.Q, w.R, w.S, w.stride, stride_w, w.pad, pad_l, block};
                    REQUIRE(v.max_pool_supported(d));
                    const simd::ChannelLayout xl{N, C, w.H * w.W, block}, yl{N, C, w.P * w.Q, block};
                    auto at = [](const simd::ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
                        return size_t(n * l.batch_stride() + c / l.block * l.block_stride() + s * l.block +
                                      c % l.block);
                    };
                    std::vector<float> x(size_t(N * xl.batch_stride()), 0.0f), y(size_t(N * yl.batch_stride()), -7.0f);
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < C; ++c)
                            for (int64_t s = 0; s < w.H * w.W; ++s)
                                x[at(xl, n, c, s)] = float((n * 131 + c * 17 + s * 29) % 103) - 60.0f;
                    const int64_t nan_c = C - 1, nan_s = std::min(w.W + 1, w.H * w.W - 1);  // one NaN in the last channel
                    x[at(xl, 1, nan_c, nan_s)] = std::numeric_limits<float>::quiet_NaN();
                    v.max_pool(x.data(), y.data(), d);
                    int64_t wrong = 0, nans = 0;
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < C; ++c)
                            for (int64_t p = 0; p < w.P; ++p)
                                for (int64_t q = 0; q < w.Q; ++q) {
                                    float m = -std::numeric_limits<float>::infinity();
                                    bool nan = false;
                                    for (int64_t r = 0; r < w.R; ++r)
                                        for (int64_t t = 0; t < w.S; ++t) {
                                            const int64_t h = p * w.stride - w.pad + r, col = q * stride_w - pad_l + t;
                                            if (h < 0 || h >= w.H || col < 0 || col >= w.W) continue;
                                            const float e = x[at(xl, n, c, h * w.W + col)];
                                            nan |= std::isnan(e);
                                            m = std::max(m, e);
                                        }
                                    const float got = y[at(yl, n, c, p * w.Q + q)];
                                    nans += nan;
                                    wrong += nan ? !std::isnan(got) : got != m;
                                }
                    int64_t padding = 0;  // the padded channels of the last block
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = C; c < yl.padded_channels(); ++c)
                            for (int64_t s = 0; s < w.P * w.Q; ++s) padding += y[at(yl, n, c, s)] != 0.0f;
                    INFO("C ", C, " block ", block, " window ", w.R, "x", w.S, " stride ", w.stride, ",", stride_w,
                         " pad ", w.pad, ",", pad_l);
                    CHECK(nans > 0);
                    CHECK(wrong == 0);
                    CHECK(padding == 0);
                    ++cases;
                }
        CHECK(cases == 165);
        simd::MaxPool d{1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 16};
        d.pad_t = 2;  // as large as the kernel: the first row of windows is all padding
        CHECK(!v.max_pool_supported(d));
        d = {1, 16, 8, 8, 5, 4, 2, 2, 2, 2, 0, 0, 16};  // a fifth row of windows starts past the map
        CHECK(!v.max_pool_supported(d));
        d = {1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 16};
        d.pad_l = 2;  // the first column of windows all padding
        CHECK(!v.max_pool_supported(d));
        d = {1, 16, 8, 8, 4, 5, 2, 2, 2, 2, 0, 0, 16};  // a fifth column of windows starts past the map
        CHECK(!v.max_pool_supported(d));
        d = {1, 16, 0, 8, 1, 4, 2, 2, 2, 2, 1, 0, 16};  // no rows at all
        CHECK(!v.max_pool_supported(d));
        d = {1, 20, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 20};  // channels-last with C not a multiple of 8
        CHECK(!v.max_pool_supported(d));
        d = {1, 2, 2, 5000, 1, 2500, 2, 2, 2, 2, 0, 0, 1};  // a plain row wider than the row buffers
        CHECK(!v.max_pool_supported(d));
        d.block = 8;  // blocked rows need no buffer
        CHECK(v.max_pool_supported(d));
    }
}

// max_pool_argmax and max_pool_backward against each window's dy routed by hand to PyTorch's argmax
// (the first maximum in row-then-column order, or the last NaN) and added in a scatter's order
// (windows row by row), bit for bit, and against max_pool's y, in nChw8c, nChw16c and
// channels-last (16-lane passes over 32 channels): each of the backward's row kernels (3x3 at
// stride 2, windows apart, the row buffer), windows that overlap and so add into one element, ties
// (the values repeat every 7), padding (the four-window forward in the padded top row too), ceil
// mode's last window past the map, rows and columns no window reads, one element a window, one
// window of 256 elements (positions past 127), rectangular windows and strides, a map whose rows
// are split into runs, 20 channels padding the last block (their gradient must be zero whatever
// x's and dy's padding hold: NaN here), two NaNs in one window, and 1 and 3 threads.
TEST_CASE("max_pool_backward routes each dy to its window's first maximum or last NaN") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        struct Window {
            int64_t H, W, R, S, stride_h, stride_w, pad_t, pad_l, P, Q;
        };
        const std::vector<Window> windows = {
            {11, 11, 3, 3, 2, 2, 0, 0, 6, 6},     // ceil mode
            {9, 10, 3, 3, 2, 2, 1, 1, 5, 5},      // resnet's stem pool
            {16, 16, 3, 3, 2, 2, 1, 1, 8, 8},     // four windows at once in the padded first row
            {10, 10, 3, 3, 2, 2, 0, 0, 4, 4},     // the last row and column no window reads
            {12, 40, 3, 3, 2, 2, 1, 1, 6, 20},    // rows in two runs at 16 lanes
            {7, 7, 3, 3, 1, 1, 1, 1, 7, 7},       // googlenet's branch pool
            {13, 14, 5, 5, 2, 2, 2, 2, 7, 7},     // overlapping at stride 2, not 3x3
            {9, 11, 3, 2, 1, 2, 1, 0, 9, 5},      // rectangular
            {16, 16, 16, 16, 1, 1, 0, 0, 1, 1},   // 256 positions
            {12, 9, 2, 2, 2, 2, 0, 0, 6, 4},      // vgg's
            {7, 8, 2, 2, 2, 2, 1, 1, 4, 5},       // apart, padded
            {10, 11, 2, 2, 3, 3, 0, 0, 3, 4},     // stride past the kernel: rows and columns no window reads
            {5, 6, 1, 1, 1, 1, 0, 0, 5, 6},       // one element a window
        };
        const int64_t N = 2;
        int64_t cases = 0;
        for (int threads : {1, 3})
            for (int64_t C : {int64_t(20), int64_t(24), int64_t(32)})
                for (int64_t block : {int64_t(8), int64_t(16), C})
                    for (const Window& w : windows) {
                        if (block == C && C % 8) continue;
                        const simd::MaxPool d{N,          C,          w.H,     w.W,     w.P, w.Q,  w.R,
                                              w.S,        w.stride_h, w.stride_w, w.pad_t, w.pad_l, block};
                        REQUIRE(v.max_pool_backward_supported(d));
                        const simd::ChannelLayout xl{N, C, w.H * w.W, block}, yl{N, C, w.P * w.Q, block};
                        auto at = [](const simd::ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
                            return size_t(n * l.batch_stride() + c / l.block * l.block_stride() + s * l.block +
                                          c % l.block);
                        };
                        const float nan = std::numeric_limits<float>::quiet_NaN();
                        std::vector<float> x(size_t(N * xl.batch_stride()), nan),
                            dy(size_t(N * yl.batch_stride()), nan);
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = 0; c < C; ++c) {
                                for (int64_t s = 0; s < w.H * w.W; ++s) x[at(xl, n, c, s)] = float((n + c + s * 3) % 7);
                                // Magnitudes 2^-3 to 2^3 and fractions: an order of adding
                                // other than the scatter's rounds differently.
                                for (int64_t s = 0; s < w.P * w.Q; ++s) {
                                    const float scale = std::ldexp(1.0f, int(s % 7) - 3);
                                    dy[at(yl, n, c, s)] = (float((n * 5 + c * 3 + s) % 11) + 1.0f / 3.0f) * scale;
                                }
                            }
                        // Two NaNs in the first window of one channel: the later one takes its gradient.
                        x[at(xl, 1, C - 2, w.W + 1)] = x[at(xl, 1, C - 2, w.W)] = nan;
                        std::vector<float> want(x.size(), 0.0f);
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = 0; c < C; ++c)
                                for (int64_t p = 0; p < w.P; ++p)
                                    for (int64_t q = 0; q < w.Q; ++q) {
                                        size_t best = 0;
                                        float m = -std::numeric_limits<float>::infinity();
                                        bool any = false;
                                        for (int64_t r = 0; r < w.R; ++r)
                                            for (int64_t t = 0; t < w.S; ++t) {
                                                const int64_t h = p * w.stride_h - w.pad_t + r,
                                                              col = q * w.stride_w - w.pad_l + t;
                                                if (h < 0 || h >= w.H || col < 0 || col >= w.W) continue;
                                                const float e = x[at(xl, n, c, h * w.W + col)];
                                                if (!any || e > m || std::isnan(e))
                                                    m = e, best = at(xl, n, c, h * w.W + col), any = true;
                                            }
                                        want[best] += dy[at(yl, n, c, p * w.Q + q)];
                                    }
                        std::vector<float> dx(x.size(), -7.0f), y(dy.size(), -7.0f), y_inference(dy.size(), 7.0f);
                        std::vector<int32_t> positions(size_t(v.max_pool_positions_size(d)), -1);
                        const int was = omp_get_max_threads();
                        omp_set_num_threads(threads);
                        v.max_pool_argmax(x.data(), y.data(), positions.data(), d);
                        v.max_pool(x.data(), y_inference.data(), d);
                        v.max_pool_backward(positions.data(), dy.data(), dx.data(), d);
                        omp_set_num_threads(was);
                        int64_t wrong = 0, wrong_y = 0;
                        for (size_t i = 0; i < dx.size(); ++i) wrong += dx[i] != want[i];
                        // Bit for bit (NaN too): the same maximum, by the same rule, as in inference.
                        for (size_t i = 0; i < y.size(); ++i)
                            wrong_y += std::memcmp(&y[i], &y_inference[i], sizeof(float)) != 0;
                        INFO("C ", C, " block ", block, " map ", w.H, "x", w.W, " window ", w.R, "x", w.S, " stride ",
                             w.stride_h, ",", w.stride_w, " pad ", w.pad_t, ",", w.pad_l, " threads ", threads);
                        CHECK(wrong == 0);
                        CHECK(wrong_y == 0);
                        ++cases;
                    }
        CHECK(cases == 208);
        simd::MaxPool flat{1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 1};
        CHECK(v.max_pool_supported(flat));
        CHECK(!v.max_pool_backward_supported(flat));  // plain maps keep oneDNN's pooling
        // The backward's row buffer, for windows that overlap other than 3x3 at stride 2, holds
        // 512 columns of 16 lanes, the padding's included.
        simd::MaxPool wide{1, 16, 3, 512, 3, 512, 3, 3, 1, 1, 1, 1, 16};
        CHECK(v.max_pool_supported(wide));
        CHECK(!v.max_pool_backward_supported(wide));
        wide.W = wide.Q = 510;  // from column -1 to 510
        CHECK(v.max_pool_backward_supported(wide));
        const simd::MaxPool apart{1, 16, 2, 1040, 1, 520, 2, 2, 2, 2, 0, 0, 16};
        const simd::MaxPool stem{1, 16, 3, 1040, 1, 520, 3, 3, 2, 2, 1, 1, 16};
        CHECK(v.max_pool_backward_supported(apart));
        CHECK(v.max_pool_backward_supported(stem));
    }
}

// kernels/simd's avg_pool and avg_pool_backward against PyTorch's definitions summed in double,
// in nChw8c and nChw16c: windows that overlap (3x3 at stride 1, inception_v3's, and
// at stride 2), DenseNet's 2x2 at stride 2, padding counted and not, ceil mode's last window past
// the map (counting the padding only where the window stays within the padded map, which
// avg_pool_supported requires; padding on one side only, in ceil mode and not), a stride past the
// kernel (rows and columns no window holds: their gradient is 0), fewer windows than the map holds
// (a caller's P and Q: rows past the last window's reach, whose gradient is 0, with no read of dy
// past its end), a window whose axes differ, one element a window, 20 channels padding the last
// block (x's and dy's padding hold 1000, which must not reach y or dx: their padding comes out 0),
// 1 and 3 threads. A sum of n terms and a rounded reciprocal of its count, forward or backward, is
// within gamma(n + 4) of the sum of the terms' magnitudes over the count; a term left out or a
// count off by one is far outside it.
TEST_CASE("avg_pool and avg_pool_backward: windows' means and their gradient, padding counted or not") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        struct Window {
            int64_t H, W, R, S, stride_h, stride_w, pad_t, pad_l, P, Q;
            bool include;
            int64_t pad_b = -1, pad_r = -1;  // -1: as pad_t and pad_l
        };
        const std::vector<Window> windows = {
            {9, 8, 3, 3, 1, 1, 1, 1, 9, 8, true},     // inception_v3's branch pools
            {9, 8, 3, 3, 1, 1, 1, 1, 9, 8, false},    // the same, the padding not counted
            {8, 6, 2, 2, 2, 2, 0, 0, 4, 3, true},     // DenseNet's transitions
            {9, 10, 3, 3, 2, 2, 1, 1, 5, 5, false},   // overlapping at stride 2
            {10, 10, 3, 3, 2, 2, 1, 1, 6, 6, false},  // ceil mode: the last window past the padded map
            {11, 11, 3, 3, 2, 2, 0, 0, 6, 6, true},   // ceil mode counting the padding: refused (below)
            {10, 11, 2, 2, 3, 3, 0, 0, 3, 4, true},   // stride past the kernel
            {12, 9, 3, 2, 2, 1, 1, 0, 6, 8, false},   // axes that differ
            {5, 6, 1, 1, 1, 1, 0, 0, 5, 6, true},     // one element a window
            {3, 1, 3, 3, 1, 1, 1, 1, 3, 1, true},     // one column: both edges at once
            {4, 4, 2, 2, 2, 2, 1, 1, 3, 3, true, 0, 0},    // ceil mode, padding above and left only: refused
            {9, 9, 3, 3, 2, 2, 1, 1, 5, 5, false, 0, 0},  // the same not counted
            {5, 5, 2, 2, 2, 2, 0, 0, 3, 3, true, 1, 1},    // the last windows in padding below and right only
            {3, 2, 1, 1, 1, 1, 0, 0, 1, 1, true},          // fewer windows than the map holds: rows past them
        };
        int64_t cases = 0;
        for (const Window& w : windows)
            for (int64_t C : {int64_t(20), int64_t(16), int64_t(24)})
                for (int64_t block : {int64_t(8), int64_t(16)}) {
                    const int64_t N = 2;
                    const int64_t pad_b = w.pad_b < 0 ? w.pad_t : w.pad_b, pad_r = w.pad_r < 0 ? w.pad_l : w.pad_r;
                    const simd::AvgPool d{N,       C,     w.H,       w.W,   w.P,   w.Q,        w.R,        w.S,
                                          w.stride_h, w.stride_w, w.pad_t, w.pad_l, block, w.include, pad_b, pad_r};
                    // Ceil mode's last window of 11 at 3x3 stride 2 reaches 1 past the map, where PyTorch
                    // counts only the padded map's 2 x 3 of it, not 9 (and 4 at 2x2 padded above and
                    // left only, 1 row and column of each edge window inside): refused, the
                    // executor's reference kernel takes it.
                    if (w.include && ((w.P - 1) * w.stride_h + w.R > w.pad_t + w.H + pad_b ||
                                      (w.Q - 1) * w.stride_w + w.S > w.pad_l + w.W + pad_r)) {
                        CHECK(!v.avg_pool_supported(d));
                        continue;
                    }
                    REQUIRE(v.avg_pool_supported(d));
                    const simd::ChannelLayout xl{N, C, w.H * w.W, block}, yl{N, C, w.P * w.Q, block};
                    auto at = [](const simd::ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
                        return size_t(n * l.batch_stride() + c / l.block * l.block_stride() + s * l.block +
                                      c % l.block);
                    };
                    std::vector<float> x(size_t(N * xl.batch_stride()), 1000.0f);
                    std::vector<float> dy(size_t(N * yl.batch_stride()), 1000.0f);
                    for (int64_t n = 0; n < N; ++n)
                        for (int64_t c = 0; c < C; ++c) {
                            for (int64_t s = 0; s < w.H * w.W; ++s)
                                x[at(xl, n, c, s)] = float((n * 131 + c * 17 + s * 29) % 103) / 7.0f - 6.0f;
                            for (int64_t s = 0; s < w.P * w.Q; ++s)
                                dy[at(yl, n, c, s)] = float((n * 37 + c * 11 + s * 13) % 89) / 9.0f - 4.0f;
                        }
                    // Each window's elements in the map and its count, PyTorch's.
                    auto window = [&](int64_t p, int64_t q, auto each) {
                        const int64_t h0 = p * w.stride_h - w.pad_t, c0 = q * w.stride_w - w.pad_l;
                        const int64_t h1 = std::min(h0 + w.R, w.H + pad_b), c1 = std::min(c0 + w.S, w.W + pad_r);
                        const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h0 + w.R, w.H);
                        const int64_t cs = std::max<int64_t>(c0, 0), ce = std::min(c0 + w.S, w.W);
                        const int64_t count = w.include ? (h1 - h0) * (c1 - c0) : (he - hs) * (ce - cs);
                        for (int64_t h = hs; h < he; ++h)
                            for (int64_t col = cs; col < ce; ++col) each(h * w.W + col, count);
                    };
                    const double gamma = double(w.R * w.S + 4) * std::ldexp(1.0, -24);
                    for (int threads : {1, 3}) {
                        std::vector<float> y(dy.size(), -7.0f), dx(x.size(), -7.0f);
                        const int was = omp_get_max_threads();
                        omp_set_num_threads(threads);
                        v.avg_pool(x.data(), y.data(), d);
                        v.avg_pool_backward(dy.data(), dx.data(), d);
                        omp_set_num_threads(was);
                        std::vector<double> want_dx(x.size(), 0.0), bound_dx(x.size(), 0.0);
                        int64_t wrong = 0, padding = 0;
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = 0; c < C; ++c)
                                for (int64_t p = 0; p < w.P; ++p)
                                    for (int64_t q = 0; q < w.Q; ++q) {
                                        double sum = 0, magnitude = 0, count = 1;
                                        const double g = dy[at(yl, n, c, p * w.Q + q)];
                                        window(p, q, [&](int64_t s, int64_t k) {
                                            const double e = x[at(xl, n, c, s)];
                                            sum += e, magnitude += std::fabs(e), count = double(k);
                                            want_dx[at(xl, n, c, s)] += g / double(k);
                                            bound_dx[at(xl, n, c, s)] += gamma * std::fabs(g) / double(k);
                                        });
                                        const double got = y[at(yl, n, c, p * w.Q + q)];
                                        wrong += std::fabs(got - sum / count) > gamma * magnitude / count;
                                    }
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = 0; c < C; ++c)
                                for (int64_t s = 0; s < w.H * w.W; ++s) {
                                    const size_t i = at(xl, n, c, s);
                                    wrong += std::fabs(double(dx[i]) - want_dx[i]) > bound_dx[i];
                                }
                        for (int64_t n = 0; n < N; ++n)
                            for (int64_t c = C; c < yl.padded_channels(); ++c) {
                                for (int64_t s = 0; s < w.P * w.Q; ++s) padding += y[at(yl, n, c, s)] != 0.0f;
                                for (int64_t s = 0; s < w.H * w.W; ++s) padding += dx[at(xl, n, c, s)] != 0.0f;
                            }
                        INFO("C ", C, " block ", block, " window ", w.R, "x", w.S, " stride ", w.stride_h, ",",
                             w.stride_w, " pad ", w.pad_t, ",", w.pad_l, w.include ? " counted" : " not counted",
                             " threads ", threads);
                        CHECK(wrong == 0);
                        CHECK(padding == 0);
                        ++cases;
                    }
                }
        CHECK(cases == 144);
        simd::AvgPool d{1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 2, 0, 16, false};  // padding as large as the kernel
        CHECK(!v.avg_pool_supported(d));
        d = {1, 16, 8, 8, 5, 4, 2, 2, 2, 2, 0, 0, 16, false};  // a fifth row of windows starts past the map
        CHECK(!v.avg_pool_supported(d));
        d = {1, 16, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 1, true};  // plain maps stay oneDNN's
        CHECK(!v.avg_pool_supported(d));
        d = {1, 24, 8, 8, 4, 4, 2, 2, 2, 2, 0, 0, 24, true};  // channels-last of more than 16 channels
        CHECK(!v.avg_pool_supported(d));
        d = {1, 16, 2, 600, 1, 300, 2, 2, 2, 2, 0, 0, 16, true};  // a row wider than the column buffer
        CHECK(!v.avg_pool_supported(d));
    }
}

// kernels/simd's channel_means in each of its layouts, against the mean in double by the layout's
// index formula (simd.h); the blocked ones with channels that pad the last block. The executor runs
// every global pool on it (pool.cpp); its whole-net and op-table cases reach the blocked and plain
// branches, and channels-last is checked here, with fewer images than threads too (positions
// split between at most 8 threads, some with none, 2100 channels in runs of at most 1024 and a
// tail, images in turn), on 1 to 9 threads; values whose sums round, so the order they are added
// in is tested within float's error.
TEST_CASE("channel_means pools plain, channels-last and blocked layouts into plain rows") {
    struct Case {
        int64_t N, C, HW;
    };
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Case& k : {Case{3, 20, 37}, Case{1, 40, 9}, Case{2, 40, 5}, Case{1, 40, 1}, Case{1, 2100, 3},
                              Case{3, 2100, 2}})
            for (int64_t block : {int64_t(1), k.C, int64_t(8), int64_t(16)})
                for (int threads : {1, 2, 3, 5, 9}) {
                    CAPTURE(v.isa);
                    CAPTURE(k.N);
                    CAPTURE(k.C);
                    CAPTURE(block);
                    CAPTURE(threads);
                    const simd::ChannelLayout l{k.N, k.C, k.HW, block};
                    std::vector<float> x(size_t(k.N * l.batch_stride()), 0.0f), out(size_t(k.N * k.C), -1.0f);
                    auto value = [](int64_t n, int64_t c, int64_t s) {
                        return float((n * 131 + c * 17 + s * 7) % 101) * 0.237f - 12.0f;
                    };
                    for (int64_t n = 0; n < k.N; ++n)
                        for (int64_t c = 0; c < k.C; ++c)
                            for (int64_t s = 0; s < k.HW; ++s) x[size_t(l.offset(n, c, s))] = value(n, c, s);
                    const int before = omp_get_max_threads();
                    omp_set_num_threads(threads);
                    v.channel_means(x.data(), out.data(), l);
                    omp_set_num_threads(before);
                    int64_t wrong = 0;
                    for (int64_t n = 0; n < k.N; ++n)
                        for (int64_t c = 0; c < k.C; ++c) {
                            double sum = 0;
                            for (int64_t s = 0; s < k.HW; ++s) sum += value(n, c, s);
                            wrong += !(std::abs(out[size_t(n * k.C + c)] - sum / double(k.HW)) <= 1e-5);  // NaN fails
                        }
                    CHECK(wrong == 0);
                }
}

// kernels/simd's column_sums (a linear's bias gradient beside the weight gradient's matmul): each
// column's sum in row order, the same bits as a plain float loop over the rows, for widths that
// leave every tail (4 vectors, one, single columns; all three in one thread's share at 45 and 77)
// on 1 to 5 threads, some with no columns, and one row. Columns past L (the buffer holds 3 more,
// as -1) are not written.
TEST_CASE("column_sums adds each column's rows in order, on every width and thread count") {
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t N : {1, 7, 1024})
            for (int64_t L : {1, 5, 8, 16, 37, 45, 64, 77, 200, 3072})
                for (int threads : {1, 2, 3, 5}) {
                    CAPTURE(v.isa);
                    CAPTURE(N);
                    CAPTURE(L);
                    CAPTURE(threads);
                    Uniform u{unsigned(N * 7919 + L)};
                    std::vector<float> a(size_t(N * L)), out(size_t(L + 3), -1.0f);
                    for (float& e : a) e = u() * 1000.0f;
                    v.column_sums(a.data(), N, L, out.data(), threads);
                    int64_t wrong = 0;
                    for (int64_t l = 0; l < L; ++l) {
                        float sum = 0;
                        for (int64_t n = 0; n < N; ++n) sum += a[size_t(n * L + l)];
                        wrong += std::memcmp(&sum, &out[size_t(l)], sizeof sum) != 0;
                    }
                    CHECK(wrong == 0);
                    CHECK(std::count(out.end() - 3, out.end(), -1.0f) == 3);
                }
}

// kernels/simd's broadcast_channels (the global pool's gradient) and add_broadcast_channels (the
// same added to squeeze-excitation's scale gradient, pool.cpp) in each layout, against the index
// formula: every real element k * s, or that plus what was there; the padded channels of the last
// block stay zero. The executor takes both on blocked layouts; plain and channels-last are
// checked here.
TEST_CASE("broadcast_channels and add_broadcast_channels in plain, channels-last and blocked layouts") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        const int64_t N = 3, C = 20, HW = 37;
        const float k = 1.0f / 37;
        std::vector<float> s(size_t(N * C));
        for (size_t i = 0; i < s.size(); ++i) s[i] = (float(i * 29 % 53) - 26.5f) * 0.5f;
        auto before = [](int64_t n, int64_t c, int64_t p) {
            return float((n * 131 + c * 17 + p * 7) % 101) * 0.25f - 12.0f;
        };
        for (int64_t block : {int64_t(1), C, int64_t(8), int64_t(16)})
            for (bool add : {false, true}) {
                const simd::ChannelLayout l{N, C, HW, block};
                std::vector<float> y(size_t(N * l.batch_stride()), 0.0f);
                auto at = [&](int64_t n, int64_t c, int64_t p) {
                    return size_t(n * l.batch_stride() + c / block * l.block_stride() + p * block + c % block);
                };
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t c = 0; c < C; ++c)
                        for (int64_t p = 0; p < HW; ++p) y[at(n, c, p)] = before(n, c, p);
                if (add)
                    v.add_broadcast_channels(s.data(), k, y.data(), l);
                else
                    v.broadcast_channels(s.data(), k, y.data(), l);
                const int64_t padded = block > 1 && block < C ? l.blocks() * block : C;
                int64_t wrong = 0, dirty = 0;
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t c = 0; c < padded; ++c)
                        for (int64_t p = 0; p < HW; ++p) {
                            if (c >= C) {
                                dirty += y[at(n, c, p)] != 0.0f;
                                continue;
                            }
                            const double want = double(k) * s[size_t(n * C + c)] + (add ? before(n, c, p) : 0.0);
                            wrong += !(std::abs(y[at(n, c, p)] - want) <= 1e-5);  // a NaN fails too
                        }
                CHECK_MESSAGE(wrong == 0, "block ", block, add ? ", added" : "");
                CHECK_MESSAGE(dirty == 0, "block ", block, add ? ", added" : "");
            }
    }
}

// kernels/simd's silu_forward, in place as inference runs it, against x / (1 + e^-x) in double:
// across the range where it computes (|x| <= 87), just past it where it takes the limits, and on
// the infinities and NaN, as PyTorch's x * sigmoid(x) gives them (NaN for -inf: -inf * 0).
TEST_CASE("silu_forward in place, near 0, at |x| = 87 and beyond, on infinities and NaN") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x = {
        -inf, -3e38f, -1e30f, -100.0f, -88.0f, std::nextafter(-87.0f, -88.0f), -87.0f, -86.9f, -20.0f, -1e-30f, -0.0f,
        0.0f, 1e-30f, 20.0f,  86.9f,   87.0f,  std::nextafter(87.0f, 88.0f),   88.0f,  100.0f, 1e30f,  3e38f,   inf,
        nan,  -nan};
    for (int i = 0; i <= 400; ++i) x.push_back(float(i) * 0.437f - 87.4f);  // every lane of many vectors
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        std::vector<float> y = x;
        v.silu_forward(y.data(), y.data(), int64_t(y.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            CAPTURE(x[i]);
            if (std::isnan(x[i]) || x[i] == -inf) {
                CHECK(std::isnan(y[i]));
                continue;
            }
            if (x[i] == inf) {
                CHECK(y[i] == inf);
                continue;
            }
            const double want = double(x[i]) / (1 + std::exp(-double(x[i])));
            // Beyond |x| = 87 a negative x gives 0 where the true value is below 87 * e^-87 = 1.4e-36.
            CHECK(std::abs(double(y[i]) - want) <= 1e-6 * std::abs(want) + 1.5e-36);
        }
    }
}

// kernels/simd's gelu_forward and gelu_backward, in place, on the infinities, NaN, zeros and where
// Phi becomes exactly 0 or 1 (|x| past 13.2): x * Phi(x) and Phi(x) + x * phi(x) in double give
// inf for +inf, NaN for -inf (-inf * 0), NaN for NaN; the gradient NaN at both infinities (inf * 0).
// bench/kernels' gelu cases check the values over the range against the reference.
TEST_CASE("gelu_forward and gelu_backward at the infinities, NaN, zero and past |x| = 13.2") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    const std::vector<float> x = {-inf, inf, nan, -0.0f, 0.0f, -12.0f, -14.0f, -1e30f, 14.0f, 1e30f, 1.0f, -1.0f};
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        std::vector<float> y = x, dx(x.size(), 1.0f);
        v.gelu_forward(y.data(), y.data(), int64_t(y.size()));
        v.gelu_backward(x.data(), dx.data(), dx.data(), int64_t(x.size()));
        CHECK(std::isnan(y[0]));
        CHECK(y[1] == inf);
        CHECK(std::isnan(y[2]));
        CHECK(y[3] == 0.0f);
        CHECK(y[4] == 0.0f);
        // -12 * Phi(-12) = -2.1e-32, within the cut; erf's approximation is good in absolute terms,
        // and out here its relative error reaches tens of per cent.
        CHECK(y[5] < 0.0f);
        CHECK(y[5] > -1e-30f);
        CHECK(y[6] == 0.0f);
        CHECK(y[7] == 0.0f);
        CHECK(y[8] == 14.0f);
        CHECK(y[9] == 1e30f);
        CHECK(y[10] == doctest::Approx(0.841344746).epsilon(1e-6));
        CHECK(y[11] == doctest::Approx(-0.158655254).epsilon(1e-6));
        CHECK(std::isnan(dx[0]));
        CHECK(std::isnan(dx[1]));
        CHECK(std::isnan(dx[2]));
        CHECK(dx[3] == 0.5f);
        CHECK(dx[4] == 0.5f);
        CHECK(dx[8] == 1.0f);
        CHECK(dx[6] == 0.0f);
        CHECK(dx[10] == doctest::Approx(1.083315471).epsilon(1e-6));  // Phi(1) + phi(1)
        CHECK(dx[11] == doctest::Approx(-0.083315471).epsilon(1e-5));
    }
}

// kernels/simd's silu_channel_means (a SiLU and the global pool after it, activation.cpp) in each
// layout, in place and into another buffer, against silu_forward's values and their means in
// double: channels that pad the last block (whose padding stays 0), channels-last with fewer
// images than threads (positions split, 40 channels leaving a run of 8, or channels from 256 a
// thread: 2100 in runs of at most 1024 and a tail), maps of 1 and of 37 positions (a plain row's
// tail), on 1 to 3 threads.
TEST_CASE("silu_channel_means writes silu_forward's values and their means in every layout") {
    struct Case {
        int64_t N, C, HW;
    };
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Case& k : {Case{3, 20, 37}, Case{1, 40, 9}, Case{2, 40, 1}, Case{1, 2100, 3}})
            for (int64_t block : {int64_t(1), k.C, int64_t(8), int64_t(16)})
                for (int threads : {1, 2, 3})
                    for (bool in_place : {true, false}) {
                        CAPTURE(v.isa);
                        CAPTURE(k.N);
                        CAPTURE(k.C);
                        CAPTURE(k.HW);
                        CAPTURE(block);
                        CAPTURE(threads);
                        CAPTURE(in_place);
                        const simd::ChannelLayout l{k.N, k.C, k.HW, block};
                        std::vector<float> x(size_t(k.N * l.batch_stride()), 0.0f), out(size_t(k.N * k.C), NAN);
                        for (int64_t n = 0; n < k.N; ++n)
                            for (int64_t c = 0; c < k.C; ++c)
                                for (int64_t s = 0; s < k.HW; ++s)
                                    x[size_t(l.offset(n, c, s))] =
                                        float((n * 131 + c * 17 + s * 7) % 101) * 0.1f - 5.0f;
                        std::vector<float> want(x.size());
                        v.silu_forward(x.data(), want.data(), int64_t(x.size()));
                        std::vector<float> y = in_place ? x : std::vector<float>(x.size(), NAN);
                        const int before = omp_get_max_threads();
                        omp_set_num_threads(threads);
                        v.silu_channel_means(x.data(), in_place ? x.data() : y.data(), out.data(), l);
                        omp_set_num_threads(before);
                        if (in_place) y = x;
                        int64_t wrong_y = 0, wrong_mean = 0;
                        // The padding too: silu(0) is 0.
                        for (size_t i = 0; i < y.size(); ++i) wrong_y += !(y[i] == want[i]);
                        for (int64_t n = 0; n < k.N; ++n)
                            for (int64_t c = 0; c < k.C; ++c) {
                                double sum = 0;
                                for (int64_t s = 0; s < k.HW; ++s) sum += want[size_t(l.offset(n, c, s))];
                                wrong_mean += !(std::abs(out[size_t(n * k.C + c)] - sum / double(k.HW)) <= 1e-5);
                            }
                        CHECK(wrong_y == 0);
                        CHECK(wrong_mean == 0);
                    }
}

// kernels/simd's sigmoid_forward, in place, against 1 / (1 + e^-x) in double, and its gradient
// from the output against dy * s * (1 - s): near 0, around |x| = 87 where the exp is clamped,
// beyond, on the infinities (0 and 1) and NaN (NaN, as PyTorch's), over a tail of 7 lanes.
TEST_CASE(
    "sigmoid_forward in place and sigmoid_backward from the output, at |x| = 87 and beyond, on infinities and NaN") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> x = {
        -inf,   -3e38f, -100.0f, -88.0f, std::nextafter(-87.0f, -88.0f), -87.0f, -86.9f, -20.0f, -1e-30f, -0.0f, 0.0f,
        1e-30f, 20.0f,  86.9f,   87.0f,  std::nextafter(87.0f, 88.0f),   88.0f,  100.0f, 3e38f,  inf,     nan,   -nan};
    for (int i = 0; i <= 400; ++i) x.push_back(float(i) * 0.437f - 87.4f);
    REQUIRE(x.size() % 16 == 7);
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        std::vector<float> y = x;
        v.sigmoid_forward(y.data(), y.data(), int64_t(y.size()));
        std::vector<float> dy(x.size()), dx(x.size(), nan);
        for (size_t i = 0; i < x.size(); ++i) dy[i] = 1.0f + float(i % 7) * 0.25f;
        v.sigmoid_backward(y.data(), dy.data(), dx.data(), int64_t(y.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            CAPTURE(x[i]);
            if (std::isnan(x[i])) {
                CHECK(std::isnan(y[i]));
                CHECK(std::isnan(dx[i]));
                continue;
            }
            const double s = 1 / (1 + std::exp(-double(x[i])));
            // Beyond |x| = 87 the result is the limit, 0 or 1, where the true value is within e^-87 = 1.6e-38.
            CHECK(std::abs(double(y[i]) - s) <= 1e-6 * s + 1.7e-38);
            // From y in float: 1 - y keeps only y's absolute error, 6e-8 near y = 1; near -87, y's
            // absolute error of up to 1.7e-38 times dy.
            CHECK(std::abs(double(dx[i]) - dy[i] * s * (1 - s)) <=
                  1e-6 * dy[i] * s * (1 - s) + 1.5e-7 * dy[i] * s + 4e-38 * dy[i]);
        }
    }
}

// layernorm_channels_forward reads the channels of a blocked layout (padded blocks holding 1000,
// which must not count) and writes channels-last: the same bits as layernorm_forward on rows of a
// channels-last copy, the path it replaces, over more positions than one chunk of 64.
TEST_CASE("layernorm_channels_forward gives layernorm_forward's bits on a channels-last copy") {
    for (const SimdVariant& v : runnable_simd_variants())
        for (auto [C, block] : {std::pair<int64_t, int64_t>{20, 8}, {20, 16}, {96, 16}, {40, 8}}) {
            CAPTURE(v.isa);
            CAPTURE(C);
            CAPTURE(block);
            const int64_t N = 2, HW = 81;
            const simd::ChannelLayout l{N, C, HW, block};
            std::vector<float> x(size_t(N * l.batch_stride()), 1000.0f), rows(size_t(N * HW * C));
            std::vector<float> gamma(static_cast<size_t>(C)), beta(static_cast<size_t>(C));
            for (int64_t c = 0; c < C; ++c) gamma[size_t(c)] = 0.5f + float(c % 7) / 8, beta[size_t(c)] = float(c % 5) - 2;
            for (int64_t n = 0; n < N; ++n)
                for (int64_t c = 0; c < C; ++c)
                    for (int64_t s = 0; s < HW; ++s) {
                        const float value = float((n * 131 + c * 17 + s * 7) % 23) / 4 + 3;
                        x[size_t(l.offset(n, c, s))] = value;
                        rows[size_t((n * HW + s) * C + c)] = value;
                    }
            std::vector<float> y(rows.size(), -1.0f), want(rows.size());
            v.layernorm_forward(rows.data(), gamma.data(), beta.data(), want.data(), nullptr, nullptr, N * HW, C, 1e-5f);
            v.layernorm_channels_forward(x.data(), l, gamma.data(), beta.data(), y.data(), 1e-5f);
            CHECK(std::equal(y.begin(), y.end(), want.begin()));
        }
}

// softmax_forward on rows that leave its NaN-free path (a NaN, +inf, a row all -inf, infinities of
// both signs) and on rows that keep it (-inf as a mask, values more than 87 below the maximum,
// finite values whose sum overflows), against e^(x - max) / sum in double: NaN spreads over the
// row as in PyTorch, e^(x - max) below e^-87 counts as 0, at e^-87 exactly it does not. Rows of 5
// (one padded vector), 16 and 32 (whole vectors), 23 and 197 (a last vector overlapping the one
// before).
TEST_CASE("softmax_forward: NaN and infinities as PyTorch takes them, and values far below the maximum") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t n : {5, 16, 23, 32, 197}) {
            CAPTURE(v.isa);
            CAPTURE(n);
            const char* names[] = {"a NaN",          "+inf",           "all -inf",
                                   "+inf and -inf",  "-inf as a mask", "far below the maximum",
                                   "a sum past the float range", "87 below the maximum"};
            std::vector<std::pair<const char*, std::vector<float>>> cases;
            for (int c = 0; c < 8; ++c) {
                std::vector<float> x(static_cast<size_t>(n));
                for (int64_t i = 0; i < n; ++i) {
                    const float plain = float(i * 37 % 23) / 4.0f - 2.0f;
                    const float at[] = {i == n / 2 ? nan : plain,
                                        i == n - 1 ? inf : plain,
                                        -inf,
                                        i == 0 ? -inf : i == 1 ? inf : plain,
                                        i % 3 == 1 ? -inf : plain,
                                        i % 2 ? plain - 100.0f : plain,
                                        3e38f - float(i % 4) * 1e32f,
                                        i == 0 ? 0.0f : -87.0f};
                    x[size_t(i)] = at[c];
                }
                cases.emplace_back(names[c], x);
            }
            for (const auto& [what, x] : cases) {
                const std::string row = what;
                CAPTURE(row);
                std::vector<float> y(x.size());
                v.softmax_forward(x.data(), y.data(), 1, n);
                double m = -inf, sum = 0;
                for (float a : x) m = std::isnan(a) || std::isnan(m) ? nan : std::max<double>(m, a);
                std::vector<double> e(x.size());
                for (size_t i = 0; i < x.size(); ++i) {
                    const double t = double(x[i]) - m;
                    e[i] = std::isnan(t) ? nan : t < -87 ? 0 : std::exp(t);
                    sum += e[i];
                }
                for (size_t i = 0; i < x.size(); ++i) {
                    CAPTURE(i);
                    const double want = e[i] / sum;
                    if (std::isnan(want))
                        CHECK(std::isnan(y[i]));
                    else
                        CHECK(std::abs(y[i] - want) <= 1e-6 * want + 1e-30);
                    if (row == "87 below the maximum") CHECK(y[i] > 0.0f);  // e^-87 / 1, a normal float
                }
            }
        }
}

// softmax_forward in place (y = x) gives the bits it gives into another buffer: rows under 16, of
// one vector, and rows whose last vector overlaps the one before it (23, 40, 197), which it reads
// from x before writing y; each row sums to 1.
TEST_CASE("softmax_forward in place gives the same bits as into another buffer") {
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t n : {5, 16, 23, 40, 197}) {
            CAPTURE(v.isa);
            CAPTURE(n);
            const int64_t rows = 3;
            std::vector<float> x(size_t(rows * n));
            for (size_t i = 0; i < x.size(); ++i) x[i] = float(int64_t(i * 7919 % 101) - 50) / 8.0f;
            std::vector<float> y(x.size()), in_place = x;
            v.softmax_forward(x.data(), y.data(), rows, n);
            v.softmax_forward(in_place.data(), in_place.data(), rows, n);
            CHECK(std::equal(y.begin(), y.end(), in_place.begin()));
            for (int64_t r = 0; r < rows; ++r) {
                double sum = 0;
                for (int64_t i = 0; i < n; ++i) sum += y[size_t(r * n + i)];
                CHECK(std::abs(sum - 1.0) < 1e-5);
            }
        }
}

// team.h: where idle threads spin, a thread that finishes its share early waits in arrive() until
// the last thread arrives, up to its limit, so none sleeps at the region's end; under
// GOMP_SPINCOUNT=0 it returns at once. Thread 0 arrives 20 ms late. With a 10 s limit thread 1
// returns after thread 0 arrived and long before the limit; with a 1 ms limit it gives up after
// 1 ms and before thread 0 arrives; with no spin it returns before thread 0 arrives.
TEST_CASE("FinishTogether holds early threads until the last arrives, where idle threads spin") {
    using clock = std::chrono::steady_clock;
    using std::chrono::milliseconds;
    struct Restore {  // the wait settings this test changes, as they were
        std::optional<std::string> spin, policy;
        static std::optional<std::string> get(const char* n) {
            const char* v = std::getenv(n);
            return v ? std::optional<std::string>(v) : std::nullopt;
        }
        static void put(const char* n, const std::optional<std::string>& v) {
            v ? setenv(n, v->c_str(), 1) : unsetenv(n);
        }
        ~Restore() { put("GOMP_SPINCOUNT", spin), put("OMP_WAIT_POLICY", policy); }
    } restore{Restore::get("GOMP_SPINCOUNT"), Restore::get("OMP_WAIT_POLICY")};
    unsetenv("OMP_WAIT_POLICY");
    if (omp_get_num_procs() < 2) {
        MESSAGE("one core: FinishTogether never spins, nothing to check");
        return;
    }
    struct Times {
        clock::time_point late, entry, ret;
    };
    auto run = [](const char* spin, milliseconds most) {
        setenv("GOMP_SPINCOUNT", spin, 1);
        simd::FinishTogether end(most);
        Times t;
        int team = 0;
#pragma omp parallel num_threads(2)
        {
            if (omp_get_thread_num() == 0) team = omp_get_num_threads();
            if (omp_get_num_threads() == 2 && omp_get_thread_num() == 0) {
                std::this_thread::sleep_for(milliseconds(20));
                t.late = clock::now();
                end.arrive();
            } else if (omp_get_num_threads() == 2) {
                t.entry = clock::now();
                end.arrive();
                t.ret = clock::now();
            }
        }
        REQUIRE(team == 2);
        return t;
    };
    const Times held = run("2000", milliseconds(10000));
    CHECK(held.ret >= held.late);
    CHECK(held.ret - held.entry < milliseconds(5000));
    const Times capped = run("2000", milliseconds(1));
    CHECK(capped.ret - capped.entry >= milliseconds(1));
    CHECK(capped.ret < capped.late);
    const Times none = run("0", milliseconds(10000));
    CHECK(none.ret < none.late);
}

// team.h's for_units and for_units_together: every unit once. On one thread, or for one unit, on
// the calling thread in order and without a region of its own (omp_get_level stays where it was),
// also inside another region, as in the executor's held stretches; on two threads, a team of two,
// each thread a contiguous share.
TEST_CASE("for_units runs each unit once, on the calling thread without a team where one thread is asked for") {
    struct Ran {
        int64_t unit;
        int level, thread, team;
    };
    // Each unit's record, and the units in the order they ran (serial runs only append in order).
    auto run = [](int64_t units, int threads, std::vector<int64_t>& order, bool together) {
        std::vector<Ran> ran(size_t(units), Ran{-1, -1, -1, -1});
        std::vector<int> times(size_t(units), 0);
        auto unit = [&](int64_t u) {
            ran[size_t(u)] = {u, omp_get_level(), omp_get_thread_num(), omp_get_num_threads()};
#pragma omp atomic
            ++times[size_t(u)];
            if (omp_get_level() == 0) order.push_back(u);
        };
        together ? simd::for_units_together(units, threads, unit) : simd::for_units(units, threads, unit);
        for (int64_t u = 0; u < units; ++u) CHECK(times[size_t(u)] == 1);
        return ran;
    };
    for (bool together : {false, true})
        for (auto [units, threads] : {std::pair<int64_t, int>{0, 1}, {0, 2}, {1, 2}, {7, 1}, {5, 1}}) {
            CAPTURE(together);
            CAPTURE(units);
            CAPTURE(threads);
            std::vector<int64_t> order;
            for (const Ran& r : run(units, threads, order, together)) CHECK((r.level == 0 && r.team == 1));
            std::vector<int64_t> in_order(static_cast<size_t>(units));
            for (int64_t u = 0; u < units; ++u) in_order[size_t(u)] = u;
            CHECK(order == in_order);
        }
    for (bool together : {false, true}) {
        CAPTURE(together);
        std::vector<int64_t> none;
        std::vector<Ran> ran = run(7, 2, none, together);
        CHECK(none.empty());  // in a region: a team, whatever its size (OMP_DYNAMIC may give one thread)
        for (const Ran& r : ran) CHECK(r.level == 1);
        if (ran.front().team == 2) {
            for (const Ran& r : ran) CHECK(r.team == 2);
            for (size_t u = 1; u < ran.size(); ++u) CHECK(ran[u].thread >= ran[u - 1].thread);  // contiguous shares
            CHECK(ran.front().thread == 0);
            CHECK(ran.back().thread == 1);
        }
    }
    // Inside a team of two, thread 0 alone calls it for one thread: no nested team.
    int level = -1, team = -1, outer = -1;
    int64_t count = 0;
#pragma omp parallel num_threads(2)
    {
        if (omp_get_thread_num() == 0) {
            outer = omp_get_num_threads();
            simd::for_units(3, 1, [&](int64_t) { level = omp_get_level(), team = omp_get_num_threads(), ++count; });
        }
    }
    CHECK(count == 3);
    CHECK(level == 1);
    CHECK(team == outer);
}
