// The CPU reference kernels (kernels/cpu/): forward values computed by hand on small integers, and
// every op's backward checked against central finite differences of its own forward.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/backend/host_tensor.h"
#include "engine/dsl.h"
#include "kernels/cpu/kernel.h"

using namespace ridge;

namespace {

HostTensor tensor(Shape s, std::vector<float> v) {
    HostTensor t(std::move(s));
    REQUIRE(v.size() == t.v.size());
    t.v = std::move(v);
    return t;
}

HostTensor iota(Shape s, float from = 1) {
    HostTensor t(std::move(s));
    std::iota(t.v.begin(), t.v.end(), from);
    return t;
}

std::vector<Shape> shapes(const std::vector<HostTensor>& ts) {
    std::vector<Shape> s;
    for (const auto& t : ts) s.push_back(t.shape);
    return s;
}

HostTensor run(const Op& op, const std::vector<HostTensor>& in, const std::vector<HostTensor>& params = {},
               bool training = true) {
    HostTensor y(op_shape(op, shapes(in)));
    ref::Fwd f;
    for (const auto& t : in) f.in.push_back({t.data(), t.shape});
    for (const auto& t : params) f.params.push_back(t.data());
    f.y = {y.data(), y.shape};
    f.training = training;
    ref::forward(op, f);
    return y;
}

void check_values(const HostTensor& y, const std::vector<float>& expect) {
    REQUIRE(y.v.size() == expect.size());
    for (size_t i = 0; i < expect.size(); ++i) {
        INFO("element ", i);
        CHECK(y.v[i] == doctest::Approx(expect[i]).epsilon(1e-6));
    }
}

// --- finite differences ------------------------------------------------------------------------

// Every kernel's backward is checked in double: central differences of L = sum(y * r) (r fixed and
// random) through the double forward, against the double backward with dy = r. With h = 1e-4 on
// values of order 1 the truncation error h^2 f'''/6 is about 1e-9 and the rounding of L about
// 1e-16 * sum|y*r| / h, below 1e-10; rtol 1e-6 and atol 1e-8 sit well above both and far below
// any wrong formula (a gradient 1 % off misses by 1e4 times the tolerance).
// The float kernels, the same source instantiated on float, must then give the double results
// rounded: |float - double| <= 2e-6 * (|double| + the tensor's largest |double| / 100). Inputs are
// exact floats and sums are accumulated in double, so a float result is the double one rounded
// once or twice (6e-8 each), except where a backward reads the float forward's rounded y.
struct GradCheck {
    double h = 1e-4, rtol = 1e-6, atol = 1e-8;
};

template <class Real>
HostTensorT<Real> run_t(const Op& op, const std::vector<HostTensorT<Real>>& in,
                        const std::vector<HostTensorT<Real>>& params, bool training = true) {
    std::vector<Shape> s;
    for (const auto& t : in) s.push_back(t.shape);
    HostTensorT<Real> y(op_shape(op, s));
    ref::FwdT<Real> f;
    for (const auto& t : in) f.in.push_back({t.data(), t.shape});
    for (const auto& t : params) f.params.push_back(t.data());
    f.y = {y.data(), y.shape};
    f.training = training;
    ref::forward(op, f);
    return y;
}

template <class Real>
struct Grads {
    HostTensorT<Real> y;
    std::vector<HostTensorT<Real>> dx, dp;
};

// The forward and, with dy = r, every gradient the op has (running statistics excepted).
template <class Real>
Grads<Real> backward_of(const Op& op, const std::vector<HostTensorT<Real>>& in,
                        const std::vector<HostTensorT<Real>>& params, const HostTensorT<Real>& r) {
    std::vector<Shape> s;
    for (const auto& t : in) s.push_back(t.shape);
    const std::vector<ParamSpec> specs = op_params(op, s);
    Grads<Real> g{run_t(op, in, params), {}, {}};
    for (const auto& t : in) g.dx.emplace_back(t.shape);
    for (const auto& t : params) g.dp.emplace_back(t.shape);
    ref::BwdT<Real> b;
    for (const auto& t : in) b.in.push_back({t.data(), t.shape});
    b.y = {g.y.data(), g.y.shape};
    b.dy = {r.data(), r.shape};
    for (const auto& t : params) b.params.push_back(t.data());
    for (auto& t : g.dx) b.dx.push_back({t.data(), t.shape});
    for (size_t j = 0; j < g.dp.size(); ++j) b.dparams.push_back(specs[j].learned ? g.dp[j].data() : nullptr);
    ref::backward(op, b);
    return g;
}

double loss_of(const Op& op, const std::vector<HostTensor64>& in, const std::vector<HostTensor64>& params,
               const HostTensor64& r) {
    HostTensor64 y = run_t(op, in, params);
    double L = 0;
    for (size_t e = 0; e < y.v.size(); ++e) L += y.v[e] * r.v[e];
    return L;
}

// The float result against the double one (see above); returns the worst fraction of the tolerance.
double float_vs_double(const HostTensor& f, const HostTensor64& d, const std::string& what) {
    REQUIRE(f.shape == d.shape);
    double largest = 0, worst = 0;
    for (double v : d.v) largest = std::max(largest, std::abs(v));
    for (size_t k = 0; k < d.v.size(); ++k) {
        double err = std::abs(double(f.v[k]) - d.v[k]) / (2e-6 * (std::abs(d.v[k]) + largest / 100) + 1e-30);
        if (err > 1) {
            INFO(what, "[", k, "]: float ", f.v[k], ", double ", d.v[k]);
            CHECK(err <= 1);
            return err;
        }
        worst = std::max(worst, err);
    }
    return worst;
}

void grad_check(const Op& op, std::vector<HostTensor> in, std::vector<HostTensor> params = {}, GradCheck gc = {}) {
    const std::vector<ParamSpec> specs = op_params(op, shapes(in));
    REQUIRE(specs.size() == params.size());
    std::vector<HostTensor64> in64, p64;
    for (const auto& t : in) in64.push_back(convert<double>(t));
    for (const auto& t : params) p64.push_back(convert<double>(t));
    HostTensor r(op_shape(op, shapes(in)));
    fill_uniform(r, -1, 1, 99);
    const HostTensor64 r64 = convert<double>(r);
    const Grads<double> d = backward_of(op, in64, p64, r64);

    auto compare = [&](HostTensor64& t, const HostTensor64& ana, const std::string& what) {
        double worst = 0;
        for (size_t k = 0; k < t.v.size(); ++k) {
            const double v = t.v[k];
            t.v[k] = v + gc.h;
            double Lp = loss_of(op, in64, p64, r64);
            t.v[k] = v - gc.h;
            double Lm = loss_of(op, in64, p64, r64);
            t.v[k] = v;
            double num = (Lp - Lm) / (2 * gc.h), a = ana.v[k];
            double err = std::abs(num - a) / (gc.rtol * std::abs(a) + gc.atol);
            worst = std::max(worst, err);
            if (err > 1) {
                INFO(op_kind(op), " d/d", what, "[", k, "]: finite difference ", num, ", backward ", a);
                CHECK(err <= 1);
                return;  // one message per tensor is enough
            }
        }
        INFO(op_kind(op), " d/d", what, ": worst error ", worst, " of the tolerance");
        CHECK(worst <= 1);
    };
    for (size_t i = 0; i < in64.size(); ++i) compare(in64[i], d.dx[i], cat("x", i));
    for (size_t j = 0; j < p64.size(); ++j)
        if (specs[j].learned) compare(p64[j], d.dp[j], specs[j].name);

    const Grads<float> f = backward_of(op, in, params, r);
    float_vs_double(f.y, d.y, cat(op_kind(op), " y"));
    for (size_t i = 0; i < in.size(); ++i) float_vs_double(f.dx[i], d.dx[i], cat(op_kind(op), " dx", i));
    for (size_t j = 0; j < params.size(); ++j)
        if (specs[j].learned) float_vs_double(f.dp[j], d.dp[j], cat(op_kind(op), " d", specs[j].name));
}

HostTensor random(Shape s, uint64_t seed, float lo = -1, float hi = 1) {
    HostTensor t(std::move(s));
    fill_uniform(t, lo, hi, seed);
    return t;
}

// Random values at least `margin` away from each kink, so a step of h < margin never crosses one.
HostTensor away_from(Shape s, uint64_t seed, float lo, float hi, std::vector<float> kinks, float margin = 0.05f) {
    HostTensor t = random(std::move(s), seed, lo, hi);
    for (float& v : t.v)
        for (float k : kinks)
            if (std::abs(v - k) < margin) v = k + (v < k ? -margin : margin);
    return t;
}

// A random permutation of evenly spaced values: every max-pool window has a unique maximum that
// a step of h (below half the spacing) never dethrones.
HostTensor distinct(Shape s, uint64_t seed, float spacing = 0.05f) {
    HostTensor t(std::move(s));
    for (size_t i = 0; i < t.v.size(); ++i) t.v[i] = spacing * (float(i) - float(t.v.size()) / 2);
    Rng rng(seed);
    for (size_t i = t.v.size(); i > 1; --i) std::swap(t.v[i - 1], t.v[rng.next() % i]);
    return t;
}

// The parameter tensors of an op on these inputs, as init_weights fills them (weights random,
// gamma positive, running variance positive).
std::vector<HostTensor> params_for(const Op& op, const std::vector<Shape>& in, uint64_t seed) {
    std::vector<HostTensor> ps;
    for (const ParamSpec& p : op_params(op, in)) {
        bool positive = p.name == "gamma" || p.name == "running_var";
        ps.push_back(random(p.shape, seed++, positive ? 0.5f : -1.0f, 1.5f));
    }
    return ps;
}

void grad_check_op(const Op& op, std::vector<HostTensor> in, GradCheck gc = {}) {
    auto ps = params_for(op, shapes(in), 1234);
    grad_check(op, std::move(in), std::move(ps), gc);
}

}  // namespace

