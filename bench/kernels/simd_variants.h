#pragma once
// The kernels of kernels/simd as each build of them runs: the library every caller links
// (`dispatch`, each leaf picked at load time by the CPU's instruction set) and the copies built for
// one instruction set (kernels/CMakeLists.txt), of which this host can run those it supports.
#include <string>
#include <vector>

#include "kernels/simd/simd.h"

// Every kernel of kernels/simd/kernels.inc by name, X(ns, name) each: SimdVariant's fields, and the
// pointers simd_variants.cpp takes from each namespace, come from this one list.
// clang-format off
#define RIDGE_SIMD_KERNELS(X, ns) \
    X(ns, scale_channels) X(ns, channel_dots) X(ns, channel_means) X(ns, broadcast_channels) \
    X(ns, add_broadcast_channels) \
    X(ns, concat_affine) X(ns, concat_backward) X(ns, batchnorm_forward) X(ns, batchnorm_backward) \
    X(ns, silu_forward) X(ns, silu_backward) X(ns, sigmoid_forward) X(ns, sigmoid_backward) X(ns, relu_forward) \
    X(ns, relu_backward) \
    X(ns, hardsigmoid_forward) X(ns, hardsigmoid_backward) X(ns, softmax_forward) X(ns, softmax_backward) \
    X(ns, layernorm_forward) X(ns, layernorm_backward_scratch) X(ns, layernorm_backward) \
    X(ns, linear_panels) X(ns, linear_gemm_scratch) X(ns, linear_gemm) X(ns, linear_rows) X(ns, linear_rows_dgrad) \
    X(ns, linear_rows_wgrad) \
    X(ns, max_pool_supported) X(ns, max_pool) X(ns, max_pool_backward_supported) X(ns, max_pool_backward) \
    X(ns, grouped_conv3x3_supported) X(ns, grouped_conv3x3_scratch) X(ns, grouped_conv3x3) \
    X(ns, grouped4_dgrad_scratch) X(ns, grouped4_conv3x3_dgrad) X(ns, grouped4_wgrad_supported) \
    X(ns, grouped4_wgrad_scratch) X(ns, grouped4_wgrad) \
    X(ns, grouped8_backward_supported) X(ns, grouped8_conv3x3_dgrad) X(ns, grouped8_wgrad_scratch) \
    X(ns, grouped8_wgrad) \
    X(ns, winograd3x3_supported) X(ns, winograd3x3_weights_size) X(ns, winograd3x3_weights) \
    X(ns, winograd3x3_scratch) X(ns, winograd3x3) \
    X(ns, winograd3x3_wgrad_scratch) X(ns, winograd3x3_wgrad) \
    X(ns, depthwise_conv_supported) X(ns, depthwise_conv_packed) X(ns, depthwise_conv) X(ns, depthwise_conv_dgrad) \
    X(ns, depthwise_wgrad_supported) X(ns, depthwise_lanes) X(ns, depthwise_wgrad_scratch) X(ns, depthwise_wgrad) \
    X(ns, image_conv_supported) X(ns, image_conv_weights_size) X(ns, image_conv_weights) X(ns, image_conv_scratch) \
    X(ns, image_conv) \
    X(ns, image_conv_wgrad_supported) X(ns, image_conv_wgrad_scratch) X(ns, image_conv_wgrad)
// clang-format on

namespace ridge::kbench {

#define RIDGE_SIMD_FIELD(ns, name) decltype(&simd::ns::name) name = nullptr;
struct SimdVariant {
    std::string isa;  // "dispatch", "x86-64-v4", "x86-64-v3", "x86-64"
    bool supported = true;
    RIDGE_SIMD_KERNELS(RIDGE_SIMD_FIELD, dispatch)
};
#undef RIDGE_SIMD_FIELD

// dispatch first, then x86-64-v4, x86-64-v3 and x86-64, each marked with whether this CPU runs it.
const std::vector<SimdVariant>& simd_variants();
// Those of them this CPU runs, in the same order.
std::vector<SimdVariant> runnable_simd_variants();
// The instruction set the dispatch picks on this CPU (the first clone the CPU supports).
std::string dispatched_isa();

}  // namespace ridge::kbench
