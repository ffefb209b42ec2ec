// bench/kernels (ridge-kernels): every CPU kernel agrees with its reference at small shapes on
// each instruction set this CPU runs; the check catches an output just past its bound and
// deliberately wrong kernels; bad input is one line and exit 2. No timing is asserted.
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "bench/kernels/cases.h"
#include "bench/kernels/options.h"
#include "bench/usage_error.h"
#include "spawn.h"

using namespace ridge;
using namespace ridge::kbench;

namespace {

const Kernel& kernel(const std::string& name) {
    const Kernel* k = find_kernel(name);
    REQUIRE(k != nullptr);
    return *k;
}

// Small shapes whose channels (19, 13) fill no block of 8 or 16, so the padding is exercised, and
// for the kernels without a filter one of 23x23: past 512 positions, the share of work the
// kernels split a map into. concat-bn needs whole blocks: its channels are 83 (pieces 19, 32, 32),
// 5 and 40 (8, 32) where no block applies, else the nearest multiples of the block.
std::vector<Problem> small_shapes(const Kernel& k) {
    std::vector<Problem> out;
    std::vector<std::string> layouts = k.layouts;
    if (layouts.empty()) layouts = {""};
    for (const std::string& layout : layouts) {
        Problem a;
        a.N = 2, a.C = 19, a.H = 7, a.W = 7, a.layout = layout;
        Problem b;
        b.N = 1, b.C = 16, b.H = 5, b.W = 9, b.layout = layout;
        Problem c;
        c.N = 3, c.C = 13, c.H = 1, c.W = 40, c.layout = layout;
        Problem d;
        d.N = 1, d.C = 11, d.H = 23, d.W = 23, d.layout = layout;
        if (k.whole_blocks) {
            const int64_t block = layout == "nChw8c" ? 8 : layout == "nChw16c" ? 16 : 1;
            a.C = block == 1 ? 83 : 80, b.C = block == 1 ? 5 : block, c.C = block == 1 ? 40 : 48;
            d.C = block == 1 ? 37 : 2 * block;
        }
        if ((k.name == "dw-wgrad" || k.name == "dw-dgrad" || k.name.starts_with("max-pool")) && layout == "nhwc") {
            // Channels-last wants C a multiple of 8: 16 and 48 run 16 lanes in the AVX-512 build and
            // 8 in the others, 24 and 40 run 8 everywhere.
            a.C = 24, b.C = 16, c.C = 40, d.C = 48;
        }
        if (k.outputs) {
            // One row: inputs that leave a tail of columns (19, 13, 11) or none (16), outputs that
            // leave a partial panel of 16 (37, 5, 100) or none (16).
            for (auto [C, K] : {std::pair<int64_t, int64_t>{19, 37}, {16, 16}, {13, 5}, {11, 100}}) {
                Problem r;
                r.N = r.H = r.W = 1, r.C = C, r.K = K;
                out.push_back(r);
            }
            continue;
        }
        if (k.name == "softmax" || k.name == "softmax-bwd") {
            // Rows of whole vectors (32) and of one (16), beside the rows above under 16 (7, 9) and
            // over 16 with a partial last vector (23, 40), which the forward overlaps.
            Problem e;
            e.N = 2, e.C = 3, e.H = 5, e.W = 32, e.layout = layout;
            Problem f = e;
            f.W = 16;
            out.insert(out.end(), {e, f});
        }
        if (!k.filter) {
            out.insert(out.end(), {a, b, c, d});
            continue;
        }
        // The fast four-column path (5x5, 3x3, 7x7 at stride 1), the per-tap path (stride 2, 1x1,
        // an odd width), and images of one row. depthwise_dgrad takes S of 3, 5 or 7 at stride 1
        // or 2, at stride 1 with "same" padding across.
        std::vector<std::array<int64_t, 4>> windows = {{5, 5, 1, 2}, {3, 3, 2, 1}, {7, 7, 1, 3},
                                                       {1, 1, 1, 0}, {3, 5, 1, 1}, {11, 11, 1, 5}};
        if (k.name == "dw-dgrad")
            windows = {{5, 5, 1, 2}, {3, 3, 2, 1}, {7, 7, 1, 3}, {3, 3, 1, 1}, {5, 5, 2, 2}, {5, 3, 1, 1}};
        // Average pools: inception_v3's branch pool, DenseNet's transition, overlapping at stride 2,
        // one element a window, a stride past the kernel (elements no window holds), uneven axes.
        // Max pools the same, with googlenet's 3x3 stride-1 and resnet's 3x3 stride-2 fast paths.
        if (k.name.starts_with("avg-pool") || k.name.starts_with("max-pool"))
            windows = {{3, 3, 1, 1}, {2, 2, 2, 0}, {3, 3, 2, 1}, {1, 1, 1, 0}, {2, 2, 3, 0}, {3, 5, 1, 1}};
        for (auto [R, S, stride, pad] : windows) {
            for (Problem p : {a, b, c}) {
                p.R = R, p.S = S, p.stride = stride, p.pad = pad;
                // P() rounds -1/2 up to 0: a window past the padded map is left out first.
                if (p.H + 2 * pad >= R && p.W + 2 * pad >= S && p.P() >= 1 && p.Q() >= 1) out.push_back(p);
            }
        }
    }
    return out;
}

const std::vector<std::string> cpu_kernels = {
    "se-scale", "se-gate-grad", "dw-wgrad", "dw-dgrad", "concat", "concat-bn", "concat-bn-norelu", "softmax",
    "softmax-bwd", "silu", "silu-bwd", "gelu", "gelu-bwd", "gap-grad", "linear-row", "scale-strided",
    "scale-strided-bwd", "avg-pool", "avg-pool-bwd", "max-pool", "max-pool-bwd"};

// ---- deliberately wrong kernels, on plain nchw (block 1) or nChw16c ----
// The padding not counted where the kernel says it is: the edges' means divided by fewer.
void avg_pool_padding_uncounted(const float* x, float* y, const simd::AvgPool& d) {
    simd::AvgPool wrong = d;
    wrong.include_pad = false;
    simd::avg_pool(x, y, wrong);
}
// Each row's gradient from the windows holding the row above it.
void avg_pool_backward_row_shifted(const float* dy, float* dx, const simd::AvgPool& d) {
    simd::AvgPool wrong = d;
    wrong.pad_t += 1;
    simd::avg_pool_backward(dy, dx, wrong);
}
// Every window a column to the left.
void max_pool_column_shifted(const float* x, float* y, const simd::MaxPool& d) {
    simd::MaxPool wrong = d;
    wrong.pad_l += 1;
    simd::max_pool(x, y, wrong);
}
// Each position read as the one after it in its window's row.
void max_pool_backward_column_shifted(const int32_t* at, const float* dy, float* dx, const simd::MaxPool& d) {
    simd::MaxPool wrong = d;
    wrong.pad_l += 1;
    simd::max_pool_backward(at, dy, dx, wrong);
}
// The last row left out.
void scale_strided_row_short(const float* x, const simd::Strided& xl, float s, float* y, const simd::Strided& yl) {
    int64_t rows = 1;
    for (int k = 0; k + 1 < xl.rank; ++k) rows *= xl.dims[k];
    for (int64_t r = 0; r + 1 < rows; ++r) {
        int64_t xo = 0, yo = 0;
        for (int64_t rest = r, k = xl.rank - 2; k >= 0; --k)
            xo += rest % xl.dims[k] * xl.strides[k], yo += rest % xl.dims[k] * yl.strides[k], rest /= xl.dims[k];
        for (int64_t i = 0; i < xl.dims[xl.rank - 1]; ++i) y[yo + i] = s * x[xo + i];
    }
}
void scale_wrong_gate(const float* x, const float* s, float* y, const simd::ChannelLayout& l) {
    // the gate of the next channel
    for (int64_t nc = 0; nc < l.N * l.C; ++nc)
        for (int64_t i = 0; i < l.HW; ++i) y[nc * l.HW + i] = x[nc * l.HW + i] * s[(nc + 1) % (l.N * l.C)];
}
void dots_one_short(const float* a, const float* b, float* out, const simd::ChannelLayout& l) {
    // the last position of each channel left out
    for (int64_t nc = 0; nc < l.N * l.C; ++nc) {
        float sum = 0;
        for (int64_t i = 0; i + 1 < l.HW; ++i) sum += a[nc * l.HW + i] * b[nc * l.HW + i];
        out[nc] = sum;
    }
}
void wgrad_pad_off_by_one(const float* x, const float* dy, float* dw, float* db, float* scratch,
                          const simd::Depthwise& d, int threads) {
    simd::Depthwise wrong = d;
    wrong.pad_l += 1;
    simd::depthwise_wgrad(x, dy, dw, db, scratch, wrong, threads);
}
void wgrad_bias_dropped(const float* x, const float* dy, float* dw, float* db, float* scratch, const simd::Depthwise& d,
                        int threads) {
    simd::depthwise_wgrad(x, dy, dw, nullptr, scratch, d, threads);
    for (int64_t c = 0; c < d.C; ++c) db[c] = 0;
}
// The forward's taps where the data gradient needs them turned (w[r][s] for w[R-1-r][S-1-s]).
void dgrad_taps_unturned(const float* dy, const float* w, float* dx, bool add, const simd::Depthwise& d,
                         int threads) {
    const int64_t L = simd::depthwise_lanes(d), RS = d.R * d.S, blocks = (d.C + L - 1) / L;
    Floats turned(size_t(blocks * RS * L));
    for (int64_t cb = 0; cb < blocks; ++cb)
        for (int64_t t = 0; t < RS; ++t)
            for (int64_t j = 0; j < L; ++j) turned[size_t((cb * RS + t) * L + j)] = w[(cb * RS + RS - 1 - t) * L + j];
    simd::depthwise_dgrad(dy, turned.data(), dx, add, d, threads);
}
void concat_relu_dropped(const float* const* x, const int64_t* channels, int64_t pieces, const float* a,
                         const float* b, bool, float* y, const simd::ChannelLayout& l) {
    simd::concat_affine(x, channels, pieces, a, b, false, y, l);
}
void concat_pieces_swapped(const float* const* x, const int64_t* channels, int64_t pieces, const float* a,
                           const float* b, bool relu, float* y, const simd::ChannelLayout& l) {
    // the last two pieces (of equal width) in each other's place
    std::vector<const float*> swapped(x, x + pieces);
    std::swap(swapped[size_t(pieces - 1)], swapped[size_t(pieces - 2)]);
    simd::concat_affine(swapped.data(), channels, pieces, a, b, relu, y, l);
}
void softmax_sum_one_short(const float* y, const float* dy, float* dx, int64_t rows, int64_t n) {
    // the row's last product left out of its sum
    for (int64_t r = 0; r < rows; ++r) {
        const float *yr = y + r * n, *dyr = dy + r * n;
        float dot = 0;
        for (int64_t i = 0; i + 1 < n; ++i) dot += dyr[i] * yr[i];
        for (int64_t i = 0; i < n; ++i) dx[r * n + i] = yr[i] * (dyr[i] - dot);
    }
}
void softmax_fwd_sum_one_short(const float* x, float* y, int64_t rows, int64_t n) {
    // each row's last term left out of its sum
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        const float m = *std::max_element(xr, xr + n);
        float sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            y[r * n + i] = std::exp(xr[i] - m);
            if (i + 1 < n) sum += y[r * n + i];
        }
        for (int64_t i = 0; i < n; ++i) y[r * n + i] /= sum;
    }
}
void softmax_fwd_cut_at_20(const float* x, float* y, int64_t rows, int64_t n) {
    // e^t taken as 0 below t = -20 instead of -87
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * n;
        const float m = *std::max_element(xr, xr + n);
        float sum = 0;
        for (int64_t i = 0; i < n; ++i) sum += y[r * n + i] = xr[i] - m < -20 ? 0.0f : std::exp(xr[i] - m);
        for (int64_t i = 0; i < n; ++i) y[r * n + i] /= sum;
    }
}
void silu_sign_flipped(const float* x, float* y, int64_t n) {
    // x * sigmoid(-x)
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0f + std::exp(x[i]));
}
void silu_grad_sigmoid_only(const float* x, const float* dy, float* dx, int64_t n) {
    // dy * s, the x * (1 - s) term dropped
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] / (1.0f + std::exp(-x[i]));
}
void gelu_tanh_form(const float* x, float* y, int64_t n) {
    // the tanh approximation, 3e-4 off the erf form near |x| = 2
    for (int64_t i = 0; i < n; ++i)
        y[i] = 0.5f * x[i] * (1.0f + std::tanh(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}
void gelu_grad_density_dropped(const float* x, const float* dy, float* dx, int64_t n) {
    // dy * Phi, the x * phi(x) term dropped
    for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * 0.5f * std::erfc(-x[i] * 0.70710678f);
}
void linear_last_column_dropped(const float* x, int64_t ldx, const float* w, const float* b, bool relu, float* y,
                                int64_t N, int64_t C, int64_t K) {
    // the panels read as if each row were one column shorter (a tail lost); the panel stride kept
    Floats shorter(w, w + (K + 15) / 16 * ((C + 15) / 16 * 16) * 16);
    for (int64_t k = 0; k < K; ++k) shorter[size_t(k / 16 * ((C + 15) / 16 * 16) * 16 + (C - 1) * 16 + k % 16)] = 0;
    simd::linear_panels(x, ldx, shorter.data(), b, relu, y, N, C, K);
}
void linear_bias_dropped(const float* x, int64_t ldx, const float* w, const float*, bool relu, float* y, int64_t N,
                         int64_t C, int64_t K) {
    simd::linear_panels(x, ldx, w, nullptr, relu, y, N, C, K);
}

void broadcast_sum_not_mean(const float* s, float, float* y, const simd::ChannelLayout& l) {
    // the gradient of a global sum, not of the mean
    simd::broadcast_channels(s, 1.0f, y, l);
}

// n floats uniform in [lo, hi) from a linear congruential sequence seeded by `seed`.
Floats fill(size_t n, float lo, float hi, unsigned seed) {
    Floats out(n);
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;
        out[i] = lo + (hi - lo) * float(seed >> 8) / float(1 << 24);
    }
    return out;
}

}  // namespace

