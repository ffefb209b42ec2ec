#include "engine/ops/activation.h"

namespace ridge {

namespace {
// FLOPs per element. A transcendental (exp, erf) counts as one FLOP, as a comparison does.
struct Rule {
    std::string_view name;
    int64_t fwd, dgrad;
    bool saves_output;  // PyTorch keeps the output for relu and sigmoid, the input for the rest
};
Rule rule(Activation::Fn fn) {
    using F = Activation::Fn;
    switch (fn) {
        case F::relu: return {"relu", 1, 1, true};                // max(x,0); dy where y>0
        case F::relu6: return {"relu6", 2, 2, false};             // min(max(x,0),6); two compares
        case F::sigmoid: return {"sigmoid", 4, 3, true};          // 1/(1+exp(-x)); dy*s*(1-s)
        case F::silu: return {"silu", 5, 9, false};               // x*s; dy*s*(1+x*(1-s)), s recomputed
        case F::gelu: return {"gelu", 5, 11, false};              // x*(1+erf(x/sqrt2))/2; dy*(Phi+x*phi)
        case F::hardswish: return {"hardswish", 5, 6, false};     // x*min(max(x+3,0),6)/6; 2 compares,(2x+3)/6,*dy
        case F::hardsigmoid: return {"hardsigmoid", 4, 3, false}; // min(max(x+3,0),6)/6; 2 compares,*dy/6
    }
    return {"?", 0, 0, false};
}
}  // namespace

std::string_view fn_name(Activation::Fn fn) { return rule(fn).name; }

Shape shape(const Activation&, const std::vector<Shape>& in) { return in.at(0); }

Work work(const Activation& op, const Ctx& c) {
    Rule r = rule(op.fn);
    Ex E = var("E", numel(c.out));
    Work w;
    w.fwd_flops = w.note("fwd FLOPs", lit(r.fwd) * E);
    if (c.needs_grad[0]) w.dgrad_flops = w.note("dgrad FLOPs", lit(r.dgrad) * E);
    if (r.saves_output) w.saves_output = true;
    else w.saved_inputs = {0};
    return w;
}

std::string kind(const Activation& op) { return std::string(fn_name(op.fn)); }
Category category(const Activation&, const Shape&) { return Category::activation; }

}  // namespace ridge
