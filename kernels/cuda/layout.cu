// Data movement: blocks along one dimension (concat, slice, select and their gradients) and
// permutes (permute, channel shuffle). Pure copies: exact in every storage type.
#include <stdexcept>

#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

// Element (o, i, j) of the small tensor (outer, len, inner) and row offset + i of the big one.
template <class T>
__global__ void block_kernel(const T* src, T* dst, int64_t outer, int64_t n_big, int64_t offset, int64_t len,
                             int64_t inner, bool into_big, bool accumulate) {
    RIDGE_GRID_STRIDE(e, outer * len * inner) {
        int64_t j = e % inner, i = (e / inner) % len, o = e / (inner * len);
        int64_t big = (o * n_big + offset + i) * inner + j;
        int64_t from = into_big ? e : big, to = into_big ? big : e;
        float v = ld(src, from);
        accumulate ? add_to(dst, to, v) : st(dst, to, v);
    }
}

struct Perm {
    int rank;
    int64_t ydims[max_rank];
    int64_t xstride[max_rank];  // x's stride of the dimension that is y's d
};

template <class T>
__global__ void permute_kernel(const T* x, Perm p, T* y, int64_t n, bool accumulate) {
    RIDGE_GRID_STRIDE(e, n) {
        int64_t rest = e, off = 0;
        for (int d = p.rank - 1; d >= 0; --d) {
            off += (rest % p.ydims[d]) * p.xstride[d];
            rest /= p.ydims[d];
        }
        float v = ld(x, off);
        accumulate ? add_to(y, e, v) : st(y, e, v);
    }
}

void block(DType t, const void* src, void* dst, int64_t outer, int64_t n_big, int64_t offset, int64_t len, int64_t inner,
           bool into_big, bool accumulate, cudaStream_t s) {
    int64_t n = outer * len * inner;
    if (n == 0) return;
    dispatch(t, [&](auto* p) {
        using T = std::remove_pointer_t<decltype(p)>;
        block_kernel<T><<<blocks_for(n), threads_per_block, 0, s>>>(static_cast<const T*>(src), static_cast<T*>(dst),
                                                                     outer, n_big, offset, len, inner, into_big,
                                                                     accumulate);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void block_into(DType t, const void* small, void* big, int64_t outer, int64_t n_big, int64_t offset, int64_t len,
                int64_t inner, bool accumulate, cudaStream_t s) {
    block(t, small, big, outer, n_big, offset, len, inner, true, accumulate, s);
}

void block_from(DType t, const void* big, void* small, int64_t outer, int64_t n_big, int64_t offset, int64_t len,
                int64_t inner, bool accumulate, cudaStream_t s) {
    block(t, big, small, outer, n_big, offset, len, inner, false, accumulate, s);
}

void permute(DType t, const void* x, const Shape& dims, const std::vector<int>& order, void* y, bool accumulate,
             cudaStream_t s) {
    if (dims.size() > size_t(max_rank) || order.size() != dims.size())
        throw std::invalid_argument(cat("cuda: permute of ", to_string(dims), " needs an order of its rank <= 6"));
    Perm p{int(dims.size()), {}, {}};
    int64_t xs[max_rank], stride = 1;
    for (int d = p.rank - 1; d >= 0; --d) xs[d] = stride, stride *= dims[size_t(d)];
    for (int d = 0; d < p.rank; ++d) p.ydims[d] = dims[size_t(order[size_t(d)])], p.xstride[d] = xs[order[size_t(d)]];
    int64_t n = numel(dims);
    dispatch(t, [&](auto* q) {
        using T = std::remove_pointer_t<decltype(q)>;
        permute_kernel<T><<<blocks_for(n), threads_per_block, 0, s>>>(static_cast<const T*>(x), p,
                                                                       static_cast<T*>(y), n, accumulate);
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
