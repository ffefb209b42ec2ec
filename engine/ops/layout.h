#pragma once
// Ops that move or reinterpret data and compute nothing.
// Views (Flatten, Reshape, Slice, Select) alias their input: no bytes written, no forward
// traffic; a slice's or select's gradient is written (engine/analysis.cpp, engine/README.md).
// Concat, ChannelShuffle and Permute write a new tensor: they read and write every element.
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct Concat {
    int dim = 1;
    static constexpr int arity = 0;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct ChannelShuffle {
    int64_t G;  // x (N,C,H,W) -> view (N,G,C/G,H,W) -> transpose -> (N,C,H,W)
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct Flatten {
    int start = 1, end = -1;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};
struct Reshape {
    Shape dims;  // 0 keeps the input's size at that position, one -1 is inferred
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};
struct Permute {
    std::vector<int> order;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = false;
    static constexpr std::string_view label = "";
};
struct Slice {
    int dim;
    int64_t start, length;
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};
struct Select {
    int dim;
    int64_t index;  // the dimension is removed
    static constexpr int arity = 1;
    static constexpr bool has_params = false, aliases = true;
    static constexpr std::string_view label = "";
};

Shape shape(const Concat& op, const std::vector<Shape>& in);
Shape shape(const ChannelShuffle& op, const std::vector<Shape>& in);
Shape shape(const Flatten& op, const std::vector<Shape>& in);
Shape shape(const Reshape& op, const std::vector<Shape>& in);
Shape shape(const Permute& op, const std::vector<Shape>& in);
Shape shape(const Slice& op, const std::vector<Shape>& in);
Shape shape(const Select& op, const std::vector<Shape>& in);

std::string kind(const Concat& op);
std::string kind(const ChannelShuffle& op);
std::string kind(const Flatten& op);
std::string kind(const Reshape& op);
std::string kind(const Permute& op);
std::string kind(const Slice& op);
std::string kind(const Select& op);

// Every one of them is data movement in the by-type totals.
template <class Op>
    requires std::is_same_v<Op, Concat> || std::is_same_v<Op, ChannelShuffle> || std::is_same_v<Op, Flatten> ||
             std::is_same_v<Op, Reshape> || std::is_same_v<Op, Permute> || std::is_same_v<Op, Slice> ||
             std::is_same_v<Op, Select>
Category category(const Op&, const Shape&) {
    return Category::data_movement;
}

// Data movement costs no FLOPs; saves nothing; the gradient is routed, not computed.
template <class Op>
    requires std::is_same_v<Op, Concat> || std::is_same_v<Op, ChannelShuffle> || std::is_same_v<Op, Flatten> ||
             std::is_same_v<Op, Reshape> || std::is_same_v<Op, Permute> || std::is_same_v<Op, Slice> ||
             std::is_same_v<Op, Select>
Work work(const Op&, const Ctx&) {
    return {};
}

}  // namespace ridge
