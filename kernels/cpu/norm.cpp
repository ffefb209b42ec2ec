// Reference normalizations with PyTorch's semantics and epsilon 1e-5 (executor.h).
// BatchNorm:  x (N,C,S)  gamma, beta, running_mean, running_var (C)  y (N,C,S); S is the product of
//             the spatial dimensions (1 for an (N,C) input). Training normalizes with the batch's
//             statistics (biased variance) and leaves the running ones alone.
// LayerNorm:  x (O,D,I)  gamma, beta (D)  y (O,D,I): each of the O*I rows of D elements, D being
//             the normalized dimension and O (I) the product of those before (after) it.
#include <cmath>

#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

constexpr double eps = 1e-5;

template <class Acc>
struct Stats {
    std::vector<Acc> mean, istd;  // per channel: mean and 1/sqrt(var + eps)
};

// Batch statistics of x seen as (N,C,S): two passes, mean first, then the biased variance.
template <class Acc, class Real>
Stats<Acc> batch_stats(const Real* x, int64_t N, int64_t C, int64_t S) {
    Stats<Acc> st{std::vector<Acc>(size_t(C)), std::vector<Acc>(size_t(C))};
    const Acc M = Acc(N * S);
    for (int64_t c = 0; c < C; ++c) {
        Acc sum = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) sum += x[(n * C + c) * S + s];
        const Acc mean = sum / M;
        Acc sq = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) {
                Acc d = x[(n * C + c) * S + s] - mean;
                sq += d * d;
            }
        st.mean[c] = mean;
        st.istd[c] = Acc(1.0 / std::sqrt(sq / M + eps));
    }
    return st;
}

// Statistics of one layernorm row of D elements spaced `stride` apart.
template <class Real, class Acc>
void row_stats(const Real* x, int64_t D, int64_t stride, Acc& mean, Acc& istd) {
    Acc sum = 0;
    for (int64_t i = 0; i < D; ++i) sum += x[i * stride];
    mean = sum / Acc(D);
    Acc sq = 0;
    for (int64_t i = 0; i < D; ++i) {
        Acc d = x[i * stride] - mean;
        sq += d * d;
    }
    istd = Acc(1.0 / std::sqrt(sq / Acc(D) + eps));
}

}  // namespace

template <class Real, class Acc>
void fwd(const BatchNorm&, const FwdT<Real, Acc>& f) {
    const Shape& xs = f.in[0].shape;
    const int64_t N = xs[0], C = xs[1], S = numel(xs) / (N * C);
    const Real* x = f.in[0].p;
    const Real *gamma = f.params[0], *beta = f.params[1];
    Stats<Acc> st;
    if (f.training) {
        st = batch_stats<Acc>(x, N, C, S);
    } else {
        const Real *rmean = f.params[2], *rvar = f.params[3];
        for (int64_t c = 0; c < C; ++c) {
            st.mean.push_back(rmean[c]);
            st.istd.push_back(Acc(1.0 / std::sqrt(double(rvar[c]) + eps)));
        }
    }
    // y[n,c,s] = gamma[c] * (x[n,c,s] - mean[c]) * istd[c] + beta[c]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t c = 0; c < C; ++c)
            for (int64_t s = 0; s < S; ++s) {
                int64_t i = (n * C + c) * S + s;
                f.y.p[i] = Real(gamma[c] * (x[i] - st.mean[c]) * st.istd[c] + beta[c]);
            }
}

