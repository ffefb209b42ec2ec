// Roofline arithmetic on hand-computed cases, the plateaus a sweep's points fall into, and the
// CPU probes at quick settings (positive, and never above 1.1x this machine's theoretical peak).
// The chip database itself is checked in test_chips.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "roofline/chips.h"
#include "roofline/roofline.h"

using namespace ridge::roofline;

TEST_CASE("roofline arithmetic on hand-computed cases") {
    const double peak = 100e9, bw = 25e9;  // 100 GFLOP/s, 25 GB/s: ridge at 4 FLOP/B
    CHECK(ridge_point(peak, bw) == 4.0);
    SUBCASE("below the ridge: memory-bound") {
        CHECK(attainable(peak, bw, 2.0) == 50e9);
        CHECK(bound_at(peak, bw, 2.0) == Bound::memory);
        CHECK(ridge_ratio(peak, bw, 2.0) == 0.5);
        CHECK(fraction_of_roof(40e9, peak, bw, 2.0) == doctest::Approx(0.8));
    }
    SUBCASE("at and above the ridge: compute-bound") {
        CHECK(attainable(peak, bw, 4.0) == 100e9);
        CHECK(bound_at(peak, bw, 4.0) == Bound::compute);
        CHECK(attainable(peak, bw, 8.0) == 100e9);
        CHECK(bound_at(peak, bw, 8.0) == Bound::compute);
        CHECK(ridge_ratio(peak, bw, 8.0) == 2.0);
        CHECK(fraction_of_roof(90e9, peak, bw, 8.0) == doctest::Approx(0.9));
    }
    SUBCASE("a workload: 1 GFLOP over 1 GB takes at least 40 ms (the bytes), not 10 ms") {
        Placement p = place(1e9, 1e9, peak, bw);
        CHECK(p.intensity == 1.0);
        CHECK(p.min_seconds == doctest::Approx(0.04));
        CHECK(p.attainable_flops == 25e9);
        CHECK(p.bound == Bound::memory);
        CHECK(min_seconds(8e9, 1e9, peak, bw) == doctest::Approx(0.08));  // FLOP-bound now
    }
    SUBCASE("per memory level: the same point is compute-bound from L1, memory-bound from DRAM") {
        Roofline r;
        r.peak_flops[size_t(index(Precision::fp32))] = peak;
        r.levels = {{"L1", 400e9}, {"DRAM", 25e9}};
        REQUIRE(r.level("l1"));
        REQUIRE(r.level("dram"));
        CHECK(r.level("l3") == nullptr);
        CHECK(attainable(*r.peak(Precision::fp32), r.level("L1")->bytes_per_s, 1.0) == 100e9);
        CHECK(bound_at(*r.peak(Precision::fp32), r.level("L1")->bytes_per_s, 1.0) == Bound::compute);
        CHECK(attainable(*r.peak(Precision::fp32), r.level("DRAM")->bytes_per_s, 1.0) == 25e9);
        CHECK(!r.peak(Precision::fp16));
    }
    SUBCASE("per precision: a datasheet chip's fp16 roof") {
        static const std::vector<Chip> chips = load_chips(default_chips_path());
        const Chip* h100 = find_chip(chips, "NVIDIA H100 SXM5 80GB");
        REQUIRE(h100);
        Roofline r = datasheet_roofline(*h100);
        REQUIRE(r.levels.size() == 1);
        CHECK(r.levels[0].bytes_per_s == 3350e9);
        CHECK(ridge_point(*r.peak(Precision::fp16), r.levels[0].bytes_per_s) == doctest::Approx(989.4e12 / 3350e9));
        CHECK(ridge_point(*r.peak(Precision::fp32), r.levels[0].bytes_per_s) == doctest::Approx(66.9e12 / 3350e9));
    }
}

TEST_CASE("the slow-layer verdict: over 4x the roofline bound and over 20 us") {
    const double peak = 400e9, bw = 50e9;  // ridge at 8 FLOP/B
    SUBCASE("compute-bound work: 4 GFLOP over 1 MB is bound by its FLOPs, 10 ms") {
        Verdict v = judge(0.05, 4e9, 1e6, peak, bw);
        CHECK(v.bound_seconds == doctest::Approx(0.01));
        CHECK(v.ratio == doctest::Approx(5.0));
        CHECK(v.slow);
        CHECK(!judge(0.039, 4e9, 1e6, peak, bw).slow);  // 3.9x
        CHECK(!judge(0.04, 4e9, 1e6, peak, bw).slow);   // exactly 4x is not over it
    }
    SUBCASE("memory-bound work: 0.4 MFLOP over 5 MB is bound by its bytes, 100 us") {
        Verdict v = judge(1e-3, 4e5, 5e6, peak, bw);
        CHECK(v.bound_seconds == doctest::Approx(1e-4));
        CHECK(v.ratio == doctest::Approx(10.0));
        CHECK(v.slow);
    }
    SUBCASE("under 20 us nothing is slow, however far above its bound") {
        Verdict v = judge(15e-6, 4e5, 5e4, peak, bw);  // bound 1 us
        CHECK(v.ratio == doctest::Approx(15.0));
        CHECK(!v.slow);
        CHECK(judge(25e-6, 4e5, 5e4, peak, bw).slow);
    }
    SUBCASE("work that moves nothing: no ratio, slow once it takes over 20 us") {
        CHECK(judge(1e-3, 0, 0, peak, bw).ratio == 0);
        CHECK(judge(1e-3, 0, 0, peak, bw).slow);
        CHECK(!judge(1e-5, 0, 0, peak, bw).slow);
    }
}

