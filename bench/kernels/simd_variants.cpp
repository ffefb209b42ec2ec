#include "bench/kernels/simd_variants.h"

#include <utility>

#include "kernels/simd/builds.h"

namespace ridge::kbench {

#define RIDGE_SIMD_TAKE(ns, name) v.name = &simd::ns::name;
#define RIDGE_SIMD_VARIANT(ns)                           \
    [](std::string isa, bool supported) {                \
        SimdVariant v;                                   \
        v.isa = std::move(isa), v.supported = supported; \
        RIDGE_SIMD_KERNELS(RIDGE_SIMD_TAKE, ns)          \
        return v;                                        \
    }

const std::vector<SimdVariant>& simd_variants() {
    static const std::vector<SimdVariant> v = {
        RIDGE_SIMD_VARIANT(dispatch)("dispatch", true),
        RIDGE_SIMD_VARIANT(x86_64_v4)("x86-64-v4", __builtin_cpu_supports("x86-64-v4") != 0),
        RIDGE_SIMD_VARIANT(x86_64_v3)("x86-64-v3", __builtin_cpu_supports("x86-64-v3") != 0),
        RIDGE_SIMD_VARIANT(x86_64)("x86-64", true),
    };
    return v;
}

std::vector<SimdVariant> runnable_simd_variants() {
    std::vector<SimdVariant> out;
    for (const SimdVariant& v : simd_variants())
        if (v.supported) out.push_back(v);
    return out;
}

}  // namespace ridge::kbench
