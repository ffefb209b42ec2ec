#pragma once
// One forward and one backward per op, each defined in its family's file (conv2d.cpp, pool.cpp,
// ...); dispatch.cpp checks the shapes and visits the Op onto them. Private to kernels/cpu/:
// callers use ref::forward / ref::backward of kernel.h.
//
// Every backward ADDS into the gradients it is given and skips those whose pointer is null.
// Long sums (dot products, statistics, reductions over a batch or a broadcast) are accumulated
// in Acc: double for the oracle, so its own rounding stays far below the tolerances of the tests
// that use it; float for the float-sums yardstick (kernel.h). Each kernel is a template on the
// element type Real and Acc, instantiated by RIDGE_REF_INSTANTIATE in its family's file.
#include <vector>

#include "kernels/cpu/kernel.h"

namespace ridge::ref {

template <class Real, class Acc>
void fwd(const Conv2d& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Conv2d& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Linear& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Linear& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Matmul& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Matmul& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const BatchNorm& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const BatchNorm& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const LayerNorm& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const LayerNorm& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Activation& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Activation& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Pool2d& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Pool2d& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const AdaptiveAvgPool2d& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const AdaptiveAvgPool2d& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Add& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Add& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Mul& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Mul& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Scale& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Scale& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const LayerScale& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const LayerScale& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Softmax& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Softmax& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Concat& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Concat& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const ChannelShuffle& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const ChannelShuffle& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Flatten& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Flatten& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Reshape& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Reshape& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Permute& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Permute& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Slice& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Slice& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Select& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Select& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const Dropout& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const Dropout& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const StochasticDepth& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const StochasticDepth& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const ClassToken& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const ClassToken& op, const BwdT<Real, Acc>& b);
template <class Real, class Acc>
void fwd(const PosEmbedding& op, const FwdT<Real, Acc>& f);
template <class Real, class Acc>
void bwd(const PosEmbedding& op, const BwdT<Real, Acc>& b);

// A tensor seen around one of its dimensions as (outer, n, inner): element (o, i, j) lies at
// (o*n + i)*inner + j. Softmax, layernorm, concat, slice and select all walk tensors this way.
struct Around {
    int64_t outer = 1, n = 1, inner = 1;
};
inline Around around(const Shape& s, int dim) {
    Around a;
    for (int i = 0; i < int(s.size()); ++i) {
        if (i < dim) a.outer *= s[i];
        else if (i == dim) a.n = s[i];
        else a.inner *= s[i];
    }
    return a;
}

// dst[i] += src[i]: how a gradient collected in a scratch of the accumulation type reaches its tensor.
template <class Real, class Acc>
void add_into(Real* dst, const std::vector<Acc>& src) {
    for (size_t i = 0; i < src.size(); ++i) dst[i] += Real(src[i]);
}

// The identity and the views (copies here): y = x forward, dx += dy backward.
template <class Real, class Acc>
void copy_through(const FwdT<Real, Acc>& f) {
    for (int64_t e = 0; e < numel(f.y.shape); ++e) f.y.p[e] = f.in[0].p[e];
}
template <class Real, class Acc>
void add_through(const BwdT<Real, Acc>& b) {
    if (!b.dx[0].p) return;
    for (int64_t e = 0; e < numel(b.dy.shape); ++e) b.dx[0].p[e] += b.dy.p[e];
}

// The kernels of one op for the three element and accumulation types of kernel.h, in the file
// that defines its templates.
#define RIDGE_REF_INSTANTIATE(OP)                                                  \
    template void fwd<float, double>(const OP&, const FwdT<float, double>&);      \
    template void fwd<double, double>(const OP&, const FwdT<double, double>&);    \
    template void fwd<float, float>(const OP&, const FwdT<float, float>&);        \
    template void bwd<float, double>(const OP&, const BwdT<float, double>&);      \
    template void bwd<double, double>(const OP&, const BwdT<double, double>&);    \
    template void bwd<float, float>(const OP&, const BwdT<float, float>&)

}  // namespace ridge::ref
