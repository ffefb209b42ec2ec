// Reference learned tokens of a vision transformer.
// ClassToken:    x (N,T,D)  token (D)  y (N,T+1,D): y[n,0,:] = token, y[n,1+t,:] = x[n,t,:]
// PosEmbedding:  x (N,T,D)  e (T,D)    y (N,T,D):   y[n,t,d] = x[n,t,d] + e[t,d]
#include "kernels/cpu/ops.h"

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const ClassToken&, const FwdT<Real, Acc>& f) {
    const Shape& s = f.in[0].shape;
    const int64_t N = s[0], T = s[1], D = s[2];
    const Real* token = f.params[0];
    for (int64_t n = 0; n < N; ++n) {
        Real* y = f.y.p + n * (T + 1) * D;
        for (int64_t d = 0; d < D; ++d) y[d] = token[d];                          // row 0: the token
        for (int64_t e = 0; e < T * D; ++e) y[D + e] = f.in[0].p[n * T * D + e];  // rows 1..T: x
    }
}

template <class Real, class Acc>
void bwd(const ClassToken&, const BwdT<Real, Acc>& b) {
    const Shape& s = b.in[0].shape;
    const int64_t N = s[0], T = s[1], D = s[2];
    // dtoken[d] += sum over n of dy[n,0,d]
    if (!b.dparams.empty() && b.dparams[0])
        for (int64_t d = 0; d < D; ++d) {
            Acc acc = 0;
            for (int64_t n = 0; n < N; ++n) acc += b.dy.p[n * (T + 1) * D + d];
            b.dparams[0][d] += Real(acc);
        }
    // dx[n,t,d] += dy[n,1+t,d]
    if (Real* dx = b.dx[0].p)
        for (int64_t n = 0; n < N; ++n)
            for (int64_t e = 0; e < T * D; ++e) dx[n * T * D + e] += b.dy.p[n * (T + 1) * D + D + e];
}

template <class Real, class Acc>
void fwd(const PosEmbedding&, const FwdT<Real, Acc>& f) {
    const Shape& s = f.in[0].shape;
    const int64_t N = s[0], TD = s[1] * s[2];
    const Real* emb = f.params[0];
    // y[n,t,d] = x[n,t,d] + e[t,d]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t e = 0; e < TD; ++e) f.y.p[n * TD + e] = f.in[0].p[n * TD + e] + emb[e];
}

template <class Real, class Acc>
void bwd(const PosEmbedding&, const BwdT<Real, Acc>& b) {
    const Shape& s = b.in[0].shape;
    const int64_t N = s[0], TD = s[1] * s[2];
    // dx[n,t,d] += dy[n,t,d]
    if (Real* dx = b.dx[0].p)
        for (int64_t e = 0; e < N * TD; ++e) dx[e] += b.dy.p[e];
    // de[t,d] += sum over n of dy[n,t,d]
    if (!b.dparams.empty() && b.dparams[0])
        for (int64_t e = 0; e < TD; ++e) {
            Acc acc = 0;
            for (int64_t n = 0; n < N; ++n) acc += b.dy.p[n * TD + e];
            b.dparams[0][e] += Real(acc);
        }
}

RIDGE_REF_INSTANTIATE(ClassToken);
RIDGE_REF_INSTANTIATE(PosEmbedding);

}  // namespace ridge::ref
