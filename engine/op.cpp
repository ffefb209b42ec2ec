#include "engine/op.h"

namespace ridge {

Shape op_shape(const Op& op, const std::vector<Shape>& in) {
    return std::visit([&](const auto& o) { return shape(o, in); }, op);
}

Work op_work(const Op& op, const Ctx& c) {
    return std::visit([&](const auto& o) { return work(o, c); }, op);
}

// Each op's own traits (engine/ops/traits.h): a visit per fact, T the alternative it landed on.
int op_arity(const Op& op) {
    return std::visit([]<class T>(const T&) { return T::arity; }, op);
}

bool op_has_params(const Op& op) {
    return std::visit([]<class T>(const T&) { return T::has_params; }, op);
}

bool op_is_alias(const Op& op) {
    return std::visit([]<class T>(const T&) { return T::aliases; }, op);
}

std::string op_kind(const Op& op) {
    return std::visit([](const auto& o) { return kind(o); }, op);
}

std::string op_label(const Op& op) {
    return std::visit([]<class T>(const T& o) { return T::label.empty() ? kind(o) : std::string(T::label); }, op);
}

std::vector<ParamSpec> op_params(const Op& op, const std::vector<Shape>& in) {
    return std::visit(
        [&]<class T>(const T& o) {
            if constexpr (T::has_params)
                return params(o, in);
            else
                return std::vector<ParamSpec>{};
        },
        op);
}

std::string_view category_name(Category c) {
    static constexpr std::string_view names[category_count] = {
        "conv",    "depthwise conv", "linear",    "matmul",        "norm",    "activation",
        "pool",    "elementwise",    "softmax",   "embedding",     "data movement", "identity"};
    return names[int(c)];
}

Category op_category(const Op& op, const Shape& x0) {
    return std::visit([&](const auto& o) { return category(o, x0); }, op);
}

}  // namespace ridge
