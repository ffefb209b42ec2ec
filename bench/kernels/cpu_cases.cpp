// The kernels of kernels/simd against their references in kernels/cpu. Inputs are generated in
// plain NCHW, the reference runs on them, and the fast kernel runs on copies packed into the
// layout asked for; its output is unpacked and compared, and the layout's channel padding must
// come out zero as simd.h promises.
#include <omp.h>

#include <cfloat>
#include <cmath>

#include "bench/kernels/cases.h"
#include "kernels/cpu/kernel.h"

namespace ridge::kbench {

namespace {

Floats absolute(Floats v) {
    for (float& x : v) x = std::fabs(x);
    return v;
}

simd::ChannelLayout channel_layout(const Problem& p, int64_t H, int64_t W) { return {p.N, p.C, H * W, p.block()}; }

size_t packed_size(const simd::ChannelLayout& l) { return size_t(l.N * l.batch_stride()); }

int64_t packed_index(const simd::ChannelLayout& l, int64_t n, int64_t c, int64_t s) {
    return n * l.batch_stride() + (c / l.block) * l.block_stride() + s * l.block + c % l.block;
}

// plain (N,C,HW) into the layout, zeros in the padding.
Floats pack(const Floats& plain, const simd::ChannelLayout& l) {
    Floats out(packed_size(l), 0.0f);
    for (int64_t n = 0; n < l.N; ++n)
        for (int64_t c = 0; c < l.C; ++c)
            for (int64_t s = 0; s < l.HW; ++s)
                out[size_t(packed_index(l, n, c, s))] = plain[size_t((n * l.C + c) * l.HW + s)];
    return out;
}

// The layout back to plain (N,C,HW); the padding's values go to `padding`.
Floats unpack(const Floats& packed, const simd::ChannelLayout& l, Floats& padding) {
    Floats out(size_t(l.N * l.C * l.HW));
    for (int64_t n = 0; n < l.N; ++n)
        for (int64_t c = 0; c < l.padded_channels(); ++c)
            for (int64_t s = 0; s < l.HW; ++s) {
                float v = packed[size_t(packed_index(l, n, c, s))];
                if (c < l.C) out[size_t((n * l.C + c) * l.HW + s)] = v;
                else padding.push_back(v);
            }
    return out;
}

Check compare_tampered(const std::string& what, Floats fast, const Floats& ref,
                       const std::vector<double>& bound, const Case::Tamper& tamper) {
    if (tamper) tamper(what, fast, bound);
    return compare(what, fast, ref, bound);
}

// The channel padding of an output must be zero exactly.
Check zero_padding(const std::string& what, const Floats& padding, const Case::Tamper& tamper) {
    return compare_tampered(what + " padding", padding, Floats(padding.size(), 0.0f), {}, tamper);
}

// ---- se-scale, se-gate-grad ---------------------------------------------------------------------

// x, dy (N,C,H,W)  s (N,C): the gate's operands, and both reference outputs.
struct SeData {
    Problem p;
    simd::ChannelLayout l;
    Shape xs, ss;
    Floats x, s, dy, xb, dyb;
    Floats y_ref;    // x * s
    Floats ds_ref;   // sum over H,W of dy * x
    std::vector<double> ds_bound;
    bool gate_grad = false;

    SeData(const Problem& p_, bool grad) : p(p_), l(channel_layout(p_, p_.H, p_.W)), gate_grad(grad) {
        xs = {p.N, p.C, p.H, p.W};
        ss = {p.N, p.C, 1, 1};
        size_t n = size_t(numel(xs));
        x = uniform(n, -1, 1, 1);
        s = uniform(size_t(p.N * p.C), 0, 1, 2);  // a sigmoid's output
        xb = pack(x, l);
        if (!grad) {
            y_ref.resize(n);
            reference(x, y_ref);
            return;
        }
        dy = uniform(n, -1, 1, 3);
        dyb = pack(dy, l);
        ds_ref.assign(size_t(p.N * p.C), 0.0f);
        gate_gradient(x, dy, ds_ref);
        Floats magnitude(ds_ref.size(), 0.0f);
        gate_gradient(absolute(x), absolute(dy), magnitude);
        for (size_t i = 0; i < ds_ref.size(); ++i) ds_bound.push_back(dot_bound(l.HW, magnitude[i], ds_ref[i]));
    }
    void reference(const Floats& xin, Floats& y) const {
        ref::Fwd f;
        f.in = {{xin.data(), xs}, {s.data(), ss}};
        f.y = {y.data(), xs};
        ref::forward(Mul{}, f);
    }
    // ds += sum dy * x (Mul's backward for its second input; y is not read).
    void gate_gradient(const Floats& xin, const Floats& dyin, Floats& ds) const {
        ref::Bwd b;
        b.in = {{xin.data(), xs}, {s.data(), ss}};
        b.y = {dyin.data(), xs};
        b.dy = {dyin.data(), xs};
        b.dx = {{nullptr, xs}, {ds.data(), ss}};
        ref::backward(Mul{}, b);
    }
};

class SeScale : public Case {
public:
    SeScale(std::shared_ptr<const SeData> d, SimdVariant v) : d_(std::move(d)), v_(std::move(v)), yb_(d_->xb.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.scale_channels(d_->xb.data(), d_->s.data(), yb_.data(), d_->l); }
    void run_reference() override { d_->reference(d_->x, y_ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(yb_.begin(), yb_.end(), NAN);
        run_fast();
        Floats padding;
        Floats y = unpack(yb_, d_->l, padding);
        // One float multiply per element: the reference's product is the same correctly rounded
        // float, so they must agree bit for bit.
        Check values = compare_tampered("y", y, d_->y_ref, {}, tamper);
        return merge(values, zero_padding("y", padding, tamper));
    }
    double flops() const override { return double(d_->l.N * d_->l.C * d_->l.HW); }
    double bytes() const override { return 4.0 * double(2 * packed_size(d_->l) + size_t(d_->l.N * d_->l.C)); }

private:
    std::shared_ptr<const SeData> d_;
    SimdVariant v_;
    Floats yb_;
    Floats y_ref_ = Floats(d_->x.size());
};

class SeGateGrad : public Case {
public:
    SeGateGrad(std::shared_ptr<const SeData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), ds_(d_->ds_ref.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.channel_dots(d_->dyb.data(), d_->xb.data(), ds_.data(), d_->l); }
    void run_reference() override {
        std::fill(ds_ref_.begin(), ds_ref_.end(), 0.0f);
        d_->gate_gradient(d_->x, d_->dy, ds_ref_);
    }
    Check check(const Tamper& tamper) override {
        std::fill(ds_.begin(), ds_.end(), NAN);
        run_fast();
        return compare_tampered("ds", ds_, d_->ds_ref, d_->ds_bound, tamper);
    }
    double flops() const override { return 2.0 * double(d_->l.N * d_->l.C * d_->l.HW); }
    double bytes() const override { return 4.0 * double(2 * packed_size(d_->l) + size_t(d_->l.N * d_->l.C)); }

private:
    std::shared_ptr<const SeData> d_;
    SimdVariant v_;
    Floats ds_;
    Floats ds_ref_ = Floats(d_->ds_ref.size());
};

// ---- dw-wgrad, dw-dgrad -----------------------------------------------------------------------------

// x (N,C,H,W)  dy (N,C,P,Q)  w, dw (C,1,R,S)  db (C)  dx (N,C,H,W)
struct DwData {
    Problem p;
    Conv2d op;
    simd::ChannelLayout lx, ly;
    Shape xs, ys, ws;
    Floats x, dy, w, b, xb, dyb;
    Floats dw_ref, db_ref, dx_ref;
    std::vector<double> dw_bound, db_bound, dx_bound;

