#include "bench/kernels/simd_variants.h"

#include <utility>

// The single-ISA builds' entry points, declared from the lines that declare the dispatch build's
// (kernels.inc in each namespace), so a copy's signature cannot drift from simd.h.
#undef RIDGE_SIMD_ISA
#define RIDGE_SIMD_ISA x86_64_v4
#include "kernels/simd/kernels.inc"
#undef RIDGE_SIMD_ISA
#define RIDGE_SIMD_ISA x86_64_v3
#include "kernels/simd/kernels.inc"
#undef RIDGE_SIMD_ISA
#define RIDGE_SIMD_ISA x86_64
#include "kernels/simd/kernels.inc"
#undef RIDGE_SIMD_ISA

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

std::string dispatched_isa() {
    if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4";
    if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3";
    return "x86-64";
}

}  // namespace ridge::kbench