// --- forward by hand ---------------------------------------------------------------------------

TEST_CASE("conv2d forward by hand") {
    HostTensor x = iota({1, 1, 3, 3});  // 1..9
    SUBCASE("2x2 kernel, bias") {
        // y[p,q] = 1*x[p,q] + 2*x[p,q+1] + 3*x[p+1,q] + 4*x[p+1,q+1] + 1
        HostTensor y = run(conv(1, 2, {.bias = true}), {x}, {tensor({1, 1, 2, 2}, {1, 2, 3, 4}), tensor({1}, {1})});
        check_values(y, {38, 48, 68, 78});
    }
    SUBCASE("3x3 ones, padding 1, stride 2: each output sums the input inside its window") {
        HostTensor y = run(conv(1, 3, {.stride = 2, .pad = 1}), {x}, {tensor({1, 1, 3, 3}, std::vector<float>(9, 1))});
        check_values(y, {1 + 2 + 4 + 5, 2 + 3 + 5 + 6, 4 + 5 + 7 + 8, 5 + 6 + 8 + 9});
    }
    SUBCASE("asymmetric padding: one row on top, two columns on the right") {
        // windows of 2x2 ones; row(p,r) = p-1+r, col(q,s) = q+s
        HostTensor y = run(conv(1, 2, {.pad = Padding(1, 0, 0, 2)}), {x}, {tensor({1, 1, 2, 2}, {1, 1, 1, 1})});
        CHECK(y.shape == Shape{1, 1, 3, 4});
        check_values(y, {3, 5, 3, 0, 12, 16, 9, 0, 24, 28, 15, 0});
    }
    SUBCASE("dilation 2: the four corners") {
        HostTensor y = run(conv(1, 2, {.dilation = 2}), {x}, {tensor({1, 1, 2, 2}, {1, 1, 1, 1})});
        check_values(y, {1 + 3 + 7 + 9});
    }
    SUBCASE("groups keep channels apart") {
        HostTensor x2 = tensor({1, 2, 1, 1}, {2, 3});
        check_values(run(conv(2, 1, {.groups = 2}), {x2}, {tensor({2, 1, 1, 1}, {10, 100})}), {20, 300});
        check_values(run(conv(2, 1), {x2}, {tensor({2, 2, 1, 1}, {1, 1, 1, -1})}), {5, -1});
    }
}

