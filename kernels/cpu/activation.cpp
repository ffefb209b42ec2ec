// Reference elementwise nonlinearities with PyTorch's definitions and its choice of derivative at
// the kinks (0 at relu's 0, at relu6's 0 and 6, at hardsigmoid's -3 and 3).
// x (E)  y (E): any shape, seen as E elements. Computed in double, rounded once to the element type.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

using Fn = Activation::Fn;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Phi(double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); }                        // normal CDF
double phi(double x) { return std::exp(-0.5 * x * x) / std::sqrt(2.0 * 3.14159265358979323846); }  // its density

double value(Fn fn, double x) {
    switch (fn) {
        case Fn::relu: return x > 0 ? x : 0.0;
        case Fn::relu6: return std::min(std::max(x, 0.0), 6.0);
        case Fn::sigmoid: return sigmoid(x);
        case Fn::silu: return x * sigmoid(x);
        case Fn::gelu: return x * Phi(x);  // the exact (erf) form
        case Fn::hardswish: return x * std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
        case Fn::hardsigmoid: return std::min(std::max(x + 3.0, 0.0), 6.0) / 6.0;
    }
    return 0;
}

// dy/dx at x, as PyTorch's backward formulas take it.
double slope(Fn fn, double x) {
    switch (fn) {
        case Fn::relu: return x > 0 ? 1.0 : 0.0;
        case Fn::relu6: return x > 0 && x < 6 ? 1.0 : 0.0;
        case Fn::sigmoid: {
            double s = sigmoid(x);
            return s * (1 - s);
        }
        case Fn::silu: {
            double s = sigmoid(x);
            return s * (1 + x * (1 - s));
        }
        case Fn::gelu: return Phi(x) + x * phi(x);
        case Fn::hardswish: return x < -3 ? 0.0 : x <= 3 ? x / 3 + 0.5 : 1.0;
        case Fn::hardsigmoid: return x > -3 && x < 3 ? 1.0 / 6 : 0.0;
    }
    return 0;
}

}  // namespace

template <class Real, class Acc>
void fwd(const Activation& op, const FwdT<Real, Acc>& f) {
    const int64_t E = numel(f.y.shape);
    // y[e] = fn(x[e])
    for (int64_t e = 0; e < E; ++e) f.y.p[e] = Real(value(op.fn, f.in[0].p[e]));
}

template <class Real, class Acc>
void bwd(const Activation& op, const BwdT<Real, Acc>& b) {
    Real* dx = b.dx[0].p;
    if (!dx) return;
    const int64_t E = numel(b.y.shape);
    // dx[e] += dy[e] * fn'(x[e])
    for (int64_t e = 0; e < E; ++e) dx[e] += Real(b.dy.p[e] * slope(op.fn, b.in[0].p[e]));
}

RIDGE_REF_INSTANTIATE(Activation);

}  // namespace ridge::ref
