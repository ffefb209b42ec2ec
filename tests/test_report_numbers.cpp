// Every number of report.md, runs.csv and layers.csv recomputed here from the study's runs and
// analyses, on the fixture study with and without GPU results: each printed value must equal
// the value computed in this file once rounded to the decimals printed. The formulas are written
// out again from their definitions (engine/README.md, report/README in the top README), not
// called from report/, so a wrong formula there fails here.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "bench/ledger_schema.h"
#include "report/csv.h"
#include "report/markdown.h"
#include "study_fixture.h"

using namespace ridge;
using namespace ridge::report;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    std::string cell;
    std::istringstream in(s);
    while (std::getline(in, cell, sep)) out.push_back(cell);
    if (!s.empty() && s.back() == sep) out.push_back("");
    return out;
}

std::string trim(std::string s) {
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

struct MdTable {
    std::vector<std::string> head;
    std::vector<std::vector<std::string>> rows;
};

// The first table after the line `heading`; empty when the heading is absent.
MdTable table_after(const std::string& md, const std::string& heading) {
    MdTable t;
    size_t at = md.find("\n" + heading + "\n");
    if (at == std::string::npos) return t;
    std::istringstream in(md.substr(at + 1));
    std::string line;
    bool started = false;
    int row = 0;
    while (std::getline(in, line)) {
        if (line.rfind("|", 0) != 0) {
            if (started) break;
            continue;
        }
        started = true;
        std::vector<std::string> cells = split(line.substr(1, line.size() - 2), '|');
        for (std::string& c : cells) c = trim(c);
        if (row == 0) t.head = cells;
        else if (row > 1) t.rows.push_back(cells);  // row 1 is the |---|--:| line
        ++row;
    }
    return t;
}

// A printed number equals `expect` rounded to the decimals it shows (a relative 1e-9 absorbs
// the last bit of a value that sits on a rounding boundary).
void check_number(std::string cell, double expect, const std::string& what) {
    INFO(what, ": printed '", cell, "', expected ", expect);
    for (const char* mark : {" ⚠", " %"})
        if (size_t p = cell.find(mark); p != std::string::npos) cell.erase(p);
    size_t dot = cell.find('.');
    int decimals = dot == std::string::npos ? 0 : int(cell.size() - dot - 1);
    char* end = nullptr;
    double v = std::strtod(cell.c_str(), &end);
    REQUIRE(end == cell.c_str() + cell.size());
    CHECK(std::abs(v - expect) <= 0.5 * std::pow(10.0, -decimals) + 1e-9 * std::abs(expect));
}

// A value written by operator<< (6 significant digits) or an exact integer.
void check_csv_number(const std::string& cell, double expect, const std::string& what) {
    INFO(what, ": written '", cell, "', expected ", expect);
    char* end = nullptr;
    double v = std::strtod(cell.c_str(), &end);
    REQUIRE(end == cell.c_str() + cell.size());
    CHECK(std::abs(v - expect) <= 5e-6 * std::abs(expect) + 1e-300);
}

// What a run's step computed and moved, from the analysis's totals: forward alone in inference,
// forward and both backward halves in training.
double step_flops(const Run& r) {
    const Totals& t = r.a.totals;
    double f = double(t.fwd_flops);
    return r.mode == Mode::train ? f + double(t.dgrad_flops) + double(t.wgrad_flops) : f;
}
double step_bytes(const Run& r) {
    const Totals& t = r.a.totals;
    double b = double(t.fwd_traffic_bytes);
    return r.mode == Mode::train ? b + double(t.bwd_traffic_bytes) : b;
}
double iqr(const bench::Stats& s) { return s.q3 - s.q1; }
std::string mode_of(const Run& r) { return r.mode == Mode::train ? "train" : "infer"; }

// Spearman's rho written out from its definition, apart from report/spearman.cpp: each value's
// rank is 1 + the number of smaller values + half the number of other equal ones (ties share the
// mean of their ranks); rho is Pearson's correlation of the ranks.
double rho(const std::vector<double>& x, const std::vector<double>& y) {
    auto ranks = [](const std::vector<double>& v) {
        std::vector<double> r;
        for (double a : v) {
            double below = 0, equal = 0;
            for (double b : v) below += b < a, equal += b == a;
            r.push_back(1 + below + (equal - 1) / 2);
        }
        return r;
    };
    std::vector<double> rx = ranks(x), ry = ranks(y);
    double n = double(x.size()), mx = 0, my = 0;
    for (size_t i = 0; i < x.size(); ++i) mx += rx[i] / n, my += ry[i] / n;
    double sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxy += (rx[i] - mx) * (ry[i] - my);
        sxx += (rx[i] - mx) * (rx[i] - mx);
        syy += (ry[i] - my) * (ry[i] - my);
    }
    return sxy / std::sqrt(sxx * syy);
}