TEST_CASE("linear and matmul forward by hand") {
    HostTensor y =
        run(linear(3), {tensor({1, 2}, {1, 2})}, {tensor({3, 2}, {1, 0, 0, 1, 1, 1}), tensor({3}, {0, 0, 10})});
    check_values(y, {1, 2, 13});
    HostTensor a = tensor({1, 2, 2}, {1, 2, 3, 4}), b = tensor({1, 2, 2}, {5, 6, 7, 8});
    check_values(run(Matmul{false}, {a, b}), {19, 22, 43, 50});
    check_values(run(Matmul{true}, {a, b}), {17, 23, 39, 53});
}

TEST_CASE("normalization forward by hand") {
    // x (N=2, C=2): channel 0 holds {1, 3} (mean 2, variance 1), channel 1 {5, 5} (variance 0)
    HostTensor x = tensor({2, 2}, {1, 5, 3, 5});
    auto gamma = tensor({2}, {2, 1}), beta = tensor({2}, {0, 7}), rmean = tensor({2}, {1, 5}),
         rvar = tensor({2}, {4, 1});
    const float s1 = float(1 / std::sqrt(1 + 1e-5)), s4 = float(1 / std::sqrt(4 + 1e-5));
    SUBCASE("batchnorm training uses the batch's statistics, biased variance") {
        check_values(run(bn(), {x}, {gamma, beta, rmean, rvar}, true), {-2 * s1, 7, 2 * s1, 7});
    }
    SUBCASE("batchnorm inference uses the running statistics") {
        check_values(run(bn(), {x}, {gamma, beta, rmean, rvar}, false), {0, 7, 2 * 2 * s4, 7});
    }
    SUBCASE("layernorm over the last dimension, and over dim 1 of NCHW") {
        // row {1, 2, 3, 4}: mean 2.5, variance 1.25
        const float s = float(1 / std::sqrt(1.25 + 1e-5));
        auto g4 = tensor({4}, {1, 1, 1, 2}), b4 = tensor({4}, {0, 0, 1, 0});
        check_values(run(ln(), {tensor({1, 4}, {1, 2, 3, 4})}, {g4, b4}), {-1.5f * s, -0.5f * s, 0.5f * s + 1, 3 * s});
        // (1,4,1,2): the rows run along C, one per (h, w); the second row is the first plus 10
        check_values(run(ln(1), {tensor({1, 4, 1, 2}, {1, 11, 2, 12, 3, 13, 4, 14})}, {g4, b4}),
                     {-1.5f * s, -1.5f * s, -0.5f * s, -0.5f * s, 0.5f * s + 1, 0.5f * s + 1, 3 * s, 3 * s});
    }
}