    DwData(const Problem& p_, bool data_gradient)
        : p(p_), lx(channel_layout(p_, p_.H, p_.W)), ly(channel_layout(p_, p_.P(), p_.Q())) {
        op.K = p.C, op.kernel = Hw(p.R, p.S), op.stride = p.stride, op.pad = p.pad, op.G = p.C, op.bias = true;
        xs = {p.N, p.C, p.H, p.W};
        ys = {p.N, p.C, p.P(), p.Q()};
        ws = {p.C, 1, p.R, p.S};
        x = uniform(size_t(numel(xs)), -1, 1, 4);
        dy = uniform(size_t(numel(ys)), -1, 1, 5);
        w = uniform(size_t(numel(ws)), -1, 1, 6);
        b.assign(size_t(p.C), 0.0f);
        xb = pack(x, lx);
        dyb = pack(dy, ly);
        if (data_gradient) {
            dx_ref.assign(x.size(), 0.0f);
            data_gradient_of(dy, w, dx_ref);
            Floats dx_mag(x.size(), 0.0f);
            data_gradient_of(absolute(dy), absolute(w), dx_mag);
            // Each input's gradient sums one product per tap that reads it: R*S at most.
            for (size_t i = 0; i < x.size(); ++i) dx_bound.push_back(dot_bound(p.R * p.S, dx_mag[i], dx_ref[i]));
            return;
        }
        dw_ref.assign(w.size(), 0.0f);
        db_ref.assign(b.size(), 0.0f);
        gradients(x, dy, dw_ref, db_ref);
        Floats dw_mag(w.size(), 0.0f), db_mag(b.size(), 0.0f);
        gradients(absolute(x), absolute(dy), dw_mag, db_mag);
        // Each weight's gradient sums one product per output position (N*P*Q, the padding's
        // included as zeros); the bias's sums dy over the same positions.
        const int64_t terms = p.N * p.P() * p.Q();
        for (size_t i = 0; i < w.size(); ++i) dw_bound.push_back(dot_bound(terms, dw_mag[i], dw_ref[i]));
        for (size_t i = 0; i < b.size(); ++i) db_bound.push_back(dot_bound(terms, db_mag[i], db_ref[i]));
    }
    // dx += sum over the taps that read each input of dy * w.
    void data_gradient_of(const Floats& dyin, const Floats& win, Floats& dx) const {
        ref::Bwd bw;
        bw.in = {{x.data(), xs}};
        bw.y = {dyin.data(), ys};
        bw.dy = {dyin.data(), ys};
        bw.params = {win.data(), b.data()};
        bw.dx = {{dx.data(), xs}};
        ref::backward(op, bw);
    }
    // dw += sum of dy * x over the taps, db += sum of dy.
    void gradients(const Floats& xin, const Floats& dyin, Floats& dw,
                   Floats& db) const {
        ref::Bwd bw;
        bw.in = {{xin.data(), xs}};
        bw.y = {dyin.data(), ys};
        bw.dy = {dyin.data(), ys};
        bw.params = {w.data(), b.data()};
        bw.dx = {{nullptr, xs}};
        bw.dparams = {dw.data(), db.data()};
        ref::backward(op, bw);
    }
    // Abcde{B}a: channel block c / B, tap t, lane c % B, B the variant's lanes (depthwise_lanes:
    // the block, or in channels-last 16 or 8 by the instruction set it runs).
    size_t blocked_weight(int64_t c, int64_t t, int64_t B) const {
        return size_t(((c / B) * p.R * p.S + t) * B + c % B);
    }
};

class DwWgrad : public Case {
public:
    DwWgrad(std::shared_ptr<const DwData> d, SimdVariant v, int threads)
        : d_(std::move(d)), v_(std::move(v)), threads_(threads), shape_(d_->p.depthwise()),
          dwb_(size_t(d_->lx.padded_channels() * d_->p.R * d_->p.S)), db_(d_->b.size()),
          scratch_(v_.depthwise_wgrad_scratch(shape_, threads)) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        v_.depthwise_wgrad(d_->xb.data(), d_->dyb.data(), dwb_.data(), db_.data(), scratch_.data(), shape_, threads_);
    }
    void run_reference() override {
        std::fill(dw_ref_.begin(), dw_ref_.end(), 0.0f);
        std::fill(db_ref_.begin(), db_ref_.end(), 0.0f);
        d_->gradients(d_->x, d_->dy, dw_ref_, db_ref_);
    }
    Check check(const Tamper& tamper) override {
        std::fill(dwb_.begin(), dwb_.end(), NAN);
        std::fill(db_.begin(), db_.end(), NAN);
        run_fast();
        const int64_t RS = d_->p.R * d_->p.S, B = v_.depthwise_lanes(shape_), C = d_->p.C;
        Floats dw(size_t(C * RS)), padding;
        for (int64_t c = 0; c < d_->lx.padded_channels(); ++c)
            for (int64_t t = 0; t < RS; ++t) {
                float v = dwb_[d_->blocked_weight(c, t, B)];
                if (c < C) dw[size_t(c * RS + t)] = v;
                else padding.push_back(v);
            }
        Check weights = compare_tampered("dw", dw, d_->dw_ref, d_->dw_bound, tamper);
        Check bias = compare_tampered("db", db_, d_->db_ref, d_->db_bound, tamper);
        return merge(merge(weights, bias), zero_padding("dw", padding, tamper));
    }
    double flops() const override {
        const Problem& p = d_->p;
        return double(p.N * p.C * p.P() * p.Q()) * double(2 * p.R * p.S + 1);
    }
    double bytes() const override {
        return 4.0 * double(packed_size(d_->lx) + packed_size(d_->ly) + dwb_.size() + db_.size());
    }

private:
    std::shared_ptr<const DwData> d_;
    SimdVariant v_;
    int threads_;
    simd::Depthwise shape_;
    Floats dwb_, db_, scratch_;
    Floats dw_ref_ = Floats(d_->w.size()), db_ref_ = Floats(d_->b.size());
};

class DwDgrad : public Case {
public:
    DwDgrad(std::shared_ptr<const DwData> d, SimdVariant v, int threads)
        : d_(std::move(d)), v_(std::move(v)), threads_(threads), shape_(d_->p.depthwise()), dxb_(packed_size(d_->lx)) {
        // In the layout dw-wgrad writes them, its padding lanes zero.
        const int64_t RS = d_->p.R * d_->p.S, B = v_.depthwise_lanes(shape_);
        wb_.assign(size_t(d_->lx.padded_channels() * RS), 0.0f);
        for (int64_t c = 0; c < d_->p.C; ++c)
            for (int64_t t = 0; t < RS; ++t) wb_[d_->blocked_weight(c, t, B)] = d_->w[size_t(c * RS + t)];
    }
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.depthwise_dgrad(d_->dyb.data(), wb_.data(), dxb_.data(), false, shape_, threads_); }
    void run_reference() override {
        std::fill(dx_ref_.begin(), dx_ref_.end(), 0.0f);
        d_->data_gradient_of(d_->dy, d_->w, dx_ref_);
    }
    Check check(const Tamper& tamper) override {
        std::fill(dxb_.begin(), dxb_.end(), NAN);
        run_fast();
        Floats padding;
        Floats dx = unpack(dxb_, d_->lx, padding);
        return merge(compare_tampered("dx", dx, d_->dx_ref, d_->dx_bound, tamper), zero_padding("dx", padding, tamper));
    }
    double flops() const override {
        const Problem& p = d_->p;
        return 2.0 * double(p.N * p.C * p.P() * p.Q()) * double(p.R * p.S);
    }
    double bytes() const override { return 4.0 * double(packed_size(d_->ly) + packed_size(d_->lx) + wb_.size()); }

private:
    std::shared_ptr<const DwData> d_;
    SimdVariant v_;
    int threads_;
    simd::Depthwise shape_;
    Floats wb_, dxb_;
    Floats dx_ref_ = Floats(d_->x.size());
};

// ---- concat, concat-bn, concat-bn-norelu ----------------------------------------------------------------

// The float epsilon and Higham's gamma(k) = k*u / (1 - k*u): the relative error of k roundings.
constexpr double unit = 0x1p-24;
double rounding(int k) { return k * unit / (1 - k * unit); }

// x_i (N,C_i,H,W) plain and packed in y's layout  gamma, beta, mean, var, a, b (C)  y (N,C,H,W)
// Without the affine (and its ReLU) the concatenation alone: a copy, exact.
struct ConcatData {
    Problem p;
    bool affine, relu;
    simd::ChannelLayout l;
    std::vector<int64_t> channels;
    std::vector<Floats> x, xb;
    Floats gamma, beta, mean, var;
    Floats a, b;  // the kernel's scale and shift
    Floats y_ref;
    std::vector<double> y_bound;