Study fixture_study(bool gpu) {
    Study s = fixture::study(gpu);
    // One noisy run, so the mark for a wide spread is checked both ways: IQR 0.3 of the median.
    Run& r = s.runs.at(1);
    r.step = bench::summarize({r.step.median * 0.7, r.step.median, r.step.median * 1.3, r.step.median * 1.5});
    return s;
}

}  // namespace

TEST_CASE("report.md: every number of every table, recomputed") {
    for (bool gpu : {false, true}) {
        CAPTURE(gpu);
        const Study s = fixture_study(gpu);
        const std::string md = report_markdown(s, {}, {"ridge report --quick", "quick", 61});

        SUBCASE("the heading") {
            // 61 s is 1.0 min at one decimal
            CHECK(md.find("(quick study, 1.0 min)") != std::string::npos);
            CHECK(md.find("Fixture CPU, 2 cores, 2 threads") != std::string::npos);
            CHECK(md.find("inference at batch 1, 4, 16; a training step (SGD) at batch 4; layer by layer: resnet18") !=
                  std::string::npos);
        }

        SUBCASE("the zoo's counts, per net") {
            MdTable t = table_after(md, "## The zoo's counts");
            REQUIRE(t.rows.size() == s.nets.size());
            CHECK(t.head.at(7) == "intensity b256 (FLOP/B)");
            for (size_t i = 0; i < s.nets.size(); ++i) {
                const auto& row = t.rows[i];
                const std::string& n = s.nets[i];
                CHECK(row.at(0) == n);
                const Totals& one = s.counts_of(n, 1)->a.totals;
                const Totals& big = s.counts_of(n, 256)->a.totals;
                check_number(row.at(1), double(one.params) / 1e6, n + " params");
                check_number(row.at(2), double(one.fwd_flops) / 1e9, n + " forward GFLOPs");
                check_number(row.at(3), double(one.fwd_flops + one.dgrad_flops + one.wgrad_flops) / 1e9,
                             n + " training GFLOPs");
                check_number(row.at(4), double(one.activation_bytes) / 1e6, n + " activations");
                // weights, gradients and momentum (3 copies of the fp32 weights) and the saved
                // activations at batch 256, over 256 images
                check_number(row.at(5), double(3 * big.param_bytes + big.saved_bytes) / 256 / 1e6,
                             n + " training memory per image");
                check_number(row.at(6), double(one.fwd_flops) / double(one.fwd_traffic_bytes), n + " intensity b1");
                check_number(row.at(7), double(big.fwd_flops) / double(big.fwd_traffic_bytes), n + " intensity b256");
            }
        }

        SUBCASE("the ceilings") {
            MdTable t = table_after(md, "## This machine's ceilings");
            REQUIRE(t.rows.size() == s.ceilings.size());
            for (size_t i = 0; i < s.ceilings.size(); ++i) {
                const Ceilings& c = s.ceilings[i];
                const auto& row = t.rows[i];
                CHECK(row.at(0) == c.device);
                CHECK(row.at(1) == c.name);
                CHECK(row.at(2) == (c.isa.empty() ? "—" : c.isa));
                check_number(row.at(3), c.peak_flops / 1e9, "measured GFLOP/s");
                check_number(row.at(4), c.bytes_per_s / 1e9, "measured GB/s");
                check_number(row.at(5), c.peak_flops / c.bytes_per_s, "ridge point");
                if (c.measured_clock_ghz) check_number(row.at(6), *c.measured_clock_ghz, "measured clock");
                else CHECK(row.at(6) == "—");
                // A datasheet peak that is only a lower bound (a hidden CPU model) is printed "≥ N".
                std::string sheet = row.at(7);
                if (c.datasheet_lower_bound) {
                    REQUIRE(sheet.rfind("≥ ", 0) == 0);
                    sheet = sheet.substr(std::string("≥ ").size());
                }
                if (c.datasheet_peak_flops) check_number(sheet, *c.datasheet_peak_flops / 1e9, "datasheet GFLOP/s");
                else CHECK(sheet == "—");
                if (c.datasheet_bytes_per_s) check_number(row.at(8), *c.datasheet_bytes_per_s / 1e9, "datasheet GB/s");
                else CHECK(row.at(8) == "—");
            }
        }

        SUBCASE("measured time: a row per run") {
            MdTable t = table_after(md, "## Measured time");
            REQUIRE(t.rows.size() == s.runs.size());
            for (size_t i = 0; i < s.runs.size(); ++i) {
                const Run& r = s.runs[i];
                const auto& row = t.rows[i];
                std::string what = cat(r.device, " ", r.net, " ", mode_of(r), " ", r.batch);
                CHECK(row.at(0) == r.net);
                CHECK(row.at(1) == r.device);
                CHECK(row.at(2) == mode_of(r));
                CHECK(row.at(3) == std::to_string(r.batch));
                check_number(row.at(4), r.step.median * 1e3, what + " median");
                CHECK((row.at(4).find("⚠") != std::string::npos) == (iqr(r.step) > 0.1 * r.step.median));
                check_number(row.at(5), r.step.min * 1e3, what + " min");
                check_number(row.at(6), iqr(r.step) * 1e3, what + " IQR");
                check_number(row.at(7), double(r.batch) / r.step.median, what + " images/s");
                const double flops = step_flops(r), achieved = flops / r.step.median;
                check_number(row.at(8), achieved / 1e9, what + " GFLOP/s");
                // of roof: achieved over min(peak, bandwidth x intensity) at the step's intensity
                const Ceilings* c = s.ceilings_of(r.device);
                REQUIRE(c);
                const double roof = std::min(c->peak_flops, c->bytes_per_s * flops / step_bytes(r));
                check_number(row.at(9), 100 * achieved / roof, what + " of roof");
            }
            CHECK(t.rows.at(1).at(4).find("⚠") != std::string::npos);  // the noisy run
        }

        SUBCASE("forward against backward: a row per training run") {
            MdTable t = table_after(md, "## Forward against backward");
            std::vector<const Run*> train;
            for (const Run& r : s.runs)
                if (r.mode == Mode::train) train.push_back(&r);
            REQUIRE(t.rows.size() == train.size());
            for (size_t i = 0; i < train.size(); ++i) {
                const Run& r = *train[i];
                const auto& row = t.rows[i];
                CHECK(row.at(0) == r.net);
                CHECK(row.at(1) == r.device);
                CHECK(row.at(2) == std::to_string(r.batch));
                check_number(row.at(3), r.fwd.median * 1e3, r.net + " forward ms");
                check_number(row.at(4), r.bwd.median * 1e3, r.net + " backward ms");
                check_number(row.at(5), r.bwd.median / r.fwd.median, r.net + " time ratio");
                const Totals& a = r.a.totals;
                // backward (data and weight gradients) over forward: about 2 for these nets
                const double flops_ratio = double(a.dgrad_flops + a.wgrad_flops) / double(a.fwd_flops);
                CHECK(flops_ratio > 1.5);
                check_number(row.at(6), flops_ratio, r.net + " FLOPs ratio");
            }
        }

        SUBCASE("memory- or compute-bound, on each roof") {
            MdTable t = table_after(md, "## Memory- or compute-bound");
            REQUIRE(t.rows.size() == s.nets.size());
            CHECK(t.head.at(1) == "intensity b1 / b256");
            // The roofs: the measured devices, then for each kind the newest database chip with an
            // fp32 peak and a bandwidth.
            struct Roof {
                std::string name;
                double peak, bw;
            };
            std::vector<Roof> roofs;
            for (const Ceilings& c : s.ceilings) roofs.push_back({c.name + ", measured", c.peak_flops, c.bytes_per_s});
            for (roofline::ChipKind k : roofline::chip_kinds) {
                int newest = -1;
                for (const roofline::Chip& c : s.chips)
                    if (c.kind == k && c.peak_flops(roofline::Precision::fp32) && c.bandwidth_bytes())
                        newest = std::max(newest, c.year);
                const roofline::Chip* first = nullptr;
                for (const roofline::Chip& c : s.chips)
                    if (!first && c.kind == k && c.year == newest && c.peak_flops(roofline::Precision::fp32) &&
                        c.bandwidth_bytes())
                        first = &c;
                if (first)
                    roofs.push_back({first->name, *first->peak_flops(roofline::Precision::fp32), *first->bandwidth_bytes()});
            }
            REQUIRE(t.head.size() == 2 + roofs.size());
            for (size_t j = 0; j < roofs.size(); ++j) {
                const std::string& h = t.head[2 + j];
                CHECK(h.rfind(roofs[j].name + " (ridge ", 0) == 0);
                std::string ridge = h.substr(roofs[j].name.size() + 8);
                ridge.pop_back();  // ')'
                check_number(ridge, roofs[j].peak / roofs[j].bw, roofs[j].name + " ridge point");
            }
            for (size_t i = 0; i < s.nets.size(); ++i) {
                const auto& row = t.rows[i];
                const std::string& n = s.nets[i];
                CHECK(row.at(0) == n);
                const Totals& one = s.counts_of(n, 1)->a.totals;
                const Totals& big = s.counts_of(n, 256)->a.totals;
                const double i1 = double(one.fwd_flops) / double(one.fwd_traffic_bytes);
                const double ib = double(big.fwd_flops) / double(big.fwd_traffic_bytes);
                std::vector<std::string> two = split(row.at(1), '/');
                REQUIRE(two.size() == 2);
                check_number(trim(two[0]), i1, n + " intensity b1");
                check_number(trim(two[1]), ib, n + " intensity b256");
                for (size_t j = 0; j < roofs.size(); ++j) {
                    auto bound = [&](double i) { return i < roofs[j].peak / roofs[j].bw ? "memory" : "compute"; };
                    CHECK_MESSAGE(row.at(2 + j) == cat(bound(i1), " / ", bound(ib)), n, " on ", roofs[j].name);
                }
            }
        }

        SUBCASE("rank correlations") {
            MdTable t = table_after(md, "## Rank correlations");
            // The quantities, each a value per net: latency at batch 1 on each device measured,
            // then the analytic forward FLOPs, params, forward traffic and intensity at batch 1.
            std::vector<std::pair<std::string, std::vector<double>>> q;
            for (auto [device, shown] : {std::pair{"cpu", "CPU"}, std::pair{"cuda", "GPU"}}) {
                if (!s.run_of(device, s.nets[0], Mode::infer, 1)) continue;
                std::vector<double> v;
                for (const std::string& n : s.nets) v.push_back(s.run_of(device, n, Mode::infer, 1)->step.median);
                q.push_back({cat(shown, " latency (batch 1)"), v});
            }
            std::vector<double> flops, params, bytes, intensity;
            for (const std::string& n : s.nets) {
                const Totals& c = s.counts_of(n, 1)->a.totals;
                flops.push_back(double(c.fwd_flops));
                params.push_back(double(c.params));
                bytes.push_back(double(c.fwd_traffic_bytes));
                intensity.push_back(double(c.fwd_flops) / double(c.fwd_traffic_bytes));
            }
            q.push_back({"FLOPs", flops});
            q.push_back({"params", params});
            q.push_back({"bytes", bytes});
            q.push_back({"intensity", intensity});
            REQUIRE(t.rows.size() == q.size());
            REQUIRE(t.head.size() == q.size() + 1);
            for (size_t i = 0; i < q.size(); ++i) {
                CHECK(t.head[i + 1] == q[i].first);
                CHECK(t.rows[i].at(0) == q[i].first);
                for (size_t j = 0; j < q.size(); ++j)
                    check_number(t.rows[i].at(j + 1), rho(q[i].second, q[j].second), q[i].first + " / " + q[j].first);
            }
        }
    }
}

