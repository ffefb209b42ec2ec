// The chip database (roofline/chips.csv, peaks.csv, cpu_clocks.csv): every kind drawable at
// fp32, units sane, every derived number redone here from the arithmetic stored beside it (with
// an evaluator of its own, not the loader's), hand-computed derivations, every kind of malformed
// file, and the CPU clock table behind the datasheet line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include "roofline/arithmetic.h"
#include "roofline/chips.h"
#include "roofline/cpu_clocks.h"
#include "roofline/roofline.h"

using namespace ridge::roofline;

namespace {

const std::vector<Chip>& db() {
    static const std::vector<Chip> chips = load_chips(default_chips_path());
    return chips;
}

// An evaluator written apart from roofline/arithmetic.cpp (shunting-yard to postfix, then a
// stack), so a bug in the loader's parser cannot agree with itself here.
double redo(const std::string& text) {
    std::vector<std::string> out, ops;
    auto prec = [](const std::string& op) { return op == "+" || op == "-" ? 1 : 2; };
    for (size_t i = 0; i < text.size();) {
        char c = text[i];
        if (c == ' ') {
            ++i;
        } else if (c == '[') {
            i = text.find(']', i) + 1;  // a unit: documentation only
        } else if (c == '(') {
            ops.push_back("(");
            ++i;
        } else if (c == ')') {
            while (ops.back() != "(") out.push_back(ops.back()), ops.pop_back();
            ops.pop_back();
            ++i;
        } else if (std::string("+-*/").find(c) != std::string::npos) {
            std::string op(1, c);
            while (!ops.empty() && ops.back() != "(" && prec(ops.back()) >= prec(op)) out.push_back(ops.back()), ops.pop_back();
            ops.push_back(op);
            ++i;
        } else {
            char* end = nullptr;
            double v = std::strtod(text.c_str() + i, &end);
            REQUIRE_MESSAGE(end != text.c_str() + i, "not a number at ", i, " in ", text);
            out.push_back(std::to_string(v));
            i = size_t(end - text.c_str());
        }
    }
    while (!ops.empty()) out.push_back(ops.back()), ops.pop_back();
    std::vector<double> st;
    for (const std::string& t : out) {
        if (t.size() == 1 && std::string("+-*/").find(t) != std::string::npos) {
            double b = st.back();
            st.pop_back();
            double& a = st.back();
            a = t == "+" ? a + b : t == "-" ? a - b : t == "*" ? a * b : a / b;
        } else {
            st.push_back(std::stod(t));
        }
    }
    REQUIRE(st.size() == 1);
    return st[0];
}

bool drawable(const Chip& c, Precision p) { return c.peak(p) && c.mem_bw_gbs; }

std::string error_of(const std::string& chips, const std::string& peaks) {
    try {
        parse_chips(chips, "chips.csv", peaks, "peaks.csv");
    } catch (const ChipFileError& e) {
        return e.what();
    }
    return "(no error)";
}

using Cells = std::map<std::string, std::string>;

// A file from named cells, each row only the cells it sets, so each test changes one thing.
std::string file_of(const std::vector<Cells>& rows, std::vector<std::string_view> header) {
    std::string s = "# a comment line, then the header\n";
    for (size_t i = 0; i < header.size(); ++i) s += (i ? "," : "") + std::string(header[i]);
    s += "\n";
    for (const Cells& r : rows) {
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

Cells good_chip() {
    return {{"name", "Test Chip"},  {"kind", "gpu"},       {"vendor", "Acme"},
            {"year", "2022"},       {"mem_bw_gbs", "1024"}, {"mem_bw_derivation", "4 [stacks] * 256 [GB/s]"},
            {"mem_gb", "16"},       {"mem_type", "HBM2"},  {"tdp_w", "300"},
            {"source", "https://example.com/sheet"},       {"notes", "a, quoted note"}};
}
Cells good_peak() {
    return {{"chip", "Test Chip"},
            {"precision", "fp32"},
            {"density", "dense"},
            {"tflops", "9.6"},
            {"derivation", "50 [SMs] * 1.5 [GHz] * 128 [FLOP/cycle] / 1000"},
            {"source", "https://example.com/sheet"}};
}
std::string chips_file(const std::vector<Cells>& rows) { return file_of(rows, chip_columns()); }
std::string peaks_file(const std::vector<Cells>& rows) { return file_of(rows, peak_columns()); }

}  // namespace

TEST_CASE("the database: every kind, a source for every chip and every peak") {
    const auto& chips = db();
    CHECK(chips.size() >= 30);
    std::map<ChipKind, int> per_kind;
    std::set<std::string> names;
    for (const Chip& c : chips) {
        CAPTURE(c.name);
        ++per_kind[c.kind];
        CHECK(names.insert(c.name).second);
        CHECK(c.source.starts_with("http"));
        CHECK(!c.peaks.empty());
        for (const Peak& k : c.peaks) CHECK(k.source.starts_with("http"));
    }
    CHECK(per_kind[ChipKind::cpu] >= 6);
    CHECK(per_kind[ChipKind::gpu] >= 6);
    CHECK(per_kind[ChipKind::asic] >= 6);
    CHECK(per_kind[ChipKind::soc] >= 4);
    CHECK(per_kind[ChipKind::fpga] >= 4);
}

// Which precisions each kind can be drawn at (a dense peak and a memory bandwidth): fp32
// everywhere, at least three per kind. The 16-bit, fp8 and int8 roofs are mostly GPUs' and ASICs'
// (the full count per kind is in roofline/README.md); no CPU in the database publishes one.
TEST_CASE("the database: every kind has at least 3 chips drawable at fp32; bf16, fp8, int8 on GPUs and ASICs") {
    std::map<std::pair<Precision, ChipKind>, int> n;
    for (const Chip& c : db())
        for (Precision p : precisions) n[{p, c.kind}] += drawable(c, p);
    for (ChipKind k : chip_kinds) {
        CAPTURE(kind_name(k));
        CHECK(n[{Precision::fp32, k}] >= 3);
    }
    for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp8, Precision::int8}) {
        CAPTURE(precision_name(p));
        CHECK(n[{p, ChipKind::gpu}] >= 3);
        CHECK(n[{p, ChipKind::asic}] >= 2);
    }
    CHECK(n[{Precision::bf16, ChipKind::asic}] >= 8);
    CHECK(n[{Precision::fp64, ChipKind::cpu}] >= 6);
    CHECK(n[{Precision::tf32, ChipKind::gpu}] >= 4);
}