    ConcatData(const Problem& p_, bool affine_, bool relu_)
        : p(p_), affine(affine_), relu(relu_), l(channel_layout(p_, p_.H, p_.W)), channels(concat_pieces(p_.C)) {
        const int64_t HW = p.H * p.W;
        unsigned seed = 20;
        for (int64_t ci : channels) {
            // Each piece in y's layout; channels-last: a block of the piece's own channels.
            const simd::ChannelLayout li{p.N, ci, HW, p.layout == "nhwc" ? ci : l.block};
            x.push_back(uniform(size_t(p.N * ci * HW), -1, 1, seed++));
            xb.push_back(pack(x.back(), li));
        }
        const size_t C = size_t(p.C);
        gamma = uniform(C, 0.5f, 1.5f, 7);
        beta = uniform(C, -0.5f, 0.5f, 8);
        mean = uniform(C, -0.5f, 0.5f, 9);
        var = uniform(C, 0.1f, 2.0f, 10);
        // As the executor folds them (engine/backend/onednn/layout.cpp): in double, rounded once.
        std::vector<double> A(C), B(C);
        for (size_t c = 0; c < C; ++c) {
            A[c] = double(gamma[c]) / std::sqrt(double(var[c]) + 1e-5);
            B[c] = double(beta[c]) - double(mean[c]) * A[c];
            a.push_back(float(A[c]));
            b.push_back(float(B[c]));
        }
        y_ref.resize(size_t(p.N * p.C * HW));
        reference(y_ref);
        if (!affine) return;
        // The kernel computes x*a + b from a and b each rounded once (u), with one or two
        // roundings more (an FMA, or a product and a sum): against the exact x*A + B that is at
        // most gamma(3)|x*A| + gamma(2)|B|. The reference rounds its double result once, u times
        // |x*A + B| <= |x*A| + |B|: gamma(4)|x*A| + gamma(3)|B| together, a few float steps of the
        // element's magnitude. Both sides' double arithmetic (the reference's
        // gamma*(x - mean)*istd + beta, the fold's A and B) errs by a few 2^-53 of
        // |x*A| + |mean*A| + |beta|; 2^-48 of that covers it. ReLU moves no two values further
        // apart, so the bound holds after it.
        for (int64_t n = 0; n < p.N; ++n)
            for (int64_t c = 0; c < p.C; ++c)
                for (int64_t s = 0; s < HW; ++s) {
                    const double xa = std::fabs(double(plain_x(n, c, s)) * A[size_t(c)]);
                    const double slack = 0x1p-48 * (xa + std::fabs(double(mean[size_t(c)]) * A[size_t(c)]) +
                                                     std::fabs(double(beta[size_t(c)])));
                    y_bound.push_back(rounding(4) * xa + rounding(3) * std::fabs(B[size_t(c)]) + slack);
                }
    }
    // x[n, c, s] of the concatenation, from its piece.
    float plain_x(int64_t n, int64_t c, int64_t s) const {
        size_t i = 0;
        while (c >= channels[i]) c -= channels[i++];
        return x[i][size_t((n * channels[i] + c) * p.H * p.W + s)];
    }
    // Concat, then BatchNorm in inference, then ReLU, each the reference's own op.
    void reference(Floats& y) const {
        const Shape ys = {p.N, p.C, p.H, p.W};
        Floats cat(y.size());
        ref::Fwd f;
        for (size_t i = 0; i < x.size(); ++i) f.in.push_back({x[i].data(), {p.N, channels[i], p.H, p.W}});
        f.y = {affine ? cat.data() : y.data(), ys};
        ref::forward(Concat{.dim = 1}, f);
        if (!affine) return;
        ref::Fwd bn;
        bn.in = {{cat.data(), ys}};
        bn.params = {gamma.data(), beta.data(), mean.data(), var.data()};
        bn.training = false;
        bn.y = {relu ? cat.data() : y.data(), ys};
        ref::forward(BatchNorm{}, bn);
        if (!relu) return;
        ref::Fwd act;
        act.in = {{cat.data(), ys}};
        act.y = {y.data(), ys};
        ref::forward(Activation{Activation::Fn::relu}, act);
    }
};

class ConcatBn : public Case {
public:
    ConcatBn(std::shared_ptr<const ConcatData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), yb_(packed_size(d_->l)) {
        for (const Floats& x : d_->xb) pieces_.push_back(x.data());
    }
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        const bool affine = d_->affine;
        v_.concat_affine(pieces_.data(), d_->channels.data(), int64_t(pieces_.size()), affine ? d_->a.data() : nullptr,
                         affine ? d_->b.data() : nullptr, d_->relu, yb_.data(), d_->l);
    }
    void run_reference() override { d_->reference(y_ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(yb_.begin(), yb_.end(), NAN);
        run_fast();
        Floats padding;
        Floats y = unpack(yb_, d_->l, padding);
        Check values = compare_tampered("y", y, d_->y_ref, d_->y_bound, tamper);
        return merge(values, zero_padding("y", padding, tamper));
    }
    // A multiply and an add per element with the affine; the ReLU's max is not counted.
    double flops() const override { return d_->affine ? 2.0 * double(d_->l.N * d_->l.C * d_->l.HW) : 0.0; }
    double bytes() const override {
        size_t in = 0;
        for (const Floats& x : d_->xb) in += x.size();
        return 4.0 * double(in + packed_size(d_->l) + (d_->affine ? 2 * size_t(d_->l.C) : 0));
    }

private:
    std::shared_ptr<const ConcatData> d_;
    SimdVariant v_;
    std::vector<const float*> pieces_;
    Floats yb_;
    Floats y_ref_ = Floats(d_->y_ref.size());
};

// ---- softmax-bwd --------------------------------------------------------------------------------

// y, dy, dx (rows, n): rows = N*C*H of n = W, as vit's attention weights (N, heads, T, T).
struct SoftmaxData {
    Problem p;
    int64_t rows, n;
    Shape shape;
    Floats y, dy;
    Floats dx_ref;
    std::vector<double> dx_bound;