TEST_CASE("runs.csv: every column of every run, recomputed") {
    for (bool gpu : {false, true}) {
        CAPTURE(gpu);
        const Study s = fixture_study(gpu);
        std::vector<std::string> lines = split(runs_csv(s), '\n');
        REQUIRE(lines.back().empty());  // the file ends with a newline
        lines.pop_back();
        CHECK(lines.at(0) ==
              "device,backend,net,mode,batch,median_ms,min_ms,iqr_ms,fwd_ms,bwd_ms,images_per_s,flops,bytes,gflops_per_s");
        REQUIRE(lines.size() == s.runs.size() + 1);
        for (size_t i = 0; i < s.runs.size(); ++i) {
            const Run& r = s.runs[i];
            const std::vector<std::string> c = split(lines[i + 1], ',');
            REQUIRE(c.size() == 14);
            std::string what = cat(r.device, " ", r.net, " ", mode_of(r), " ", r.batch);
            CHECK(c[0] == r.device);
            CHECK(c[1] == r.backend);
            CHECK(c[2] == r.net);
            CHECK(c[3] == mode_of(r));
            CHECK(c[4] == std::to_string(r.batch));
            check_csv_number(c[5], r.step.median * 1e3, what + " median_ms");
            check_csv_number(c[6], r.step.min * 1e3, what + " min_ms");
            check_csv_number(c[7], iqr(r.step) * 1e3, what + " iqr_ms");
            if (r.mode == Mode::train) {
                check_csv_number(c[8], r.fwd.median * 1e3, what + " fwd_ms");
                check_csv_number(c[9], r.bwd.median * 1e3, what + " bwd_ms");
            } else {
                CHECK(c[8].empty());
                CHECK(c[9].empty());
            }
            check_csv_number(c[10], double(r.batch) / r.step.median, what + " images_per_s");
            CHECK(c[11] == std::to_string(int64_t(step_flops(r))));
            CHECK(c[12] == std::to_string(int64_t(step_bytes(r))));
            check_csv_number(c[13], step_flops(r) / r.step.median / 1e9, what + " gflops_per_s");
        }
    }
}

