#pragma once
// The kernels of each build for one instruction set (kernels/CMakeLists.txt), declared from the
// lines that declare the dispatch's (kernels.inc in each namespace), so no build's signature can
// drift from simd.h's.
#include "kernels/simd/simd.h"

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
#define RIDGE_SIMD_ISA dispatch