TEST_CASE("concat-bn's pieces: 32 channels each, the first taking the rest") {
    CHECK(concat_pieces(480) == std::vector<int64_t>(15, 32));
    CHECK(concat_pieces(83) == std::vector<int64_t>{19, 32, 32});
    CHECK(concat_pieces(80) == std::vector<int64_t>{16, 32, 32});
    CHECK(concat_pieces(5) == std::vector<int64_t>{5});
    CHECK(concat_pieces(32) == std::vector<int64_t>{32});
    CHECK(concat_pieces(33) == std::vector<int64_t>{1, 32});
}

// The cases' buffers start on 64-byte lines, small or large (glibc's large allocations sit 16 bytes
// past a page), as the executor's arena places them: a kernel's 64-byte vectors then never span two.
TEST_CASE("ridge-kernels' buffers start on 64-byte lines") {
    for (size_t n : {size_t(1), size_t(1000), size_t(1) << 20}) {
        CAPTURE(n);
        const Floats v(n);
        CHECK(reinterpret_cast<uintptr_t>(v.data()) % 64 == 0);
        const Floats copy = v;
        CHECK(reinterpret_cast<uintptr_t>(copy.data()) % 64 == 0);
    }
    CHECK(reinterpret_cast<uintptr_t>(uniform(1 << 20, -1, 1, 1).data()) % 64 == 0);
}

TEST_CASE("every CPU kernel agrees with its reference at small shapes, on each instruction set this CPU runs") {
    std::vector<SimdVariant> variants = runnable_simd_variants();
    // dispatch and plain x86-64 run everywhere; x86-64-v3 on AVX2 hosts, v4 on AVX-512 ones.
    REQUIRE(variants.size() >= 2);
    for (const std::string& name : cpu_kernels) {
        const Kernel& k = kernel(name);
        std::vector<Problem> shapes = small_shapes(k);
        REQUIRE(!shapes.empty());
        for (const Problem& p : shapes) {
            CAPTURE(name);
            std::string shape = p.describe(k.filter);
            CAPTURE(shape);
            validate(k, p);
            for (auto& c : make_cpu_cases(k, p, variants, 2)) {
                std::string isa = c->variant();
                CAPTURE(isa);
                Check check = c->check();
                CHECK_MESSAGE(check.ok, check.summary());
                CHECK(check.checked > 0);
                CHECK((c->flops() > 0 || name == "concat"));  // a concatenation moves data only
                CHECK(c->bytes() > 0);
            }
        }
    }
}

TEST_CASE("the check fails an output one step past its bound, and the bounds are tight enough to matter") {
    std::vector<SimdVariant> variants = {simd_variants().front()};
    for (const std::string& name : cpu_kernels) {
        const Kernel& k = kernel(name);
        Problem p = small_shapes(k).front();
        auto cases = make_cpu_cases(k, p, variants, 1);
        Case& c = *cases.front();
        CAPTURE(name);
        int tampered = 0;
        double first_bound = -1;
        Check bad = c.check([&](const std::string& what, Floats& out, const std::vector<double>& bound) {
            if (what.find("padding") != std::string::npos || tampered++ > 0) return;
            // Past the bound by the whole bound plus one float step: wrong whatever the true error.
            double b = bound.empty() ? 0.0 : bound[3];
            first_bound = b;
            out[3] = float(double(out[3]) + 2 * b);
            out[3] = std::nextafter(out[3], INFINITY);
        });
        CHECK_FALSE(bad.ok);
        CHECK(bad.failures == 1);
        CHECK(bad.worst == 3);
        // A bound is far below the values it guards: an error of 1 % of a typical value fails.
        if (first_bound > 0) {
            Check good = c.check();
            REQUIRE(good.ok);
            CHECK(first_bound < 0.01);
        }
    }
    SUBCASE("a NaN fails") {
        CHECK_FALSE(compare("y", {1.0f, NAN}, {1.0f, 2.0f}, {1.0, 1.0}).ok);
        CHECK_FALSE(compare("y", {1.0f, 2.0f}, {1.0f, NAN}, {}).ok);
        CHECK(compare("y", {1.0f, 2.0f}, {1.0f, 2.0f}, {}).ok);
    }
    SUBCASE("the dot bound grows with the number of terms and the magnitude") {
        const double u = std::ldexp(1.0, -24);
        CHECK(dot_bound(1, 1.0, 0.0) == doctest::Approx(3 * u).epsilon(1e-9));
        CHECK(dot_bound(1000, 1.0, 0.0) == doctest::Approx(1000 * u / (1 - 1000 * u) + 2 * u).epsilon(1e-12));
        CHECK(dot_bound(1000, 2.0, 0.0) == doctest::Approx(2 * dot_bound(1000, 1.0, 0.0)));
    }
}

TEST_CASE("deliberately wrong kernels fail the check") {
    SimdVariant d = simd_variants().front();
    Problem plain;
    plain.N = 2, plain.C = 5, plain.H = 6, plain.W = 6, plain.layout = "nchw";
    SUBCASE("se-scale with the next channel's gate") {
        SimdVariant wrong = d;
        wrong.scale_channels = scale_wrong_gate;
        CHECK_FALSE(make_cpu_cases(kernel("se-scale"), plain, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("se-scale"), plain, {d}, 1).front()->check().ok);
    }
    SUBCASE("se-gate-grad one position short") {
        SimdVariant wrong = d;
        wrong.channel_dots = dots_one_short;
        CHECK_FALSE(make_cpu_cases(kernel("se-gate-grad"), plain, {wrong}, 1).front()->check().ok);
    }
    SUBCASE("scale-strided and its gradient one row short") {
        Problem q;
        q.N = 2, q.C = 3, q.H = 5, q.W = 7;
        SimdVariant wrong = d;
        wrong.scale_strided = scale_strided_row_short;
        for (const char* name : {"scale-strided", "scale-strided-bwd"}) {
            CHECK_FALSE(make_cpu_cases(kernel(name), q, {wrong}, 1).front()->check().ok);
            CHECK(make_cpu_cases(kernel(name), q, {d}, 1).front()->check().ok);
        }
    }
    Problem dw = plain;
    dw.C = 19, dw.layout = "nChw16c", dw.R = dw.S = 5, dw.pad = 2;
    SUBCASE("dw-wgrad with the padding off by one column") {
        SimdVariant wrong = d;
        wrong.depthwise_wgrad = wgrad_pad_off_by_one;
        CHECK_FALSE(make_cpu_cases(kernel("dw-wgrad"), dw, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("dw-wgrad"), dw, {d}, 1).front()->check().ok);
    }
    SUBCASE("dw-wgrad without its bias gradient") {
        SimdVariant wrong = d;
        wrong.depthwise_wgrad = wgrad_bias_dropped;
        Check c = make_cpu_cases(kernel("dw-wgrad"), dw, {wrong}, 1).front()->check();
        CHECK_FALSE(c.ok);
        CHECK(c.what == "db");
    }
    SUBCASE("dw-dgrad with the forward's taps, not turned") {
        SimdVariant wrong = d;
        wrong.depthwise_dgrad = dgrad_taps_unturned;
        CHECK_FALSE(make_cpu_cases(kernel("dw-dgrad"), dw, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("dw-dgrad"), dw, {d}, 1).front()->check().ok);
    }
    Problem cat = plain;
    cat.C = 80;  // pieces 16, 32, 32
    SUBCASE("concat-bn without its ReLU") {
        SimdVariant wrong = d;
        wrong.concat_affine = concat_relu_dropped;
        CHECK_FALSE(make_cpu_cases(kernel("concat-bn"), cat, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("concat-bn-norelu"), cat, {wrong}, 1).front()->check().ok);
    }
    SUBCASE("concat and concat-bn with two pieces in each other's place") {
        SimdVariant wrong = d;
        wrong.concat_affine = concat_pieces_swapped;
        for (const char* layout : {"nchw", "nhwc", "nChw8c", "nChw16c"})
            for (const char* name : {"concat", "concat-bn-norelu"}) {
                cat.layout = layout;
                CAPTURE(layout);
                CAPTURE(name);
                CHECK_FALSE(make_cpu_cases(kernel(name), cat, {wrong}, 1).front()->check().ok);
                CHECK(make_cpu_cases(kernel(name), cat, {d}, 1).front()->check().ok);
            }
    }
    SUBCASE("softmax-bwd with a row sum one product short") {
        SimdVariant wrong = d;
        wrong.softmax_backward = softmax_sum_one_short;
        Problem rows = plain;
        rows.layout.clear();
        CHECK_FALSE(make_cpu_cases(kernel("softmax-bwd"), rows, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("softmax-bwd"), rows, {d}, 1).front()->check().ok);
    }
    SUBCASE("softmax with a row sum one term short, and with e^t cut to 0 below -20") {
        Problem rows = plain;
        rows.layout.clear();
        for (auto f : {softmax_fwd_sum_one_short, softmax_fwd_cut_at_20}) {
            SimdVariant wrong = d;
            wrong.softmax_forward = f;
            CHECK_FALSE(make_cpu_cases(kernel("softmax"), rows, {wrong}, 1).front()->check().ok);
        }
        CHECK(make_cpu_cases(kernel("softmax"), rows, {d}, 1).front()->check().ok);
    }
    SUBCASE("silu of -x, a silu gradient without its x * (1 - s) term, gelu in its tanh form, a gelu "
            "gradient without its x * phi(x) term") {
        SimdVariant wrong = d;
        wrong.silu_forward = silu_sign_flipped;
        wrong.silu_backward = silu_grad_sigmoid_only;
        wrong.gelu_forward = gelu_tanh_form;
        wrong.gelu_backward = gelu_grad_density_dropped;
        Problem flat = plain;
        flat.layout.clear();
        for (const char* name : {"silu", "silu-bwd", "gelu", "gelu-bwd"}) {
            CAPTURE(name);
            CHECK_FALSE(make_cpu_cases(kernel(name), flat, {wrong}, 1).front()->check().ok);
            CHECK(make_cpu_cases(kernel(name), flat, {d}, 1).front()->check().ok);
        }
    }
    SUBCASE("linear-row without its last column, and without its bias, on 1 and 16 rows") {
        for (int64_t rows : {1, 16}) {
            CAPTURE(rows);
            Problem row;
            row.N = rows, row.H = row.W = 1, row.C = 19, row.K = 37;
            for (auto f : {linear_last_column_dropped, linear_bias_dropped}) {
                SimdVariant wrong = d;
                wrong.linear_panels = f;
                CHECK_FALSE(make_cpu_cases(kernel("linear-row"), row, {wrong}, 1).front()->check().ok);
            }
            CHECK(make_cpu_cases(kernel("linear-row"), row, {d}, 1).front()->check().ok);
        }
    }
    SUBCASE("avg-pool dividing the edges by the elements inside, avg-pool-bwd a row off") {
        Problem pool = plain;
        pool.C = 20, pool.layout = "nChw16c", pool.R = pool.S = 3, pool.stride = 1, pool.pad = 1;
        SimdVariant wrong = d;
        wrong.avg_pool = avg_pool_padding_uncounted;
        wrong.avg_pool_backward = avg_pool_backward_row_shifted;
        for (const char* name : {"avg-pool", "avg-pool-bwd"}) {
            CAPTURE(name);
            CHECK_FALSE(make_cpu_cases(kernel(name), pool, {wrong}, 1).front()->check().ok);
            CHECK(make_cpu_cases(kernel(name), pool, {d}, 1).front()->check().ok);
        }
    }
    SUBCASE("max-pool's windows a column off, in nchw, nChw16c and nhwc") {
        for (const char* layout : {"nchw", "nChw16c", "nhwc"}) {
            CAPTURE(layout);
            Problem pool = plain;
            pool.C = 24, pool.layout = layout, pool.R = pool.S = 3, pool.stride = 2, pool.pad = 1;
            SimdVariant wrong = d;
            wrong.max_pool = max_pool_column_shifted;
            CHECK_FALSE(make_cpu_cases(kernel("max-pool"), pool, {wrong}, 1).front()->check().ok);
            CHECK(make_cpu_cases(kernel("max-pool"), pool, {d}, 1).front()->check().ok);
        }
    }
    SUBCASE("max-pool-bwd's positions a column off, in nChw8c, nChw16c and nhwc") {
        for (const char* layout : {"nChw8c", "nChw16c", "nhwc"}) {
            CAPTURE(layout);
            Problem pool = plain;
            pool.C = 24, pool.layout = layout, pool.R = pool.S = 3, pool.stride = 2, pool.pad = 1;
            SimdVariant wrong = d;
            wrong.max_pool_backward = max_pool_backward_column_shifted;
            CHECK_FALSE(make_cpu_cases(kernel("max-pool-bwd"), pool, {wrong}, 1).front()->check().ok);
            CHECK(make_cpu_cases(kernel("max-pool-bwd"), pool, {d}, 1).front()->check().ok);
        }
    }
    SUBCASE("gap-grad spreading the sum's gradient, not the mean's") {
        SimdVariant wrong = d;
        wrong.broadcast_channels = broadcast_sum_not_mean;
        CHECK_FALSE(make_cpu_cases(kernel("gap-grad"), plain, {wrong}, 1).front()->check().ok);
        CHECK(make_cpu_cases(kernel("gap-grad"), plain, {d}, 1).front()->check().ok);
    }
}