    explicit SoftmaxData(const Problem& p_) : p(p_), rows(p_.N * p_.C * p_.H), n(p_.W) {
        shape = {p.N, p.C, p.H, p.W};
        // A real softmax output: logits spread like scaled attention scores, through the
        // reference's forward, so every row sums to 1.
        Floats logits = uniform(size_t(rows * n), -4, 4, 11);
        y.resize(logits.size());
        ref::Fwd f;
        f.in = {{logits.data(), shape}};
        f.y = {y.data(), shape};
        ref::forward(Softmax{.dim = -1}, f);
        dy = uniform(y.size(), -1, 1, 12);
        dx_ref.resize(y.size());
        reference(dx_ref);
        // The kernel's row sum D' of n products against the exact D: dot_bound(n, sum|dy*y|, D)
        // (Higham's any-order bound, with margin for the reference's double sum). Then
        // dx = y * (dy - D') rounds twice (the difference and the product): against the exact
        // y * (dy - D) that is |y| * |D' - D| * (1 + gamma(2)) + gamma(2) * |y * (dy - D)|; the
        // reference rounds that exact value once more (u), gamma(3) in all.
        for (int64_t r = 0; r < rows; ++r) {
            const float *yr = y.data() + r * n, *dyr = dy.data() + r * n;
            double dot = 0, magnitude = 0;
            for (int64_t i = 0; i < n; ++i) {
                dot += double(dyr[i]) * double(yr[i]);
                magnitude += std::fabs(double(dyr[i]) * double(yr[i]));
            }
            const double row = dot_bound(n, magnitude, dot);
            for (int64_t i = 0; i < n; ++i) {
                const double yi = std::fabs(double(yr[i]));
                dx_bound.push_back(yi * row * (1 + rounding(2)) +
                                   rounding(3) * std::fabs(yi * (double(dyr[i]) - dot)));
            }
        }
    }
    // dx = y * (dy - sum dy*y); the reference adds into dx, so it starts at zero.
    void reference(Floats& dx) const {
        std::fill(dx.begin(), dx.end(), 0.0f);
        ref::Bwd b;
        b.in = {{nullptr, shape}};
        b.y = {y.data(), shape};
        b.dy = {dy.data(), shape};
        b.dx = {{dx.data(), shape}};
        ref::backward(Softmax{.dim = -1}, b);
    }
};

class SoftmaxBwd : public Case {
public:
    SoftmaxBwd(std::shared_ptr<const SoftmaxData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), dx_(d_->y.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.softmax_backward(d_->y.data(), d_->dy.data(), dx_.data(), d_->rows, d_->n); }
    void run_reference() override { d_->reference(dx_ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(dx_.begin(), dx_.end(), NAN);
        run_fast();
        return compare_tampered("dx", dx_, d_->dx_ref, d_->dx_bound, tamper);
    }
    // Per element: a multiply-add into the row sum, a subtraction and a multiply.
    double flops() const override { return 4.0 * double(d_->y.size()); }
    double bytes() const override { return 4.0 * 3.0 * double(d_->y.size()); }

private:
    std::shared_ptr<const SoftmaxData> d_;
    SimdVariant v_;
    Floats dx_;
    Floats dx_ref_ = Floats(d_->y.size());
};

// ---- scale-strided -------------------------------------------------------------------------------

// Attention's q scaled out of the packed in_proj output, N images, C heads, H tokens, W per head:
// the packed x (N, H, 3, C, W) as in_proj writes it (q, k, v, each C heads), q its region (N, C,
// H, W) with strides (H*3*C*W, W, 3*C*W, 1), y plain. Forward y = s * q; the gradient the same
// kernel the other way, dq = s * dy into q's region of the packed gradient (the rest untouched).
struct StridedData {
    simd::Strided q, flat;
    Shape shape;
    float s;
    Floats packed, q_plain, y_ref, dq_ref;