TEST_CASE("activations forward at chosen points") {
    HostTensor x = tensor({7}, {-4, -3, -1, 0, 1, 3, 7});
    check_values(run(relu(), {x}), {0, 0, 0, 0, 1, 3, 7});
    check_values(run(relu6(), {x}), {0, 0, 0, 0, 1, 3, 6});
    check_values(run(hardsigmoid(), {x}), {0, 0, 2.0f / 6, 0.5f, 4.0f / 6, 1, 1});
    check_values(run(hardswish(), {x}), {0, 0, -2.0f / 6, 0, 4.0f / 6, 3, 7});
    HostTensor y = run(sigmoid(), {x});
    CHECK(y.v[3] == 0.5f);
    CHECK(y.v[4] == doctest::Approx(0.7310585786));
    y = run(silu(), {x});
    CHECK(y.v[3] == 0.0f);
    CHECK(y.v[4] == doctest::Approx(0.7310585786));
    y = run(gelu(), {x});
    CHECK(y.v[3] == 0.0f);
    CHECK(y.v[4] == doctest::Approx(0.8413447461));   // Phi(1), the exact erf form
    CHECK(y.v[2] == doctest::Approx(-0.1586552539));  // -Phi(-1)
}

TEST_CASE("pooling windows by hand") {
    SUBCASE("max 2x2 stride 2 with ceil_mode keeps the partial windows at the border") {
        HostTensor x = iota({1, 1, 5, 5}, 0);  // x[h,w] = 5h + w
        HostTensor y = run(maxpool(2, {.ceil_mode = true}), {x});
        CHECK(y.shape == Shape{1, 1, 3, 3});
        check_values(y, {6, 8, 9, 16, 18, 19, 21, 23, 24});
    }
    SUBCASE("max ignores padding: all-negative input") {
        HostTensor x = iota({1, 1, 2, 2}, -4);  // -4 -3 / -2 -1
        check_values(run(maxpool(2, {.stride = 1, .pad = 1}), {x}), {-4, -3, -3, -2, -1, -1, -2, -1, -1});
    }
    HostTensor x = iota({1, 1, 3, 3});
    SUBCASE("avg 2x2 stride 2 padding 1: count_include_pad divides by 4, otherwise by the real elements") {
        check_values(run(avgpool(2, {.stride = 2, .pad = 1}), {x}), {0.25f, 1.25f, 2.75f, 7});
        check_values(run(avgpool(2, {.stride = 2, .pad = 1, .count_include_pad = false}), {x}), {1, 2.5f, 5.5f, 7});
    }
    SUBCASE("avg with ceil_mode: the part of the last window past the padding is in no divisor") {
        HostTensor row = iota({1, 1, 1, 5});
        HostTensor y = run(avgpool({1, 2}, {.stride = {1, 2}, .ceil_mode = true}), {row});
        check_values(y, {1.5f, 3.5f, 5});
    }
    SUBCASE("adaptive windows [floor(i*W/Q), ceil((i+1)*W/Q)) overlap") {
        HostTensor row = iota({1, 1, 1, 5});  // windows [0,2) [1,4) [3,5)
        check_values(run(adaptive_avgpool({1, 3}), {row}), {1.5f, 3, 4.5f});
        check_values(run(adaptive_avgpool(1), {x}), {5});
    }
}