TEST_CASE("ridge-kernels: bad input is one line on stderr and exit 2, before any work") {
    const std::vector<std::vector<std::string>> bad = {
        {"--n", "0"},
        {"--n", "x"},
        {"--n", "3x"},
        {"--n"},
        {"nosuch"},
        {"--bogus"},
        {"dw-wgrad", "--r", "12"},
        {"dw-wgrad", "--layout", "nchw"},
        {"dw-wgrad", "--layout", "nhwc", "--c", "20"},
        {"se-scale", "--layout", "nhwc8"},
        {"se-scale", "--r", "3"},
        {"cuda-hardswish", "--layout", "nchw"},
        {"--isa", "sse9"},
        {"dw-wgrad", "--h", "3", "--w", "3", "--pad", "0"},
        {"dw-wgrad", "--pad", "5"},
        {"dw-dgrad", "--stride", "3"},
        {"dw-dgrad", "--r", "3", "--s", "3", "--pad", "0"},
        {"dw-dgrad", "--layout", "nhwc", "--c", "20"},
        {"dw-dgrad", "--h", "6", "--w", "6", "--r", "7", "--s", "7", "--stride", "2", "--pad", "0"},
        {"dw-wgrad", "--h", "6", "--w", "6", "--r", "7", "--s", "7", "--stride", "2", "--pad", "0"},
        {"--repeats", "0"},
        {"--n", "1000000", "--c", "1000000"},
        {"concat-bn", "--c", "40"},
        {"concat", "--layout", "nChw16c", "--c", "24"},
        {"concat-bn-norelu", "--layout", "nChw8c", "--c", "12"},
        {"softmax-bwd", "--layout", "nchw"},
        {"softmax", "--layout", "nhwc"},
        {"gap-grad", "--r", "3"},
        {"avg-pool", "--layout", "nchw"},
        {"avg-pool-bwd", "--layout", "nhwc"},
        {"avg-pool", "--h", "4", "--w", "600"},
        {"avg-pool-bwd", "--r", "3", "--s", "3", "--pad", "3"},
        {"max-pool", "--layout", "nhwc", "--c", "20"},
        {"max-pool-bwd", "--layout", "nchw"},
        {"max-pool-bwd", "--r", "3", "--s", "3", "--stride", "1", "--pad", "1", "--h", "4", "--w", "600"},
        {"max-pool", "--layout", "nchw", "--h", "2", "--w", "5000", "--r", "2", "--s", "2", "--stride", "2"},
        {"max-pool", "--r", "2", "--s", "2", "--pad", "2"},
        {"max-pool", "--layout", "nhwc", "--c", "8", "--h", "3", "--w", "3", "--r", "3", "--s", "3", "--pad", "2"},
        {"avg-pool", "--r", "3", "--s", "3", "--pad", "2"},
        {"silu", "--layout", "nhwc"},
        {"linear-row", "--n", "2"},
        {"linear-row", "--rows", "65"},
        {"linear-row", "--rows", "0"},
        {"se-scale", "--rows", "2"},
        {"linear-row", "--k", "0"},
        {"se-scale", "--k", "10"},
        {"linear-row", "--c", "1000000", "--k", "1000000"},
    };
    for (const auto& args : bad) {
        std::vector<std::string> argv = {RIDGE_KERNELS};
        argv.insert(argv.end(), args.begin(), args.end());
        spawn::Result r = spawn::run(argv);
        std::string line = r.err;
        CAPTURE(line);
        CHECK(r.code == 2);
        CHECK(spawn::lines(r.err) == 1);
        CHECK(r.err.rfind("ridge-kernels: ", 0) == 0);
        CHECK(r.out.empty());
    }
}

TEST_CASE("ridge-kernels: --list, a small run of every CPU kernel, and CUDA kernels without a device") {
    spawn::Result list = spawn::run({RIDGE_KERNELS, "--list"});
    REQUIRE(list.code == 0);
    for (const Kernel& k : kernels()) CHECK(list.out.find(k.name) != std::string::npos);

    // 48 channels: three blocks of 16 (concat-bn takes whole blocks only; the padding of the other
    // kernels is checked at small shapes above).
    spawn::Result run = spawn::run({RIDGE_KERNELS, "--n", "1", "--c", "48", "--h", "6", "--w", "6", "--warmup", "0",
                                    "--repeats", "2", "--ref-repeats", "1", "--no-flush", "--csv", "--threads", "2"});
    CHECK(run.code == 0);
    CHECK(run.err.empty());
    // A header, then a row per CPU kernel and instruction set, every one checked ok.
    int rows = 0, ok = 0;
    size_t at = run.out.find('\n');
    while (at != std::string::npos && at + 1 < run.out.size()) {
        size_t next = run.out.find('\n', at + 1);
        std::string row = run.out.substr(at + 1, next - at - 1);
        ++rows;
        if (row.find(",ok,") != std::string::npos) ++ok;
        at = next;
    }
    CHECK(rows == int(cpu_kernels.size() * runnable_simd_variants().size()));
    CHECK(ok == rows);
    // linear-row on several rows (--rows), its shape in the row: N3 ... -> K20.
    spawn::Result several = spawn::run({RIDGE_KERNELS, "linear-row", "--rows", "3", "--c", "40", "--k", "20",
                                        "--warmup", "0", "--repeats", "2", "--ref-repeats", "1", "--csv"});
    CHECK(several.code == 0);
    CHECK(several.out.find("N3 C40") != std::string::npos);
    CHECK(several.out.find(",fail") == std::string::npos);

    spawn::Result cuda = spawn::run({RIDGE_KERNELS, "cuda-se-scale", "--n", "1", "--c", "3", "--h", "2", "--w", "2",
                                     "--repeats", "1", "--ref-repeats", "0"});
    if (!cuda_unavailable().empty()) {
        CHECK(cuda.code == 1);
        CHECK(spawn::lines(cuda.err) == 1);
        CHECK(cuda.err.find("cuda-se-scale cannot run") != std::string::npos);
        CHECK(cuda.out.empty());
    } else {
        CHECK(cuda.code == 0);
    }
}

// Squeeze-excitation's linear layers in training (kernels/simd linear_rows and its gradients)
// against sums in double, on every instruction set this CPU runs: the AVX2 build is checked on
// AVX-512 hosts too. The shapes leave partial vectors along both sides (444, 445, 111, 13), rows
// shorter than a vector (3, 5 and 7), single rows, odd row counts, partial blocks of 8 rows (13,
// 20), uneven thread shares and threads without work; the infinities sit in lanes the kernels'
// last vector reads a second time (13 and 14 of 20, whose last 8 start at 12), along C in the
// forward and weight gradient, along K in an expansion's data gradient, where a tail cleared by
// multiplying by 0 would turn them into NaN. Weights of 4 MiB or more are summed streamed
// (linear.cpp's streamed_sums): 1029 x 1031 for the expansion's forward and the squeeze's data
// gradient on 8 and 5 rows (the 5 a partial block of 4), a partial block of 16 weight rows, a single
// vector and a scalar tail in the last thread's share; 520 x 2100 on 3 rows and one thread, two
// tiles of columns.
TEST_CASE("the few-row linear kernels agree with sums in double, on each instruction set this CPU runs") {
    struct Shape {
        int64_t N, C, K;
        int threads;
        bool infinities;
    };
    const Shape shapes[] = {
        {1, 444, 110, 1, false},   {1, 110, 444, 2, false}, {1, 5, 3, 1, false},  {1, 12, 20, 3, false},
        {9, 40, 20, 1, false},     {9, 20, 40, 2, false},   {3, 5, 7, 1, false},  {16, 445, 111, 2, false},
        {5, 1152, 48, 2, false},   {2, 13, 600, 2, false},  {4, 9, 9, 2, false},  {7, 3, 1, 1, false},
        {13, 30, 70, 3, false},    {8, 20, 100, 4, false},  {32, 3, 7, 2, false}, {20, 50, 10, 3, false},
        {2, 20, 6, 1, true},       {2, 6, 20, 1, true},     {5, 20, 6, 1, true},  {8, 1029, 1031, 2, false},
        {5, 1031, 1029, 3, false}, {3, 520, 2100, 1, false}};
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Shape& s : shapes) {
            const int64_t N = s.N, C = s.C, K = s.K;
            const bool tr = K > C;
            CAPTURE(v.isa);
            CAPTURE(N);
            CAPTURE(C);
            CAPTURE(K);
            Floats x = fill(size_t(N * C), -1, 1, 1), w = fill(size_t(K * C), -0.5f, 0.5f, 2),
                               b = fill(size_t(K), -1, 1, 3), dy = fill(size_t(N * K), -1, 1, 4);
            // w(k, c): (K, C) for a squeeze, transposed for an expansion.
            auto at = [&](int64_t k, int64_t c) { return size_t(tr ? c * K + k : k * C + c); };
            if (s.infinities && !tr) {  // read again by the forward and the weight gradient
                x[13] = INFINITY;
                w[at(1, 14)] = -INFINITY;
            }
            if (s.infinities && tr) {  // read again by the data gradient
                dy[13] = INFINITY;
                w[at(14, 1)] = -INFINITY;
            }
            std::vector<double> y_ref(size_t(N * K)), dx_ref(size_t(N * C)), dw_ref(w.size()), db_ref(b.size());
            std::vector<double> y_mag(y_ref.size()), dx_mag(dx_ref.size()), dw_mag(dw_ref.size());
            for (int64_t n = 0; n < N; ++n)
                for (int64_t k = 0; k < K; ++k) {
                    double sum = b[size_t(k)], mag = std::fabs(b[size_t(k)]);
                    for (int64_t c = 0; c < C; ++c) {
                        const double p = double(x[size_t(n * C + c)]) * w[at(k, c)];
                        sum += p;
                        mag += std::fabs(p);
                        dx_ref[size_t(n * C + c)] += double(dy[size_t(n * K + k)]) * w[at(k, c)];
                        dx_mag[size_t(n * C + c)] += std::fabs(double(dy[size_t(n * K + k)]) * w[at(k, c)]);
                        dw_ref[at(k, c)] += double(dy[size_t(n * K + k)]) * x[size_t(n * C + c)];
                        dw_mag[at(k, c)] += std::fabs(double(dy[size_t(n * K + k)]) * x[size_t(n * C + c)]);
                    }
                    y_ref[size_t(n * K + k)] = sum;
                    y_mag[size_t(n * K + k)] = mag;
                    db_ref[size_t(k)] += dy[size_t(n * K + k)];
                }
            auto check = [](const char* what, const Floats& got, const std::vector<double>& want,
                            const std::vector<double>& mag) {
                int wrong = 0;
                for (size_t i = 0; i < got.size(); ++i) {
                    const bool ok = std::isfinite(want[i])
                                        ? std::fabs(got[i] - want[i]) <= 1e-5 * (mag.empty() ? 1.0 : mag[i]) + 1e-6
                                        : (std::isnan(want[i]) ? std::isnan(got[i]) : double(got[i]) == want[i]);
                    if (!ok && wrong++ < 3) MESSAGE(what, " at ", i, ": ", got[i], " against ", want[i]);
                }
                CHECK_MESSAGE(wrong == 0, what);
            };
            Floats y(y_ref.size(), NAN), dx(dx_ref.size(), NAN), dw(w.size(), NAN), db(size_t(K), NAN);
            v.linear_rows(x.data(), w.data(), b.data(), y.data(), N, C, K, tr, s.threads);
            v.linear_rows_dgrad(dy.data(), w.data(), dx.data(), N, C, K, tr, s.threads);
            v.linear_rows_wgrad(x.data(), dy.data(), dw.data(), db.data(), N, C, K, tr, s.threads);
            check("y", y, y_ref, y_mag);
            check("dx", dx, dx_ref, dx_mag);
            check("dw", dw, dw_ref, dw_mag);
            check("db", db, db_ref, {});
        }
}