    explicit StridedData(const Problem& p) : shape{p.N, p.C, p.H, p.W} {
        s = float(1.0 / std::sqrt(double(p.W)));
        const int64_t row = 3 * p.C * p.W;  // floats of one token in the packed tensor
        q.rank = flat.rank = 4;
        const int64_t dims[4] = {p.N, p.C, p.H, p.W}, qs[4] = {p.H * row, p.W, row, 1},
                      fs[4] = {p.C * p.H * p.W, p.H * p.W, p.W, 1};
        for (int i = 0; i < 4; ++i) q.dims[i] = flat.dims[i] = dims[i], q.strides[i] = qs[i], flat.strides[i] = fs[i];
        packed = uniform(size_t(p.N * p.H * row), -1, 1, 21);
        for (int64_t n = 0; n < p.N; ++n)
            for (int64_t c = 0; c < p.C; ++c)
                for (int64_t h = 0; h < p.H; ++h)
                    for (int64_t w = 0; w < p.W; ++w)
                        q_plain.push_back(packed[size_t(n * qs[0] + c * qs[1] + h * qs[2] + w)]);
        y_ref.resize(q_plain.size());
        ref::Fwd f;
        f.in = {{q_plain.data(), shape}};
        f.y = {y_ref.data(), shape};
        ref::forward(Scale{s}, f);
        // The gradient: dy = q_plain's values, each dq = s * dy at q's place in the packed buffer.
        dq_ref = packed;
        for (int64_t n = 0, i = 0; n < p.N; ++n)
            for (int64_t c = 0; c < p.C; ++c)
                for (int64_t h = 0; h < p.H; ++h)
                    for (int64_t w = 0; w < p.W; ++w, ++i)
                        dq_ref[size_t(n * qs[0] + c * qs[1] + h * qs[2] + w)] = y_ref[size_t(i)];
    }
};

class StridedScale : public Case {
public:
    StridedScale(std::shared_ptr<const StridedData> d, SimdVariant v, bool grad)
        : d_(std::move(d)), v_(std::move(v)), grad_(grad), out_(grad_ ? d_->packed : d_->y_ref) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        if (grad_) v_.scale_strided(d_->q_plain.data(), d_->flat, d_->s, out_.data(), d_->q);
        else v_.scale_strided(d_->packed.data(), d_->q, d_->s, out_.data(), d_->flat);
    }
    void run_reference() override {
        ref::Fwd f;
        f.in = {{d_->q_plain.data(), d_->shape}};
        f.y = {ref_.data(), d_->shape};
        ref::forward(Scale{d_->s}, f);
    }
    // One float multiply an element, as the reference's: equal bit for bit. The gradient's buffer
    // starts as the packed values, so a write outside q's region, or a missed one, shows too.
    Check check(const Tamper& tamper) override {
        if (!grad_) {
            std::fill(out_.begin(), out_.end(), NAN);
        } else {
            out_ = d_->packed;
            const simd::Strided& q = d_->q;
            for (int64_t n = 0; n < q.dims[0]; ++n)
                for (int64_t c = 0; c < q.dims[1]; ++c)
                    for (int64_t h = 0; h < q.dims[2]; ++h)
                        for (int64_t w = 0; w < q.dims[3]; ++w)
                            out_[size_t(n * q.strides[0] + c * q.strides[1] + h * q.strides[2] + w)] = NAN;
        }
        run_fast();
        return compare_tampered(grad_ ? "dq" : "y", out_, grad_ ? d_->dq_ref : d_->y_ref, {}, tamper);
    }
    double flops() const override { return double(d_->y_ref.size()); }
    double bytes() const override { return 4.0 * 2.0 * double(d_->y_ref.size()); }

private:
    std::shared_ptr<const StridedData> d_;
    SimdVariant v_;
    bool grad_;
    Floats out_;
    Floats ref_ = Floats(d_->y_ref.size());
};

// ---- softmax ------------------------------------------------------------------------------------

// x (N,C,H,W) plain, softmax along W: logits uniform in [-4, 4) as scaled attention scores, every
// 53rd -inf where rows are longer than 1 (a masked position, which gives 0), and in every 7th row
// (from the second) one logit 200 below the rest, past the -87 where the kernel takes e^(x - max)
// as 0, and one 36 below, a tiny value the kernel must still compute.
struct SoftmaxFwdData {
    int64_t rows, n;
    Shape shape;
    Floats x, y_ref;
    std::vector<double> y_bound;

    explicit SoftmaxFwdData(const Problem& p) : rows(p.N * p.C * p.H), n(p.W), shape{p.N, p.C, p.H, p.W} {
        x = uniform(size_t(rows * n), -4, 4, 17);
        // Past index 3, which the tamper test takes; not in rows of one, which would be all -inf
        // (softmax NaN, as the reference has it, and no bound to check against).
        if (n > 1)
            for (size_t i = 5; i < x.size(); i += 53) x[i] = -INFINITY;
        for (int64_t r = 1; r < rows; r += 7) {
            x[size_t(r * n + n / 3)] = -40.0f;
            x[size_t(r * n + n / 2)] = -204.0f;
        }
        y_ref.resize(x.size());
        reference(y_ref);
        // The kernel's t = x - max rounds (relative u of |t|, which e^t turns into an error of
        // |t| u), e^t is a few ulp off, the row's sum of n positive terms is within gamma(n) and
        // its terms carry their own |t| u, 1 / sum and the product round once each: of y,
        // (|t| + the row's largest finite |t| above -87) u + gamma(n + 8), plus the reference's
        // rounding, plus 2^-147 for roundings among the subnormals, plus e^-87 / sum (below
        // 1.6e-38) where the kernel takes e^t as 0.
        for (int64_t r = 0; r < rows; ++r) {
            const float* xr = x.data() + r * n;
            const double m = *std::max_element(xr, xr + n);
            double widest = 0;
            for (int64_t i = 0; i < n; ++i)
                if (xr[i] - m >= -87) widest = std::max(widest, m - xr[i]);
            for (int64_t i = 0; i < n; ++i) {
                const double t = double(xr[i]) - m, y = std::fabs(double(y_ref[size_t(r * n + i)]));
                double b = y * ((std::isfinite(t) ? -t : 0) * unit + widest * unit + rounding(int(n) + 8)) +
                           unit * y + 0x1p-147;
                if (t < -87) b += 2e-38;
                y_bound.push_back(b);
            }
        }
    }
    void reference(Floats& y) const {
        ref::Fwd f;
        f.in = {{x.data(), shape}};
        f.y = {y.data(), shape};
        ref::forward(Softmax{.dim = -1}, f);
    }
};

class SoftmaxFwd : public Case {
public:
    SoftmaxFwd(std::shared_ptr<const SoftmaxFwdData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), y_(d_->x.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.softmax_forward(d_->x.data(), y_.data(), d_->rows, d_->n); }
    void run_reference() override { d_->reference(ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(y_.begin(), y_.end(), NAN);
        run_fast();
        return compare_tampered("y", y_, d_->y_ref, d_->y_bound, tamper);
    }
    // Per element: a comparison for the max, a subtraction, the exp (counted as one), an add into
    // the sum and a multiply.
    double flops() const override { return 5.0 * double(d_->x.size()); }
    double bytes() const override { return 4.0 * 2.0 * double(d_->x.size()); }

private:
    std::shared_ptr<const SoftmaxFwdData> d_;
    SimdVariant v_;
    Floats y_;
    Floats ref_ = Floats(d_->x.size());
};

// ---- silu, silu-bwd, gelu, gelu-bwd --------------------------------------------------------------

// x, dy, y, dx (N,C,H,W) plain: the kernels are elementwise, so the layout does not matter.
// x spans [-12, 12], where sigmoid goes from 6e-6 to 1 - 6e-6 (and Phi from 2e-33); every 97th
// value is ten times that, past |x| = 87, where the SiLU kernels take e^-|x| as 0 and GELU's Phi
// is 0 or 1; and four are +-1e30 and +-FLT_MAX, where SiLU and GELU are x or 0 and their
// gradients dy or 0.
struct ActData {
    Problem p;
    Activation::Fn fn;
    Shape shape;
    Floats x, dy;
    Floats ref;  // y or dx
    std::vector<double> bound;