template <class Real, class Acc>
void bwd(const BatchNorm&, const BwdT<Real, Acc>& b) {
    const Shape& xs = b.in[0].shape;
    const int64_t N = xs[0], C = xs[1], S = numel(xs) / (N * C);
    const Acc M = Acc(N * S);
    const Real *x = b.in[0].p, *dy = b.dy.p, *gamma = b.params[0];
    Real* dgamma = b.dparams.empty() ? nullptr : b.dparams[0];
    Real* dbeta = b.dparams.size() > 1 ? b.dparams[1] : nullptr;
    const Stats<Acc> st = batch_stats<Acc>(x, N, C, S);
    for (int64_t c = 0; c < C; ++c) {
        // The two sums over the channel: sum dy and sum dy * xhat, xhat = (x - mean) * istd.
        Acc sdy = 0, sdyx = 0;
        for (int64_t n = 0; n < N; ++n)
            for (int64_t s = 0; s < S; ++s) {
                int64_t i = (n * C + c) * S + s;
                sdy += dy[i];
                sdyx += dy[i] * (x[i] - st.mean[c]) * st.istd[c];
            }
        if (dgamma) dgamma[c] += Real(sdyx);
        if (dbeta) dbeta[c] += Real(sdy);
        // dx = gamma * istd * (dy - (sum dy + xhat * sum dy*xhat) / M): the batch statistics
        // depend on x too, hence the two subtracted means.
        if (Real* dx = b.dx[0].p)
            for (int64_t n = 0; n < N; ++n)
                for (int64_t s = 0; s < S; ++s) {
                    int64_t i = (n * C + c) * S + s;
                    Acc xhat = (x[i] - st.mean[c]) * st.istd[c];
                    dx[i] += Real(gamma[c] * st.istd[c] * (dy[i] - (sdy + xhat * sdyx) / M));
                }
    }
}

template <class Real, class Acc>
void fwd(const LayerNorm& op, const FwdT<Real, Acc>& f) {
    const Shape& xs = f.in[0].shape;
    const Around a = around(xs, normalize_dim(op.dim, xs.size()));
    const Real *gamma = f.params[0], *beta = f.params[1];
    // For each row (o, j): y[o,i,j] = gamma[i] * (x[o,i,j] - mean) * istd + beta[i]
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t j = 0; j < a.inner; ++j) {
            const Real* x = f.in[0].p + o * a.n * a.inner + j;
            Real* y = f.y.p + o * a.n * a.inner + j;
            Acc mean, istd;
            row_stats(x, a.n, a.inner, mean, istd);
            for (int64_t i = 0; i < a.n; ++i)
                y[i * a.inner] = Real(gamma[i] * (x[i * a.inner] - mean) * istd + beta[i]);
        }
}

template <class Real, class Acc>
void bwd(const LayerNorm& op, const BwdT<Real, Acc>& b) {
    const Shape& xs = b.in[0].shape;
    const Around a = around(xs, normalize_dim(op.dim, xs.size()));
    const Acc D = Acc(a.n);
    const Real* gamma = b.params[0];
    Real* dgamma = b.dparams.empty() ? nullptr : b.dparams[0];
    Real* dbeta = b.dparams.size() > 1 ? b.dparams[1] : nullptr;
    // dgamma[i], dbeta[i] collect sum dy*xhat and sum dy over all O*I rows.
    std::vector<Acc> sg(size_t(a.n), 0), sb(size_t(a.n), 0);
    for (int64_t o = 0; o < a.outer; ++o)
        for (int64_t j = 0; j < a.inner; ++j) {
            const int64_t base = o * a.n * a.inner + j;
            const Real *x = b.in[0].p + base, *dy = b.dy.p + base;
            Acc mean, istd;
            row_stats(x, a.n, a.inner, mean, istd);
            // With g = dy * gamma: dx = istd * (g - mean(g) - xhat * mean(g * xhat))
            Acc sum_g = 0, sum_gx = 0;
            for (int64_t i = 0; i < a.n; ++i) {
                Acc xhat = (x[i * a.inner] - mean) * istd, d = dy[i * a.inner];
                sum_g += d * gamma[i];
                sum_gx += d * gamma[i] * xhat;
                sg[i] += d * xhat;
                sb[i] += d;
            }
            if (Real* dx = b.dx[0].p)
                for (int64_t i = 0; i < a.n; ++i) {
                    Acc xhat = (x[i * a.inner] - mean) * istd;
                    Acc g = Acc(dy[i * a.inner]) * gamma[i];
                    dx[base + i * a.inner] += Real(istd * (g - sum_g / D - xhat * sum_gx / D));
                }
        }
    if (dgamma) add_into(dgamma, sg);
    if (dbeta) add_into(dbeta, sb);
}

RIDGE_REF_INSTANTIATE(BatchNorm);
RIDGE_REF_INSTANTIATE(LayerNorm);

}  // namespace ridge::ref