TEST_CASE("layers.csv: every column of every layer of the layer net's run") {
    const Study s = fixture_study(false);
    const Run* r = nullptr;
    for (const Run& x : s.runs)
        if (x.net == s.layer_net && !x.layers.empty()) r = &x;
    REQUIRE(r);
    std::vector<std::string> lines = split(layers_csv(s), '\n');
    REQUIRE(lines.back().empty());
    lines.pop_back();
    CHECK(lines.at(0) ==
          "device,net,mode,batch,layer,type,fwd_ms,dgrad_ms,wgrad_ms,fwd_flops,dgrad_flops,wgrad_flops,fwd_bytes,"
          "bwd_bytes");
    REQUIRE(lines.size() == r->a.layers.size() + 1);
    for (size_t i = 0; i < r->a.layers.size(); ++i) {
        const LayerCost& l = r->a.layers[i];
        const bench::LayerResult& t = r->layers[i];
        const std::vector<std::string> c = split(lines[i + 1], ',');
        REQUIRE(c.size() == 14);
        CHECK(c[0] == "cpu");
        CHECK(c[1] == "resnet18");
        CHECK(c[2] == "train");
        CHECK(c[3] == "4");
        CHECK(c[4] == l.name);
        CHECK(c[5] == category_name(l.category));
        check_csv_number(c[6], t.fwd.median * 1e3, l.name + " fwd_ms");
        check_csv_number(c[7], t.dgrad.median * 1e3, l.name + " dgrad_ms");
        check_csv_number(c[8], t.wgrad.median * 1e3, l.name + " wgrad_ms");
        CHECK(c[9] == std::to_string(l.c.fwd_flops));
        CHECK(c[10] == std::to_string(l.c.dgrad_flops));
        CHECK(c[11] == std::to_string(l.c.wgrad_flops));
        CHECK(c[12] == std::to_string(l.c.fwd_traffic_bytes));
        CHECK(c[13] == std::to_string(l.c.bwd_traffic_bytes));
    }
    // resnet18's layers at batch 4 carry its analytic counts: their sums are the net's totals.
    int64_t fwd = 0, dgrad = 0, wgrad = 0;
    for (size_t i = 1; i < lines.size(); ++i) {
        const std::vector<std::string> c = split(lines[i], ',');
        fwd += std::stoll(c[9]), dgrad += std::stoll(c[10]), wgrad += std::stoll(c[11]);
    }
    CHECK(fwd == r->a.totals.fwd_flops);
    CHECK(dgrad == r->a.totals.dgrad_flops);
    CHECK(wgrad == r->a.totals.wgrad_flops);
}