    ActData(const Problem& p_, Activation::Fn f, bool grad) : p(p_), fn(f), shape{p_.N, p_.C, p_.H, p_.W} {
        x = uniform(size_t(numel(shape)), -12, 12, 21);
        for (size_t i = 0; i < x.size(); i += 97) x[i] *= 10;
        const float huge[] = {1e30f, -1e30f, FLT_MAX, -FLT_MAX};  // after index 3, which the tamper test takes
        for (size_t i = 0; i < 4 && 4 + i < x.size(); ++i) x[4 + i] = huge[i];
        dy = uniform(x.size(), -1, 1, 22);
        ref.resize(x.size());
        reference(grad, ref);
        for (size_t i = 0; i < x.size(); ++i)
            bound.push_back(fn == Activation::Fn::gelu ? gelu_bound(grad, i) : silu_bound(grad, i));
    }
    // The SiLU kernels' e^-|x| is a few ulp off (its polynomial after the range reduction, 2^k
    // exact); 1 + e, the division and the products round once each: gamma(8) of the magnitudes
    // (for the gradient of dy * s * (1 + |x| * (1 - s)), so a sum that cancels is covered), plus
    // the reference's own rounding, plus 2^-150 for each of those roundings that lands among the
    // subnormals (x near -87). Past -87 the kernel takes e^x as 0: an error below |x| e^x <= 87
    // e^-87 = 1.4e-36 in SiLU, |dy| (1 + |x|) e^x <= |dy| 1.5e-36 in its gradient.
    double silu_bound(bool grad, size_t i) const {
        const double v = x[i], sg = 1 / (1 + std::exp(-v));
        const double magnitude = grad ? std::fabs(double(dy[i])) * sg * (1 + std::fabs(v) * (1 - sg)) : std::fabs(v) * sg;
        double b = rounding(8) * magnitude + unit * std::fabs(double(ref[i])) + 0x1p-147;
        if (v < -87) b += (grad ? std::fabs(double(dy[i])) : 1.0) * 2e-36;
        return b;
    }
    // GELU's Phi from erf's approximation 7.1.26 of Abramowitz and Stegun: |error| <= 1.5e-7 in
    // erf, 7.5e-8 in Phi; the tail Phi(-|x|) = t q(t) e^(-x^2/2) / 2 takes gamma(12) of itself in
    // float (the division, the exp's few ulp, four FMAs, the products) and 1 - tail one rounding
    // of a number below 1 (u); all of it times |x| in x * Phi, |dy| in the gradient, whose
    // x * phi(x) takes gamma(8) of itself; the final products, the reference's rounding and
    // subnormal landings as above. Past x^2 / 2 = 87 the kernel takes e^(-x^2/2) as 0: below
    // 2e-38 * |x|, and |x| * phi(x) < 1e-36.
    double gelu_bound(bool grad, size_t i) const {
        const double v = x[i], tail = 0.5 * std::erfc(std::fabs(v) / std::sqrt(2.0));
        const double density = std::fabs(v) * std::exp(-v * v / 2) / 2.50662827463100050;  // sqrt(2 pi)
        const double scale = grad ? std::fabs(double(dy[i])) : std::fabs(v);
        double b = scale * (7.5e-8 + unit + rounding(12) * tail + (grad ? rounding(8) * density : 0.0)) +
                   rounding(2) * std::fabs(double(ref[i])) + 0x1p-147;
        if (v * v / 2 > 87) b += scale * 1e-36;
        return b;
    }
    void reference(bool grad, Floats& out) const {
        if (!grad) {
            ref::Fwd f;
            f.in = {{x.data(), shape}};
            f.y = {out.data(), shape};
            ref::forward(Activation{fn}, f);
            return;
        }
        // The reference adds into dx, so it starts at zero.
        std::fill(out.begin(), out.end(), 0.0f);
        ref::Bwd b;
        b.in = {{x.data(), shape}};
        b.y = {nullptr, shape};
        b.dy = {dy.data(), shape};
        b.dx = {{out.data(), shape}};
        ref::backward(Activation{fn}, b);
    }
};

class ActCase : public Case {
public:
    ActCase(std::shared_ptr<const ActData> d, SimdVariant v, bool grad)
        : d_(std::move(d)), v_(std::move(v)), grad_(grad), out_(d_->x.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        const int64_t n = int64_t(d_->x.size());
        const bool gelu = d_->fn == Activation::Fn::gelu;
        if (grad_) (gelu ? v_.gelu_backward : v_.silu_backward)(d_->x.data(), d_->dy.data(), out_.data(), n);
        else (gelu ? v_.gelu_forward : v_.silu_forward)(d_->x.data(), out_.data(), n);
    }
    void run_reference() override { d_->reference(grad_, ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(out_.begin(), out_.end(), NAN);
        run_fast();
        return compare_tampered(grad_ ? "dx" : "y", out_, d_->ref, d_->bound, tamper);
    }
    // As the cost model counts them (engine/ops/activation.cpp): SiLU 5 FLOPs an element forward
    // and 9 backward, GELU 5 and 11.
    double flops() const override {
        const bool gelu = d_->fn == Activation::Fn::gelu;
        return (grad_ ? (gelu ? 11.0 : 9.0) : 5.0) * double(d_->x.size());
    }
    double bytes() const override { return 4.0 * (grad_ ? 3.0 : 2.0) * double(d_->x.size()); }

private:
    std::shared_ptr<const ActData> d_;
    SimdVariant v_;
    bool grad_;
    Floats out_;
    Floats ref_ = Floats(d_->x.size());
};

// ---- gap-grad -----------------------------------------------------------------------------------

// dy (N,C,1,1)  dx (N,C,H,W) in the layout: global average pooling's gradient.
struct GapData {
    Problem p;
    simd::ChannelLayout l;
    Shape xs, ys;
    float k;
    Floats dy;
    Floats dx_ref;
    std::vector<double> dx_bound;