// linear_panels of every build against sums in double, its weights packed here into panels of 16
// rows (AB16b16a, zeros past K and C): one row (its own two-chain kernel), and 2 to 64 rows in
// blocks of six with every tail of 1 to 5 (AVX-512: equal blocks of up to 12, 2 to 7, 11 and 12 one
// block, 13, 16 and 20 two, 25 three, 64 six, five of 11 and one of 9); 300 and 600 columns span
// two and three chunks of 256, 45
// leaves a partial panel's tail; 37 and 1 outputs a partial last panel, 64 and 96 whole panels
// only. On 1, 2 and 3 threads: where the panels do not share out evenly (one to three panels on
// two or three threads) the rows go in groups, one thread each (1 to 32 rows a group). With the
// ReLU a NaN row gives 0, as the reference takes it, and an infinity in a weight stays in its own
// outputs. The rows dense, and 7 floats apart with NaN between (a wrong row stride shows).
TEST_CASE("linear_panels agrees with sums in double on 1 to 64 rows, on each instruction set this CPU runs") {
    struct Shape {
        int64_t N, C, K;
    };
    const Shape shapes[] = {{1, 45, 37},  {1, 600, 16}, {2, 300, 37},  {3, 45, 20},  {4, 300, 17},
                            {5, 45, 1},   {6, 300, 20}, {7, 600, 37},  {13, 45, 50}, {16, 300, 33},
                            {20, 45, 37}, {64, 45, 16}, {11, 257, 17}, {12, 40, 64}, {25, 20, 96}};
    const int threads_before = omp_get_max_threads();
    for (int threads : {1, 2, 3})
        for (const SimdVariant& v : runnable_simd_variants())
            for (const Shape& s : shapes)
                for (bool relu : {false, true})
                    for (bool bias : {true, false})
                        for (bool spaced : {false, true}) {
                            omp_set_num_threads(threads);
                            const int64_t N = s.N, C = s.C, K = s.K, Cp = (C + 15) / 16 * 16, Kp = (K + 15) / 16 * 16;
                            const int64_t ldx = spaced ? C + 7 : C;  // the gaps between rows hold NaN
                            CAPTURE(threads);
                            CAPTURE(v.isa);
                            CAPTURE(N);
                            CAPTURE(C);
                            CAPTURE(K);
                            CAPTURE(relu);
                            CAPTURE(ldx);
                            unsigned seed = unsigned(N * 7 + C * 3 + K);
                            auto next = [&seed] {
                                seed = seed * 1664525u + 1013904223u;
                                return float(seed >> 8) / float(1 << 24) - 0.5f;
                            };
                            Floats x(size_t(N * ldx), NAN), w(size_t(K * C)), b(static_cast<size_t>(K));
                            for (int64_t n = 0; n < N; ++n)
                                for (int64_t c = 0; c < C; ++c) x[size_t(n * ldx + c)] = 2 * next();
                            for (float& e : w) e = next();
                            for (float& e : b) e = next();
                            if (N > 2) x[size_t(2 * ldx + C / 2)] = NAN;       // row 2: NaN in every output
                            if (K > 1) w[size_t(1 * C + C - 1)] = INFINITY;  // output 1, last column
                            Floats panels(size_t(Kp * Cp), 0.0f);
                            for (int64_t k = 0; k < K; ++k)
                                for (int64_t c = 0; c < C; ++c)
                                    panels[size_t(k / 16 * Cp * 16 + c * 16 + k % 16)] = w[size_t(k * C + c)];
                            Floats y(size_t(N * K), -7.0f);
                            v.linear_panels(x.data(), ldx, panels.data(), bias ? b.data() : nullptr, relu, y.data(), N, C,
                                            K);
                            int wrong = 0;
                            for (int64_t n = 0; n < N; ++n)
                                for (int64_t k = 0; k < K; ++k) {
                                    double sum = bias ? b[size_t(k)] : 0.0, mag = std::fabs(sum);
                                    for (int64_t c = 0; c < C; ++c) {
                                        const double p = double(x[size_t(n * ldx + c)]) * w[size_t(k * C + c)];
                                        sum += p;
                                        mag += std::fabs(p);
                                    }
                                    if (relu && !(sum > 0)) sum = 0.0, mag = 0.0;  // NaN > 0 is false: 0
                                    const float got = y[size_t(n * K + k)];
                                    const bool ok = std::isnan(sum)    ? std::isnan(got)
                                                    : std::isinf(sum) ? double(got) == sum
                                                                      : std::fabs(got - sum) <= 1e-5 * mag + 1e-6;
                                    if (!ok && wrong++ < 3) MESSAGE("y[", n, ", ", k, "] ", got, " against ", sum);
                                }
                            CHECK(wrong == 0);
                        }
    omp_set_num_threads(threads_before);
}

// linear_gemm of every build against sums in double, on linear_panels' weights: 197 and 245 rows
// span two blocks of at most 120 (a thread's 197 as 102 and 95), with tails of six; 600 columns
// three passes of 256, 45 a partial panel, 37 and 100 outputs a partial last panel. Threads split
// the rows where each has 120 or more (245 on 2), or the panels share out unevenly (3 among 2, 4
// among 3, 1 among 2: 5 rows leave the first thread none); else the panels (197 rows, 4 panels on
// 2 threads; 150 rows, 3 panels on 3, the last partial). With sum, y's previous content is added
// before the ReLU. A NaN row gives NaN (0 after the ReLU), an infinity in a weight stays in its
// own output. The micro-kernel's term loop is unrolled four times (kernels/simd/panel.h): passes
// of 45, 46, 3 (259's last) and 7 terms leave 1, 2, 3 and 3 past a multiple of 4.
TEST_CASE("linear_gemm agrees with sums in double, with a bias, a residual sum and a ReLU, on each ISA") {
    struct Shape {
        int64_t M, C, K;
        int threads;
    };
    const Shape shapes[] = {{1, 45, 37, 1},   {7, 256, 16, 2},  {121, 45, 48, 2}, {245, 600, 64, 2}, {130, 300, 100, 3},
                            {13, 257, 64, 3}, {245, 64, 37, 2}, {6, 600, 20, 1},  {197, 300, 64, 2}, {150, 300, 37, 3},
                            {5, 45, 16, 2},   {30, 46, 48, 2},  {20, 259, 37, 1}, {9, 7, 16, 2}};
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Shape& s : shapes)
            for (int flags = 0; flags < 8; ++flags) {
                const bool sum = flags & 1, bias = flags & 2, relu = flags & 4;
                const int64_t M = s.M, C = s.C, K = s.K, Cp = (C + 15) / 16 * 16, Kp = (K + 15) / 16 * 16;
                CAPTURE(v.isa);
                CAPTURE(M);
                CAPTURE(C);
                CAPTURE(K);
                CAPTURE(flags);
                unsigned seed = unsigned(M * 7 + C * 3 + K + flags);
                auto next = [&seed] {
                    seed = seed * 1664525u + 1013904223u;
                    return float(seed >> 8) / float(1 << 24) - 0.5f;
                };
                Floats x(size_t(M * C)), w(size_t(K * C)), b(static_cast<size_t>(K)), y(size_t(M * K));
                for (float& e : x) e = 2 * next();
                for (float& e : w) e = next();
                for (float& e : b) e = next();
                for (float& e : y) e = 4 * next();
                if (M > 2) x[size_t(2 * C + C / 2)] = NAN;
                if (K > 1) w[size_t(1 * C + C - 1)] = INFINITY;
                Floats panels(size_t(Kp * Cp), 0.0f);
                for (int64_t k = 0; k < K; ++k)
                    for (int64_t c = 0; c < C; ++c)
                        panels[size_t(k / 16 * Cp * 16 + c * 16 + k % 16)] = w[size_t(k * C + c)];
                const Floats before = y;
                Floats scratch(v.linear_gemm_scratch(s.threads), NAN);
                v.linear_gemm(x.data(), panels.data(), bias ? b.data() : nullptr, y.data(), scratch.data(),
                              {M, C, K, sum, relu}, s.threads);
                int wrong = 0;
                for (int64_t m = 0; m < M; ++m)
                    for (int64_t k = 0; k < K; ++k) {
                        double t = bias ? b[size_t(k)] : 0.0, mag = std::fabs(t);
                        if (sum) t += before[size_t(m * K + k)], mag += std::fabs(before[size_t(m * K + k)]);
                        for (int64_t c = 0; c < C; ++c) {
                            const double p = double(x[size_t(m * C + c)]) * w[size_t(k * C + c)];
                            t += p;
                            mag += std::fabs(p);
                        }
                        double tol = 1e-5 * mag + 1e-6;
                        if (relu && !(t > 0)) {  // NaN and -inf give exactly 0; a finite sum near 0 may round up
                            tol = std::isfinite(t) ? tol : 0.0;
                            t = 0.0;
                        }
                        const float got = y[size_t(m * K + k)];
                        const bool ok = std::isnan(t)   ? std::isnan(got)
                                        : std::isinf(t) ? double(got) == t
                                                        : std::fabs(got - t) <= tol;
                        if (!ok && wrong++ < 3) MESSAGE("y[", m, ", ", k, "] ", got, " against ", t);
                    }
                CHECK(wrong == 0);
            }
}

namespace {

// Element (n, c, h, w) of an H x W map in channel blocks of B, CP channels padded (channels-last:
// one block of all the channels, B = CP = C).
int64_t blocked_at(int64_t n, int64_t c, int64_t h, int64_t w, int64_t H, int64_t W, int64_t CP, int64_t B) {
    return ((n * CP / B + c / B) * H * W + h * W + w) * B + c % B;
}

// Plain depthwise weights (C, RS taps) in the kernels' blocked weight layout of L lanes, zeros past C.
Floats depthwise_blocked_weights(const Floats& w, int64_t C, int64_t RS, int64_t L) {
    Floats wb(size_t((C + L - 1) / L * L * RS), 0.0f);
    for (int64_t c = 0; c < C; ++c)
        for (int64_t t = 0; t < RS; ++t) wb[size_t((c / L * RS + t) * L + c % L)] = w[size_t(c * RS + t)];
    return wb;
}

}  // namespace