TEST_CASE("the database: units are sane, narrower formats are never slower, a sparse figure exceeds the dense one") {
    for (const Chip& c : db()) {
        CAPTURE(c.name);
        CHECK(c.year >= 2015);
        CHECK(c.year <= 2030);
        for (const Peak& k : c.peaks) {
            CAPTURE(precision_name(k.precision));
            // TFLOP/s, not GFLOP/s or FLOP/s: from an edge SoC to a rack-scale accelerator.
            CHECK(k.tflops > 0.5);
            CHECK(k.tflops < 10000);
            if (k.sparse) {
                REQUIRE(c.peak(k.precision));
                CHECK(k.tflops > c.peak(k.precision)->tflops);
            }
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
        auto peak = [&](Precision p) { return c.peak_tflops(p); };
        auto at_least = [&](Precision narrow, Precision wide) {
            if (peak(narrow) && peak(wide)) CHECK_MESSAGE(*peak(narrow) >= *peak(wide), precision_name(narrow));
        };
        at_least(Precision::fp32, Precision::fp64);
        at_least(Precision::tf32, Precision::fp32);
        at_least(Precision::fp16, Precision::fp32);
        at_least(Precision::bf16, Precision::fp32);
        at_least(Precision::fp8, Precision::fp16);
        at_least(Precision::fp8, Precision::bf16);
        at_least(Precision::int8, Precision::fp16);
        at_least(Precision::int8, Precision::bf16);
    }
}

TEST_CASE("the database: every derived number redone from the arithmetic stored beside it") {
    int peaks = 0, bandwidths = 0;
    std::map<ChipKind, int> per_kind;
    for (const Chip& c : db()) {
        CAPTURE(c.name);
        for (const Peak& k : c.peaks) {
            if (!k.derived()) continue;
            CAPTURE(k.derivation);
            CHECK(std::fabs(k.tflops - redo(k.derivation)) <= 0.005 * redo(k.derivation));
            ++peaks;
            ++per_kind[c.kind];
        }
        if (!c.mem_bw_derivation.empty()) {
            CAPTURE(c.mem_bw_derivation);
            REQUIRE(c.mem_bw_gbs);
            CHECK(std::fabs(*c.mem_bw_gbs - redo(c.mem_bw_derivation)) <= 0.005 * redo(c.mem_bw_derivation));
            ++bandwidths;
        }
    }
    CHECK(peaks >= 40);
    CHECK(bandwidths >= 10);
    CHECK(per_kind[ChipKind::cpu] >= 13);  // fp64 and fp32 of six CPUs, Grace's fp32
    CHECK(per_kind[ChipKind::fpga] >= 3);
}

TEST_CASE("the database: derivations worked out by hand") {
    auto chip = [](const char* name) {
        const Chip* c = find_chip(db(), name);
        REQUIRE_MESSAGE(c, name);
        return c;
    };
    // Apple M1: LPDDR4X-4266 on a 128-bit bus, 4266e6 transfers/s x 16 B = 68.256 GB/s.
    CHECK(*chip("Apple M1")->mem_bw_gbs == doctest::Approx(4266e6 * 16 / 1e9).epsilon(1e-12));
    // 64 Zen 3 cores x 2.45 GHz x (2 FMA pipes x 8 lanes x 2 FLOP) = 5017.6 GFLOP/s.
    CHECK(*chip("AMD EPYC 7763")->peak_tflops(Precision::fp32) == doctest::Approx(5.0176).epsilon(1e-12));
    CHECK(*chip("AMD EPYC 7763")->mem_bw_gbs == doctest::Approx(8 * 8 * 3.2));
    // 132 SMs x 1.98 GHz x 128 lanes x 2 FLOP = 66.9 TFLOP/s, the datasheet's figure.
    CHECK(redo(chip("NVIDIA H100 SXM5 80GB")->peak(Precision::fp32)->derivation) == doctest::Approx(66.90816));
    // Stratix 10 MX: two HBM2 stacks of 8 channels x 128 bits at 2 Gbit/s per pin.
    CHECK(*chip("Intel Stratix 10 MX 2100")->mem_bw_gbs == doctest::Approx(2 * 8 * 128 * 2.0 / 8));
    CHECK(*chip("Intel Stratix 10 MX 2100")->peak_tflops(Precision::fp32) == doctest::Approx(3960 * 2 * 1.0e9 / 1e12));
    // Versal AI Engine: 400 tiles x 1.3 GHz x 8 fp32 MACs x 2 FLOP, and 128 int8 MACs for int8.
    CHECK(*chip("AMD Versal AI Core VC1902")->peak_tflops(Precision::fp32) == doctest::Approx(400 * 1.3e9 * 8 * 2 / 1e12));
    CHECK(redo(chip("AMD Versal AI Core VC1902")->peak(Precision::int8)->derivation) ==
          doctest::Approx(400 * 1.3e9 * 128 * 2 / 1e12));
    // NVIDIA quotes the L4's and the Jetsons' tensor figures sparse; dense is half.
    CHECK(*chip("NVIDIA L4")->peak_tflops(Precision::int8) == doctest::Approx(485.0 / 2));
    CHECK(*chip("NVIDIA Jetson Orin Nano 8GB")->peak_tflops(Precision::int8) == doctest::Approx(20));
    // Grace: the same SVE2 units hold twice as many fp32 lanes as fp64 ones.
    CHECK(*chip("NVIDIA Grace CPU Superchip")->peak_tflops(Precision::fp32) ==
          doctest::Approx(2 * *chip("NVIDIA Grace CPU Superchip")->peak_tflops(Precision::fp64)));
}

TEST_CASE("the arithmetic language: precedence, parentheses, units, and errors with their column") {
    CHECK(evaluate_arithmetic("2 + 3 * 4").value == 14);
    CHECK(evaluate_arithmetic("(2 + 3) * 4").value == 20);
    CHECK(evaluate_arithmetic("8 [channels] * 8 [B] * 3.2 [GT/s: DDR4-3200]").value == doctest::Approx(204.8));
    CHECK(evaluate_arithmetic("100 / 4 / 5").value == 5);  // left to right
    CHECK(evaluate_arithmetic("10 - 4 - 3").value == 3);
    CHECK(evaluate_arithmetic("4266e6 * 16 / 1e9").value == doctest::Approx(68.256));
    CHECK(evaluate_arithmetic("").error == "is empty");
    CHECK(evaluate_arithmetic("2 * ").error == "expected a number at column 5");
    CHECK(evaluate_arithmetic("2 [GHz").error == "unterminated '[' at column 3");
    CHECK(evaluate_arithmetic("(2 + 3").error == "expected ')' at column 7");
    CHECK(evaluate_arithmetic("2 x 3").error == "unexpected 'x' at column 3");
    CHECK(evaluate_arithmetic("2 \xc3\xa9 3").error == "unexpected byte 0xc3 at column 3");
    CHECK(evaluate_arithmetic("2\t\x7f").error == "unexpected byte 0x7f at column 3");
    CHECK(evaluate_arithmetic("1 / 0").error == "division by zero at column 6");
}

TEST_CASE("well-formed files parse: quotes, comments, a derived bandwidth and peak, a sparse row") {
    Cells sparse = good_peak();
    sparse["density"] = "sparse";
    sparse["derivation"] = "";
    sparse["tflops"] = "19.2";
    auto chips = parse_chips(chips_file({good_chip()}), "chips.csv", peaks_file({good_peak(), sparse}), "peaks.csv");
    REQUIRE(chips.size() == 1);
    const Chip& c = chips[0];
    CHECK(c.name == "Test Chip");
    CHECK(c.notes == "a, quoted note");
    CHECK(c.line == 3);
    CHECK(*c.mem_bw_gbs == 1024);
    REQUIRE(c.peaks.size() == 2);
    CHECK(c.peak(Precision::fp32)->derived());
    CHECK(c.peak(Precision::fp32)->line == 3);
    CHECK(*c.peak_tflops(Precision::fp32, true) == 19.2);
    CHECK(!c.peak(Precision::bf16));
}

TEST_CASE("malformed chip files fail with the file, line and field") {
    Cells chip = good_chip(), peak = good_peak();
    std::string peaks = peaks_file({peak});
    SUBCASE("missing column") {
        std::vector<std::string_view> header = chip_columns();
        header.erase(std::find(header.begin(), header.end(), "tdp_w"));
        CHECK(error_of(file_of({chip}, header), peaks) == "chips.csv:2: field 'tdp_w': missing column in the header");
    }
    SUBCASE("unknown column") {
        std::vector<std::string_view> header = chip_columns();
        header.push_back("colour");
        CHECK(error_of(file_of({chip}, header), peaks) == "chips.csv:2: field 'colour': unknown column");
    }
    SUBCASE("non-numeric and negative values") {
        chip["mem_gb"] = "lots";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'mem_gb': 'lots' is not a number");
        chip["mem_gb"] = "-16";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'mem_gb': must be positive, got -16");
    }
    SUBCASE("duplicate name, whatever its case") {
        auto second = chip;
        second["name"] = "TEST CHIP";
        CHECK(error_of(chips_file({chip, second}), peaks) == "chips.csv:4: field 'name': 'TEST CHIP' duplicates line 3");
    }
    SUBCASE("unknown kind, bad year") {
        chip["kind"] = "npu";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'kind': 'npu' is not one of cpu, gpu, asic, soc, fpga");
        chip["kind"] = "gpu";
        chip["year"] = "20x2";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'year': '20x2' is not a year");
    }
    SUBCASE("no source, or not a URL") {
        chip["source"] = "";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'source': is empty");
        chip["source"] = "the vendor's website";
        CHECK(error_of(chips_file({chip}), peaks) == "chips.csv:3: field 'source': 'the vendor's website' is not an http(s) URL");
    }
    SUBCASE("a short row names the first missing field") {
        std::string text = chips_file({chip});
        text = text.substr(0, text.rfind(",\"a, quoted note\"")) + "\n";
        CHECK(error_of(text, peaks) == "chips.csv:3: field 'notes': row has 11 fields, the header 12");
    }
    SUBCASE("a derived bandwidth that does not match its arithmetic, or is not arithmetic") {
        chip["mem_bw_gbs"] = "1000";
        CHECK(error_of(chips_file({chip}), peaks) ==
              "chips.csv:3: field 'mem_bw_gbs': 1000 differs from mem_bw_derivation 4 [stacks] * 256 [GB/s] = 1024 by "
              "more than 0.5%");
        chip["mem_bw_derivation"] = "4 stacks * 256";
        CHECK(error_of(chips_file({chip}), peaks) ==
              "chips.csv:3: field 'mem_bw_derivation': '4 stacks * 256' is not arithmetic: unexpected 's' at column 3");
        chip["mem_bw_gbs"] = "";
        chip["mem_bw_derivation"] = "4 * 256";
        CHECK(error_of(chips_file({chip}), peaks) ==
              "chips.csv:3: field 'mem_bw_gbs': is empty but mem_bw_derivation is given");
    }
    SUBCASE("a chip with no peak") {
        CHECK(error_of(chips_file({chip}), peaks_file({})) == "chips.csv:3: field 'name': 'Test Chip' has no peak in peaks.csv");
    }
    SUBCASE("a peak of a chip that is not in the chips file") {
        peak["chip"] = "Test Chop";
        CHECK(error_of(chips_file({chip}), peaks_file({peak})) ==
              "peaks.csv:3: field 'chip': 'Test Chop' is not a chip of chips.csv");
    }
    SUBCASE("bad precision, density, value") {
        peak["precision"] = "fp12";
        CHECK(error_of(chips_file({chip}), peaks_file({peak})) ==
              "peaks.csv:3: field 'precision': 'fp12' is not one of fp64, fp32, tf32, fp16, bf16, fp8, int8");
        peak["precision"] = "fp32";
        peak["density"] = "2:4";
        CHECK(error_of(chips_file({chip}), peaks_file({peak})) == "peaks.csv:3: field 'density': '2:4' is not dense or sparse");
        peak["density"] = "dense";
        peak["tflops"] = "";
        CHECK(error_of(chips_file({chip}), peaks_file({peak})) == "peaks.csv:3: field 'tflops': is empty");
    }
    SUBCASE("the same peak twice") {
        CHECK(error_of(chips_file({chip}), peaks_file({peak, peak})) ==
              "peaks.csv:4: field 'precision': a dense fp32 peak of 'Test Chip' is already on line 3");
    }
    SUBCASE("a derived peak that does not match its arithmetic") {
        peak["tflops"] = "12";  // 50 x 1.5 GHz x 128 = 9.6 TFLOP/s
        CHECK(error_of(chips_file({chip}), peaks_file({peak})) ==
              "peaks.csv:3: field 'tflops': 12 differs from derivation 50 [SMs] * 1.5 [GHz] * 128 [FLOP/cycle] / 1000 = 9.6 "
              "by more than 0.5%");
    }
    SUBCASE("unterminated quote, no header, unreadable files") {
        CHECK(error_of(chips_file({chip}) + "\"Broken,gpu\n", peaks) == "chips.csv:4: field '(line)': unterminated quote");
        CHECK(error_of(chips_file({chip}), "# only a comment\n") == "peaks.csv:2: field 'chip': no header line");
        CHECK_THROWS_WITH_AS(load_chips("/nonexistent/chips.csv"), "/nonexistent/chips.csv:0: field '(file)': cannot be read: No such file or directory",
                             ChipFileError);
        CHECK(peaks_path("/some/where/mine.csv") == "/some/where/peaks.csv");
    }
}

TEST_CASE("the CPU clock table: every row sane, models matched word for word") {
    auto clocks = load_cpu_clocks(cpu_clocks_path(default_chips_path()));
    CHECK(clocks.size() >= 15);
    for (const CpuClock& c : clocks) {
        CAPTURE(c.model);
        CHECK(c.boost_ghz >= c.base_ghz);
        CHECK(c.base_ghz > 1);
        CHECK(c.source.starts_with("http"));
    }
    const CpuClock* m = find_cpu_clock(clocks, "AMD EPYC 7543 32-Core Processor");
    REQUIRE(m);
    CHECK(m->model == "AMD EPYC 7543");
    CHECK(m->boost_ghz == 3.7);
    CHECK(find_cpu_clock(clocks, "AMD EPYC 7543P 32-Core Processor")->model == "AMD EPYC 7543P");
    CHECK(find_cpu_clock(clocks, "AMD EPYC") == nullptr);
    CHECK(find_cpu_clock(clocks, "AMD EPYC 75430 Processor") == nullptr);

    SUBCASE("the datasheet clock: max boost where the model is known, else the reported clock as a lower bound") {
        auto known = datasheet_clock(clocks, "AMD EPYC 7763 64-Core Processor", 2.445);
        REQUIRE(known);
        CHECK(known->ghz == 3.5);
        CHECK(!known->lower_bound);
        CHECK(known->why == "the max boost 3.5 GHz of AMD EPYC 7763");
        auto hidden = datasheet_clock(clocks, "AMD EPYC", 2.6);
        REQUIRE(hidden);
        CHECK(hidden->ghz == 2.6);
        CHECK(hidden->lower_bound);
        CHECK(hidden->why == "the reported 2.6 GHz (a lower bound: 'AMD EPYC' names no model in roofline/cpu_clocks.csv)");
        CHECK(!datasheet_clock(clocks, "AMD EPYC", std::nullopt));
    }
    SUBCASE("malformed rows name the file, line and field") {
        std::string head = "model,base_ghz,boost_ghz,source,notes\n";
        auto err = [&](const std::string& row) {
            try {
                parse_cpu_clocks(head + row, "clocks.csv");
            } catch (const ChipFileError& e) {
                return std::string(e.what());
            }
            return std::string("(no error)");
        };
        CHECK(err("X 1,3.5,3.0,https://e.com,\n") == "clocks.csv:2: field 'boost_ghz': 3 is below the base clock 3.5");
        CHECK(err("X 1,2.0,3500,https://e.com,\n") == "clocks.csv:2: field 'boost_ghz': 3500 is not a clock in GHz");
        CHECK(err("X 1,2.0,,https://e.com,\n") == "clocks.csv:2: field 'boost_ghz': is empty");
        CHECK(err("X 1,2,3,https://e.com,\nx 1,2,3,https://e.com,\n") == "clocks.csv:3: field 'model': 'x 1' duplicates line 2");
    }
}