    explicit GapData(const Problem& p_) : p(p_), l(channel_layout(p_, p_.H, p_.W)) {
        xs = {p.N, p.C, p.H, p.W};
        ys = {p.N, p.C, 1, 1};
        const int64_t HW = p.H * p.W;
        k = 1.0f / float(HW);  // as the executor passes it (engine/backend/onednn/pool.cpp)
        dy = uniform(size_t(p.N * p.C), -1, 1, 13);
        dx_ref.resize(size_t(numel(xs)));
        reference(dx_ref);
        // The kernel rounds 1/HW, then k * dy; the reference rounds dy / HW once: gamma(3) of
        // |dy| / HW apart at most (exact where HW is a power of two).
        for (int64_t nc = 0; nc < p.N * p.C; ++nc)
            dx_bound.insert(dx_bound.end(), size_t(HW), rounding(3) * std::fabs(double(dy[size_t(nc)])) / double(HW));
    }
    void reference(Floats& dx) const {
        std::fill(dx.begin(), dx.end(), 0.0f);
        ref::Bwd b;
        b.in = {{nullptr, xs}};
        b.y = {nullptr, ys};
        b.dy = {dy.data(), ys};
        b.dx = {{dx.data(), xs}};
        ref::backward(AdaptiveAvgPool2d{Hw(1, 1)}, b);
    }
};

class GapGrad : public Case {
public:
    GapGrad(std::shared_ptr<const GapData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), dxb_(packed_size(d_->l)) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override { v_.broadcast_channels(d_->dy.data(), d_->k, dxb_.data(), d_->l); }
    void run_reference() override { d_->reference(dx_ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(dxb_.begin(), dxb_.end(), NAN);
        run_fast();
        Floats padding;
        Floats dx = unpack(dxb_, d_->l, padding);
        Check values = compare_tampered("dx", dx, d_->dx_ref, d_->dx_bound, tamper);
        return merge(values, zero_padding("dx", padding, tamper));
    }
    // One multiply per (image, channel); the rest is writing.
    double flops() const override { return double(d_->l.N * d_->l.C); }
    double bytes() const override { return 4.0 * double(packed_size(d_->l) + size_t(d_->l.N * d_->l.C)); }

private:
    std::shared_ptr<const GapData> d_;
    SimdVariant v_;
    Floats dxb_;
    Floats dx_ref_ = Floats(d_->dx_ref.size());
};

// ---- avg-pool, avg-pool-bwd, max-pool, max-pool-bwd ---------------------------------------------

// x (N,C,H,W)  dy (N,C,P,Q): pooling's operands (average pooling counting the padding, or max
// pooling), and the reference output of the direction asked for. Max pooling's gradient takes x
// too: its windows' maxima route dy.
struct PoolData {
    Problem p;
    Pool2d::Kind kind;
    simd::AvgPool avg;
    simd::MaxPool max;
    simd::ChannelLayout xl, yl;
    Shape xs, ys;
    Pool2d op;
    bool grad;
    Floats in, in_b;  // x, or dy for the gradient, plain and packed
    Floats x, x_b;    // x for max pooling's gradient
    Floats ref;       // y, or dx
    std::vector<double> bound;

    PoolData(const Problem& p_, Pool2d::Kind kind_, bool grad_)
        : p(p_), kind(kind_), avg(p_.avg_pool()), max(p_.max_pool()), xl(channel_layout(p_, p_.H, p_.W)),
          yl(channel_layout(p_, p_.P(), p_.Q())), grad(grad_) {
        xs = {p.N, p.C, p.H, p.W};
        ys = {p.N, p.C, p.P(), p.Q()};
        op = Pool2d{kind, Hw(p.R, p.S), Hw(p.stride, p.stride), Padding(p.pad), false, true};
        in = uniform(size_t(numel(grad ? ys : xs)), -1, 1, grad ? 18 : 17);
        in_b = pack(in, grad ? yl : xl);
        if (grad && kind == Pool2d::Kind::max) {
            x = uniform(size_t(numel(xs)), -1, 1, 17);
            x_b = pack(x, xl);
        }
        ref.resize(size_t(numel(grad ? xs : ys)));
        reference(in, ref);
        Floats magnitude(ref.size());
        reference(absolute(in), magnitude);
        // The kernel's sum of at most R*S terms (a window's, or the windows' holding an element),
        // rounded reciprocals of the counts and their products: R*S + 4 roundings at most; the
        // reference's backward adds its rounded quotients in float, as many again. A maximum is
        // one of x's values, exactly, and its gradient adds the same dy in the same order (the
        // windows row by row) as the reference.
        const int64_t terms = (grad ? 2 : 1) * p.R * p.S + 4;
        for (size_t i = 0; i < ref.size(); ++i)
            bound.push_back(kind == Pool2d::Kind::max ? 0.0 : dot_bound(terms, magnitude[i], ref[i]));
    }
    void reference(const Floats& from, Floats& out) const {
        if (!grad) {
            ref::Fwd f;
            f.in = {{from.data(), xs}};
            f.y = {out.data(), ys};
            ref::forward(op, f);
            return;
        }
        std::fill(out.begin(), out.end(), 0.0f);
        ref::Bwd b;
        b.in = {{kind == Pool2d::Kind::max ? x.data() : nullptr, xs}};
        b.y = {nullptr, ys};
        b.dy = {from.data(), ys};
        b.dx = {{out.data(), xs}};
        ref::backward(op, b);
    }
};

class PoolCase : public Case {
public:
    // Max pooling's gradient reads the positions its forward keeps: found here, once, so that the
    // backward is timed alone.
    PoolCase(std::shared_ptr<const PoolData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), out_b_(packed_size(d_->grad ? d_->xl : d_->yl)) {
        if (d_->grad && d_->kind == Pool2d::Kind::max) {
            Floats y(packed_size(d_->yl));
            positions_.resize(size_t(v_.max_pool_positions_size(d_->max)));
            v_.max_pool_argmax(d_->x_b.data(), y.data(), positions_.data(), d_->max);
        }
    }
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        if (d_->kind == Pool2d::Kind::max && d_->grad)
            v_.max_pool_backward(positions_.data(), d_->in_b.data(), out_b_.data(), d_->max);
        else if (d_->kind == Pool2d::Kind::max)
            v_.max_pool(d_->in_b.data(), out_b_.data(), d_->max);
        else if (d_->grad)
            v_.avg_pool_backward(d_->in_b.data(), out_b_.data(), d_->avg);
        else
            v_.avg_pool(d_->in_b.data(), out_b_.data(), d_->avg);
    }
    void run_reference() override { d_->reference(d_->in, ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(out_b_.begin(), out_b_.end(), NAN);
        run_fast();
        Floats padding;
        const char* what = d_->grad ? "dx" : "y";
        Floats out = unpack(out_b_, d_->grad ? d_->xl : d_->yl, padding);
        Check values = compare_tampered(what, out, d_->ref, d_->bound, tamper);
        return merge(values, zero_padding(what, padding, tamper));
    }
    // An add (or a maximum) per element of each window (R*S for each output), in either direction.
    double flops() const override { return double(d_->yl.N * d_->yl.C * d_->yl.HW * d_->p.R * d_->p.S); }
    double bytes() const override { return 4.0 * double(packed_size(d_->xl) + packed_size(d_->yl)); }

private:
    std::shared_ptr<const PoolData> d_;
    SimdVariant v_;
    Floats out_b_;
    std::vector<int32_t> positions_;
    Floats ref_ = Floats(d_->ref.size());
};

// ---- linear-row ---------------------------------------------------------------------------------

// x (N,C)  w (K,C)  b (K)  y (N,K): N rows through a linear layer (a classifier at batch N, or a
// squeeze-excitation's 1x1 conv on the pooled map). The kernel reads w in panels of 16 rows
// (AB16b16a: element (k, c) at k/16 panels of Cp*16 floats, then c*16 + k%16, with C and K padded to
// Cp and Kp by 16 with zeros).
struct LinearData {
    int64_t N, C, K;
    Floats x, w, b, w_panels;
    Floats y_ref;
    std::vector<double> y_bound;

