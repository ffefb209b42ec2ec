// What every caller of kernels/simd links: each kernel of the dispatch namespace is an indirect
// function (GCC's ifunc), which the dynamic loader binds once, at load, to the build for the widest
// instruction set this CPU runs: x86-64-v4 (AVX-512), x86-64-v3 (AVX2 and FMA), else baseline
// x86-64. The builds are the ones bench/kernels and tests/test_simd_kernels run one by one, so
// what ridge runs on a host is object code those tests checked on it. (GCC's target_clones did
// the same per leaf, but compiled every kernel a second time beside the three builds.)
#include "kernels/simd/builds.h"

namespace ridge::simd {
namespace {

// Runs inside the resolvers, which the loader calls while it relocates the program, before any
// constructor: before libgcc's CPU model (hence __builtin_cpu_init) and before the sanitizers'
// runtimes, so nothing here may be instrumented.
#define RIDGE_SIMD_UNINSTRUMENTED __attribute__((no_sanitize("address", "undefined")))

template <class Choice>
RIDGE_SIMD_UNINSTRUMENTED Choice widest(Choice v4, Choice v3, Choice baseline) {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("x86-64-v4")) return v4;
    if (__builtin_cpu_supports("x86-64-v3")) return v3;
    return baseline;
}

}  // namespace

const char* dispatched_isa() { return widest("x86-64-v4", "x86-64-v3", "x86-64"); }

// A resolver returns the build's function itself, typed as the kernel is (GCC checks the type).
#define RIDGE_SIMD_RESOLVE(ns, name)                                                           \
    extern "C" RIDGE_SIMD_UNINSTRUMENTED decltype(&x86_64::name) ridge_simd_resolve_##name() { \
        return widest(&x86_64_v4::name, &x86_64_v3::name, &x86_64::name);                      \
    }                                                                                          \
    namespace ns {                                                                             \
    decltype(x86_64::name) name __attribute__((ifunc("ridge_simd_resolve_" #name)));           \
    }
RIDGE_SIMD_KERNELS(RIDGE_SIMD_RESOLVE, dispatch)
#undef RIDGE_SIMD_RESOLVE

}  // namespace ridge::simd