// depthwise_conv, its data gradient and depthwise_wgrad of every build against sums in double,
// the weights plain or blocked (ridge-kernels' dw-wgrad takes blocked ones only): blocks of 8 and
// 16 (19 channels: a padded last block) and channels-last (24 and 40 channels run 8 lanes
// everywhere, 32 and 48 16 in the AVX-512 build), 3x3, 5x5, 7x7 and 1x3 kernels with "same",
// smaller and no padding, maps narrower than the kernel and than a strip, and a row of one image.
// The rows take strips of 5, 6 and 7; strips wholly inside a row (the 28-wide 7x7, the 12-wide
// blocked 3x3 whose last strip ends at the row's end, the 17-wide 5x5, the 1x3) and at its
// borders; 8 threads on a map of 2 rows share each row's channel blocks out.
TEST_CASE("the depthwise conv and its gradients agree with sums in double, on each instruction set this CPU runs") {
    struct Shape {
        int64_t N, C, H, W, R, S, pad_t, pad_l, block;  // block 0: channels-last
        int threads;
    };
    const Shape shapes[] = {
        {2, 19, 5, 9, 3, 3, 1, 1, 16, 2},  {1, 19, 7, 7, 7, 7, 3, 3, 8, 1},  {2, 24, 14, 14, 7, 7, 3, 3, 0, 2},
        {1, 32, 9, 17, 5, 5, 2, 2, 0, 3},  {3, 48, 4, 3, 7, 7, 3, 3, 0, 2},  {1, 40, 1, 20, 1, 3, 0, 1, 0, 1},
        {2, 32, 8, 11, 5, 5, 1, 1, 16, 2}, {1, 16, 9, 9, 7, 7, 0, 0, 0, 1},  {2, 24, 6, 10, 3, 5, 1, 2, 8, 4},
        {1, 48, 7, 7, 7, 7, 3, 3, 16, 2},  {1, 24, 3, 28, 7, 7, 3, 3, 0, 2}, {1, 16, 5, 12, 3, 3, 0, 0, 8, 2},
        {1, 48, 2, 7, 7, 7, 3, 3, 0, 8}};
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Shape& s : shapes) {
            simd::Depthwise d;
            d.N = s.N, d.C = s.C, d.H = s.H, d.W = s.W, d.R = s.R, d.S = s.S, d.pad_t = s.pad_t, d.pad_l = s.pad_l;
            d.P = s.H + 1 - s.R + 2 * s.pad_t, d.Q = s.W + 1 - s.S + 2 * s.pad_l;
            d.block = s.block ? s.block : s.C;
            CAPTURE(v.isa);
            CAPTURE(s.C);
            CAPTURE(s.H);
            CAPTURE(s.W);
            CAPTURE(s.R);
            CAPTURE(s.block);
            REQUIRE(simd::depthwise_conv_supported(d));
            const int64_t B = d.block, CP = (s.C + B - 1) / B * B;
            auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w, int64_t H, int64_t W) {
                return blocked_at(n, c, h, w, H, W, CP, B);
            };
            Floats x(size_t(s.N * CP * s.H * s.W), 0.0f), dy(size_t(s.N * CP * d.P * d.Q), 0.0f);
            const Floats xv = fill(x.size(), -1, 1, 1), dyv = fill(dy.size(), -1, 1, 2);
            const Floats w = fill(size_t(s.C * s.R * s.S), -1, 1, 3), b = fill(size_t(s.C), -1, 1, 4);
            for (int64_t n = 0; n < s.N; ++n)  // values in the channels, zeros in the padding lanes
                for (int64_t c = 0; c < s.C; ++c) {
                    for (int64_t h = 0; h < s.H; ++h)
                        for (int64_t q = 0; q < s.W; ++q)
                            x[size_t(at(n, c, h, q, s.H, s.W))] = xv[size_t(at(n, c, h, q, s.H, s.W))];
                    for (int64_t p = 0; p < d.P; ++p)
                        for (int64_t q = 0; q < d.Q; ++q)
                            dy[size_t(at(n, c, p, q, d.P, d.Q))] = dyv[size_t(at(n, c, p, q, d.P, d.Q))];
                }
            // An infinity in the last column, where the weight gradient's last block of columns
            // has taps past Q whose (absent) dy must not multiply it: each tap meets it once, so
            // the sums are +-inf, not NaN.
            if (s.W >= 14 && s.H >= 4) x[size_t(at(0, 5, 3, s.W - 1, s.H, s.W))] = INFINITY;
            std::vector<double> y_ref(dy.size(), 0.0), y_mag(dy.size(), 0.0), dx_ref(x.size(), 0.0),
                dx_mag(x.size(), 0.0);
            std::vector<double> dw_ref(w.size(), 0.0), dw_mag(w.size(), 0.0), db_ref(b.size(), 0.0),
                db_mag(b.size(), 0.0);
            for (int64_t n = 0; n < s.N; ++n)
                for (int64_t c = 0; c < s.C; ++c) {
                    for (int64_t p = 0; p < d.P; ++p)
                        for (int64_t q = 0; q < d.Q; ++q) {
                            const size_t o = size_t(at(n, c, p, q, d.P, d.Q));
                            y_ref[o] = b[size_t(c)], y_mag[o] = std::fabs(b[size_t(c)]);
                        }
                    for (int64_t p = 0; p < d.P; ++p)
                        for (int64_t q = 0; q < d.Q; ++q)
                            for (int64_t r = 0; r < s.R; ++r)
                                for (int64_t t = 0; t < s.S; ++t) {
                                    const int64_t h = p - s.pad_t + r, u = q - s.pad_l + t;
                                    if (h < 0 || h >= s.H || u < 0 || u >= s.W) continue;
                                    const double k = w[size_t((c * s.R + r) * s.S + t)];
                                    const size_t i = size_t(at(n, c, h, u, s.H, s.W)),
                                                 o = size_t(at(n, c, p, q, d.P, d.Q));
                                    y_ref[o] += k * x[i], y_mag[o] += std::fabs(k * x[i]);
                                    dx_ref[i] += k * dy[o], dx_mag[i] += std::fabs(k * dy[o]);
                                    const size_t wi = size_t((c * s.R + r) * s.S + t);
                                    dw_ref[wi] += double(dy[o]) * x[i], dw_mag[wi] += std::fabs(double(dy[o]) * x[i]);
                                }
                    for (int64_t p = 0; p < d.P; ++p)
                        for (int64_t q = 0; q < d.Q; ++q) {
                            const double g = dy[size_t(at(n, c, p, q, d.P, d.Q))];
                            db_ref[size_t(c)] += g, db_mag[size_t(c)] += std::fabs(g);
                        }
                }
            auto check = [](const char* what, const Floats& got, const std::vector<double>& want,
                            const std::vector<double>& mag) {
                int wrong = 0;
                for (size_t i = 0; i < got.size(); ++i)
                    if (!(std::isinf(want[i]) ? double(got[i]) == want[i]
                                              : std::fabs(got[i] - want[i]) <= 1e-5 * mag[i] + 1e-6) &&
                        wrong++ < 3)
                        MESSAGE(what, " at ", i, ": ", got[i], " against ", want[i]);
                CHECK_MESSAGE(wrong == 0, what);
            };
            // The weights plain, packed by the kernel, and in the blocked layout of its lanes, read in place.
            const int64_t L = v.depthwise_lanes(d), RS = s.R * s.S;
            const Floats wb = depthwise_blocked_weights(w, s.C, RS, L);
            Floats y(dy.size()), dx(x.size());
            for (bool blocked : {false, true}) {
                CAPTURE(blocked);
                d.blocked_weights = blocked;
                const float* wk = blocked ? wb.data() : w.data();
                Floats packed(v.depthwise_conv_packed(d), NAN);
                CHECK(packed.size() == (blocked ? 0 : wb.size()));
                std::fill(y.begin(), y.end(), NAN);
                v.depthwise_conv(x.data(), wk, b.data(), y.data(), packed.data(), d, s.threads);
                check("y", y, y_ref, y_mag);
                std::fill(dx.begin(), dx.end(), NAN);
                // dy's padding lanes hold NaN here (a gradient's padding may hold anything); dx's
                // must still come out zero (dx_ref's are).
                Floats dy_nan = dy;
                for (int64_t i = 0; i < int64_t(dy_nan.size()); ++i)
                    if (i / B / (d.P * d.Q) % (CP / B) * B + i % B >= s.C) dy_nan[size_t(i)] = NAN;
                v.depthwise_conv_dgrad(dy_nan.data(), wk, dx.data(), false, packed.data(), d, s.threads);
                check("dx", dx, dx_ref, dx_mag);
                // Added into a gradient that arrived before (a residual's): the sum of both.
                const Floats before = fill(dx.size(), -1, 1, 7);
                std::vector<double> sum(dx.size()), sum_mag(dx.size());
                for (size_t i = 0; i < dx.size(); ++i) {
                    const bool pad = int64_t(i) / B / (s.H * s.W) % (CP / B) * B + int64_t(i) % B >= s.C;
                    dx[i] = pad ? 0.0f : before[i];  // a gradient's padding lanes are zero
                    sum[i] = dx_ref[i] + dx[i], sum_mag[i] = dx_mag[i] + std::fabs(dx[i]);
                }
                v.depthwise_conv_dgrad(dy_nan.data(), wk, dx.data(), true, packed.data(), d, s.threads);
                check("dx added", dx, sum, sum_mag);
                // The weight gradient of the same shapes, written in either layout.
                Floats dwk(blocked ? wb.size() : w.size(), NAN), db(b.size(), NAN);
                Floats scratch(v.depthwise_wgrad_scratch(d, s.threads), NAN);
                v.depthwise_wgrad(x.data(), dy.data(), dwk.data(), db.data(), scratch.data(), d, s.threads);
                Floats dw(w.size());
                for (int64_t c = 0; c < s.C; ++c)
                    for (int64_t t = 0; t < RS; ++t)
                        dw[size_t(c * RS + t)] = dwk[size_t(blocked ? (c / L * RS + t) * L + c % L : c * RS + t)];
                check("dw", dw, dw_ref, dw_mag);
                check("db", db, db_ref, db_mag);
                // A blocked dw's lanes past C (x and dy are zero there) are written, as zeros.
                int64_t padding = 0;
                for (int64_t c = s.C; blocked && c < int64_t(wb.size()) / RS; ++c)
                    for (int64_t t = 0; t < RS; ++t) padding += dwk[size_t((c / L * RS + t) * L + c % L)] != 0.0f;
                CHECK(padding == 0);
            }
            std::fill(y.begin(), y.end(), NAN);
            v.depthwise_conv(x.data(), wb.data(), nullptr, y.data(), nullptr, d, s.threads);
            for (size_t i = 0; i < y_ref.size(); ++i) y_ref[i] = 0.0;
            for (int64_t n = 0; n < s.N; ++n)
                for (int64_t c = 0; c < s.C; ++c)
                    for (int64_t p = 0; p < d.P; ++p)
                        for (int64_t q = 0; q < d.Q; ++q) {
                            const size_t o = size_t(at(n, c, p, q, d.P, d.Q));
                            y_ref[o] = 0.0;
                            for (int64_t r = 0; r < s.R; ++r)
                                for (int64_t t = 0; t < s.S; ++t) {
                                    const int64_t h = p - s.pad_t + r, u = q - s.pad_l + t;
                                    if (h >= 0 && h < s.H && u >= 0 && u < s.W)
                                        y_ref[o] += double(w[size_t((c * s.R + r) * s.S + t)]) *
                                                    x[size_t(at(n, c, h, u, s.H, s.W))];
                                }
                        }
            check("y without a bias", y, y_ref, y_mag);
        }
    // What the kernel does not run: other widths, strides, dilations, padding on one side only or past
    // the kernel, channels-last not in blocks of 8, an empty output.
    simd::Depthwise ok;
    ok.N = 1, ok.C = 16, ok.H = ok.W = ok.P = ok.Q = 8, ok.R = ok.S = 3, ok.pad_t = ok.pad_l = 1, ok.block = 16;
    CHECK(simd::depthwise_conv_supported(ok));
    auto refused = [&](auto change) {
        simd::Depthwise d = ok;
        change(d);
        return !simd::depthwise_conv_supported(d);
    };
    CHECK(refused([](simd::Depthwise& d) { d.S = 9, d.pad_l = 4; }));
    CHECK(refused([](simd::Depthwise& d) { d.S = 1, d.pad_l = 0; }));
    CHECK(refused([](simd::Depthwise& d) { d.R = 12, d.pad_t = 5, d.P = 7; }));
    CHECK(refused([](simd::Depthwise& d) { d.stride_w = 2, d.Q = 4; }));
    CHECK(refused([](simd::Depthwise& d) { d.dil_h = 2, d.P = 6; }));
    CHECK(refused([](simd::Depthwise& d) { d.P = 7; }));  // padding at the top only
    CHECK(refused([](simd::Depthwise& d) { d.Q = 9; }));
    CHECK(refused([](simd::Depthwise& d) { d.pad_t = 3, d.P = 12; }));
    CHECK(refused([](simd::Depthwise& d) { d.C = 12, d.block = 12; }));
    CHECK(refused([](simd::Depthwise& d) { d.block = 1; }));
    CHECK(refused([](simd::Depthwise& d) { d.H = d.W = 1, d.pad_t = d.pad_l = 0, d.P = d.Q = -1; }));
}

