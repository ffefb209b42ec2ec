// The chip database (every kind present, units sane, derived peaks recomputed here), roofline
// arithmetic on hand-computed cases, every kind of malformed chip file, and the CPU probes at
// quick settings (positive, and never above 1.1x this machine's theoretical peak).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kernels/cpu/probes.h"
#include "roofline/chips.h"
#include "roofline/roofline.h"

using namespace ridge::roofline;

namespace {

const std::vector<Chip>& db() {
    static const std::vector<Chip> chips = load_chips(default_chips_path());
    return chips;
}

std::string error_of(const std::string& text) {
    try {
        parse_chips(text, "bad.csv");
    } catch (const ChipFileError& e) {
        return e.what();
    }
    return "(no error)";
}

// A valid one-row file, built from named cells so each test changes exactly one thing.
std::map<std::string, std::string> good_row() {
    return {{"name", "Test Chip"}, {"kind", "gpu"},        {"vendor", "Acme"},     {"year", "2022"},
            {"fp32_tflops", "9.6"}, {"fp16_tflops", "40"},  {"mem_bw_gbs", "1000"}, {"mem_gb", "16"},
            {"mem_type", "HBM2"},  {"tdp_w", "300"},       {"units", "50"},        {"clock_ghz", "1.5"},
            {"fp32_per_cycle", "128"}, {"source", "https://example.com/sheet"}, {"notes", "a, quoted note"}};
}

std::string file_of(const std::vector<std::map<std::string, std::string>>& rows,
                    std::vector<std::string_view> header = chip_columns()) {
    std::string s = "# a comment line, then the header\n";
    for (size_t i = 0; i < header.size(); ++i) s += (i ? "," : "") + std::string(header[i]);
    s += "\n";
    for (const auto& r : rows) {
        std::string line;
        for (size_t i = 0; i < header.size(); ++i) {
            auto it = r.find(std::string(header[i]));
            std::string v = it == r.end() ? "" : it->second;
            if (v.find(',') != std::string::npos) v = "\"" + v + "\"";
            line += (i ? "," : "") + v;
        }
        s += line + "\n";
    }
    return s;
}

}  // namespace

TEST_CASE("the database: at least 24 chips, every kind, one source URL per row") {
    const auto& chips = db();
    CHECK(chips.size() >= 24);
    std::map<ChipKind, int> per_kind;
    std::set<std::string> names;
    for (const Chip& c : chips) {
        CAPTURE(c.name);
        ++per_kind[c.kind];
        CHECK(names.insert(c.name).second);
        CHECK((c.source.starts_with("https://") || c.source.starts_with("http://")));
        CHECK(!c.vendor.empty());
    }
    CHECK(per_kind[ChipKind::cpu] >= 6);
    CHECK(per_kind[ChipKind::gpu] >= 6);
    CHECK(per_kind[ChipKind::asic] >= 4);
    CHECK(per_kind[ChipKind::soc] >= 4);
    CHECK(per_kind[ChipKind::fpga] >= 2);
}

TEST_CASE("the database: units are sane") {
    for (const Chip& c : db()) {
        CAPTURE(c.name);
        CHECK(c.year >= 2015);
        CHECK(c.year <= 2030);
        for (Precision p : precisions)
            if (auto v = c.peak_tflops[size_t(index(p))]) {
                CAPTURE(precision_name(p));
                // TFLOP/s, not GFLOP/s or FLOP/s: from an edge SoC to a rack-scale accelerator.
                CHECK(*v > 0.5);
                CHECK(*v < 10000);
            }
        if (c.mem_bw_gbs) {
            CHECK(*c.mem_bw_gbs > 10);  // GB/s, not TB/s
            CHECK(*c.mem_bw_gbs < 20000);
            for (Precision p : precisions)
                if (auto f = c.peak_flops(p)) {
                    double ridge = ridge_point(*f, *c.bandwidth_bytes());
                    CAPTURE(ridge);
                    CHECK(ridge > 1);
                    CHECK(ridge < 1000);
                }
        }
        if (c.mem_gb) CHECK(*c.mem_gb < 4096);
        if (c.tdp_w) {
            CHECK(*c.tdp_w >= 5);
            CHECK(*c.tdp_w <= 1500);
        }
        // Narrower formats are never slower on the same chip (dense figures throughout).
        auto peak = [&](Precision p) { return c.peak_tflops[size_t(index(p))]; };
        if (peak(Precision::fp16) && peak(Precision::fp32)) CHECK(*peak(Precision::fp16) >= *peak(Precision::fp32));
        if (peak(Precision::tf32) && peak(Precision::fp32)) CHECK(*peak(Precision::tf32) >= *peak(Precision::fp32));
        if (peak(Precision::int8) && peak(Precision::fp16)) CHECK(*peak(Precision::int8) >= *peak(Precision::fp16));
        if (peak(Precision::fp32) && peak(Precision::fp64)) CHECK(*peak(Precision::fp32) >= *peak(Precision::fp64));
    }
}

