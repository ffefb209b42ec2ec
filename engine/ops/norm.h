#pragma once
// Normalizations with a learned scale (gamma) and shift (beta) per normalized channel.
// BatchNorm:  x (N,C,...)  gamma, beta (C)       statistics over every dimension but C
// LayerNorm:  x (..., D)   gamma, beta (D)       statistics over D alone, one row at a time;
//             dim = 1 on (N,C,H,W) gives ConvNeXt's channels-first LayerNorm2d.
#include "engine/formula.h"

namespace ridge {

struct BatchNorm {};

struct LayerNorm {
    int dim = -1;  // the normalized dimension
};

Shape shape(const BatchNorm& op, const std::vector<Shape>& in);
Work work(const BatchNorm& op, const Ctx& c);
Shape shape(const LayerNorm& op, const std::vector<Shape>& in);
Work work(const LayerNorm& op, const Ctx& c);

int normalize_dim(int dim, size_t rank);  // -1 -> rank-1; throws ShapeError when out of range

}  // namespace ridge