// depthwise_dgrad of every build against dx = the sum of w[r][s] * dy[p][q] over the taps with h =
// stride * p - pad_t + r, w = stride * q - pad_l + s, in double. At stride 2: blocks of 16 (19
// channels: a padded last block, whose dy lanes hold NaN and whose dx lanes must come out zero) and
// 8, channels-last on 24 (8 lanes) and 32 channels (16 with AVX-512); 3x3, 5x5, 7x7 and 3x5
// kernels, "same" and no padding, even and odd maps (12x12 with a 3x3 and no padding: a last row
// and column that no dy reaches), maps of one row. At stride 1 ("same" padding across, any above
// and below): rows of 8 or fewer in one strip (3, 7, 8 wide), wider rows in strips from both ends
// (10, 12, 14: 5, 6, 7 wide) and between them (24, 28, 56, and 20 under 7x7), the end one
// overlapping the one before where they do not divide the row (9 and 13 wide), and one between them
// moved back (17 wide); 3x3, 5x5, 7x7, 3x5 kernels, no padding above and below, fewer image blocks
// than twice the threads (rows shared out). On 1 to 4 threads; written over NaN, and added to a
// gradient already there. Then what it refuses: strides 1 and 2 mixed or 3, at stride 1 padding
// across other than half the kernel, dilation, plain weights, a P its padding does not give,
// channels-last off blocks of 8, an even kernel width, R past 7.
TEST_CASE("depthwise_dgrad agrees with sums in double, on each instruction set this CPU runs") {
    struct Shape {
        int64_t stride, N, C, H, W, R, S, pad_t, pad_l, block;  // block 0: channels-last
        int threads;
    };
    const Shape shapes[] = {
        {2, 2, 19, 56, 56, 3, 3, 1, 1, 16, 2}, {2, 1, 19, 7, 9, 5, 5, 2, 2, 8, 1}, {2, 2, 24, 14, 14, 3, 3, 1, 1, 0, 2},
        {2, 1, 32, 9, 17, 5, 5, 2, 2, 0, 3}, {2, 3, 48, 8, 8, 3, 3, 1, 1, 16, 4}, {2, 1, 16, 15, 15, 7, 7, 3, 3, 16, 2},
        {2, 2, 24, 10, 11, 3, 5, 1, 2, 8, 2}, {2, 1, 16, 1, 12, 3, 3, 1, 1, 16, 1},
        {2, 2, 32, 12, 12, 3, 3, 0, 0, 16, 2}, {1, 2, 19, 7, 7, 3, 3, 1, 1, 16, 2}, {1, 1, 40, 7, 7, 5, 5, 2, 2, 8, 3},
        {1, 2, 19, 14, 14, 3, 3, 1, 1, 8, 2}, {1, 1, 24, 28, 28, 3, 3, 1, 1, 0, 2},
        {1, 1, 32, 14, 10, 5, 5, 2, 2, 0, 1}, {1, 2, 16, 56, 56, 3, 3, 1, 1, 16, 4},
        {1, 1, 19, 28, 24, 5, 5, 2, 2, 16, 2}, {1, 2, 16, 8, 8, 7, 7, 3, 3, 16, 2},
        {1, 1, 48, 11, 14, 7, 7, 3, 3, 16, 3}, {1, 1, 16, 9, 3, 3, 3, 1, 1, 16, 1}, {1, 2, 24, 9, 12, 3, 5, 0, 2, 8, 2},
        {1, 1, 16, 1, 13, 3, 3, 1, 1, 16, 2}, {1, 1, 16, 9, 9, 7, 7, 3, 3, 16, 2},
        {1, 1, 16, 5, 17, 3, 3, 1, 1, 16, 2}, {1, 1, 16, 6, 20, 7, 7, 3, 3, 16, 2}};
    for (const SimdVariant& v : runnable_simd_variants())
        for (const Shape& s : shapes) {
            simd::Depthwise d;
            d.N = s.N, d.C = s.C, d.H = s.H, d.W = s.W, d.R = s.R, d.S = s.S, d.pad_t = s.pad_t, d.pad_l = s.pad_l;
            d.stride_h = d.stride_w = s.stride;
            d.P = (s.H + 2 * s.pad_t - s.R) / s.stride + 1, d.Q = (s.W + 2 * s.pad_l - s.S) / s.stride + 1;
            d.block = s.block ? s.block : s.C;
            d.blocked_weights = true;
            CAPTURE(v.isa);
            CAPTURE(s.stride);
            CAPTURE(s.C);
            CAPTURE(s.H);
            CAPTURE(s.W);
            CAPTURE(s.R);
            CAPTURE(s.block);
            REQUIRE(v.depthwise_dgrad_supported(d));
            const int64_t B = d.block, CP = (s.C + B - 1) / B * B;
            auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w, int64_t H, int64_t W) {
                return blocked_at(n, c, h, w, H, W, CP, B);
            };
            Floats dy = fill(size_t(s.N * CP * d.P * d.Q), -1, 1, 2);
            const Floats w = fill(size_t(s.C * s.R * s.S), -1, 1, 3);
            const Floats before = fill(size_t(s.N * CP * s.H * s.W), -1, 1, 5);
            for (int64_t i = 0; i < int64_t(dy.size()); ++i)  // dy's padding lanes: anything, here NaN
                if (i % B + i / (B * d.P * d.Q) % (CP / B) * B >= s.C) dy[size_t(i)] = NAN;
            const int64_t L = v.depthwise_lanes(d), RS = s.R * s.S;
            const Floats wb = depthwise_blocked_weights(w, s.C, RS, L);
            for (bool add : {false, true}) {
                CAPTURE(add);
                std::vector<double> want(before.size(), 0.0), mag(before.size(), 0.0);
                Floats dx(before.size(), NAN);
                if (add) {
                    dx = before;
                    for (int64_t i = 0; i < int64_t(dx.size()); ++i)  // a gradient's padding lanes are zero
                        if (i % B + i / (B * s.H * s.W) % (CP / B) * B >= s.C) dx[size_t(i)] = 0.0f;
                    for (size_t i = 0; i < dx.size(); ++i) want[i] = dx[i], mag[i] = std::fabs(dx[i]);
                }
                for (int64_t n = 0; n < s.N; ++n)
                    for (int64_t c = 0; c < s.C; ++c)
                        for (int64_t p = 0; p < d.P; ++p)
                            for (int64_t q = 0; q < d.Q; ++q)
                                for (int64_t r = 0; r < s.R; ++r)
                                    for (int64_t t = 0; t < s.S; ++t) {
                                        const int64_t h = s.stride * p - s.pad_t + r,
                                                      u = s.stride * q - s.pad_l + t;
                                        if (h < 0 || h >= s.H || u < 0 || u >= s.W) continue;
                                        const double g = double(w[size_t((c * s.R + r) * s.S + t)]) *
                                                         dy[size_t(at(n, c, p, q, d.P, d.Q))];
                                        const size_t i = size_t(at(n, c, h, u, s.H, s.W));
                                        want[i] += g, mag[i] += std::fabs(g);
                                    }
                v.depthwise_dgrad(dy.data(), wb.data(), dx.data(), add, d, s.threads);
                int wrong = 0;
                for (size_t i = 0; i < dx.size(); ++i)
                    if (!(std::fabs(dx[i] - want[i]) <= 1e-5 * mag[i] + 1e-6) && wrong++ < 3)
                        MESSAGE("dx at ", i, ": ", dx[i], " against ", want[i]);
                CHECK(wrong == 0);
            }
        }
    simd::Depthwise ok;
    ok.N = 1, ok.C = 16, ok.H = ok.W = 8, ok.P = ok.Q = 4, ok.R = ok.S = 3, ok.pad_t = ok.pad_l = 1, ok.block = 16;
    ok.stride_h = ok.stride_w = 2, ok.blocked_weights = true;
    CHECK(simd::depthwise_dgrad_supported(ok));
    auto refused = [&](auto change) {
        simd::Depthwise d = ok;
        change(d);
        return !simd::depthwise_dgrad_supported(d);
    };
    CHECK(!refused([](simd::Depthwise& d) { d.stride_h = d.stride_w = 1, d.P = d.Q = 8; }));
    CHECK(refused([](simd::Depthwise& d) { d.stride_h = d.stride_w = 3, d.P = d.Q = 3; }));
    // Strides mixed, P and Q as the stride of each axis gives: refused for the strides alone.
    CHECK(refused([](simd::Depthwise& d) { d.stride_w = 1; }));
    CHECK(refused([](simd::Depthwise& d) { d.stride_h = 1, d.P = d.Q = 8; }));
    CHECK(refused([](simd::Depthwise& d) { d.stride_h = d.stride_w = 1, d.pad_l = 0, d.P = 8, d.Q = 6; }));
    CHECK(refused([](simd::Depthwise& d) { d.dil_h = 2; }));
    CHECK(refused([](simd::Depthwise& d) { d.blocked_weights = false; }));
    CHECK(refused([](simd::Depthwise& d) { d.P = 5; }));  // a row of dy that the padding does not give
    CHECK(refused([](simd::Depthwise& d) { d.C = 12, d.block = 12; }));
    CHECK(refused([](simd::Depthwise& d) { d.S = 4, d.pad_l = 1, d.Q = 4; }));
    CHECK(refused([](simd::Depthwise& d) { d.R = 9, d.pad_t = 4; }));  // P stays (8 + 8 - 9) / 2 + 1
    // A 7x7 window over a 6x6 map without padding: (6 - 7) / 2 + 1 rounds to 1, as if it fitted.
    CHECK(refused([](simd::Depthwise& d) { d.H = d.W = 6, d.R = d.S = 7, d.pad_t = d.pad_l = 0, d.P = d.Q = 1; }));
}

// The grouped conv's training kernels (groups of 4 channels, 3x3, stride 1) against the sums
// written out, on each build this CPU runs: nChw16c, nChw8c (8 lanes a vector on every build, the
// layout of oneDNN's AVX2 convs) and channels-last (16 lanes on AVX-512, else 8), each on 1 thread
// and on 4: the weight gradient's images in one chunk, then in 3 chunks added; the data gradient's
// planar form below AVX-512 with a buffer per thread. Rows of 7 meet both edges; 2 blocks of 16
// channels.
TEST_CASE(
    "grouped4_wgrad and grouped4_conv3x3_dgrad match their sums in each layout, on each instruction set this CPU "
    "runs") {
    const int64_t N = 3, C = 32, H = 5, W = 7;
    auto value = [](int64_t i, int64_t m) { return float((i * 37) % m) / float(m) - 0.5f; };
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t block : {int64_t(16), int64_t(8), C}) {
            CAPTURE(v.isa);
            CAPTURE(block);
            const simd::GroupedConv3x3 d{N, C, H, W, H, W, 1, block, 4};
            auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
                return (n * C + c / block * block) * H * W + (h * W + w) * block + c % block;
            };
            Floats x(size_t(N * C * H * W)), dy(x.size()), w(size_t(C * 4 * 9));
            for (size_t i = 0; i < x.size(); ++i) x[i] = value(int64_t(i), 17), dy[i] = value(int64_t(i), 23);
            for (size_t i = 0; i < w.size(); ++i) w[i] = value(int64_t(i), 13);
            auto inside = [&](int64_t h, int64_t u) { return h >= 0 && h < H && u >= 0 && u < W; };
            std::vector<double> dw_want, dx_want;
            auto sums = [&] {
                dw_want.assign(w.size(), 0.0), dx_want.assign(x.size(), 0.0);
                for (int64_t n = 0; n < N; ++n)
                    for (int64_t k = 0; k < C; ++k)
                        for (int64_t c4 = 0; c4 < 4; ++c4)
                            for (int64_t r = 0; r < 3; ++r)
                                for (int64_t t = 0; t < 3; ++t)
                                    for (int64_t p = 0; p < H; ++p)
                                        for (int64_t q = 0; q < W; ++q) {
                                            const int64_t h = p + r - 1, u = q + t - 1, c = k / 4 * 4 + c4;
                                            if (!inside(h, u)) continue;
                                            const double g = dy[size_t(at(n, k, p, q))];
                                            const size_t tap = size_t((k * 4 + c4) * 9 + r * 3 + t);
                                            dw_want[tap] += g * x[size_t(at(n, c, h, u))];
                                            dx_want[size_t(at(n, c, h, u))] += g * w[tap];
                                        }
            };
            sums();
            // A NaN where the sum is finite counts as wrong, and where the sum is not finite (an
            // infinite input below) the result must not be either.
            auto wrong = [](const Floats& got, const std::vector<double>& want) {
                int64_t bad = 0;
                for (size_t i = 0; i < got.size(); ++i)
                    bad += std::isfinite(want[i]) ? !(std::abs(got[i] - want[i]) <= 1e-4 * (1 + std::abs(want[i])))
                                                  : std::isfinite(got[i]);
                return bad;
            };
            for (int threads : {1, 4}) {
                CAPTURE(threads);
                Floats dw(w.size(), -7.0f), scratch(v.grouped4_wgrad_scratch(d, threads), -7.0f);
                v.grouped4_wgrad(x.data(), dy.data(), dw.data(), scratch.data(), d, threads);
                CHECK_MESSAGE(wrong(dw, dw_want) == 0, "weight gradient");
            }
            for (int threads : {1, 4}) {
                CAPTURE(threads);
                Floats dx(x.size(), -7.0f), scratch(v.grouped4_dgrad_scratch(d, threads), -7.0f);
                v.grouped4_conv3x3_dgrad(dy.data(), w.data(), dx.data(), scratch.data(), d, threads);
                CHECK_MESSAGE(wrong(dx, dx_want) == 0, "data gradient");
            }
            // An infinite input at a row's first and last positions (channels 5 and 10) reaches only
            // the taps that read it: those reading past the row's ends stay finite, as in the sums.
            x[size_t(at(1, 5, 2, 0))] = std::numeric_limits<float>::infinity();
            x[size_t(at(2, 10, 3, W - 1))] = -std::numeric_limits<float>::infinity();
            sums();
            Floats dw(w.size(), -7.0f), scratch(v.grouped4_wgrad_scratch(d, 1), -7.0f);
            v.grouped4_wgrad(x.data(), dy.data(), dw.data(), scratch.data(), d, 1);
            CHECK_MESSAGE(wrong(dw, dw_want) == 0, "weight gradient, an infinite input at the rows' ends");
        }
}

