#pragma once
// The calling convention of the CPU reference kernels (kernels/cpu/<op>.cpp): plain, readable
// loops over dense row-major fp32 tensors in the shapes of engine/ops/, forward and backward for
// every op. They are the oracle the library backends are checked against, and the fallback for
// the few ops a library lacks; nothing else should call them on a hot path.
#include <vector>

#include "engine/op.h"

namespace ridge::ref {

struct View {
    float* p = nullptr;
    Shape shape;
};
struct CView {
    const float* p = nullptr;
    Shape shape;
};

// One layer's forward: y = op(in, params). params in op_params() order (batchnorm's running
// statistics included). training: batchnorm uses batch statistics; otherwise its running ones.
struct Fwd {
    std::vector<CView> in;
    std::vector<const float*> params;
    View y;
    bool training = false;
};

// One layer's backward after a training forward. Gradients are ADDED into dx and dparams (the
// caller zeroes them), so a tensor read by several layers collects each one's share. A null dx[i].p
// or dparams[j] means that gradient is not wanted and is not computed.
struct Bwd {
    std::vector<CView> in;
    CView y;   // the forward's output
    CView dy;  // gradient of the loss with respect to y
    std::vector<const float*> params;
    std::vector<View> dx;          // one per input
    std::vector<float*> dparams;   // one per op_params() entry (null for running statistics)
};

void forward(const Op& op, const Fwd& f);
void backward(const Op& op, const Bwd& b);

// Softmax cross-entropy of logits (N,K) against labels, averaged over N; writes dlogits (N,K).
float softmax_cross_entropy(CView logits, const std::vector<int32_t>& labels, View dlogits);

}  // namespace ridge::ref
