#pragma once
// Normalizations with a learned scale (gamma) and shift (beta) per normalized channel.
// BatchNorm:  x (N,C,...)  gamma, beta (C)       statistics over every dimension but C
// LayerNorm:  x (..., D)   gamma, beta (D)       statistics over D alone, one row at a time;
//             dim = 1 on (N,C,H,W) gives ConvNeXt's channels-first LayerNorm2d.
#include "engine/formula.h"
#include "engine/ops/traits.h"

namespace ridge {

struct BatchNorm {
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "bn";
};

struct LayerNorm {
    int dim = -1;  // the normalized dimension
    static constexpr int arity = 1;
    static constexpr bool has_params = true, aliases = false;
    static constexpr std::string_view label = "ln";
};

Shape shape(const BatchNorm& op, const std::vector<Shape>& in);
Work work(const BatchNorm& op, const Ctx& c);
Shape shape(const LayerNorm& op, const std::vector<Shape>& in);
Work work(const LayerNorm& op, const Ctx& c);
std::string kind(const BatchNorm& op);
Category category(const BatchNorm& op, const Shape& x0);
std::vector<ParamSpec> params(const BatchNorm& op, const std::vector<Shape>& in);
std::string kind(const LayerNorm& op);
Category category(const LayerNorm& op, const Shape& x0);
std::vector<ParamSpec> params(const LayerNorm& op, const std::vector<Shape>& in);

int normalize_dim(int dim, size_t rank);  // -1 -> rank-1; throws ShapeError when out of range

}  // namespace ridge
