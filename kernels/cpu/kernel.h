#pragma once
// The calling convention of the CPU reference kernels (kernels/cpu/<op>.cpp): plain, readable
// loops over dense row-major tensors in the shapes of engine/ops/, forward and backward for every
// op. They are the oracle the library backends are checked against, and the fallback for the few
// ops a library lacks; nothing else should call them on a hot path.
//
// Every kernel is one source instantiated three times, on the element type Real and the type Acc
// its sums are accumulated in: float elements with double sums (what the executors run: the
// oracle, rounded once per output element), double with double (the yardstick tests measure float
// backends against), and float with float sums (the "float sums" reference: as a float32 library
// would round, in the least accurate order; tests use its distance from double as the size of
// float32 rounding).
#include <vector>

#include "engine/op.h"

namespace ridge::ref {

template <class Real>
struct ViewT {
    Real* p = nullptr;
    Shape shape;
};
template <class Real>
struct CViewT {
    const Real* p = nullptr;
    Shape shape;
};

// One layer's forward: y = op(in, params). params in op_params() order (batchnorm's running
// statistics included). training: batchnorm uses batch statistics; otherwise its running ones.
template <class Real, class Acc = double>
struct FwdT {
    std::vector<CViewT<Real>> in;
    std::vector<const Real*> params;
    ViewT<Real> y;
    bool training = false;
};

// One layer's backward after a training forward. Gradients are ADDED into dx and dparams (the
// caller zeroes them), so a tensor read by several layers collects each one's share. A null dx[i].p
// or dparams[j] means that gradient is not wanted and is not computed.
template <class Real, class Acc = double>
struct BwdT {
    std::vector<CViewT<Real>> in;
    CViewT<Real> y;   // the forward's output
    CViewT<Real> dy;  // gradient of the loss with respect to y
    std::vector<const Real*> params;
    std::vector<ViewT<Real>> dx;        // one per input
    std::vector<Real*> dparams;         // one per op_params() entry (null for running statistics)
};

using View = ViewT<float>;
using CView = CViewT<float>;
using Fwd = FwdT<float>;
using Bwd = BwdT<float>;

void forward(const Op& op, const Fwd& f);
void backward(const Op& op, const Bwd& b);
void forward(const Op& op, const FwdT<double>& f);
void backward(const Op& op, const BwdT<double>& b);
void forward(const Op& op, const FwdT<float, float>& f);
void backward(const Op& op, const BwdT<float, float>& b);

// Softmax cross-entropy of logits (N,K) against labels, averaged over N; writes dlogits (N,K).
float softmax_cross_entropy(CView logits, const std::vector<int32_t>& labels, View dlogits);
double softmax_cross_entropy(CViewT<double> logits, const std::vector<int32_t>& labels, ViewT<double> dlogits);

}  // namespace ridge::ref