TEST_CASE("elementwise and softmax forward by hand") {
    HostTensor a = tensor({2, 1}, {1, 2}), b = tensor({3}, {10, 20, 30});
    check_values(run(Add{}, {a, b}), {11, 21, 31, 12, 22, 32});
    check_values(run(Mul{}, {a, b}), {10, 20, 30, 20, 40, 60});
    check_values(run(scale(0.5), {b}), {5, 10, 15});
    check_values(run(layer_scale(1), {iota({1, 2, 1, 2})}, {tensor({2}, {10, 100})}), {10, 20, 300, 400});
    check_values(run(layer_scale(-1), {iota({2, 2})}, {tensor({2}, {10, 100})}), {10, 200, 30, 400});
    // softmax of {0, ln 3} is {1/4, 3/4}; along dim 0 of a (2,2) the columns are the rows
    float l3 = std::log(3.0f);
    check_values(run(softmax(), {tensor({1, 2}, {0, l3})}), {0.25f, 0.75f});
    check_values(run(softmax(0), {tensor({2, 2}, {0, l3, l3, 0})}), {0.25f, 0.75f, 0.75f, 0.25f});
}

TEST_CASE("data movement by hand") {
    check_values(run(Concat{1}, {tensor({1, 1, 2}, {1, 2}), tensor({1, 2, 2}, {3, 4, 5, 6})}), {1, 2, 3, 4, 5, 6});
    check_values(run(Concat{-1}, {tensor({2, 1}, {1, 2}), tensor({2, 2}, {3, 4, 5, 6})}), {1, 3, 4, 2, 5, 6});
    // 6 channels in 2 groups {0 1 2} {3 4 5}: y interleaves the groups
    check_values(run(channel_shuffle(2), {iota({1, 6, 1, 1}, 0)}), {0, 3, 1, 4, 2, 5});
    check_values(run(channel_shuffle(3), {iota({1, 6, 1, 1}, 0)}), {0, 2, 4, 1, 3, 5});
    HostTensor x = iota({1, 2, 3}, 0);
    check_values(run(permute({0, 2, 1}), {x}), {0, 3, 1, 4, 2, 5});
    check_values(run(flatten(), {x}), {0, 1, 2, 3, 4, 5});
    CHECK(run(reshape({0, 3, -1}), {x}).shape == Shape{1, 3, 2});
    check_values(run(slice(2, 1, 2), {x}), {1, 2, 4, 5});
    check_values(run(select(2, 2), {x}), {2, 5});
    check_values(run(select(1, 1), {x}), {3, 4, 5});
    check_values(run(dropout(0.5), {x}), {0, 1, 2, 3, 4, 5});
    check_values(run(stochastic_depth(0.5), {x}), {0, 1, 2, 3, 4, 5});
}

TEST_CASE("vision transformer tokens by hand") {
    HostTensor x = tensor({1, 2, 2}, {1, 2, 3, 4});
    check_values(run(class_token(), {x}, {tensor({2}, {9, 8})}), {9, 8, 1, 2, 3, 4});
    check_values(run(pos_embedding(), {x}, {tensor({2, 2}, {10, 20, 30, 40})}), {11, 22, 33, 44});
}

TEST_CASE("softmax cross-entropy by hand") {
    HostTensor z = tensor({2, 2}, {0, 0, std::log(3.0f), 0});
    HostTensor dz({2, 2});
    float loss = ref::softmax_cross_entropy({z.data(), z.shape}, {0, 1}, {dz.data(), dz.shape});
    // -log(1/2) for the first row, -log(1/4) for the second; averaged
    CHECK(loss == doctest::Approx((std::log(2.0) + std::log(4.0)) / 2));
    check_values(dz, {-0.25f, 0.25f, 0.375f, -0.375f});
    CHECK_THROWS_AS(ref::softmax_cross_entropy({z.data(), z.shape}, {0, 2}, {dz.data(), dz.shape}),
                    std::invalid_argument);
}

TEST_CASE("values PyTorch gives at the edges") {
    // From torch 1.13 (CPU, float64):
    //   x = torch.tensor([-3., 0., 3., 6.], requires_grad=True); f(x).sum().backward(); x.grad
    //   x = torch.arange(0., 49.).reshape(1, 1, 7, 7)
    //   F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=...)[0, 0, -1]
    SUBCASE("activation slopes at the kinks") {
        HostTensor x = tensor({4}, {-3, 0, 3, 6}), ones = tensor({4}, {1, 1, 1, 1});
        auto slope = [&](const Op& op) {
            HostTensor y = run(op, {x}), dx(x.shape);
            ref::backward(op, ref::Bwd{{{x.data(), x.shape}},
                                       {y.data(), y.shape},
                                       {ones.data(), ones.shape},
                                       {},
                                       {{dx.data(), dx.shape}},
                                       {}});
            return dx;
        };
        check_values(slope(relu()), {0, 0, 1, 1});
        check_values(slope(relu6()), {0, 0, 1, 0});
        check_values(slope(hardswish()), {-0.5f, 0.5f, 1.5f, 1});
        check_values(slope(hardsigmoid()), {0, 1.0f / 6, 0, 0});
    }
    SUBCASE("average pooling's last ceil_mode window, counting the padding and not") {
        HostTensor x = iota({1, 1, 7, 7}, 0);
        HostTensor in = run(avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true}), {x});
        HostTensor ex = run(avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true, .count_include_pad = false}), {x});
        REQUIRE(in.shape == Shape{1, 1, 4, 4});
        check_values(tensor({4}, {in.v.begin() + 12, in.v.end()}), {17.33333397f, 27.0f, 28.33333397f, 19.55555534f});
        check_values(tensor({4}, {ex.v.begin() + 12, ex.v.end()}), {39.0f, 40.5f, 42.5f, 44.0f});
    }
}

