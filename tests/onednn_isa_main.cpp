// test_onednn's main. ctest runs the suite once per instruction set (tests/CMakeLists.txt sets
// ONEDNN_MAX_CPU_ISA): oneDNN picks other kernels and other layouts per ISA, so a defect can live
// in one of them only (the AVX-512-only concat crash did), and one host covers every ISA below its
// own. A run capped at an ISA the host lacks is reported as skipped (77), not passed.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
    const char* cap = std::getenv("ONEDNN_MAX_CPU_ISA");
    std::string effective = isa_name(dnnl::get_effective_cpu_isa());
    if (cap && *cap && std::string(cap) != "ALL" && effective != cap) {
        std::printf("skipped: oneDNN capped at %s runs %s on this host, which lacks %s\n", cap, effective.c_str(), cap);
        return 77;
    }
    std::printf("oneDNN runs %s kernels%s\n", effective.c_str(), cap && *cap ? " (capped by ONEDNN_MAX_CPU_ISA)" : "");
    doctest::Context context(argc, argv);
    return context.run();
}
