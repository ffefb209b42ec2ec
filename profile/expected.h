#pragma once
// FLOPs expected of the implementation that ran, where its algorithm differs from the model's
// count in a way its geometry fixes. The model counts every tap of a convolution, including those
// that fall on the zero padding; a direct convolution (oneDNN's jit and brgconv kernels,
// kernels/simd's depthwise ones) never multiplies by those zeros, while im2col followed by a GEMM
// does.
#include <optional>
#include <string>

#include "engine/backend/executor.h"
#include "engine/graph.h"

namespace ridge::profile {

// Of a convolution's R x S taps at every output position, how many land inside the input, summed
// over one dimension: sum over p < P of #{r < R : 0 <= p*stride - pad + r*dilation < extent}.
int64_t taps_inside(int64_t extent, int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dilation);

struct Expected {
    int64_t flops = 0;
    std::string why;  // the fact behind it, for the row's why column
};

// For layer `node` in `phase`, given the analytic FLOPs and the implementation's name: what that
// implementation is expected to compute, when it differs from the analytic count.
std::optional<Expected> expected_flops(const Graph& g, int node, StepPhase phase, const std::string& impl,
                                       int64_t analytic);

}  // namespace ridge::profile
