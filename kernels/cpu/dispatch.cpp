// ref::forward / ref::backward: check that the buffers a caller hands over have the shapes the op's
// shape rule gives, then visit the Op onto its family's kernel (ops.h).
#include <stdexcept>

#include "kernels/cpu/ops.h"

namespace ridge::ref {

namespace {

template <class V>
std::vector<Shape> shapes_of(const std::vector<V>& views) {
    std::vector<Shape> s;
    for (const auto& v : views) s.push_back(v.shape);
    return s;
}

std::string list(const std::vector<Shape>& s) {
    std::string out;
    for (const auto& x : s) out += (out.empty() ? "" : ", ") + to_string(x);
    return out;
}

// Checks inputs, parameters and output against the op's rules; returns the op's parameter specs.
std::vector<ParamSpec> check(const Op& op, const char* what, const std::vector<Shape>& in, size_t params,
                             const Shape& y) {
    auto fail = [&](const std::string& why) {
        return std::invalid_argument(cat("ref::", what, " ", op_kind(op), " on ", list(in), ": ", why));
    };
    const int arity = op_arity(op);
    if (in.empty() || (arity && int(in.size()) != arity)) throw fail(cat("takes ", arity ? arity : 1, " input(s)"));
    Shape expect;
    try {
        expect = op_shape(op, in);
    } catch (const ShapeError& e) {
        throw fail(e.what());
    }
    if (y != expect) throw fail(cat("output is ", to_string(y), ", the shape rule gives ", to_string(expect)));
    std::vector<ParamSpec> specs = op_params(op, in);
    if (params != specs.size()) throw fail(cat(params, " parameter tensors given, the op has ", specs.size()));
    return specs;
}

template <class Real, class Acc>
void forward_t(const Op& op, const FwdT<Real, Acc>& f) {
    check(op, "forward", shapes_of(f.in), f.params.size(), f.y.shape);
    for (const Real* p : f.params)
        if (!p) throw std::invalid_argument(cat("ref::forward ", op_kind(op), ": a parameter pointer is null"));
    std::visit([&](const auto& o) { fwd(o, f); }, op);
}

template <class Real, class Acc>
void backward_t(const Op& op, const BwdT<Real, Acc>& b) {
    const std::vector<Shape> in = shapes_of(b.in);
    std::vector<ParamSpec> specs = check(op, "backward", in, b.params.size(), b.y.shape);
    auto fail = [&](const std::string& why) {
        return std::invalid_argument(cat("ref::backward ", op_kind(op), " on ", list(in), ": ", why));
    };
    if (b.dy.shape != b.y.shape) throw fail(cat("dy is ", to_string(b.dy.shape), ", y is ", to_string(b.y.shape)));
    if (b.dx.size() != b.in.size()) throw fail(cat(b.dx.size(), " input gradients for ", b.in.size(), " inputs"));
    for (size_t i = 0; i < b.dx.size(); ++i)
        if (b.dx[i].p && b.dx[i].shape != in[i])
            throw fail(
                cat("gradient of input ", i, " is ", to_string(b.dx[i].shape), ", the input ", to_string(in[i])));
    // An empty dparams asks for no parameter gradient at all; otherwise one entry per tensor.
    if (!b.dparams.empty() && b.dparams.size() != specs.size())
        throw fail(cat(b.dparams.size(), " parameter gradients for ", specs.size(), " parameters"));
    for (size_t j = 0; j < b.dparams.size(); ++j)
        if (b.dparams[j] && !specs[j].learned)
            throw fail(cat("'", specs[j].name, "' is not learned: it has no gradient"));
    std::visit([&](const auto& o) { bwd(o, b); }, op);
}

}  // namespace

void forward(const Op& op, const Fwd& f) { forward_t(op, f); }
void backward(const Op& op, const Bwd& b) { backward_t(op, b); }
void forward(const Op& op, const FwdT<double>& f) { forward_t(op, f); }
void backward(const Op& op, const BwdT<double>& b) { backward_t(op, b); }
void forward(const Op& op, const FwdT<float, float>& f) { forward_t(op, f); }
void backward(const Op& op, const BwdT<float, float>& b) { backward_t(op, b); }

}  // namespace ridge::ref
