// Elementwise nonlinearities with kernels/cpu/activation.cpp's definitions and its derivatives at
// the kinks (PyTorch's). cuDNN has relu, clipped relu (relu6), sigmoid and swish (silu) but no
// erf GELU, hardswish or hardsigmoid: the executor runs those three here.  x, y, dy, dx (n)
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

using Fn = Act;

__device__ __forceinline__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ float value(Fn fn, float x) {
    switch (fn) {
        case Fn::relu: return x > 0 ? x : 0.0f;
        case Fn::relu6: return fminf(fmaxf(x, 0.0f), 6.0f);
        case Fn::sigmoid: return sigmoidf(x);
        case Fn::silu: return x * sigmoidf(x);
        case Fn::gelu: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));  // the exact (erf) form
        case Fn::hardswish: return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
        case Fn::hardsigmoid: return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    }
    return 0;
}

__device__ float slope(Fn fn, float x) {
    switch (fn) {
        case Fn::relu: return x > 0 ? 1.0f : 0.0f;
        case Fn::relu6: return x > 0 && x < 6 ? 1.0f : 0.0f;
        case Fn::sigmoid: {
            float s = sigmoidf(x);
            return s * (1 - s);
        }
        case Fn::silu: {
            float s = sigmoidf(x);
            return s * (1 + x * (1 - s));
        }
        case Fn::gelu: {
            float Phi = 0.5f * (1.0f + erff(x * 0.70710678118654752f));
            float phi = expf(-0.5f * x * x) * 0.39894228040143268f;  // 1/sqrt(2 pi)
            return Phi + x * phi;
        }
        case Fn::hardswish: return x < -3 ? 0.0f : x > 3 ? 1.0f : x / 3.0f + 0.5f;
        case Fn::hardsigmoid: return x > -3 && x < 3 ? 1.0f / 6.0f : 0.0f;
    }
    return 0;
}

template <class T>
__global__ void forward_kernel(Fn fn, const T* x, T* y, int64_t n) {
    RIDGE_GRID_STRIDE(e, n) st(y, e, value(fn, ld(x, e)));
}

template <class T>
__global__ void backward_kernel(Fn fn, const T* x, const T* dy, T* dx, int64_t n) {
    RIDGE_GRID_STRIDE(e, n) add_to(dx, e, ld(dy, e) * slope(fn, ld(x, e)));
}

}  // namespace

void activation_forward(DType t, Act fn, const void* x, void* y, int64_t n, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        forward_kernel<T><<<blocks_for(n), threads_per_block, 0, s>>>(fn, static_cast<const T*>(x),
                                                                       static_cast<T*>(y), n);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

void activation_backward(DType t, Act fn, const void* x, const void* dy, void* dx, int64_t n, cudaStream_t s) {
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        backward_kernel<T><<<blocks_for(n), threads_per_block, 0, s>>>(fn, static_cast<const T*>(x),
                                                                        static_cast<const T*>(dy),
                                                                        static_cast<T*>(dx), n);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