// kernels/simd's ReLU and its gradient from the output, in place as inference runs it, on each
// build: a NaN and -0 give +0, as the reference and oneDNN's ReLU, and pass no gradient.
TEST_CASE("relu_forward and relu_backward, in place, on infinities and NaN, on each instruction set this CPU runs") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    Floats x = {-inf, -1e30f, -1.0f, -1e-40f, -0.0f, 0.0f, 1e-40f, 2.5f, 1e30f, inf, nan, -nan};
    for (int i = 0; i < 40; ++i) x.push_back(float(i) * 0.37f - 7.4f);  // past two 16-lane vectors, and a tail
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        Floats y = x, dx(x.size(), 1.5f);
        v.relu_forward(y.data(), y.data(), int64_t(y.size()));
        v.relu_backward(y.data(), dx.data(), dx.data(), int64_t(y.size()));
        Floats untouched(4, -7.0f);
        v.relu_forward(x.data(), untouched.data(), 0);  // an empty span writes nothing
        CHECK(untouched == Floats(4, -7.0f));
        for (size_t i = 0; i < x.size(); ++i) {
            CAPTURE(x[i]);
            CHECK(y[i] == (x[i] > 0 ? x[i] : 0.0f));  // false for a NaN y
            CHECK(!std::signbit(y[i]));
            CHECK(dx[i] == (x[i] > 0 ? 1.5f : 0.0f));
        }
    }
}

// copy_floats and zero_floats on each build: every float copied (or zeroed), none written past n,
// on one thread and shared out (from 64K floats) in whole lines with the last part taking the
// tail, with more threads than parts.
TEST_CASE("copy_floats and zero_floats write exactly n floats, on one thread and shared out, on each instruction set "
          "this CPU runs") {
    for (const SimdVariant& v : runnable_simd_variants())
        for (int64_t n : {int64_t(0), int64_t(1), int64_t(17), int64_t(65536 * 2 + 3), int64_t(65536 * 5 + 7)})
            for (int threads : {1, 2, 3, 4}) {
                CAPTURE(v.isa);
                CAPTURE(n);
                CAPTURE(threads);
                const Floats x = fill(size_t(n), -1, 1, 7);
                Floats y(size_t(n) + 16, NAN);
                v.copy_floats(x.data(), y.data(), n, threads);
                CHECK(std::equal(x.begin(), x.end(), y.begin()));
                CHECK(std::all_of(y.begin() + n, y.end(), [](float f) { return std::isnan(f); }));
                v.zero_floats(y.data(), n, threads);
                CHECK(std::all_of(y.begin(), y.begin() + n, [](float f) { return f == 0.0f && !std::signbit(f); }));
                CHECK(std::all_of(y.begin() + n, y.end(), [](float f) { return std::isnan(f); }));
            }
}

// kernels/simd's hardsigmoid at and around its kinks, where PyTorch's backward puts the slope on
// the open interval (-3, 3), and on NaN of either sign and infinities, against the formula in
// double, for each build: the AVX2 and AVX-512 ones clamp with bit operations, the x86-64 one too
// (its 16-lane vectors in four SSE parts).
TEST_CASE("hardsigmoid_forward and hardsigmoid_backward at the kinks, on each instruction set this CPU runs") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    Floats x = {-inf, -4.0f, -3.0f, std::nextafter(-3.0f, 0.0f), -1.0f, 0.0f, 0.5f,
                            std::nextafter(3.0f, 0.0f), 3.0f, 7.0f, inf, nan, -nan, std::nextafter(-3.0f, -4.0f),
                            std::nextafter(3.0f, 4.0f), -0.0f, 2.9999f, -2.9999f};
    for (int i = 0; i < 40; ++i) x.push_back(float(i) * 0.37f - 7.4f);  // past two 16-lane vectors, and a tail
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        Floats y(x.size()), dy(x.size(), 1.5f), dx(x.size());
        v.hardsigmoid_forward(x.data(), y.data(), int64_t(x.size()));
        v.hardsigmoid_backward(x.data(), dy.data(), dx.data(), int64_t(x.size()));
        for (size_t i = 0; i < x.size(); ++i) {
            CAPTURE(x[i]);
            if (std::isnan(x[i])) {
                CHECK(std::isnan(y[i]));
                CHECK(dx[i] == 0.0f);
                continue;
            }
            const double want = std::min(std::max(double(x[i]) + 3, 0.0), 6.0) / 6;
            CHECK(std::abs(y[i] - want) <= 1e-7);
            CHECK(dx[i] == (x[i] > -3 && x[i] < 3 ? float(1.5 / 6) : 0.0f));
        }
    }
}

// kernels/simd's layernorm against the formulas in double, on rows of D from 1 to 770 (the vector
// loops' tails: 5, 37, 770; whole vectors: 16, 96, 768; a lone vector after the pairs: 24; pairs, a
// lone vector and a tail at 8 and at 16 lanes: 61), split over 1 to 3 threads, with the input's
// gradient written, added to what is there, and not asked for. Rows 1, 7 and 9 run one, two and
// three of the forward's chunks. One row has a mean of 1000 and a spread of about 1, where a
// variance taken as E[x^2] - mean^2 in float would keep no digit. Each build runs: on an AVX-512
// host the x86-64-v3 build's 8-lane loops as well as the 16-lane ones.
TEST_CASE("layernorm_forward and layernorm_backward agree with their formulas, on each instruction set this CPU runs") {
    for (const SimdVariant& v : runnable_simd_variants()) {
        CAPTURE(v.isa);
        const float eps = 1e-5f;
        for (int64_t D : {int64_t(1), int64_t(5), int64_t(16), int64_t(37), int64_t(24), int64_t(61), int64_t(96),
                          int64_t(768), int64_t(770)})
            for (int64_t rows : {int64_t(1), int64_t(7), int64_t(9)})
                for (int threads : {1, 2, 3})
                    for (const char* dmode : {"written", "added", "none"}) {
                        const bool dgrad = dmode[0] != 'n', add = dmode[0] == 'a';
                        const size_t n = size_t(rows * D), d = size_t(D);
                        Floats x(n), dy(n), gamma(d), beta(d), y(n), dx(n, -7.0f), dgamma(d, -7.0f),
                            dbeta(d, -7.0f), mean(n / d), var(n / d);
                        for (int64_t r = 0; r < rows; ++r)
                            for (int64_t i = 0; i < D; ++i) {
                                const float wave = float((r * 37 + i * 11) % 29) * 0.125f - 1.75f;
                                x[size_t(r * D + i)] = r == 3 ? 1000.0f + wave : wave * float(r + 1);
                                dy[size_t(r * D + i)] = float((r * 13 + i * 7) % 17) * 0.25f - 2.0f;
                            }
                        for (int64_t i = 0; i < D; ++i)
                            gamma[size_t(i)] = 0.5f + float(i % 5) * 0.25f, beta[size_t(i)] = float(i % 3) - 1.0f;
                        Floats scratch(v.layernorm_backward_scratch(D, threads), -7.0f);
                        v.layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), var.data(),
                                            rows, D, eps);
                        v.layernorm_backward(x.data(), dy.data(), gamma.data(), mean.data(), var.data(),
                                             dgrad ? dx.data() : nullptr, add, dgamma.data(), dbeta.data(),
                                             scratch.data(), rows, D, eps, threads);
                        std::vector<double> want_dg(d), want_db(d);
                        int64_t wrong = 0;
                        auto off = [](double got, double want) {
                            return !(std::abs(got - want) <= 1e-4 * std::max(1.0, std::abs(want)));  // a NaN fails too
                        };
                        for (int64_t r = 0; r < rows; ++r) {
                            const float* xr = x.data() + r * D;
                            const float* dr = dy.data() + r * D;
                            double m = 0, spread = 0, g_mean = 0, gx_mean = 0;
                            for (int64_t i = 0; i < D; ++i) m += xr[i];
                            m /= double(D);
                            for (int64_t i = 0; i < D; ++i) spread += (xr[i] - m) * (xr[i] - m);
                            spread /= double(D);
                            const double istd = 1.0 / std::sqrt(spread + eps);
                            wrong += off(mean[size_t(r)], m) + off(var[size_t(r)], spread);
                            for (int64_t i = 0; i < D; ++i) {
                                const double xh = (xr[i] - m) * istd, g = double(dr[i]) * gamma[size_t(i)];
                                wrong += off(y[size_t(r * D + i)], xh * gamma[size_t(i)] + beta[size_t(i)]);
                                g_mean += g / double(D), gx_mean += g * xh / double(D);
                                want_dg[size_t(i)] += dr[i] * xh, want_db[size_t(i)] += dr[i];
                            }
                            for (int64_t i = 0; i < D && dgrad; ++i) {
                                const double xh = (xr[i] - m) * istd, g = double(dr[i]) * gamma[size_t(i)];
                                const double want = istd * (g - g_mean - xh * gx_mean);
                                wrong += off(dx[size_t(r * D + i)], (add ? -7.0 : 0.0) + want);
                            }
                        }
                        for (size_t i = 0; i < d; ++i) wrong += off(dgamma[i], want_dg[i]) + off(dbeta[i], want_db[i]);
                        if (!dgrad) wrong += std::count(dx.begin(), dx.end(), -7.0f) != int64_t(dx.size());
                        CHECK_MESSAGE(wrong == 0, "D ", D, ", rows ", rows, ", threads ", threads, ", dx ",
                                      std::string(dmode));
                    }

        // A mean of 10000 over a spread of 1: the forward's y keeps its digits (its mean corrected by
        // the deviations' sum); the backward's xhat would carry half an ulp of the stored mean, 5e-4.
        {
            const int64_t D = 768;
            const size_t n = size_t(D);
            Floats x(n), gamma(n, 1.0f), beta(n, 0.0f), y(n);
            for (int64_t i = 0; i < D; ++i) x[size_t(i)] = 10000.0f + float((i * 11) % 29) * 0.125f - 1.75f;
            v.layernorm_forward(x.data(), gamma.data(), beta.data(), y.data(), nullptr, nullptr, 1, D, eps);
            double m = 0, spread = 0;
            for (float e : x) m += e / double(D);
            for (float e : x) spread += (e - m) * (e - m) / double(D);
            double worst = 0;
            for (int64_t i = 0; i < D; ++i)
                worst = std::max(worst, std::abs(y[size_t(i)] - (x[size_t(i)] - m) / std::sqrt(spread + eps)));
            CHECK(worst < 1e-4);
        }
    }
}

