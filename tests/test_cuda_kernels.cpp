// The hand-written CUDA kernels (kernels/cuda) and the naive reference CUDA kernels
// (kernels/cuda/reference) against the CPU reference kernels (kernels/cpu), forward and backward,
// on small shapes that exercise broadcasting, strides, padding, ceil_mode and groups. Without a
// CUDA device (or a build without the kernels) the binary prints why and exits 77: ctest skipped.
//
// Tolerances (max_rel_diff: relative above 1, absolute below):
// - fp32 1e-5: the same formulas in fp32 against double-accumulated references; sums here have at
//   most a few hundred terms of O(1), so fp32 rounding stays near 1e-6.
// - fp16 4e-3 and bf16 3e-2 on the hand-written kernels: inputs and outputs each rounded once to
//   11 (8) bits, 4.9e-4 (3.9e-3) relative, with fp32 arithmetic between; a sum of rounded inputs
//   adds a few ulps more. Layout kernels only copy and must be exact in every type.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "engine/backend/executor.h"
#include "engine/dsl.h"
#include "kernels/cpu/kernel.h"
#include "kernels/cuda/check.h"
#include "kernels/cuda/from_ops.h"
#include "roofline/probes/cuda/probes.h"
#include "kernels/cuda/reference/from_ops.h"

using namespace ridge;

namespace {

// A device buffer of n elements of type t, filled from and read back as fp32.
struct Buf {
    void* p = nullptr;
    int64_t n = 0;
    DType t = DType::fp32;
    Buf(const HostTensor& h, DType type) : n(h.size()), t(type) {
        RIDGE_CUDA_CHECK(cudaMalloc(&p, size_t(std::max<int64_t>(n, 1) * 4)));
        float* f = nullptr;
        RIDGE_CUDA_CHECK(cudaMalloc(&f, size_t(std::max<int64_t>(n, 1) * 4)));
        RIDGE_CUDA_CHECK(cudaMemcpy(f, h.data(), size_t(n) * 4, cudaMemcpyHostToDevice));
        gpu::convert(DType::fp32, f, t, p, n, 1.0f, false, nullptr);
        RIDGE_CUDA_CHECK(cudaDeviceSynchronize());
        cudaFree(f);
    }
    Buf(const Shape& s, DType type) : Buf(HostTensor(s), type) {}
    ~Buf() { cudaFree(p); }
    Buf(const Buf&) = delete;
    Buf& operator=(const Buf&) = delete;
    HostTensor get(const Shape& s) const {
        float* f = nullptr;
        RIDGE_CUDA_CHECK(cudaMalloc(&f, size_t(std::max<int64_t>(n, 1) * 4)));
        gpu::convert(t, p, DType::fp32, f, n, 1.0f, false, nullptr);
        HostTensor h(s);
        RIDGE_CUDA_CHECK(cudaMemcpy(h.data(), f, size_t(n) * 4, cudaMemcpyDeviceToHost));
        cudaFree(f);
        return h;
    }
    float* f() const { return static_cast<float*>(p); }
};

HostTensor rnd(const Shape& s, uint64_t seed, float scale = 1) {
    HostTensor h(s);
    fill_uniform(h, -scale, scale, seed);
    return h;
}

// The value a 16-bit storage gives back, so references start from the same inputs.
HostTensor rounded(const HostTensor& h, DType t) {
    Buf b(h, t);
    return b.get(h.shape);
}

double tol(DType t) { return t == DType::fp32 ? 1e-5 : t == DType::fp16 ? 4e-3 : 3e-2; }
const DType all_types[] = {DType::fp32, DType::fp16, DType::bf16};
const char* name(DType t) { return t == DType::fp32 ? "fp32" : t == DType::fp16 ? "fp16" : "bf16"; }

void check_close(const HostTensor& a, const HostTensor& b, double t, const std::string& what) {
    INFO(what);
    REQUIRE(a.shape == b.shape);
    CHECK(max_rel_diff(a, b) <= t);
}

// The CPU reference forward and backward of one op (gradients added into zeros).
struct Ref {
    HostTensor y;
    std::vector<HostTensor> dx, dparams;
};
Ref reference(const Op& op, const std::vector<HostTensor>& in, const std::vector<HostTensor>& params, const Shape& ys,
              const HostTensor& dy) {
    Ref r;
    r.y = HostTensor(ys);
    ref::Fwd f;
    for (const auto& t : in) f.in.push_back({t.data(), t.shape});
    for (const auto& p : params) f.params.push_back(p.data());
    f.y = {r.y.data(), ys};
    f.training = true;
    ref::forward(op, f);
    ref::Bwd b;
    for (const auto& t : in) b.in.push_back({t.data(), t.shape});
    b.y = {r.y.data(), ys};
    b.dy = {dy.data(), ys};
    for (const auto& p : params) b.params.push_back(p.data());
    for (const auto& t : in) r.dx.emplace_back(t.shape);
    for (auto& d : r.dx) b.dx.push_back({d.data(), d.shape});
    for (const auto& p : params) r.dparams.emplace_back(p.shape);
    for (auto& d : r.dparams) b.dparams.push_back(d.data());
    ref::backward(op, b);
    return r;
}

}  // namespace

