#pragma once
// The kernels of kernels/simd as each build of them runs: what every caller links (`dispatch`,
// where the loader picks one build for the CPU's instruction set) and the builds for one
// instruction set each (kernels/CMakeLists.txt), of which this host can run those it supports.
#include <string>
#include <vector>

#include "kernels/simd/simd.h"

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

}  // namespace ridge::kbench