namespace {

// batchnorm_forward, then batchnorm_backward writing dx apart, over dy or not at all, against the
// formulas in double; the elements off by more than 1e-4 of max(1, |want|), or padding not zero.
int64_t batchnorm_errors(const SimdVariant& v, const simd::ChannelLayout& l, bool relu, const std::string& mode) {
    const float eps = 1e-5f, nan = std::numeric_limits<float>::quiet_NaN();
    const int64_t N = l.N, C = l.C, HW = l.HW;
    const size_t n = size_t(N * l.batch_stride()), c = size_t(C);
    Floats x(n, 0.0f), dy(n, 0.0f), y(n, nan), dx(n, nan), gamma(c), beta(c), mean(c, nan), var(c, nan),
        dgamma(c, nan), dbeta(c, nan);
    for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < C; ++k)
            for (int64_t s = 0; s < HW; ++s) {
                const float wave = float((i * 31 + k * 7 + s * 11) % 23) * 0.125f - 1.5f;
                // channel 3 far from 0 against its spread
                x[size_t(l.offset(i, k, s))] = k == 3 ? 300.0f + wave : wave * float(k % 4 + 1);
                dy[size_t(l.offset(i, k, s))] = float((i * 5 + k * 3 + s * 13) % 17) * 0.25f - 2.0f;
            }
    for (int64_t k = 0; k < C; ++k)
        gamma[size_t(k)] = float(k % 5) * 0.5f - 0.75f, beta[size_t(k)] = float(k % 3) * 0.5f - 0.5f;
    v.batchnorm_forward(x.data(), gamma.data(), beta.data(), y.data(), mean.data(), var.data(), relu, l, eps);
    const Floats dy_in = dy;
    float* out = mode == "none" ? nullptr : mode == "over dy" ? dy.data() : dx.data();
    v.batchnorm_backward(x.data(), dy.data(), gamma.data(), beta.data(), mean.data(), var.data(), relu, out,
                         dgamma.data(), dbeta.data(), l, eps);
    const Floats& got_dx = mode == "over dy" ? dy : dx;

    int64_t wrong = 0;
    auto off = [](double got, double want) {
        return !(std::abs(got - want) <= 1e-4 * std::max(1.0, std::abs(want)));  // a NaN fails too
    };
    const double M = double(N * HW);
    for (int64_t k = 0; k < C; ++k) {
        auto at = [&](int64_t i, int64_t s) { return size_t(l.offset(i, k, s)); };
        double m = 0, spread = 0;
        for (int64_t i = 0; i < N; ++i)
            for (int64_t s = 0; s < HW; ++s) m += x[at(i, s)] / M;
        for (int64_t i = 0; i < N; ++i)
            for (int64_t s = 0; s < HW; ++s) spread += (x[at(i, s)] - m) * (x[at(i, s)] - m) / M;
        const double r = 1 / std::sqrt(spread + eps), g = gamma[size_t(k)];
        wrong += off(mean[size_t(k)], m) + off(var[size_t(k)], spread);
        // The ReLU's mask is the forward's output's, y > 0, as oneDNN's workspace keeps it.
        auto grad = [&](size_t o) { return relu && !(y[o] > 0) ? 0.0 : double(dy_in[o]); };
        double db = 0, dg = 0;
        for (int64_t i = 0; i < N; ++i)
            for (int64_t s = 0; s < HW; ++s) {
                const size_t o = at(i, s);
                const double xh = (x[o] - m) * r, pre = xh * g + beta[size_t(k)];
                wrong += off(y[o], relu ? std::max(pre, 0.0) : pre);
                db += grad(o), dg += grad(o) * xh;
            }
        wrong += off(dbeta[size_t(k)], db) + off(dgamma[size_t(k)], dg);
        for (int64_t i = 0; i < N && out; ++i)
            for (int64_t s = 0; s < HW; ++s) {
                const size_t o = at(i, s);
                wrong += off(got_dx[o], g * r * (grad(o) - db / M - (x[o] - m) * r * dg / M));
            }
    }
    for (int64_t i = 0; i < N; ++i)
        for (int64_t k = C; k < l.padded_channels(); ++k)
            for (int64_t s = 0; s < HW; ++s) {
                const size_t o = size_t(l.offset(i, k, s));
                wrong += y[o] != 0.0f;
                if (out) wrong += got_dx[o] != 0.0f;
            }
    if (!out) wrong += std::count_if(dx.begin(), dx.end(), [](float e) { return e == e; });  // dx untouched
    return wrong;
}

}  // namespace

TEST_CASE("batchnorm_forward and batchnorm_backward agree with their formulas in double, on each instruction set") {
    // (C, block): nChw8c and nChw16c with whole and partial blocks (40 in nChw16c leaves a last
    // group of eight lanes all padding; 16 one block, which one thread takes whole), and
    // channels-last (48: groups taken in pairs, a 64-byte line each). With AVX-512 nChw8c on an even
    // HW (2, 50) is walked in pairs of positions, on an odd one (1, 7) a position at a time.
    const std::vector<std::pair<int64_t, int64_t>> layouts = {{8, 8},   {20, 8},  {20, 16}, {40, 16},
                                                              {64, 16}, {16, 16}, {24, 24}, {48, 48}};
    for (const SimdVariant& v : runnable_simd_variants())
        for (auto [C, block] : layouts)
            for (int64_t N : {int64_t(1), int64_t(3)})
                for (int64_t HW : {int64_t(1), int64_t(2), int64_t(7), int64_t(50)})
                    for (bool relu : {false, true})
                        for (const char* mode : {"apart", "over dy", "none"})
                            for (int threads : {1, 2, 3}) {
                                const int before = omp_get_max_threads();
                                omp_set_num_threads(threads);
                                const int64_t wrong = batchnorm_errors(v, {N, C, HW, block}, relu, mode);
                                omp_set_num_threads(before);
                                CHECK_MESSAGE(wrong == 0, v.isa, ": C ", C, ", block ", block, ", N ", N, ", HW ", HW,
                                              ", relu ", relu, ", dx ", mode, ", threads ", threads);
                            }
}

namespace {

// grouped_conv3x3 (padding 1, a bias, a ReLU or none) against its sums written out in double: the
// outputs off by more than 1e-5 of one plus the smaller of |sum| and the sum of its terms'
// magnitudes (a NaN fails too), and one more if any of the 64 floats after y changed.
int64_t grouped_conv_errors(const SimdVariant& v, const simd::GroupedConv3x3& d, bool relu, int threads) {
    const int64_t N = d.N, C = d.C, H = d.H, W = d.W, P = d.P, Q = d.Q, G = d.width, B = d.block, tail = 64;
    const int64_t Cp = (C + B - 1) / B * B;  // a blocked image's channels, its last block's padding included
    auto at = [&](int64_t n, int64_t c, int64_t h, int64_t w, int64_t rows, int64_t cols) {
        return size_t(B == C ? ((n * rows + h) * cols + w) * C + c
                             : (n * Cp + c / B * B) * rows * cols + (h * cols + w) * B + c % B);
    };
    auto value = [](int64_t i, int64_t m) { return float((i * 37) % m) / float(m) - 0.5f; };
    const size_t n = size_t(N * Cp * H * W), nw = size_t(C * G * 9);
    Floats x(n), w(nw), b(static_cast<size_t>(C)), y(size_t(N * Cp * P * Q + tail), -7.0f);
    for (size_t i = 0; i < n; ++i) x[i] = value(int64_t(i), 17);
    for (size_t i = 0; i < nw; ++i) w[i] = value(int64_t(i), 13);
    for (size_t i = 0; i < b.size(); ++i) b[i] = value(int64_t(i), 7);
    Floats scratch(v.grouped_conv3x3_scratch(d, threads));
    v.grouped_conv3x3(x.data(), w.data(), b.data(), relu, y.data(), scratch.data(), d, threads);
    int64_t wrong = 0;
    for (int64_t i = 0; i < N; ++i)
        for (int64_t k = 0; k < C; ++k)
            for (int64_t p = 0; p < P; ++p)
                for (int64_t q = 0; q < Q; ++q) {
                    double sum = b[size_t(k)], scale = 0;
                    for (int64_t c = 0; c < G; ++c)
                        for (int64_t r = 0; r < 3; ++r)
                            for (int64_t s = 0; s < 3; ++s) {
                                const int64_t hi = p * d.stride - 1 + r, wi = q * d.stride - 1 + s;
                                if (hi < 0 || hi >= H || wi < 0 || wi >= W) continue;
                                const double t = double(w[size_t(((k * G + c) * 3 + r) * 3 + s)]) *
                                                 x[at(i, k / G * G + c, hi, wi, H, W)];
                                sum += t, scale += std::abs(t);
                            }
                    const double want = relu ? std::max(sum, 0.0) : sum;
                    const double bound = 1e-5 * (1 + std::min(scale, std::abs(want)));
                    wrong += !(std::abs(y[at(i, k, p, q, P, Q)] - want) <= bound);
                }
    // The padding lanes of a last block C does not fill are written as zeros.
    for (int64_t i = 0; i < N; ++i)
        for (int64_t k = C; k < Cp; ++k)
            for (int64_t p = 0; p < P * Q; ++p) wrong += y[at(i, k, p / Q, p % Q, P, Q)] != 0.0f;
    return wrong + (std::count(y.end() - tail, y.end(), -7.0f) != tail);
}

}  // namespace

// The grouped conv's forward alone on every build this CPU runs: groups of 4, 8, 16 and 24, stride
// 1 and 2, nChw16c, nChw8c and channels-last, 1 thread with the ReLU and 3 without it. 37
// columns give rows of 37 and 19 outputs, so the strips of 8 (groups of 4) and 16 (groups of 8) end
// part-way and meet both edges; maps of 2x1 and 1x2 are all edge. 48 channels are three blocks of
// 16, six groups of 8, so a group read from its block's other half shows. The planar form runs
// below AVX-512 at stride 1 (the x86-64-v3 and x86-64 builds on any host, the dispatch build where
// the CPU has no AVX-512): 40 channels, a multiple of 8 only, are its alone there, in nChw8c and
// channels-last (regnet_y_400mf's 104 and 440); rows of 16 and 32 positions take its tiles of 16
// positions of a row, the others (37 and 21 rounded up to 40 and 24, 7 and fewer to 8) its tiles of
// 8 positions of two rows, 5 and 19 rows ending on one; 17 and 19 rows make a second unit of work.
// With AVX-512 groups of 16 and more, and groups of 8 at stride 1, run the 16-lane planar form, 40
// channels in nChw16c too (the last block's padding lanes must come out zero). Its units run rows
// together and end on tiles of 1 vector (2x1, 1x2, 40x40 at stride 1), 2 (17x16 at stride 2), 3
// (6x37 and 19x7 at stride 1) and 4; 40x40 at stride 1 makes three units of 14, 14 and 12 rows,
// 61x61 at stride 2 two of 16 and 15, and odd and even sizes meet stride 2's phases both ways. 72
// channels in groups of 24 (and of 8) leave the last nChw16c block half padding. Groups of 8 at
// stride 2 (the strip form) take 40 and 72 channels in nChw16c too, a last block of 8 whose other
// 8 lanes are written as zeros (regnet_y_400mf's 104 and 440).
TEST_CASE("grouped_conv3x3 agrees with sums in double, on each instruction set this CPU runs") {
    struct Map {
        int64_t N, H, W;
    };
    for (const SimdVariant& v : runnable_simd_variants()) {
        const bool wide = v.isa == "x86-64-v4" || (v.isa == "dispatch" && __builtin_cpu_supports("x86-64-v4"));
        for (int64_t C : {48, 40, 72})
            for (int64_t width : {4, 8, 16, 24})
                for (int64_t stride : {1, 2})
                    for (int64_t block : {int64_t(8), int64_t(16), C})
                        for (Map m : {Map{2, 6, 37}, Map{1, 2, 1}, Map{1, 1, 2}, Map{1, 19, 7}, Map{2, 17, 16},
                                      Map{1, 5, 21}, Map{1, 3, 32}, Map{1, 40, 40}, Map{1, 61, 61}}) {
                            // 72 channels for nChw16c's padding, and stride 2's units of 16 and 15
                            // rows, in nChw16c only (the test's time).
                            if ((C == 72 || m.H == 61) && block != 16) continue;
                            if (m.H == 61 && stride == 1) continue;
                            const int64_t P = (m.H - 1) / stride + 1, Q = (m.W - 1) / stride + 1;
                            const simd::GroupedConv3x3 d{m.N, C, m.H, m.W, P, Q, stride, block, width};
                            const bool narrow = width == 4 || (width == 8 && (!wide || stride == 2));
                            const bool half = width == 8 && block == 16 && (wide || stride == 2);
                            const bool want =
                                C % width == 0 &&
                                (narrow ? C % 16 == 0 || (!wide && stride == 1 && block != 16) || half : wide);
                            CHECK_MESSAGE(v.grouped_conv3x3_supported(d) == want, v.isa, " C ", C, " stride ",
                                          stride, " block ", block);
                            if (!want) continue;
                            // The ReLU is applied to each output as it is stored, apart from how the
                            // threads share the rows, so one run each pairing covers both (the test's
                            // time); 3 threads without it, where every output shows a thread's error.
                            for (int threads : {1, 3}) {
                                const bool relu = threads == 1;
                                CHECK_MESSAGE(grouped_conv_errors(v, d, relu, threads) == 0, v.isa, ": C ", C,
                                              ", width ", width, ", stride ", stride, ", block ", block, ", map ", m.N,
                                              "x", m.H, "x", m.W, ", threads ", threads, ", relu ", relu);
                            }
                        }
    }
}