TEST_CASE("activations: forward and backward in every storage type") {
    for (Activation a : {relu(), relu6(), sigmoid(), silu(), gelu(), hardswish(), hardsigmoid()})
        for (DType t : all_types) {
            CAPTURE(fn_name(a.fn));
            CAPTURE(name(t));
            Shape s = {3, 5, 7};
            HostTensor x = rounded(rnd(s, 1, 8), t), dy = rounded(rnd(s, 2), t);
            Ref r = reference(a, {x}, {}, s, dy);
            Buf bx(x, t), by(s, t), bdy(dy, t), bdx(s, t);
            gpu::activation_forward(t, gpu::act_of(a.fn), bx.p, by.p, x.size(), nullptr);
            gpu::activation_backward(t, gpu::act_of(a.fn), bx.p, bdy.p, bdx.p, x.size(), nullptr);
            check_close(by.get(s), r.y, tol(t), "y");
            check_close(bdx.get(s), r.dx[0], tol(t), "dx");
        }
}

TEST_CASE("add and mul broadcast both ways; their gradients sum over the broadcast dimensions") {
    // Both broadcast; neither (the kernels' unbroadcast paths), also with a missing leading
    // dimension and with extents of 1; one, either side (an SE gate).
    struct Shapes {
        Shape a, b, y;
    };
    const Shape s4 = {2, 3, 4, 5}, se = {2, 3, 1, 1};
    const Shapes cases[] = {{{2, 1, 4, 5}, {3, 1, 5}, s4}, {s4, s4, s4}, {{3, 4, 5}, {1, 3, 4, 5}, {1, 3, 4, 5}},
                            {se, se, se}, {s4, se, s4}, {se, s4, s4}};
    for (const Shapes& c : cases) {
        const Shape &sa = c.a, &sb = c.b, &sy = c.y;
        CAPTURE(to_string(sa));
        CAPTURE(to_string(sb));
        for (DType t : all_types) {
            CAPTURE(name(t));
            HostTensor a = rounded(rnd(sa, 3), t), b = rounded(rnd(sb, 4), t), dy = rounded(rnd(sy, 5), t);
            for (bool mul : {false, true}) {
                Op op = mul ? Op(Mul{}) : Op(Add{});
                Ref r = reference(op, {a, b}, {}, sy, dy);
                Buf ba(a, t), bb(b, t), by(sy, t), bdy(dy, t), bda(sa, t), bdb(sb, t);
                gpu::Bcast ga = gpu::bcast(sa, sy), gb = gpu::bcast(sb, sy);
                (mul ? gpu::mul_forward : gpu::add_forward)(t, ba.p, ga, bb.p, gb, by.p, nullptr);
                gpu::broadcast_backward(t, bdy.p, ga, a.size(), mul ? bb.p : nullptr, gb, bda.p, nullptr);
                gpu::broadcast_backward(t, bdy.p, gb, b.size(), mul ? ba.p : nullptr, ga, bdb.p, nullptr);
                check_close(by.get(sy), r.y, tol(t), mul ? "mul y" : "add y");
                // A broadcast gradient sums up to 24 rounded terms: a few ulps of the sum.
                check_close(bda.get(sa), r.dx[0], 4 * tol(t), "da");
                check_close(bdb.get(sb), r.dx[1], 4 * tol(t), "db");
            }
        }
    }
}

