#pragma once
// The engine's Conv2d as the naive reference conv takes it. Beside the reference kernels, not in
// kernels/cuda/from_ops.h, because only tests may reach them: the production executor includes
// that header and must not see this one.
#include "engine/op.h"
#include "kernels/cuda/reference/reference.h"

namespace ridge::gpu::ref {

// x (N,C,H,W)  y (N,K,P,Q)
inline ConvShape conv_shape(const Conv2d& op, const Shape& x, const Shape& y) {
    return {x[0],        x[1],        x[2],       x[3],        y[1],          op.kernel.h,   op.kernel.w, y[2], y[3],
            op.G,        op.stride.h, op.stride.w, op.pad.top, op.pad.left,   op.dilation.h, op.dilation.w};
}

}  // namespace ridge::gpu::ref
