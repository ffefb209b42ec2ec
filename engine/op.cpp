#include "engine/op.h"

#include "engine/overloaded.h"

namespace ridge {

Shape op_shape(const Op& op, const std::vector<Shape>& in) {
    return std::visit([&](const auto& o) { return shape(o, in); }, op);
}

Work op_work(const Op& op, const Ctx& c) {
    return std::visit([&](const auto& o) { return work(o, c); }, op);
}

int op_arity(const Op& op) {
    return std::visit(overloaded{[](const Matmul&) { return 2; }, [](const Add&) { return 2; },
                                 [](const Mul&) { return 2; }, [](const Concat&) { return 0; },
                                 [](const auto&) { return 1; }},
                      op);
}

std::string op_kind(const Op& op) {
    return std::visit(
        overloaded{[](const Conv2d&) { return std::string("conv2d"); },
                   [](const Linear&) { return std::string("linear"); },
                   [](const Matmul&) { return std::string("matmul"); },
                   [](const BatchNorm&) { return std::string("batchnorm"); },
                   [](const LayerNorm&) { return std::string("layernorm"); },
                   [](const Activation& a) { return std::string(fn_name(a.fn)); },
                   [](const Pool2d& p) { return std::string(p.kind == Pool2d::Kind::max ? "maxpool" : "avgpool"); },
                   [](const AdaptiveAvgPool2d&) { return std::string("adaptive_avgpool"); },
                   [](const Add&) { return std::string("add"); }, [](const Mul&) { return std::string("mul"); },
                   [](const Scale&) { return std::string("scale"); },
                   [](const LayerScale&) { return std::string("layer_scale"); },
                   [](const Softmax&) { return std::string("softmax"); },
                   [](const Concat&) { return std::string("concat"); },
                   [](const ChannelShuffle&) { return std::string("channel_shuffle"); },
                   [](const Flatten&) { return std::string("flatten"); },
                   [](const Reshape&) { return std::string("reshape"); },
                   [](const Permute&) { return std::string("permute"); },
                   [](const Slice&) { return std::string("slice"); },
                   [](const Select&) { return std::string("select"); },
                   [](const Dropout&) { return std::string("dropout"); },
                   [](const StochasticDepth&) { return std::string("stochastic_depth"); },
                   [](const ClassToken&) { return std::string("class_token"); },
                   [](const PosEmbedding&) { return std::string("pos_embedding"); }},
        op);
}

std::string op_label(const Op& op) {
    if (std::holds_alternative<Conv2d>(op)) return "conv";
    if (std::holds_alternative<BatchNorm>(op)) return "bn";
    if (std::holds_alternative<LayerNorm>(op)) return "ln";
    if (std::holds_alternative<Linear>(op)) return "fc";
    return op_kind(op);
}

bool op_has_params(const Op& op) {
    return std::holds_alternative<Conv2d>(op) || std::holds_alternative<Linear>(op) ||
           std::holds_alternative<BatchNorm>(op) || std::holds_alternative<LayerNorm>(op) ||
           std::holds_alternative<LayerScale>(op) || std::holds_alternative<ClassToken>(op) ||
           std::holds_alternative<PosEmbedding>(op);
}

bool op_is_alias(const Op& op) {
    return std::holds_alternative<Flatten>(op) || std::holds_alternative<Reshape>(op) ||
           std::holds_alternative<Slice>(op) || std::holds_alternative<Select>(op) ||
           std::holds_alternative<Dropout>(op) || std::holds_alternative<StochasticDepth>(op);
}

std::vector<ParamSpec> op_params(const Op& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    auto with_bias = [](std::vector<ParamSpec> p, bool bias, int64_t K) {
        if (bias) p.push_back({"bias", {K}});
        return p;
    };
    return std::visit(
        overloaded{[&](const Conv2d& c) {
                       return with_bias({{"weight", {c.K, x[1] / c.G, c.kernel.h, c.kernel.w}}}, c.bias, c.K);
                   },
                   [&](const Linear& l) { return with_bias({{"weight", {l.K, x.back()}}}, l.bias, l.K); },
                   [&](const BatchNorm&) {
                       int64_t C = x[1];
                       return std::vector<ParamSpec>{{"gamma", {C}},
                                                     {"beta", {C}},
                                                     {"running_mean", {C}, false},
                                                     {"running_var", {C}, false}};
                   },
                   [&](const LayerNorm& n) {
                       int64_t D = x[normalize_dim(n.dim, x.size())];
                       return std::vector<ParamSpec>{{"gamma", {D}}, {"beta", {D}}};
                   },
                   [&](const LayerScale& s) {
                       return std::vector<ParamSpec>{{"gamma", {x[normalize_dim(s.dim, x.size())]}}};
                   },
                   [&](const ClassToken&) { return std::vector<ParamSpec>{{"token", {x[2]}}}; },
                   [&](const PosEmbedding&) { return std::vector<ParamSpec>{{"embedding", {x[1], x[2]}}}; },
                   [](const auto&) { return std::vector<ParamSpec>{}; }},
        op);
}

std::string_view category_name(Category c) {
    static constexpr std::string_view names[category_count] = {
        "conv",    "depthwise conv", "linear",    "matmul",        "norm",    "activation",
        "pool",    "elementwise",    "softmax",   "embedding",     "data movement", "identity"};
    return names[int(c)];
}

Category op_category(const Op& op, const Shape& x0) {
    using C = Category;
    return std::visit(
        overloaded{[&](const Conv2d& c) { return is_depthwise(c, x0) ? C::dwconv : C::conv; },
                   [](const Linear&) { return C::linear; }, [](const Matmul&) { return C::matmul; },
                   [](const BatchNorm&) { return C::norm; }, [](const LayerNorm&) { return C::norm; },
                   [](const Activation&) { return C::activation; }, [](const Pool2d&) { return C::pool; },
                   [](const AdaptiveAvgPool2d&) { return C::pool; }, [](const Add&) { return C::elementwise; },
                   [](const Mul&) { return C::elementwise; }, [](const Scale&) { return C::elementwise; },
                   [](const LayerScale&) { return C::elementwise; }, [](const Softmax&) { return C::softmax; },
                   [](const ClassToken&) { return C::embedding; }, [](const PosEmbedding&) { return C::embedding; },
                   [](const Dropout&) { return C::identity; }, [](const StochasticDepth&) { return C::identity; },
                   [](const auto&) { return C::data_movement; }},
        op);
}

}  // namespace ridge