TEST_CASE("layernorm over the last dimension and over the channels of NCHW") {
    for (auto [s, dim] : {std::pair{Shape{3, 4, 16}, -1}, std::pair{Shape{2, 12, 3, 4}, 1}})
        for (DType t : all_types) {
            CAPTURE(name(t));
            int d = normalize_dim(dim, s.size());
            HostTensor x = rounded(rnd(s, 6), t), dy = rounded(rnd(s, 7), t);
            HostTensor g = rnd({s[size_t(d)]}, 8), b = rnd({s[size_t(d)]}, 9);
            Ref r = reference(LayerNorm{dim}, {x}, {g, b}, s, dy);
            gpu::Around3 a = gpu::around3(s, d);
            Buf bx(x, t), by(s, t), bdy(dy, t), bdx(s, t), bg(g, DType::fp32), bb(b, DType::fp32);
            Buf mean(Shape{a.outer * a.inner}, DType::fp32), istd(Shape{a.outer * a.inner}, DType::fp32);
            Buf dg(g.shape, DType::fp32), db(b.shape, DType::fp32);
            gpu::layernorm_forward(t, bx.p, bg.f(), bb.f(), by.p, mean.f(), istd.f(), a, nullptr);
            gpu::layernorm_backward(t, bx.p, bdy.p, bg.f(), mean.f(), istd.f(), bdx.p, dg.f(), db.f(), a, nullptr);
            check_close(by.get(s), r.y, 2 * tol(t), "y");
            check_close(bdx.get(s), r.dx[0], 4 * tol(t), "dx");
            check_close(dg.get(g.shape), r.dparams[0], 4 * tol(t), "dgamma");
            check_close(db.get(b.shape), r.dparams[1], 4 * tol(t), "dbeta");
        }
}

TEST_CASE("pooling windows: padding, ceil_mode, both divisors, adaptive") {
    Shape s = {2, 3, 10, 9};
    std::vector<Op> ops = {Pool2d{Pool2d::Kind::max, 3, 2, 1},
                           Pool2d{Pool2d::Kind::max, 3, 2, 0, true},
                           Pool2d{Pool2d::Kind::avg, 3, 2, 1, true, true},
                           Pool2d{Pool2d::Kind::avg, 3, 2, 1, false, false},
                           AdaptiveAvgPool2d{{4, 3}}};
    for (const Op& op : ops)
        for (DType t : all_types) {
            CAPTURE(op_kind(op));
            CAPTURE(name(t));
            Shape ys = op_shape(op, {s});
            // Distinct values 0.05 apart: no ties, so the maximum is the same in every type.
            HostTensor x(s);
            for (int64_t i = 0; i < x.size(); ++i) x.v[size_t(i)] = float((i * 37) % x.size()) * 0.05f - 10.0f;
            x = rounded(x, t);
            HostTensor dy = rounded(rnd(ys, 10), t);
            Ref r = reference(op, {x}, {}, ys, dy);
            gpu::PoolShape ps = std::holds_alternative<Pool2d>(op) ? gpu::pool_shape(std::get<Pool2d>(op), s, ys)
                                                                    : gpu::pool_shape(std::get<AdaptiveAvgPool2d>(op), s, ys);
            Buf bx(x, t), by(ys, t), bdy(dy, t), bdx(s, t);
            gpu::pool_forward(t, ps, bx.p, by.p, nullptr);
            gpu::pool_backward(t, ps, bx.p, bdy.p, bdx.p, nullptr);
            check_close(by.get(ys), r.y, 2 * tol(t), "y");
            check_close(bdx.get(s), r.dx[0], 4 * tol(t), "dx");
        }
}

TEST_CASE("layout kernels copy exactly: concat, slice, permute, channel shuffle") {
    for (DType t : all_types) {
        CAPTURE(name(t));
        Shape s = {2, 6, 3, 4};
        HostTensor x = rounded(rnd(s, 11), t);
        Buf bx(x, t);
        // concat along dim 1 of x with itself, then slice the second copy back out
        Shape cs = {2, 12, 3, 4};
        Buf cat2(cs, t), back(s, t);
        gpu::block_into(t, bx.p, cat2.p, 2, 12, 0, 6, 12, false, nullptr);
        gpu::block_into(t, bx.p, cat2.p, 2, 12, 6, 6, 12, false, nullptr);
        gpu::block_from(t, cat2.p, back.p, 2, 12, 6, 6, 12, false, nullptr);
        CHECK(max_rel_diff(back.get(s), x) == 0);
        HostTensor ref_cat = reference(Concat{1}, {x, x}, {}, cs, HostTensor(cs)).y;
        CHECK(max_rel_diff(cat2.get(cs), ref_cat) == 0);
        // permute and channel shuffle against the CPU kernels
        Permute perm{{0, 2, 3, 1}};
        Shape ps = op_shape(perm, {s});
        Buf py(ps, t);
        gpu::permute(t, bx.p, s, perm.order, py.p, false, nullptr);
        CHECK(max_rel_diff(py.get(ps), reference(perm, {x}, {}, ps, HostTensor(ps)).y) == 0);
        Buf sy(s, t);
        gpu::permute(t, bx.p, {2, 3, 2, 12}, {0, 2, 1, 3}, sy.p, false, nullptr);
        CHECK(max_rel_diff(sy.get(s), reference(ChannelShuffle{3}, {x}, {}, s, HostTensor(s)).y) == 0);
    }
}

