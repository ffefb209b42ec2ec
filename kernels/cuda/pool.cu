// Pooling with kernels/cpu/pool.cpp's windows. cuDNN pools with symmetric padding and floor-mode
// output sizes only, and has no adaptive pooling; the executor runs here what it cannot express
// (asymmetric padding, ceil_mode, adaptive windows). One thread per output; the gradient is
// scattered with atomics because windows overlap.
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

struct Span {
    int64_t lo, hi, padded;
};

__device__ Span window(int64_t p, int64_t k, int64_t stride, int64_t pad_lo, int64_t pad_hi, int64_t in) {
    int64_t lo = p * stride - pad_lo, hi = min(lo + k, in + pad_hi);
    return {max(lo, int64_t(0)), min(hi, in), hi - lo};
}

__device__ Span adaptive(int64_t i, int64_t in, int64_t out) {
    int64_t lo = (i * in) / out, hi = ((i + 1) * in + out - 1) / out;
    return {lo, hi, hi - lo};
}

__device__ void spans(const PoolShape& s, int64_t p, int64_t q, Span& h, Span& w) {
    if (s.kind == PoolShape::Kind::adaptive) {
        h = adaptive(p, s.H, s.P);
        w = adaptive(q, s.W, s.Q);
    } else {
        h = window(p, s.R, s.sh, s.pt, s.pb, s.H);
        w = window(q, s.S, s.sw, s.pl, s.pr, s.W);
    }
}

__device__ float divisor(const PoolShape& s, const Span& h, const Span& w) {
    if (s.kind == PoolShape::Kind::avg && s.count_include_pad) return float(h.padded * w.padded);
    return float((h.hi - h.lo) * (w.hi - w.lo));
}

// Flat (h, w) index of the first maximum scanning rows then columns; a NaN wins, so it propagates.
template <class T>
__device__ int64_t argmax(const T* x, int64_t W, const Span& h, const Span& w) {
    int64_t best = h.lo * W + w.lo;
    float m = -INFINITY;
    for (int64_t a = h.lo; a < h.hi; ++a)
        for (int64_t b = w.lo; b < w.hi; ++b) {
            float v = ld(x, a * W + b);
            if (v > m || isnan(v)) m = v, best = a * W + b;
        }
    return best;
}

template <class T>
__global__ void forward_kernel(PoolShape s, const T* x, T* y) {
    RIDGE_GRID_STRIDE(e, s.NC * s.P * s.Q) {
        int64_t q = e % s.Q, p = (e / s.Q) % s.P, nc = e / (s.P * s.Q);
        const T* plane = x + nc * s.H * s.W;
        Span h, w;
        spans(s, p, q, h, w);
        if (s.kind == PoolShape::Kind::max) {
            st(y, e, ld(plane, argmax(plane, s.W, h, w)));
            continue;
        }
        float sum = 0;
        for (int64_t a = h.lo; a < h.hi; ++a)
            for (int64_t b = w.lo; b < w.hi; ++b) sum += ld(plane, a * s.W + b);
        st(y, e, sum / divisor(s, h, w));
    }
}

template <class T>
__global__ void backward_kernel(PoolShape s, const T* x, const T* dy, T* dx) {
    RIDGE_GRID_STRIDE(e, s.NC * s.P * s.Q) {
        int64_t q = e % s.Q, p = (e / s.Q) % s.P, nc = e / (s.P * s.Q);
        T* plane = dx + nc * s.H * s.W;
        Span h, w;
        spans(s, p, q, h, w);
        float g = ld(dy, e);
        if (s.kind == PoolShape::Kind::max) {
            atomic_add(plane, argmax(x + nc * s.H * s.W, s.W, h, w), g);
            continue;
        }
        g /= divisor(s, h, w);
        for (int64_t a = h.lo; a < h.hi; ++a)
            for (int64_t b = w.lo; b < w.hi; ++b) atomic_add(plane, a * s.W + b, g);
    }
}

}  // namespace

void pool_forward(DType t, const PoolShape& p, const void* x, void* y, cudaStream_t s) {
    dispatch(t, [&](auto* q) {
        using T = std::remove_pointer_t<decltype(q)>;
        forward_kernel<T><<<blocks_for(p.NC * p.P * p.Q), threads_per_block, 0, s>>>(p, static_cast<const T*>(x),
                                                                                      static_cast<T*>(y));
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

void pool_backward(DType t, const PoolShape& p, const void* x, const void* dy, void* dx, cudaStream_t s) {
    dispatch(t, [&](auto* q) {
        using T = std::remove_pointer_t<decltype(q)>;
        backward_kernel<T><<<blocks_for(p.NC * p.P * p.Q), threads_per_block, 0, s>>>(
            p, static_cast<const T*>(x), static_cast<const T*>(dy), static_cast<T*>(dx));
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