TEST_CASE("ledger.csv: every run as a row of the one schema, with its device's roofs, recomputed") {
    for (bool gpu : {false, true}) {
        CAPTURE(gpu);
        const Study s = fixture_study(gpu);
        ridge::bench::LedgerFile f = ridge::bench::parse_ledger(ridge::report::ledger_csv(s, "ridge report --quick"), "ledger.csv");
        CHECK(f.format == ridge::bench::LedgerFormat::current);
        REQUIRE(f.rows.size() == s.runs.size());
        for (size_t i = 0; i < s.runs.size(); ++i) {
            const Run& r = s.runs[i];
            const ridge::bench::LedgerRecord& x = f.rows[i];
            CAPTURE(cat(r.device, " ", r.net, " ", mode_of(r), " ", r.batch));
            auto num = [&](const char* col) { return std::stod(x.get(col)); };
            CHECK(x.get("kind") == "bench");
            CHECK(x.get("host") == "fixture");
            CHECK(x.get("device") == r.device);
            CHECK(x.get("net") == r.net);
            CHECK(x.get("mode") == mode_of(r));
            CHECK(x.get("batch") == std::to_string(r.batch));
            CHECK(x.get("precision") == "fp32");
            CHECK(x.get("threads") == (r.device == "cpu" ? "2" : ""));
            CHECK(x.get("cpu") == "Fixture CPU");
            CHECK(x.get("flops_per_step") == std::to_string(int64_t(step_flops(r))));
            CHECK(x.get("bytes_per_step") == std::to_string(int64_t(step_bytes(r))));
            CHECK(num("step_median_ms") == doctest::Approx(r.step.median * 1e3).epsilon(1e-5));
            CHECK(num("images_per_s") == doctest::Approx(double(r.batch) / r.step.median).epsilon(1e-5));
            double achieved = step_flops(r) / r.step.median;
            CHECK(num("gflops") == doctest::Approx(achieved / 1e9).epsilon(1e-5));
            // The fixture's ceilings: CPU 200 GFLOP/s and 40 GB/s; GPU 50 TFLOP/s and 3 TB/s (datasheet 67 and 3.35).
            bool cuda = r.device == "cuda";
            double peak = cuda ? 5.0e13 : 2.0e11, bw = cuda ? 3.0e12 : 4.0e10;
            double roof = std::min(peak, bw * step_flops(r) / step_bytes(r));
            CHECK(num("roof_peak_gflops") == doctest::Approx(peak / 1e9).epsilon(1e-5));
            CHECK(num("roof_bandwidth_gbs") == doctest::Approx(bw / 1e9).epsilon(1e-5));
            CHECK(num("roof_gflops") == doctest::Approx(roof / 1e9).epsilon(1e-5));
            CHECK(num("roof_fraction") == doctest::Approx(achieved / roof).epsilon(1e-5));
            CHECK(num("roof_datasheet_peak_gflops") == doctest::Approx(cuda ? 67000 : 160).epsilon(1e-5));
            CHECK(x.get("roof_datasheet_bandwidth_gbs") == (cuda ? "3350" : ""));
        }
    }
}