// --- backward by finite differences ------------------------------------------------------------

TEST_CASE("conv2d backward") {
    SUBCASE("3x3, padding 1, bias") { grad_check_op(conv(4, 3, {.pad = 1, .bias = true}), {random({2, 3, 5, 5}, 1)}); }
    SUBCASE("groups 2, stride 2, asymmetric padding, dilation, 3x2 kernel") {
        grad_check_op(
            conv(6, {3, 2}, {.stride = 2, .pad = Padding(1, 0, 2, 1), .dilation = {2, 1}, .groups = 2, .bias = true}),
            {random({2, 4, 7, 8}, 2)});
    }
    SUBCASE("depthwise 3x3 stride 2") {
        grad_check_op(conv(4, 3, {.stride = 2, .pad = 1, .groups = 4}), {random({1, 4, 6, 6}, 3)});
    }
    SUBCASE("1x1 stride 2 drops rows and columns") {
        grad_check_op(conv(3, 1, {.stride = 2}), {random({2, 2, 5, 5}, 4)});
    }
}

TEST_CASE("linear and matmul backward") {
    SUBCASE("linear over the last dimension of a 3-d input, with bias") {
        grad_check_op(linear(4), {random({2, 3, 5}, 5)});
    }
    SUBCASE("linear without bias") { grad_check_op(linear(4, false), {random({3, 5}, 6)}); }
    SUBCASE("matmul") { grad_check_op(Matmul{false}, {random({2, 3, 4, 5}, 7), random({2, 3, 5, 6}, 8)}); }
    SUBCASE("matmul with transpose_b") {
        grad_check_op(Matmul{true}, {random({2, 3, 4, 5}, 9), random({2, 3, 6, 5}, 10)});
    }
}

TEST_CASE("normalization backward") {
    SUBCASE("batchnorm on NCHW") { grad_check_op(bn(), {random({3, 4, 3, 2}, 11)}); }
    SUBCASE("batchnorm on (N,C)") { grad_check_op(bn(), {random({5, 3}, 12)}); }
    SUBCASE("layernorm over the last dimension") { grad_check_op(ln(), {random({2, 5, 6}, 13)}); }
    SUBCASE("layernorm over dim 1 of NCHW") { grad_check_op(ln(1), {random({2, 4, 3, 3}, 14)}); }
}

TEST_CASE("activation backward away from the kinks") {
    const Shape s = {2, 3, 4, 5};
    SUBCASE("relu") { grad_check_op(relu(), {away_from(s, 15, -2, 2, {0})}); }
    SUBCASE("relu6") { grad_check_op(relu6(), {away_from(s, 16, -1, 7, {0, 6})}); }
    SUBCASE("sigmoid") { grad_check_op(sigmoid(), {random(s, 17, -4, 4)}); }
    SUBCASE("silu") { grad_check_op(silu(), {random(s, 18, -4, 4)}); }
    SUBCASE("gelu") { grad_check_op(gelu(), {random(s, 19, -4, 4)}); }
    SUBCASE("hardswish") { grad_check_op(hardswish(), {away_from(s, 20, -4.5f, 4.5f, {-3, 3})}); }
    SUBCASE("hardsigmoid") { grad_check_op(hardsigmoid(), {away_from(s, 21, -4.5f, 4.5f, {-3, 3})}); }
}

