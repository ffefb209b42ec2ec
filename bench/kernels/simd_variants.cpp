#include "bench/kernels/simd_variants.h"

// The single-ISA builds' entry points, as kernels/simd/simd.h declares them for the dispatch
// build. A signature that drifts from simd.h fails at link time.
#define RIDGE_DECLARE_SIMD(ns)                                                                                         \
    namespace ridge::simd::ns {                                                                                        \
    void scale_channels(const float* x, const float* s, float* y, const ChannelLayout& l);                             \
    void channel_dots(const float* a, const float* b, float* out, const ChannelLayout& l);                             \
    int64_t depthwise_lanes(const Depthwise& d);                                                                       \
    size_t depthwise_conv_packed(const Depthwise& d);                                                                  \
    void depthwise_conv(const float* x, const float* w, const float* b, float* y, float* packed, const Depthwise& d,   \
                        int threads);                                                                                  \
    void depthwise_conv_dgrad(const float* dy, const float* w, float* dx, float* packed, const Depthwise& d,           \
                              int threads);                                                                            \
    size_t depthwise_wgrad_scratch(const Depthwise& d, int threads);                                                   \
    void depthwise_wgrad(const float* x, const float* dy, float* dw, float* db, float* scratch, const Depthwise& d,    \
                         int threads);                                                                                 \
    void broadcast_channels(const float* s, float k, float* y, const ChannelLayout& l);                                \
    void concat_affine(const float* const* x, const int64_t* channels, int64_t pieces, const float* a, const float* b, \
                       bool relu, float* y, const ChannelLayout& yl);                                                  \
    void softmax_forward(const float* x, float* y, int64_t rows, int64_t n);                                           \
    void softmax_backward(const float* y, const float* dy, float* dx, int64_t rows, int64_t n);                        \
    void silu_forward(const float* x, float* y, int64_t n);                                                            \
    void silu_backward(const float* x, const float* dy, float* dx, int64_t n);                                         \
    void relu_forward(const float* x, float* y, int64_t n);                                                            \
    void relu_backward(const float* y, const float* dy, float* dx, int64_t n);                                         \
    void hardsigmoid_forward(const float* x, float* y, int64_t n);                                                     \
    void hardsigmoid_backward(const float* x, const float* dy, float* dx, int64_t n);                                  \
    void linear_panels(const float* x, const float* w, const float* b, bool relu, float* y, int64_t N, int64_t C,      \
                       int64_t K);                                                                                     \
    size_t linear_gemm_scratch(int threads);                                                                           \
    void linear_gemm(const float* x, const float* w, const float* b, float* y, float* scratch, const Gemm& d,          \
                     int threads);                                                                                     \
    void linear_rows(const float* x, const float* w, const float* b, float* y, int64_t N, int64_t C, int64_t K,        \
                     bool transposed, int threads);                                                                    \
    void linear_rows_dgrad(const float* dy, const float* w, float* dx, int64_t N, int64_t C, int64_t K,                \
                           bool transposed, int threads);                                                              \
    void linear_rows_wgrad(const float* x, const float* dy, float* dw, float* db, int64_t N, int64_t C, int64_t K,     \
                           bool transposed, int threads);                                                              \
    void layernorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,   \
                           int64_t rows, int64_t D, float eps);                                                        \
    size_t layernorm_backward_scratch(int64_t D, int threads);                                                         \
    void layernorm_backward(const float* x, const float* dy, const float* gamma, const float* mean, const float* var,  \
                            float* dx, bool add_dx, float* dgamma, float* dbeta, float* scratch, int64_t rows,         \
                            int64_t D, float eps, int threads);                                                        \
    void batchnorm_forward(const float* x, const float* gamma, const float* beta, float* y, float* mean, float* var,   \
                           bool relu, const ChannelLayout& l, float eps);                                              \
    void batchnorm_backward(const float* x, const float* dy, const float* gamma, const float* beta, const float* mean, \
                            const float* var, bool relu, float* dx, float* dgamma, float* dbeta,                       \
                            const ChannelLayout& l, float eps);                                                        \
    bool grouped_conv3x3_supported(const GroupedConv3x3& d);                                                           \
    size_t grouped_conv3x3_scratch(const GroupedConv3x3& d, int threads);                                              \
    void grouped_conv3x3(const float* x, const float* w, const float* b, bool relu, float* y, float* scratch,          \
                         const GroupedConv3x3& d, int threads);                                                        \
    size_t grouped4_dgrad_scratch(const GroupedConv3x3& d, int threads);                                               \
    void grouped4_conv3x3_dgrad(const float* dy, const float* w, float* dx, float* scratch, const GroupedConv3x3& d,   \
                                int threads);                                                                          \
    size_t grouped4_wgrad_scratch(const GroupedConv3x3& d, int threads);                                               \
    void grouped4_wgrad(const float* x, const float* dy, float* dw, float* scratch, const GroupedConv3x3& d,           \
                        int threads);                                                                                  \
    }
RIDGE_DECLARE_SIMD(x86_64_v4)
RIDGE_DECLARE_SIMD(x86_64_v3)
RIDGE_DECLARE_SIMD(x86_64)

namespace ridge::kbench {

#define RIDGE_SIMD_VARIANT(name, ns, supported)                                                                      \
    SimdVariant {                                                                                                    \
        name, supported, simd::ns::scale_channels, simd::ns::channel_dots, simd::ns::depthwise_lanes,                \
            simd::ns::depthwise_conv_packed, simd::ns::depthwise_conv, simd::ns::depthwise_conv_dgrad,               \
            simd::ns::depthwise_wgrad_scratch, simd::ns::depthwise_wgrad, simd::ns::broadcast_channels,              \
            simd::ns::concat_affine, simd::ns::softmax_forward, simd::ns::softmax_backward, simd::ns::silu_forward,  \
            simd::ns::silu_backward, simd::ns::relu_forward, simd::ns::relu_backward, simd::ns::hardsigmoid_forward, \
            simd::ns::hardsigmoid_backward, simd::ns::linear_panels, simd::ns::linear_gemm_scratch,                  \
            simd::ns::linear_gemm, simd::ns::linear_rows, simd::ns::linear_rows_dgrad, simd::ns::linear_rows_wgrad,  \
            simd::ns::layernorm_forward, simd::ns::layernorm_backward_scratch, simd::ns::layernorm_backward,         \
            simd::ns::batchnorm_forward, simd::ns::batchnorm_backward, simd::ns::grouped_conv3x3_supported,          \
            simd::ns::grouped_conv3x3_scratch, simd::ns::grouped_conv3x3, simd::ns::grouped4_dgrad_scratch,          \
            simd::ns::grouped4_conv3x3_dgrad, simd::ns::grouped4_wgrad_scratch, simd::ns::grouped4_wgrad             \
    }

const std::vector<SimdVariant>& simd_variants() {
    static const std::vector<SimdVariant> v = {
        RIDGE_SIMD_VARIANT("dispatch", dispatch, true),
        RIDGE_SIMD_VARIANT("x86-64-v4", x86_64_v4, __builtin_cpu_supports("x86-64-v4") != 0),
        RIDGE_SIMD_VARIANT("x86-64-v3", x86_64_v3, __builtin_cpu_supports("x86-64-v3") != 0),
        RIDGE_SIMD_VARIANT("x86-64", x86_64, true),
    };
    return v;
}

std::string dispatched_isa() {
    if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
    if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
    return "x86-64";
}

}  // namespace ridge::kbench