TEST_CASE("the database: derived peaks recomputed from their factors") {
    int derived = 0, derived_cpus = 0;
    for (const Chip& c : db()) {
        for (Precision p : precisions) {
            auto factor = c.per_cycle[size_t(index(p))];
            if (!factor) continue;
            CAPTURE(c.name);
            CAPTURE(precision_name(p));
            REQUIRE(c.units);
            REQUIRE(c.clock_ghz);
            double recomputed = *c.units * *c.clock_ghz * 1e9 * *factor / 1e12;  // TFLOP/s
            REQUIRE(c.peak_tflops[size_t(index(p))]);
            CHECK(std::fabs(*c.peak_tflops[size_t(index(p))] - recomputed) <= 0.005 * recomputed);
            ++derived;
            derived_cpus += c.kind == ChipKind::cpu;
        }
    }
    CHECK(derived >= 16);
    CHECK(derived_cpus >= 12);  // fp64 and fp32 of six CPUs
    // By hand: 64 Zen 3 cores x 2.45 GHz x (2 FMA pipes x 8 lanes x 2 FLOP) = 5017.6 GFLOP/s.
    const Chip* epyc = find_chip(db(), "amd epyc 7763");
    REQUIRE(epyc);
    CHECK(*epyc->peak_tflops[size_t(index(Precision::fp32))] == doctest::Approx(5.0176).epsilon(1e-12));
    CHECK(*epyc->peak_tflops[size_t(index(Precision::fp64))] == doctest::Approx(2.5088).epsilon(1e-12));
    // 132 SMs x 1.98 GHz x 128 lanes x 2 FLOP = 66.9 TFLOP/s, the datasheet's figure.
    const Chip* h100 = find_chip(db(), "NVIDIA H100 SXM5 80GB");
    REQUIRE(h100);
    CHECK(*h100->derived_tflops(Precision::fp32) == doctest::Approx(66.90816));
}

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
        const Chip* h100 = find_chip(db(), "NVIDIA H100 SXM5 80GB");
        REQUIRE(h100);
        Roofline r = datasheet_roofline(*h100);
        REQUIRE(r.levels.size() == 1);
        CHECK(r.levels[0].bytes_per_s == 3350e9);
        CHECK(ridge_point(*r.peak(Precision::fp16), r.levels[0].bytes_per_s) == doctest::Approx(989.4e12 / 3350e9));
        CHECK(ridge_point(*r.peak(Precision::fp32), r.levels[0].bytes_per_s) == doctest::Approx(66.9e12 / 3350e9));
    }
}

TEST_CASE("a well-formed file parses, quotes and comments included") {
    auto chips = parse_chips(file_of({good_row()}), "good.csv");
    REQUIRE(chips.size() == 1);
    CHECK(chips[0].name == "Test Chip");
    CHECK(chips[0].notes == "a, quoted note");
    CHECK(chips[0].line == 3);
    CHECK(*chips[0].derived_tflops(Precision::fp32) == doctest::Approx(9.6));
}

TEST_CASE("malformed chip files fail with the file, line and field") {
    auto row = good_row();
    row["fp32_per_cycle"] = "";  // most cases below are not about the derivation
    SUBCASE("missing column") {
        std::vector<std::string_view> header = chip_columns();
        header.erase(std::find(header.begin(), header.end(), "tdp_w"));
        CHECK(error_of(file_of({row}, header)) == "bad.csv:2: field 'tdp_w': missing column in the header");
    }
    SUBCASE("unknown column") {
        std::vector<std::string_view> header = chip_columns();
        header.push_back("colour");
        CHECK(error_of(file_of({row}, header)) == "bad.csv:2: field 'colour': unknown column");
    }
    SUBCASE("non-numeric value") {
        row["fp32_tflops"] = "fast";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'fp32_tflops': 'fast' is not a number");
    }
    SUBCASE("negative peak") {
        row["fp16_tflops"] = "-40";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'fp16_tflops': must be positive, got -40");
    }
    SUBCASE("duplicate name, whatever its case") {
        auto second = row;
        second["name"] = "TEST CHIP";
        CHECK(error_of(file_of({row, second})) == "bad.csv:4: field 'name': 'TEST CHIP' duplicates line 3");
    }
    SUBCASE("unknown kind") {
        row["kind"] = "npu";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'kind': 'npu' is not one of cpu, gpu, asic, soc, fpga");
    }
    SUBCASE("no source") {
        row["source"] = "";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'source': is empty");
        row["source"] = "the vendor's website";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'source': 'the vendor's website' is not an http(s) URL");
    }
    SUBCASE("no peak at all") {
        row["fp32_tflops"] = row["fp16_tflops"] = "";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'fp32_tflops': the row has no peak in any precision");
    }
    SUBCASE("a short row names the first missing field") {
        std::string text = file_of({row});
        text = text.substr(0, text.rfind(",\"a, quoted note\"")) + "\n";
        CHECK(error_of(text) == "bad.csv:3: field 'notes': row has 21 fields, the header 22");
    }
    SUBCASE("a derived peak that does not match its factors") {
        row["fp32_per_cycle"] = "128";
        row["fp32_tflops"] = "12";  // 50 x 1.5 GHz x 128 = 9.6 TFLOP/s
        CHECK(error_of(file_of({row})) ==
              "bad.csv:3: field 'fp32_tflops': 12 differs from units x clock_ghz x fp32_per_cycle / 1000 = 9.6 by more than 0.5%");
        row["fp32_tflops"] = "9.6";
        row["clock_ghz"] = "";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'clock_ghz': is empty but fp32_per_cycle needs it");
    }
    SUBCASE("bad year, unterminated quote, unreadable file") {
        row["year"] = "20x2";
        CHECK(error_of(file_of({row})) == "bad.csv:3: field 'year': '20x2' is not a year");
        CHECK(error_of(file_of({good_row()}) + "\"Broken,gpu\n") == "bad.csv:4: field '(line)': unterminated quote");
        CHECK_THROWS_WITH_AS(load_chips("/nonexistent/chips.csv"),
                             "/nonexistent/chips.csv:0: field '(file)': cannot be read: No such file or directory",
                             ChipFileError);
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
    CHECK(st.array_bytes >= 4 * cpu.llc_bytes_total());
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