TEST_CASE("pooling backward") {
    SUBCASE("max 3x3 stride 2 padding 1 ceil_mode") {
        grad_check_op(maxpool(3, {.stride = 2, .pad = 1, .ceil_mode = true}), {distinct({2, 2, 8, 8}, 22)});
    }
    SUBCASE("max 2x2 ceil_mode on an odd side, overlapping 3x3 stride 1") {
        grad_check_op(maxpool(2, {.ceil_mode = true}), {distinct({1, 2, 5, 7}, 23)});
        grad_check_op(maxpool(3, {.stride = 1}), {distinct({1, 2, 5, 5}, 24)});
    }
    SUBCASE("max with asymmetric padding") {
        grad_check_op(maxpool(2, {.stride = 1, .pad = Padding(1, 0, 0, 1)}), {distinct({1, 2, 4, 5}, 25)});
    }
    SUBCASE("avg 3x3 stride 2 padding 1 ceil_mode, counting the padding and not") {
        grad_check_op(avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true}), {random({1, 2, 6, 7}, 26)});
        grad_check_op(avgpool(3, {.stride = 2, .pad = 1, .ceil_mode = true, .count_include_pad = false}),
                      {random({1, 2, 6, 7}, 27)});
    }
    SUBCASE("adaptive average to 3x2 (overlapping windows) and to 1x1") {
        grad_check_op(adaptive_avgpool({3, 2}), {random({1, 2, 5, 7}, 28)});
        grad_check_op(adaptive_avgpool(1), {random({2, 3, 4, 4}, 29)});
    }
}

TEST_CASE("elementwise backward sums over the broadcast dimensions") {
    SUBCASE("add, equal shapes") { grad_check_op(Add{}, {random({2, 3, 4}, 30), random({2, 3, 4}, 31)}); }
    SUBCASE("add, one side per channel") { grad_check_op(Add{}, {random({2, 3, 4, 5}, 32), random({3, 1, 1}, 33)}); }
    SUBCASE("add, both sides broadcast") { grad_check_op(Add{}, {random({2, 1, 4}, 34), random({3, 1}, 35)}); }
    SUBCASE("mul, squeeze-excitation (N,C,H,W) * (N,C,1,1)") {
        grad_check_op(Mul{}, {random({2, 3, 4, 4}, 36), random({2, 3, 1, 1}, 37)});
    }
    SUBCASE("mul, both sides broadcast") { grad_check_op(Mul{}, {random({1, 4, 1}, 38), random({3, 1, 5}, 39)}); }
    SUBCASE("scale") { grad_check_op(scale(0.25), {random({2, 3, 4}, 40)}); }
    SUBCASE("layer scale along C of NCHW and along the last dimension") {
        grad_check_op(layer_scale(1), {random({2, 3, 4, 4}, 41)});
        grad_check_op(layer_scale(-1), {random({2, 5, 6}, 42)});
    }
}

TEST_CASE("softmax backward") {
    SUBCASE("along the last dimension") { grad_check_op(softmax(), {random({2, 3, 5}, 43, -2, 2)}); }
    SUBCASE("along dim 1") { grad_check_op(softmax(1), {random({2, 4, 3}, 44, -2, 2)}); }
}

TEST_CASE("data movement backward routes every element back") {
    SUBCASE("concat of three along channels, of two along the last dimension") {
        grad_check_op(Concat{1}, {random({2, 1, 3, 3}, 45), random({2, 2, 3, 3}, 46), random({2, 3, 3, 3}, 47)});
        grad_check_op(Concat{-1}, {random({2, 3, 2}, 48), random({2, 3, 4}, 49)});
    }
    SUBCASE("channel shuffle") {
        grad_check_op(channel_shuffle(2), {random({2, 6, 2, 3}, 50)});
        grad_check_op(channel_shuffle(3), {random({1, 6, 2, 2}, 51)});
    }
    SUBCASE("flatten and reshape") {
        grad_check_op(flatten(), {random({2, 3, 2, 2}, 52)});
        grad_check_op(flatten(2), {random({2, 3, 2, 2}, 53)});
        grad_check_op(reshape({0, 0, 3, -1}), {random({2, 2, 6}, 54)});
    }
    SUBCASE("permute, 4-d and 5-d") {
        grad_check_op(permute({0, 2, 3, 1}), {random({2, 3, 2, 4}, 55)});
        grad_check_op(permute({0, 2, 3, 1, 4}), {random({2, 3, 2, 2, 3}, 56)});
    }
    SUBCASE("slice and select") {
        grad_check_op(slice(1, 1, 2), {random({2, 4, 3}, 57)});
        grad_check_op(slice(-1, 2, 3), {random({2, 3, 6}, 58)});
        grad_check_op(select(1, 2), {random({2, 3, 4}, 59)});
        grad_check_op(select(0, 1), {random({3, 4}, 60)});
    }
    SUBCASE("dropout and stochastic depth are the identity") {
        grad_check_op(dropout(0.5), {random({2, 3}, 61)});
        grad_check_op(stochastic_depth(0.2), {random({2, 3}, 62)});
    }
}

TEST_CASE("class token and position embedding backward") {
    grad_check_op(class_token(), {random({2, 3, 4}, 63)});
    grad_check_op(pos_embedding(), {random({2, 3, 4}, 64)});
}