TEST_CASE("softmax cross-entropy: loss and gradient, with a loss scale") {
    Shape s = {5, 7};
    HostTensor logits = rnd(s, 12, 3);
    std::vector<int32_t> labels = {0, 6, 3, 3, 1};
    HostTensor dref(s);
    float lref = ref::softmax_cross_entropy({logits.data(), s}, labels, {dref.data(), s});
    Buf bl(logits, DType::fp32), bd(s, DType::fp32), rows(Shape{5}, DType::fp32), loss(Shape{1}, DType::fp32);
    int32_t* lab = nullptr;
    RIDGE_CUDA_CHECK(cudaMalloc(&lab, labels.size() * 4));
    RIDGE_CUDA_CHECK(cudaMemcpy(lab, labels.data(), labels.size() * 4, cudaMemcpyHostToDevice));
    gpu::softmax_cross_entropy(DType::fp32, bl.p, lab, bd.p, rows.f(), loss.f(), 5, 7, 8.0f, nullptr);
    cudaFree(lab);
    CHECK(loss.get({1}).v[0] == doctest::Approx(lref).epsilon(1e-5));
    HostTensor d = bd.get(s);
    for (float& v : d.v) v /= 8.0f;
    check_close(d, dref, 1e-5, "dlogits");
}

TEST_CASE("sgd updates fp32 master weights and writes the 16-bit copy") {
    HostTensor w = rnd({100}, 13), g = rnd({100}, 14);
    for (DType t : {DType::fp16, DType::bf16}) {
        Buf bw(w, DType::fp32), bg(g, t), copy(w.shape, t);
        HostTensor gr = rounded(g, t);
        gpu::sgd(bw.f(), t, bg.p, nullptr, t, copy.p, 100, {.lr = 0.5f, .inv_scale = 0.25f}, nullptr);
        HostTensor want = w;
        for (size_t k = 0; k < want.v.size(); ++k) want.v[k] -= 0.5f * gr.v[k] * 0.25f;
        check_close(bw.get(w.shape), want, 1e-6, "master");
        check_close(copy.get(w.shape), want, tol(t), "copy");
    }
}

// Three steps with momentum and weight decay against the same recurrence on the host
// (torch.optim.SGD's: v = m v + (g + wd w); w -= lr v), the gradient held fixed.
TEST_CASE("sgd with momentum and weight decay") {
    HostTensor w = rnd({100}, 21), g = rnd({100}, 22);
    Buf bw(w, DType::fp32), bg(g, DType::fp32), bv(w.shape, DType::fp32);
    HostTensor want = w, v({100});
    for (int step = 0; step < 3; ++step) {
        gpu::sgd(bw.f(), DType::fp32, bg.p, bv.f(), DType::fp32, nullptr, 100,
                 {.lr = 0.1f, .momentum = 0.9f, .weight_decay = 0.01f, .inv_scale = 1}, nullptr);
        for (size_t k = 0; k < want.v.size(); ++k) {
            v.v[k] = 0.9f * v.v[k] + (g.v[k] + 0.01f * want.v[k]);
            want.v[k] -= 0.1f * v.v[k];
        }
    }
    check_close(bw.get(w.shape), want, 1e-6, "master");
    check_close(bv.get(w.shape), v, 1e-6, "velocity");
}

TEST_CASE("bias, channel scale and class token kernels") {
    Shape s = {2, 5, 6};
    HostTensor x = rnd(s, 15), dy = rnd(s, 16), g = rnd({5}, 17);
    gpu::Around3 a{2, 5, 6};
    Ref r = reference(LayerScale{1}, {x}, {g}, s, dy);
    Buf bx(x, DType::fp32), by(s, DType::fp32), bdy(dy, DType::fp32), bdx(s, DType::fp32), bg(g, DType::fp32), bdg(g.shape, DType::fp32);
    gpu::channel_scale_forward(DType::fp32, bx.p, bg.f(), by.p, a, nullptr);
    gpu::channel_scale_backward(DType::fp32, bx.p, bdy.p, bg.f(), bdx.p, bdg.f(), a, nullptr);
    check_close(by.get(s), r.y, 1e-5, "layer scale y");
    check_close(bdx.get(s), r.dx[0], 1e-5, "layer scale dx");
    check_close(bdg.get(g.shape), r.dparams[0], 1e-5, "layer scale dgamma");
    Shape ts = {2, 3, 4}, tys = {2, 4, 4};
    HostTensor tx = rnd(ts, 18), tok = rnd({4}, 19), tdy = rnd(tys, 20);
    Ref rt = reference(ClassToken{}, {tx}, {tok}, tys, tdy);
    Buf btx(tx, DType::fp32), bty(tys, DType::fp32), btok(tok, DType::fp32), btdy(tdy, DType::fp32), bdtok(tok.shape, DType::fp32);
    gpu::block_into(DType::fp32, btx.p, bty.p, 2, 4, 1, 3, 4, false, nullptr);
    gpu::class_token_forward(DType::fp32, btok.f(), bty.p, 2, 4, 4, nullptr);
    gpu::class_token_backward(DType::fp32, btdy.p, bdtok.f(), 2, 4, 4, nullptr);
    CHECK(max_rel_diff(bty.get(tys), rt.y) == 0);
    check_close(bdtok.get(tok.shape), rt.dparams[0], 1e-6, "dtoken");
}

