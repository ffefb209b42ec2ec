// The CPU's own AVX-512 core subset (F, BW, VL, DQ), read from the CPU and not from oneDNN, whose
// answer ONEDNN_MAX_CPU_ISA caps: test_onednn's ISA test and its per-ISA main both need the uncapped
// truth.
#pragma once

inline bool cpu_has_avx512_core() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}
