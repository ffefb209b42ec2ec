// test_onednn's main. ctest runs the suite once per instruction set (tests/CMakeLists.txt sets
// ONEDNN_MAX_CPU_ISA): oneDNN picks other kernels and other layouts per ISA, so a defect can live
// in one of them only (the AVX-512-only concat crash did), and one host covers every ISA below its
// own. A run capped at an ISA the host lacks is reported as skipped (77), not passed, and so is one
// capped at the host's own ISA, which runs the very kernels test_onednn does (AVX2 on an AVX2-only
// host, AVX512_CORE_BF16 on a Zen 4): 83 s of ctest's time on the 2-core Zen 3.
#define DOCTEST_CONFIG_IMPLEMENT
#include <cpuid.h>
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "cpu_features.h"

namespace {

const char* isa_name(dnnl::cpu_isa isa) {
    switch (isa) {
        case dnnl::cpu_isa::sse41: return "SSE41";
        case dnnl::cpu_isa::avx: return "AVX";
        case dnnl::cpu_isa::avx2: return "AVX2";
        case dnnl::cpu_isa::avx512_core: return "AVX512_CORE";
        case dnnl::cpu_isa::avx512_core_vnni: return "AVX512_CORE_VNNI";
        case dnnl::cpu_isa::avx512_core_bf16: return "AVX512_CORE_BF16";
        case dnnl::cpu_isa::avx512_core_amx: return "AVX512_CORE_AMX";
        default: return "another ISA";
    }
}

// The ISA oneDNN would run uncapped, from the CPU's own features (the cap, once set, hides it), or
// null where it may be one isa_name does not name. AMX named from CPUID alone (leaf 7: AMX-BF16,
// -TILE, -INT8 in EDX bits 22, 24, 25) even where the kernel has not granted it: a wrong guess there
// only runs a capped suite that repeats test_onednn, never skips one that does not. AVX2 with
// AVX-VNNI (oneDNN's avx2_vnni) is AVX2 here: its float kernels are AVX2's, and the planners test
// for AVX-512 by its bits (onednn::has_avx512_core), so both runs take the same branches. Null for
// AVX-512 without its core subset (Xeon Phi).
const char* host_isa() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!cpu_has_avx512_core()) {
        if (__builtin_cpu_supports("avx512f")) return nullptr;
        return __builtin_cpu_supports("avx2") ? "AVX2" : nullptr;
    }
    if (!__builtin_cpu_supports("avx512vnni")) return "AVX512_CORE";
    if (!__builtin_cpu_supports("avx512bf16")) return "AVX512_CORE_VNNI";
    const unsigned amx = (1u << 22) | (1u << 24) | (1u << 25);
    const bool has_amx = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & amx) == amx;
    return has_amx ? "AVX512_CORE_AMX" : "AVX512_CORE_BF16";
}

}  // namespace

int main(int argc, char** argv) {
    const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
    std::string effective = isa_name(dnnl::get_effective_cpu_isa());
    if (cap && *cap && std::string(cap) != "ALL" && effective != cap) {
        std::printf("skipped: oneDNN capped at %s runs %s on this host, which lacks %s\n", cap, effective.c_str(), cap);
        return 77;
    }
    const char* own = host_isa();
    if (cap && *cap && own && effective == own) {
        std::printf("skipped: capped at %s, this host's own ISA, oneDNN runs what test_onednn runs\n", cap);
        return 77;
    }
    std::printf("oneDNN runs %s kernels%s\n", effective.c_str(), cap && *cap ? " (capped by ONEDNN_MAX_CPU_ISA)" : "");
    doctest::Context context(argc, argv);
    return context.run();
}