TEST_CASE("naive CUDA conv and linear match the CPU reference") {
    struct Case {
        Conv2d op;
        Shape x;
    };
    for (const Case& c : {Case{{8, 3, 1, 1}, {2, 4, 7, 7}}, Case{{6, 3, 2, 1, 1, 1, true}, {2, 5, 9, 8}},
                          Case{{8, 3, 1, 2, 2, 4}, {1, 8, 10, 10}}}) {
        Shape ys = op_shape(c.op, {c.x});
        std::vector<ParamSpec> ps = op_params(c.op, {c.x});
        HostTensor x = rnd(c.x, 21), w = rnd(ps[0].shape, 22), dy = rnd(ys, 23);
        std::vector<HostTensor> params = {w};
        if (c.op.bias) params.push_back(rnd({c.op.K}, 24));
        Ref r = reference(c.op, {x}, params, ys, dy);
        gpu::ref::ConvShape cs = gpu::ref::conv_shape(c.op, c.x, ys);
        Buf bx(x, DType::fp32), bw(w, DType::fp32), by(ys, DType::fp32), bdy(dy, DType::fp32), bdx(c.x, DType::fp32), bdw(w.shape, DType::fp32);
        std::unique_ptr<Buf> bb, bdb;
        if (c.op.bias) bb = std::make_unique<Buf>(params[1], DType::fp32), bdb = std::make_unique<Buf>(params[1].shape, DType::fp32);
        gpu::ref::conv_forward(cs, bx.f(), bw.f(), bb ? bb->f() : nullptr, by.f(), nullptr);
        gpu::ref::conv_backward_data(cs, bdy.f(), bw.f(), bdx.f(), nullptr);
        gpu::ref::conv_backward_filter(cs, bx.f(), bdy.f(), bdw.f(), bdb ? bdb->f() : nullptr, nullptr);
        check_close(by.get(ys), r.y, 1e-5, "conv y");
        check_close(bdx.get(c.x), r.dx[0], 1e-5, "conv dx");
        check_close(bdw.get(w.shape), r.dparams[0], 1e-5, "conv dw");
        if (bdb) check_close(bdb->get(params[1].shape), r.dparams[1], 1e-5, "conv db");
    }
    Shape xs = {6, 10}, ys = {6, 4};
    HostTensor x = rnd(xs, 25), w = rnd({4, 10}, 26), b = rnd({4}, 27), dy = rnd(ys, 28);
    Ref r = reference(Linear{4}, {x}, {w, b}, ys, dy);
    Buf bx(x, DType::fp32), bw(w, DType::fp32), bb(b, DType::fp32), by(ys, DType::fp32), bdy(dy, DType::fp32), bdx(xs, DType::fp32),
        bdw(w.shape, DType::fp32), bdb(b.shape, DType::fp32);
    gpu::ref::linear_forward(6, 10, 4, bx.f(), bw.f(), bb.f(), by.f(), nullptr);
    gpu::ref::linear_backward(6, 10, 4, bx.f(), bw.f(), bdy.f(), bdx.f(), bdw.f(), bdb.f(), nullptr);
    check_close(by.get(ys), r.y, 1e-5, "linear y");
    check_close(bdx.get(xs), r.dx[0], 1e-5, "linear dx");
    check_close(bdw.get(w.shape), r.dparams[0], 1e-5, "linear dw");
    check_close(bdb.get(b.shape), r.dparams[1], 1e-5, "linear db");
}

int main(int argc, char** argv) {
    if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
        std::cout << "skipped: " << why << "\n";
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
}