    explicit LinearData(const Problem& p) : N(p.N), C(p.C), K(p.K) {
        x = uniform(size_t(N * C), -1, 1, 14);
        w = uniform(size_t(K * C), -0.05f, 0.05f, 15);
        b = uniform(size_t(K), -1, 1, 16);
        const int64_t Cp = (C + 15) / 16 * 16, Kp = (K + 15) / 16 * 16;
        w_panels.assign(size_t(Kp * Cp), 0.0f);
        for (int64_t k = 0; k < K; ++k)
            for (int64_t c = 0; c < C; ++c) w_panels[size_t(k / 16 * Cp * 16 + c * 16 + k % 16)] = w[size_t(k * C + c)];
        y_ref.resize(size_t(N * K));
        reference(x, w, b, y_ref);
        // C products and the bias: a dot product of C + 1 terms.
        Floats magnitude(size_t(N * K), 0.0f);
        reference(absolute(x), absolute(w), absolute(b), magnitude);
        for (size_t i = 0; i < y_ref.size(); ++i) y_bound.push_back(dot_bound(C + 1, magnitude[i], y_ref[i]));
    }
    void reference(const Floats& xin, const Floats& win, const Floats& bin,
                   Floats& y) const {
        ref::Fwd f;
        f.in = {{xin.data(), {N, C}}};
        f.params = {win.data(), bin.data()};
        f.y = {y.data(), {N, K}};
        ref::forward(Linear{K, true, C}, f);
    }
};

class LinearRow : public Case {
public:
    LinearRow(std::shared_ptr<const LinearData> d, SimdVariant v)
        : d_(std::move(d)), v_(std::move(v)), y_(d_->y_ref.size()) {}
    std::string variant() const override { return v_.isa; }
    void run_fast() override {
        v_.linear_panels(d_->x.data(), d_->C, d_->w_panels.data(), d_->b.data(), false, y_.data(), d_->N, d_->C, d_->K);
    }
    void run_reference() override { d_->reference(d_->x, d_->w, d_->b, ref_); }
    Check check(const Tamper& tamper) override {
        std::fill(y_.begin(), y_.end(), NAN);
        run_fast();
        return compare_tampered("y", y_, d_->y_ref, d_->y_bound, tamper);
    }
    double flops() const override { return 2.0 * double(d_->N * d_->K * d_->C); }
    // The weights (their padding too, which the kernel streams), x, b and y.
    double bytes() const override {
        return 4.0 * double(d_->w_panels.size() + size_t(d_->N * d_->C + d_->K + d_->N * d_->K));
    }

private:
    std::shared_ptr<const LinearData> d_;
    SimdVariant v_;
    Floats y_;
    Floats ref_ = Floats(d_->y_ref.size());
};

}  // namespace

std::vector<std::unique_ptr<Case>> make_cpu_cases(const Kernel& k, const Problem& p,
                                                  const std::vector<SimdVariant>& variants, int threads) {
    // The OpenMP-split kernels without a thread count of their own (scale_channels,
    // channel_dots) take the default.
    omp_set_num_threads(threads);
    std::vector<std::unique_ptr<Case>> out;
    if (k.name == "se-scale" || k.name == "se-gate-grad") {
        bool grad = k.name == "se-gate-grad";
        auto d = std::make_shared<const SeData>(p, grad);
        for (const SimdVariant& v : variants)
            out.push_back(grad ? std::unique_ptr<Case>(new SeGateGrad(d, v))
                               : std::unique_ptr<Case>(new SeScale(d, v)));
    } else if (k.name == "dw-wgrad") {
        auto d = std::make_shared<const DwData>(p, false);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<DwWgrad>(d, v, threads));
    } else if (k.name == "dw-dgrad") {
        auto d = std::make_shared<const DwData>(p, true);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<DwDgrad>(d, v, threads));
    } else if (k.name == "concat" || k.name == "concat-bn" || k.name == "concat-bn-norelu") {
        auto d = std::make_shared<const ConcatData>(p, k.name != "concat", k.name == "concat-bn");
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<ConcatBn>(d, v));
    } else if (k.name == "softmax") {
        auto d = std::make_shared<const SoftmaxFwdData>(p);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<SoftmaxFwd>(d, v));
    } else if (k.name == "softmax-bwd") {
        auto d = std::make_shared<const SoftmaxData>(p);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<SoftmaxBwd>(d, v));
    } else if (k.name == "silu" || k.name == "silu-bwd" || k.name == "gelu" || k.name == "gelu-bwd") {
        const bool grad = k.name.ends_with("-bwd");
        const auto fn = k.name.starts_with("gelu") ? Activation::Fn::gelu : Activation::Fn::silu;
        auto d = std::make_shared<const ActData>(p, fn, grad);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<ActCase>(d, v, grad));
    } else if (k.name == "scale-strided" || k.name == "scale-strided-bwd") {
        auto d = std::make_shared<const StridedData>(p);
        for (const SimdVariant& v : variants)
            out.push_back(std::make_unique<StridedScale>(d, v, k.name == "scale-strided-bwd"));
    } else if (k.name.starts_with("avg-pool") || k.name.starts_with("max-pool")) {
        const auto kind = k.name.starts_with("max-pool") ? Pool2d::Kind::max : Pool2d::Kind::avg;
        auto d = std::make_shared<const PoolData>(p, kind, k.name.ends_with("-bwd"));
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<PoolCase>(d, v));
    } else if (k.name == "gap-grad") {
        auto d = std::make_shared<const GapData>(p);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<GapGrad>(d, v));
    } else if (k.name == "linear-row") {
        auto d = std::make_shared<const LinearData>(p);
        for (const SimdVariant& v : variants) out.push_back(std::make_unique<LinearRow>(d, v));
    } else {
        throw std::logic_error("make_cpu_cases: " + k.name + " is not a CPU kernel");
    }
    return out;
}

}  // namespace ridge::kbench
