#pragma once
// The kernels of kernels/simd as each build of them runs: the library every caller links
// (`dispatch`, each leaf picked at load time by the CPU's instruction set) and the copies built for
// one instruction set (kernels/CMakeLists.txt), of which this host can run those it supports.
#include <string>
#include <vector>

#include "kernels/simd/simd.h"

namespace ridge::kbench {

struct SimdVariant {
    std::string isa;  // "dispatch", "x86-64-v4", "x86-64-v3", "x86-64"
    bool supported = true;
    void (*scale_channels)(const float*, const float*, float*, const simd::ChannelLayout&);
    void (*channel_dots)(const float*, const float*, float*, const simd::ChannelLayout&);
    int64_t (*depthwise_lanes)(const simd::Depthwise&);
    size_t (*depthwise_conv_packed)(const simd::Depthwise&);
    void (*depthwise_conv)(const float*, const float*, const float*, float*, float*, const simd::Depthwise&, int);
    void (*depthwise_conv_dgrad)(const float*, const float*, float*, float*, const simd::Depthwise&, int);
    size_t (*depthwise_wgrad_scratch)(const simd::Depthwise&, int);
    void (*depthwise_wgrad)(const float*, const float*, float*, float*, float*, const simd::Depthwise&, int);
    void (*broadcast_channels)(const float*, float, float*, const simd::ChannelLayout&);
    void (*concat_affine)(const float* const*, const int64_t*, int64_t, const float*, const float*, bool, float*,
                          const simd::ChannelLayout&);
    void (*softmax_forward)(const float*, float*, int64_t, int64_t);
    void (*softmax_backward)(const float*, const float*, float*, int64_t, int64_t);
    void (*silu_forward)(const float*, float*, int64_t);
    void (*silu_backward)(const float*, const float*, float*, int64_t);
    void (*relu_forward)(const float*, float*, int64_t);
    void (*relu_backward)(const float*, const float*, float*, int64_t);
    void (*hardsigmoid_forward)(const float*, float*, int64_t);
    void (*hardsigmoid_backward)(const float*, const float*, float*, int64_t);
    void (*linear_panels)(const float*, const float*, const float*, bool, float*, int64_t, int64_t, int64_t);
    size_t (*linear_gemm_scratch)(int);
    void (*linear_gemm)(const float*, const float*, const float*, float*, float*, const simd::Gemm&, int);
    void (*linear_rows)(const float*, const float*, const float*, float*, int64_t, int64_t, int64_t, bool, int);
    void (*linear_rows_dgrad)(const float*, const float*, float*, int64_t, int64_t, int64_t, bool, int);
    void (*linear_rows_wgrad)(const float*, const float*, float*, float*, int64_t, int64_t, int64_t, bool, int);
    void (*layernorm_forward)(const float*, const float*, const float*, float*, float*, float*, int64_t, int64_t,
                              float);
    size_t (*layernorm_backward_scratch)(int64_t, int);
    void (*layernorm_backward)(const float*, const float*, const float*, const float*, const float*, float*, bool,
                               float*, float*, float*, int64_t, int64_t, float, int);
    void (*batchnorm_forward)(const float*, const float*, const float*, float*, float*, float*, bool,
                              const simd::ChannelLayout&, float);
    void (*batchnorm_backward)(const float*, const float*, const float*, const float*, const float*, const float*, bool,
                               float*, float*, float*, const simd::ChannelLayout&, float);
    bool (*grouped_conv3x3_supported)(const simd::GroupedConv3x3&);
    size_t (*grouped_conv3x3_scratch)(const simd::GroupedConv3x3&, int);
    void (*grouped_conv3x3)(const float*, const float*, const float*, bool, float*, float*,
                            const simd::GroupedConv3x3&, int);
    size_t (*grouped4_dgrad_scratch)(const simd::GroupedConv3x3&, int);
    void (*grouped4_conv3x3_dgrad)(const float*, const float*, float*, float*, const simd::GroupedConv3x3&, int);
    size_t (*grouped4_wgrad_scratch)(const simd::GroupedConv3x3&, int);
    void (*grouped4_wgrad)(const float*, const float*, float*, float*, const simd::GroupedConv3x3&, int);
};

// dispatch first, then x86-64-v4, x86-64-v3 and x86-64, each marked with whether this CPU runs it.
const std::vector<SimdVariant>& simd_variants();
// The instruction set the dispatch picks on this CPU (the first clone the CPU supports).
std::string dispatched_isa();

}  // namespace ridge::kbench