TEST_CASE("softmax cross-entropy gradient") {
    // In double, as the kernels' backward above: h = 1e-4, |fd - analytic| <= 1e-6 |analytic| + 1e-9.
    HostTensor zf = random({3, 5}, 65, -2, 2);
    HostTensor64 z = convert<double>(zf), dz({3, 5});
    const std::vector<int32_t> labels = {4, 0, 2};
    using CV = ref::CViewT<double>;
    using V = ref::ViewT<double>;
    ref::softmax_cross_entropy(CV{z.data(), z.shape}, labels, V{dz.data(), dz.shape});
    const double h = 1e-4;
    for (size_t k = 0; k < z.v.size(); ++k) {
        const double v = z.v[k];
        z.v[k] = v + h;
        double Lp = ref::softmax_cross_entropy(CV{z.data(), z.shape}, labels, V{});
        z.v[k] = v - h;
        double Lm = ref::softmax_cross_entropy(CV{z.data(), z.shape}, labels, V{});
        z.v[k] = v;
        INFO("dz[", k, "]");
        CHECK(std::abs((Lp - Lm) / (2 * h) - dz.v[k]) <= 1e-6 * std::abs(dz.v[k]) + 1e-9);
    }
    // The float instantiation gives the double loss and gradient, rounded once.
    HostTensor dzf({3, 5});
    const float lf = ref::softmax_cross_entropy({zf.data(), zf.shape}, labels, {dzf.data(), dzf.shape});
    const double ld = ref::softmax_cross_entropy(CV{z.data(), z.shape}, labels, V{});
    CHECK(std::abs(lf - ld) <= 1e-7 * ld);
    for (size_t k = 0; k < dzf.v.size(); ++k) CHECK(std::abs(dzf.v[k] - dz.v[k]) <= 1e-7 * std::abs(dz.v[k]));
}

// --- the calling convention --------------------------------------------------------------------

TEST_CASE("backward adds into the gradients, skips null ones, and checks shapes") {
    const Op op = conv(3, 3, {.pad = 1, .bias = true});
    HostTensor x = random({1, 2, 4, 4}, 70);
    auto ps = params_for(op, {x.shape}, 71);
    HostTensor y = run(op, {x}, ps), dy = random(y.shape, 72);
    HostTensor dx(x.shape), dw(ps[0].shape), db(ps[1].shape);
    ref::Bwd b;
    b.in = {{x.data(), x.shape}};
    b.y = {y.data(), y.shape};
    b.dy = {dy.data(), dy.shape};
    b.params = {ps[0].data(), ps[1].data()};
    b.dx = {{dx.data(), dx.shape}};
    b.dparams = {dw.data(), nullptr};
    ref::backward(op, b);
    HostTensor dx1 = dx, dw1 = dw;
    ref::backward(op, b);
    for (size_t i = 0; i < dx.v.size(); ++i) REQUIRE(dx.v[i] == 2 * dx1.v[i]);
    for (size_t i = 0; i < dw.v.size(); ++i) REQUIRE(dw.v[i] == 2 * dw1.v[i]);
    for (float v : db.v) REQUIRE(v == 0);  // not asked for

    HostTensor dx2 = dx;
    b.dx = {{nullptr, {}}};
    b.dparams = {};  // none at all
    ref::backward(op, b);
    CHECK(dx.v == dx2.v);

    b.dx = {{dx.data(), {1, 2, 4, 5}}};
    CHECK_THROWS_AS(ref::backward(op, b), std::invalid_argument);
    ref::Fwd f{{{x.data(), x.shape}}, {ps[0].data(), ps[1].data()}, {y.data(), {1, 3, 4, 5}}, false};
    CHECK_THROWS_AS(ref::forward(op, f), std::invalid_argument);
    f.y.shape = y.shape;
    f.params.pop_back();
    CHECK_THROWS_AS(ref::forward(op, f), std::invalid_argument);
}

TEST_CASE("batchnorm's running statistics take no gradient") {
    HostTensor x = random({2, 3}, 80);
    auto ps = params_for(bn(), {x.shape}, 81);
    HostTensor y = run(bn(), {x}, ps), dy = random(y.shape, 82), d(Shape{3});
    ref::Bwd b{{{x.data(), x.shape}}, {y.data(), y.shape},
               {dy.data(), dy.shape}, {ps[0].data(), ps[1].data(), ps[2].data(), ps[3].data()},
               {{nullptr, {}}},       {nullptr, nullptr, d.data(), nullptr}};
    CHECK_THROWS_AS(ref::backward(bn(), b), std::invalid_argument);
}
