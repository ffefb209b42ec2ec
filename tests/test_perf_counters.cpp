// The CPU's FLOP counters (profile/perf_events.h) against loops whose FLOPs are counted by hand:
// each is run for N and for 2N iterations in two ranges of the same pass, so what the loop does
// once (set-up, the final reduction) cancels and the difference is exactly N times its body.
// Without counters (a VM without a PMU, perf_event_paranoid 3, a CPU ridge has no events for) the
// binary prints why and exits 77, which ctest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <immintrin.h>  // SSE is part of x86-64, the only target ridge builds its probes for

#include <functional>
#include <iostream>

#include "roofline/probes/cpu/kernels.h"
#include "roofline/probes/cpu/probes.h"
#include "profile/perf_events.h"

using namespace ridge;
using namespace ridge::profile;

namespace {

std::unique_ptr<CounterSource> source;

// Per counter (weighted), the counts of loop(2n) less those of loop(n).
std::vector<int64_t> difference(const std::function<void(int64_t)>& loop, int64_t n) {
    CounterSource& s = *source;
    s.prepare(2);
    for (int pass = 0; pass < s.passes(); ++pass) {
        s.begin_pass(pass);
        s.begin_range("n");
        loop(n);
        s.end_range();
        s.begin_range("2n");
        loop(2 * n);
        s.end_range();
        s.end_pass();
    }
    std::vector<std::vector<int64_t>> r = s.results();
    REQUIRE(r.size() == 2);
    std::vector<int64_t> d;
    for (size_t c = 0; c < s.counters().size(); ++c) d.push_back(weighted(s.counters()[c], r[1][c] - r[0][c]));
    return d;
}

int64_t total_flops(const std::vector<int64_t>& d) {
    int64_t t = 0;
    for (size_t c = 0; c < d.size(); ++c)
        if (source->counters()[c].measure == Measure::flops) t += d[c];
    return t;
}

// The weighted difference of the counter labelled `label`; -1 when the source has none.
int64_t by_label(const std::vector<int64_t>& d, const std::string& label) {
    for (size_t c = 0; c < d.size(); ++c)
        if (source->counters()[c].label == label) return d[c];
    return -1;
}

volatile double vd = 1e-9;
volatile float vf = 1e-6f;

// One scalar fp64 add per iteration (the volatile read keeps it a scalar add).
void scalar_double_adds(int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += vd;
    vd = s;
}

// One scalar fp32 multiply per iteration.
void scalar_float_muls(int64_t n) {
    float s = 1;
    for (int64_t i = 0; i < n; ++i) s *= vf;
    vf = s;
}

// One 128-bit packed fp32 divide per iteration: 4 FLOPs (SSE, on every x86-64).
void packed_divs(int64_t n) {
    __m128 a = _mm_set1_ps(vf), b = _mm_set1_ps(1.0001f);
    for (int64_t i = 0; i < n; ++i) {
        a = _mm_div_ps(a, b);
        __asm__ volatile("" : "+x"(a));
    }
    vf = _mm_cvtss_f32(a);
}

}  // namespace

TEST_CASE("the FMA probe's kernel: every FLOP of its body, as FMAs") {
    probe::CpuInfo cpu = probe::cpu_info();
    const int64_t n = 200000;
    if (cpu.avx512f) {
        std::vector<int64_t> d = difference([](int64_t k) { probe::kernels::fma_avx512(k); }, n);
        CHECK(total_flops(d) == n * probe::kernels::fma_avx512_flops_per_iteration);
        int64_t fma = by_label(d, "fma");
        if (fma >= 0) CHECK(fma == n * probe::kernels::fma_avx512_flops_per_iteration);
        int64_t packed = by_label(d, "fp32 packed");
        if (packed >= 0) CHECK(packed == n * probe::kernels::fma_avx512_flops_per_iteration);
        int64_t wide = by_label(d, "fp32 512-bit");
        if (wide >= 0) CHECK(wide == n * probe::kernels::fma_avx512_flops_per_iteration);
    }
    if (cpu.avx2 && cpu.fma) {
        std::vector<int64_t> d = difference([](int64_t k) { probe::kernels::fma_avx2(k); }, n);
        CHECK(total_flops(d) == n * probe::kernels::fma_avx2_flops_per_iteration);
        int64_t fma = by_label(d, "fma");
        if (fma >= 0) CHECK(fma == n * probe::kernels::fma_avx2_flops_per_iteration);
    }
}

TEST_CASE("scalar and packed loops: precision, width and kind") {
    const int64_t n = 1000000;
    SUBCASE("fp64 scalar adds") {
        std::vector<int64_t> d = difference(scalar_double_adds, n);
        CHECK(total_flops(d) == n);
        if (int64_t v = by_label(d, "add/sub"); v >= 0) CHECK(v == n);
        if (int64_t v = by_label(d, "fp64 scalar"); v >= 0) CHECK(v == n);
        if (int64_t v = by_label(d, "fp32 scalar"); v >= 0) CHECK(v == 0);
    }
    SUBCASE("fp32 scalar multiplies") {
        std::vector<int64_t> d = difference(scalar_float_muls, n);
        CHECK(total_flops(d) == n);
        if (int64_t v = by_label(d, "mul"); v >= 0) CHECK(v == n);
        if (int64_t v = by_label(d, "fp32 scalar"); v >= 0) CHECK(v == n);
        if (int64_t v = by_label(d, "fp64 scalar"); v >= 0) CHECK(v == 0);
    }
    SUBCASE("fp32 128-bit divides") {
        std::vector<int64_t> d = difference(packed_divs, n);
        CHECK(total_flops(d) == 4 * n);
        if (int64_t v = by_label(d, "div/sqrt"); v >= 0) CHECK(v == 4 * n);
        if (int64_t v = by_label(d, "fp32 packed"); v >= 0) CHECK(v == 4 * n);
        if (int64_t v = by_label(d, "fp32 128-bit"); v >= 0) CHECK(v == 4 * n);
    }
}

TEST_CASE("an empty range counts nothing") {
    std::vector<int64_t> d = difference([](int64_t) {}, 1);
    for (int64_t v : d) CHECK(v == 0);
}

int main(int argc, char** argv) {
    std::string why;
    source = open_cpu_counters(&why);
    if (!source) {
        std::cout << "skipped: " << why << "\n";
        return 77;
    }
    std::cout << source->describe() << "\n";
    doctest::Context context(argc, argv);
    return context.run();
}