// An H200's quick probes at 0e7bf56: fp32 FMA 64,072 GFLOP/s, fp16 mma 646,519. A bf16 layer's
// bound at the fp32 peak would be 10x too generous and hide every slow tensor-core layer.
TEST_CASE("a GPU layer's peak follows its precision: CUDA cores for fp32, tensor cores otherwise") {
    ridge::probe::gpu::GpuCeilings g;
    g.fp32_gflops = 64072;
    g.tensor_fp16_gflops = 646519;
    CHECK(g.peak_gflops("fp32") == 64072);
    CHECK(g.peak_gflops("fp16") == 646519);
    CHECK(g.peak_gflops("bf16") == 646519);
    CHECK(g.peak_gflops("tf32") == doctest::Approx(646519 / 2.0));
    SUBCASE("a GPU without a tensor-core figure (before Volta, or a probe that did not run)") {
        g.tensor_fp16_gflops = 0;
        for (const char* p : {"fp32", "tf32", "fp16", "bf16"}) CHECK(g.peak_gflops(p) == 64072);
    }
}

TEST_CASE("plateaus come from the cache sizes the CPU reports") {
    ridge::probe::CpuInfo cpu;
    cpu.caches = {{1, "Data", 32 << 10, 1, 2}, {2, "Unified", 512 << 10, 1, 2}, {3, "Unified", 32 << 20, 2, 1}};
    // Two threads: L1 holds 64 KiB of them together, L2 1 MiB, L3 32 MiB.
    std::vector<ridge::probe::SweepPoint> pts{{4 << 10, 400},  {16 << 10, 380}, {32 << 10, 390}, {64 << 10, 300},
                                              {256 << 10, 200}, {512 << 10, 190}, {4 << 20, 150}, {16 << 20, 140},
                                              {64 << 20, 60},  {128 << 20, 31},  {256 << 20, 29}};
    auto levels = ridge::probe::plateaus(cpu, 2, pts);
    REQUIRE(levels.size() == 4);
    CHECK(levels[0].level == "L1");
    CHECK(levels[0].points == 3);       // 4, 16, 32 KiB: at most half of 64 KiB
    CHECK(levels[0].gbs == 395);         // upper quartile of 380, 390, 400
    CHECK(levels[1].level == "L2");
    CHECK(levels[1].from_bytes == 256 << 10);  // from twice L1 (128 KiB) to half of L2 (512 KiB)
    CHECK(levels[1].gbs == doctest::Approx(197.5));
    CHECK(levels[2].level == "L3");
    CHECK(levels[2].points == 2);        // 4 and 16 MiB
    CHECK(levels[3].level == "DRAM");
    CHECK(levels[3].from_bytes == 128 << 20);  // from 4x the last level
    CHECK(levels[3].gbs == doctest::Approx(30.5));
}

TEST_CASE("CPU probes at quick settings: positive, never above 1.1x the theoretical peak") {
    ridge::probe::CpuInfo cpu = ridge::probe::cpu_info();
    REQUIRE(!cpu.core_cpus.empty());
    REQUIRE(cpu.level(1));
    int threads = int(cpu.core_cpus.size());
    ridge::probe::FmaUnits units = ridge::probe::fma_units(cpu);
    CHECK(!units.rule.empty());
    double clock = ridge::probe::measure_clock_ghz(cpu, threads, 0.01);
    CHECK(clock > 0.2);
    CHECK(clock < 8.0);
    ridge::probe::FmaResult fma = ridge::probe::measure_fma(cpu, threads, 0.02, 5);
    CHECK(fma.gflops > 0);
    if (units.units > 0) {
        double theoretical = threads * clock * units.fp32_flops_per_cycle();
        CAPTURE(theoretical);
        CAPTURE(fma.gflops);
        CHECK(fma.gflops <= 1.1 * theoretical);
    }
    ridge::probe::StreamResult st = ridge::probe::measure_stream(cpu, threads, 0, 2);
    CHECK(st.array_bytes >= 2 * cpu.llc_bytes_total());  // each timed run reads and writes halves: 3x the cache
    for (double v : {st.copy, st.scale, st.add, st.triad, st.triad_cached_stores, st.memcpy}) {
        CHECK(v > 0);
        CHECK(v < 2000);  // GB/s
    }
    auto sweep = ridge::probe::measure_sweep(cpu, threads, 1, 0.005);
    REQUIRE(sweep.size() >= 10);
    CHECK(sweep.front().bytes <= 4096 + 256 * threads);
    CHECK(sweep.back().bytes >= 4 * cpu.llc_bytes_total());
    for (const auto& p : sweep) CHECK(p.gbs > 0);
    auto levels = ridge::probe::plateaus(cpu, threads, sweep);
    REQUIRE(levels.size() >= 2);
    CHECK(levels.front().level == "L1");
    CHECK(levels.back().level == "DRAM");
    CHECK(levels.front().gbs > levels.back().gbs);
}
