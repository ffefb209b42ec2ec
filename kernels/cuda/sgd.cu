// SGD with momentum and weight decay (torch.optim.SGD's convention) on fp32 master weights. With
// 16-bit storage the update is applied in fp32 and the 16-bit copy the layers read is rounded from
// the result, so updates smaller than a 16-bit ulp of the weight still accumulate over steps.
// inv_scale undoes fp16's loss scale.
#include "kernels/cuda/common.cuh"

namespace ridge::gpu {

namespace {

template <class G, class C>
__global__ void sgd_kernel(float* w, const G* g, float* velocity, C* copy, int64_t n, SgdStep p) {
    RIDGE_GRID_STRIDE(e, n) {
        float d = ld(g, e) * p.inv_scale + p.weight_decay * w[e];
        if (velocity) {
            d = p.momentum * velocity[e] + d;
            velocity[e] = d;
        }
        float v = w[e] - p.lr * d;
        w[e] = v;
        if (copy) st(copy, e, v);
    }
}

}  // namespace

void sgd(float* w, Dt gt, const void* g, float* velocity, Dt ct, void* copy, int64_t n, const SgdStep& step,
         cudaStream_t s) {
    dispatch(gt, [&](auto* pg) {
        using G = std::remove_pointer_t<decltype(pg)>;
        dispatch(ct, [&](auto* pc) {
            using C = std::remove_pointer_t<decltype(pc)>;
            sgd_kernel<G, C><<<blocks_for(n), threads_per_block, 0, s>>>(w, static_cast<const G*>(g), velocity,
                                                                          static_cast<C*>(copy), n, step);
        });
    });
    RIDGE_CUDA_CHECK_LAUNCH();
}

}  // namespace ridge::gpu
