#pragma once
// One forward and one backward per op, each defined in its family's file (conv2d.cpp, pool.cpp,
// ...); dispatch.cpp checks the shapes and visits the Op onto them. Private to kernels/cpu/:
// callers use ref::forward / ref::backward of kernel.h.
//
// Every backward ADDS into the gradients it is given and skips those whose pointer is null.
// Long sums (dot products, statistics, reductions over a batch or a broadcast) are accumulated
// in double, so the oracle's own rounding stays far below the tolerances of the tests that use it.
#include <vector>

#include "kernels/cpu/kernel.h"

namespace ridge::ref {

void fwd(const Conv2d& op, const Fwd& f);
void bwd(const Conv2d& op, const Bwd& b);
void fwd(const Linear& op, const Fwd& f);
void bwd(const Linear& op, const Bwd& b);
void fwd(const Matmul& op, const Fwd& f);
void bwd(const Matmul& op, const Bwd& b);
void fwd(const BatchNorm& op, const Fwd& f);
void bwd(const BatchNorm& op, const Bwd& b);
void fwd(const LayerNorm& op, const Fwd& f);
void bwd(const LayerNorm& op, const Bwd& b);
void fwd(const Activation& op, const Fwd& f);
void bwd(const Activation& op, const Bwd& b);
void fwd(const Pool2d& op, const Fwd& f);
void bwd(const Pool2d& op, const Bwd& b);
void fwd(const AdaptiveAvgPool2d& op, const Fwd& f);
void bwd(const AdaptiveAvgPool2d& op, const Bwd& b);
void fwd(const Add& op, const Fwd& f);
void bwd(const Add& op, const Bwd& b);
void fwd(const Mul& op, const Fwd& f);
void bwd(const Mul& op, const Bwd& b);
void fwd(const Scale& op, const Fwd& f);
void bwd(const Scale& op, const Bwd& b);
void fwd(const LayerScale& op, const Fwd& f);
void bwd(const LayerScale& op, const Bwd& b);
void fwd(const Softmax& op, const Fwd& f);
void bwd(const Softmax& op, const Bwd& b);
void fwd(const Concat& op, const Fwd& f);
void bwd(const Concat& op, const Bwd& b);
void fwd(const ChannelShuffle& op, const Fwd& f);
void bwd(const ChannelShuffle& op, const Bwd& b);
void fwd(const Flatten& op, const Fwd& f);
void bwd(const Flatten& op, const Bwd& b);
void fwd(const Reshape& op, const Fwd& f);
void bwd(const Reshape& op, const Bwd& b);
void fwd(const Permute& op, const Fwd& f);
void bwd(const Permute& op, const Bwd& b);
void fwd(const Slice& op, const Fwd& f);
void bwd(const Slice& op, const Bwd& b);
void fwd(const Select& op, const Fwd& f);
void bwd(const Select& op, const Bwd& b);
void fwd(const Dropout& op, const Fwd& f);
void bwd(const Dropout& op, const Bwd& b);
void fwd(const StochasticDepth& op, const Fwd& f);
void bwd(const StochasticDepth& op, const Bwd& b);
void fwd(const ClassToken& op, const Fwd& f);
void bwd(const ClassToken& op, const Bwd& b);
void fwd(const PosEmbedding& op, const Fwd& f);
void bwd(const PosEmbedding& op, const Bwd& b);

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

// dst[i] += src[i]: how a gradient collected in a double scratch reaches its float tensor.
inline void add_into(float* dst, const std::vector<double>& src) {
    for (size_t i = 0; i < src.size(); ++i) dst[i] += float(src[i]);
}

// The identity and the views (copies here): y = x forward, dx += dy backward.
inline void copy_through(const Fwd& f) {
    for (int64_t e = 0; e < numel(f.y.shape); ++e) f.y.p[e] = f.in[0].p[e];
}
inline void add_through(const Bwd& b) {
    if (!b.dx[0].p) return;
    for (int64_t e = 0; e < numel(b.dy.shape); ++e) b.dx[0].p[e] += b.dy.p[e];
}

}  // namespace ridge::ref
