// ridge compare: environments told apart by their fields, repeats as mean and spread, every figure's
// data against numbers worked out by hand (a hand-made CPU and GPU pair), the real fixtures of two
// thread counts on this machine (tests/data/compare/README.md), and the bad inputs.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "bench/ledger.h"
#include "bench/ledger_schema.h"
#include "cli.h"
#include "report/compare.h"

using namespace clitest;

namespace {

const fs::path data_dir = fs::path(RIDGE_TEST_DATA) / "compare";

fs::path fresh(const std::string& name) {
    fs::path p = scratch() / "compare" / name;
    fs::remove_all(p);
    fs::create_directories(p);
    return p;
}

void write(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
}

// One row of the hand-made fixture. Intensity, GFLOP/s and images/s are chosen so that every
// figure below can be worked out on paper.
struct HandRow {
    std::string host, device, kind, net, mode, date;
    int batch;
    double step_ms, images_per_s, gflops;
    int64_t flops, bytes;
    std::string precision = "fp32";
};

std::string hand_ledger(const std::vector<HandRow>& rows, double peak_gflops, double bw_gbs) {
    std::string out = ridge::bench::ledger_header() + "\n";
    for (const HandRow& h : rows) {
        ridge::bench::LedgerRow r;
        bool gpu = h.device == "cuda";
        r.set("kind", h.kind)
            .set("date", h.date)
            .set("git", "0123456789ab")
            .set("host", h.host)
            .set("device", h.device)
            .set("backend", gpu ? "cudnn" : "onednn")
            .set("precision", h.precision)
            .set("net", h.net)
            .set("mode", h.mode)
            .set("batch", std::to_string(h.batch))
            .set("height", "224")
            .set("width", "224")
            .set("threads", gpu ? "" : "8")
            .set("iters", "10")
            .set("warmup_iters", "2")
            .set("step_median_ms", ridge::bench::ledger_num(h.step_ms))
            .set("images_per_s", ridge::bench::ledger_num(h.images_per_s))
            .set("gflops", ridge::bench::ledger_num(h.gflops))
            .set("flops_per_step", std::to_string(h.flops))
            .set("bytes_per_step", std::to_string(h.bytes))
            .set("roof_peak_gflops", ridge::bench::ledger_num(peak_gflops))
            .set("roof_bandwidth_gbs", ridge::bench::ledger_num(bw_gbs))
            .set("cpu", "Example CPU")
            .set("cores", "8");
        if (gpu) {
            r.set("gpu", "NVIDIA H100 PCIe").set("roof_datasheet_peak_gflops", "51200").set("roof_datasheet_bandwidth_gbs", "2039");
        }
        out += r.csv() + "\n";
    }
    return out;
}

// cpubox: 100 GFLOP/s, 20 GB/s (ridge point 5 FLOP/B); gpubox: 50000 GFLOP/s, 2000 GB/s (ridge 25).
// resnet18 infer b1: 3.6 GFLOP over 120 MB (intensity 30); cpubox twice, 60 and 80 ms.
// mobilenet_v2 infer b1: 0.6 GFLOP over 120 MB (intensity 5).
// resnet18 train run b32: 350 GFLOP over 7 GB a step (intensity 50).
void write_hand_fixture(const fs::path& dir) {
    write(dir / "cpubox" / "ledger.csv",
          hand_ledger({{"cpubox", "cpu", "bench", "resnet18", "infer", "2026-01-01T00:00:01Z", 1, 60, 1000.0 / 60, 60,
                        3600000000, 120000000},
                       {"cpubox", "cpu", "bench", "resnet18", "infer", "2026-01-01T00:00:02Z", 1, 80, 12.5, 45,
                        3600000000, 120000000},
                       {"cpubox", "cpu", "bench", "mobilenet_v2", "infer", "2026-01-01T00:00:03Z", 1, 20, 50, 30,
                        600000000, 120000000},
                       {"cpubox", "cpu", "train", "resnet18", "train", "2026-01-01T00:00:04Z", 32, 4000, 8, 87.5,
                        350000000000, 7000000000}},
                      100, 20));
    write(dir / "gpubox" / "ledger.csv",
          hand_ledger({{"gpubox", "cuda", "bench", "resnet18", "infer", "2026-01-02T00:00:01Z", 1, 1, 1000, 3600,
                        3600000000, 120000000},
                       {"gpubox", "cuda", "bench", "mobilenet_v2", "infer", "2026-01-02T00:00:02Z", 1, 0.5, 2000, 1200,
                        600000000, 120000000},
                       {"gpubox", "cuda", "train", "resnet18", "train", "2026-01-02T00:00:03Z", 32, 16, 2000, 21875,
                        350000000000, 7000000000}},
                      50000, 2000));
}

// A .dat file's data lines as fields (quoted labels kept whole, comments and blank lines dropped).
std::vector<std::vector<std::string>> dat_rows(const fs::path& p) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream in(slurp(p));
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::vector<std::string> f;
        for (size_t i = 0; i < line.size();) {
            if (line[i] == ' ') {
                ++i;
            } else if (line[i] == '"') {
                size_t end = line.find('"', i + 1);
                f.push_back(line.substr(i + 1, end - i - 1));
                i = end + 1;
            } else {
                size_t end = line.find(' ', i);
                if (end == std::string::npos) end = line.size();
                f.push_back(line.substr(i, end - i));
                i = end;
            }
        }
        rows.push_back(f);
    }
    return rows;
}

double d(const std::string& s) { return s == "NaN" ? NAN : std::stod(s); }

}  // namespace

TEST_CASE("hand-made CPU and GPU: environments, repeats, bounds, fractions and speed-ups as worked out by hand") {
    fs::path in = fresh("hand_in"), out = scratch() / "compare" / "hand_out";
    write_hand_fixture(in);
    Run r = run({"compare", (in / "cpubox").string(), (in / "gpubox").string(), "--out", out.string()});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.err.empty());
    CHECK(r.out.find("2 environments") != std::string::npos);

    // Latency at batch 1: resnet18 on cpubox is the mean of 60 and 80 ms, spread 60 to 80.
    auto lat = dat_rows(out / "data" / "envbars-latency.dat");
    REQUIRE(lat.size() == 2);
    CHECK(lat[0][0] == "resnet18");
    CHECK(d(lat[0][1]) == doctest::Approx(70));
    CHECK(d(lat[0][2]) == doctest::Approx(60));
    CHECK(d(lat[0][3]) == doctest::Approx(80));
    CHECK(d(lat[0][4]) == doctest::Approx(1));
    CHECK(lat[1][0] == "mobilenet_v2");
    CHECK(d(lat[1][1]) == doctest::Approx(20));
    CHECK(d(lat[1][4]) == doctest::Approx(0.5));

    // Speed-up of gpubox over cpubox (the first, so the baseline): resnet18 infer b1 is
    // 1000 / mean(16.667, 12.5) = 68.571, from 1000 / 16.667 = 60 to 1000 / 12.5 = 80;
    // mobilenet_v2 2000 / 50 = 40; the training run 2000 / 8 = 250.
    auto sp = dat_rows(out / "data" / "envbars-speedup.dat");
    REQUIRE(sp.size() == 3);
    std::map<std::string, std::vector<double>> speedup;
    for (const auto& row : sp) speedup[row[0]] = {d(row[1]), d(row[2]), d(row[3])};
    REQUIRE(speedup.count("resnet18 infer b1"));
    CHECK(speedup["resnet18 infer b1"][0] == doctest::Approx(1000 / ((1000.0 / 60 + 12.5) / 2)));
    CHECK(speedup["resnet18 infer b1"][1] == doctest::Approx(60));
    CHECK(speedup["resnet18 infer b1"][2] == doctest::Approx(80));
    CHECK(speedup["mobilenet_v2 infer b1"][0] == doctest::Approx(40));
    CHECK(speedup["resnet18 train run b32"][0] == doctest::Approx(250));

    // The roofline: per environment its roof corners, then its runs at (intensity, FLOP/s), in
    // TFLOP/s since the GPU's datasheet peak passes 10 TFLOP/s.
    std::string roof = slurp(out / "data" / "envroofline.dat");
    auto pts = dat_rows(out / "data" / "envroofline.dat");
    std::vector<std::vector<double>> points;  // rows with a point type: the runs
    for (const auto& row : pts)
        if (row.size() == 3) points.push_back({d(row[0]), d(row[1]), d(row[2])});
    REQUIRE(points.size() == 6);
    // cpubox: resnet18 (30, mean(60, 45) = 52.5 GFLOP/s, circle), the training run (50, 87.5, star),
    // mobilenet_v2 (5, 30).
    CHECK(points[0][0] == doctest::Approx(30));
    CHECK(points[0][1] == doctest::Approx(0.0525));
    CHECK(points[0][2] == 7);
    CHECK(points[1][0] == doctest::Approx(50));
    CHECK(points[1][1] == doctest::Approx(0.0875));
    CHECK(points[1][2] == 3);
    CHECK(points[2][0] == doctest::Approx(5));
    CHECK(points[2][1] == doctest::Approx(0.030));
    CHECK(points[3][1] == doctest::Approx(3.6));
    std::string gpv = slurp(out / "data" / "envroofline.gpv");
    CHECK(gpv.find("yunit = \"TFLOP/s\"") != std::string::npos);
    CHECK(gpv.find("nroofs = 3") != std::string::npos);  // cpubox measured, gpubox measured and datasheet
    CHECK(gpv.find("\"gpubox: datasheet\"") != std::string::npos);
    // The GPU's measured roof bends at its ridge point, 50000 / 2000 = 25 FLOP/B.
    CHECK(roof.find("\n25 50\n") != std::string::npos);
    CHECK(roof.find("\n5 0.1\n") != std::string::npos);

    // runs.csv: bound and fraction on each environment's own roof.
    auto runs = ridge::bench::parse_csv(slurp(out / "runs.csv"));
    REQUIRE(runs.size() == 7);
    std::map<std::string, std::map<std::string, std::string>> by;
    for (size_t i = 1; i < runs.size(); ++i) {
        std::map<std::string, std::string> m;
        for (size_t k = 0; k < runs[0].size(); ++k) m[runs[0][k]] = runs[i][k];
        by[m["environment"] + " " + m["net"] + " " + m["configuration"]] = m;
    }
    auto& cpu_r18 = by["cpubox resnet18 infer b1"];
    CHECK(cpu_r18["repeats"] == "2");
    CHECK(cpu_r18["bound"] == "compute");  // 30 FLOP/B against a ridge point of 5
    CHECK(std::stod(cpu_r18["roof_fraction"]) == doctest::Approx(0.525));
    CHECK(std::stod(cpu_r18["images_per_s_mean"]) == doctest::Approx((1000.0 / 60 + 12.5) / 2).epsilon(1e-5));
    // At the ridge point exactly (5 = 100 / 20) the roof is the peak: compute-bound, 30 / 100.
    CHECK(by["cpubox mobilenet_v2 infer b1"]["bound"] == "compute");
    CHECK(std::stod(by["cpubox mobilenet_v2 infer b1"]["roof_fraction"]) == doctest::Approx(0.3));
    // On the GPU 5 FLOP/B is below its ridge point (25): memory-bound, roof 2000 x 5 = 10000 GFLOP/s.
    auto& gpu_mb = by["gpubox mobilenet_v2 infer b1"];
    CHECK(gpu_mb["bound"] == "memory");
    CHECK(std::stod(gpu_mb["roof_gflops"]) == doctest::Approx(10000));
    CHECK(std::stod(gpu_mb["roof_fraction"]) == doctest::Approx(0.12));
    CHECK(std::stod(gpu_mb["speedup"]) == doctest::Approx(40));
    CHECK(std::stod(by["gpubox resnet18 train run b32"]["roof_fraction"]) == doctest::Approx(21875.0 / 50000));

    // report.md: who is faster and what binds it; the environments table marks what differs.
    std::string md = slurp(out / "report.md");
    CHECK(md.find("| resnet18 | infer b1 | 14.6 (12.5–16.7) ⚠ | 1000 (68.57x) | gpubox | compute, 7 % of roof |") !=
          std::string::npos);
    CHECK(md.find("| mobilenet_v2 | infer b1 | 50.0 | 2000 (40.00x) | gpubox | memory, 12 % of roof |") !=
          std::string::npos);
    CHECK(md.find("| **device** | **cpu** | **cuda** |") != std::string::npos);
    CHECK(md.find("| cores | 8 | 8 |") != std::string::npos);
    for (const char* fig : {"envroofline", "envbars-latency", "envbars-resnet18", "envbars-mobilenet_v2", "envbars-speedup"}) {
        CAPTURE(fig);
        CHECK(fs::file_size(out / "figures" / (std::string(fig) + ".png")) > 0);
        CHECK(fs::file_size(out / "figures" / (std::string(fig) + ".svg")) > 0);
        CHECK(md.find(std::string("figures/") + fig + ".png") != std::string::npos);
    }
    CHECK(fs::exists(out / ".ridge-report"));
    CHECK(fs::exists(out / ".ridge-compare"));

    // --baseline turns the speed-ups round; --label-by device names environments by their chips.
    fs::path out2 = scratch() / "compare" / "hand_out2";
    r = run({"compare", in.string(), "--out", out2.string(), "--baseline", "gpubox"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    sp = dat_rows(out2 / "data" / "envbars-speedup.dat");
    REQUIRE(sp.size() == 3);
    CHECK(d(sp[0][1]) == doctest::Approx(((1000.0 / 60 + 12.5) / 2) / 1000));
    // --nets: only mobilenet_v2's rows, one per environment.
    r = run({"compare", in.string(), "--out", out2.string(), "--nets", "mobilenet_v2"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("2 configurations, 2 rows") != std::string::npos);
    CHECK(fs::exists(out2 / "data" / "envbars-mobilenet_v2.dat"));
    CHECK(!fs::exists(out2 / "data" / "envbars-resnet18.dat"));
    CHECK(dat_rows(out2 / "data" / "envbars-latency.dat").size() == 1);
    r = run({"compare", in.string(), "--out", out2.string(), "--label-by", "device"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("Example CPU") != std::string::npos);
    CHECK(r.out.find("NVIDIA H100 PCIe") != std::string::npos);
}

TEST_CASE("real fixtures: the same study at 1 and 2 threads on this machine, kept apart and flagged") {
    fs::path out = scratch() / "compare" / "real_out";
    Run r = run({"compare", (data_dir / "threads1").string(), (data_dir / "threads2").string(), "--out",
                 out.string(), "--label-by", "label"});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.err.empty());
    CHECK(r.out.find("2 environments") != std::string::npos);
    std::string md = slurp(out / "report.md");
    CHECK(md.find("ran on the same host and device with different settings (threads 1 against 2)") != std::string::npos);

    // Each bar of a net's throughput figure is the mean of that configuration's rows, recomputed
    // here from the fixture's ledgers.
    std::map<std::string, std::vector<double>> ips;  // "threadsN|net|mode|batch|kind"
    for (const char* env : {"threads1", "threads2"})
        for (const char* file : {"report/ledger.csv", "train/metrics.csv"}) {
            auto rows = ridge::bench::parse_csv(slurp(data_dir / env / file));
            REQUIRE(rows.size() > 1);
            std::map<std::string, size_t> col;
            for (size_t k = 0; k < rows[0].size(); ++k) col[rows[0][k]] = k;
            for (size_t i = 1; i < rows.size(); ++i) {
                const auto& x = rows[i];
                ips[std::string(env) + "|" + x[col["net"]] + "|" + x[col["mode"]] + "|" + x[col["batch"]] + "|" +
                    x[col["kind"]]]
                    .push_back(std::stod(x[col["images_per_s"]]));
            }
        }
    auto mean = [](const std::vector<double>& v) {
        double s = 0;
        for (double x : v) s += x;
        return s / double(v.size());
    };
    auto bars = dat_rows(out / "data" / "envbars-resnet18.dat");
    REQUIRE(bars.size() == 4);  // infer b1, infer b8, the training step b8, the training run b8
    const char* keys[] = {"resnet18|infer|1|bench", "resnet18|infer|8|bench", "resnet18|train|8|bench",
                          "resnet18|train|8|train"};
    for (size_t i = 0; i < 4; ++i) {
        CAPTURE(keys[i]);
        const std::vector<double>& one = ips.at(std::string("threads1|") + keys[i]);
        const std::vector<double>& two = ips.at(std::string("threads2|") + keys[i]);
        CHECK(d(bars[i][1]) == doctest::Approx(mean(one)).epsilon(1e-6));
        CHECK(d(bars[i][2]) == doctest::Approx(*std::min_element(one.begin(), one.end())).epsilon(1e-6));
        CHECK(d(bars[i][3]) == doctest::Approx(*std::max_element(one.begin(), one.end())).epsilon(1e-6));
        CHECK(d(bars[i][4]) == doctest::Approx(mean(two)).epsilon(1e-6));
    }
    CHECK(bars[3][0] == "train run b8");
    auto sp = dat_rows(out / "data" / "envbars-speedup.dat");
    REQUIRE(!sp.empty());
    CHECK(sp[0][0] == "resnet18 infer b1");
    CHECK(d(sp[0][1]) == doctest::Approx(mean(ips.at("threads2|resnet18|infer|1|bench")) /
                                         mean(ips.at("threads1|resnet18|infer|1|bench")))
                             .epsilon(1e-6));
}

TEST_CASE("one environment only works and says so") {
    fs::path out = scratch() / "compare" / "one_out";
    Run r = run({"compare", (data_dir / "threads1").string(), "--out", out.string()});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("one environment only") != std::string::npos);
    std::string md = slurp(out / "report.md");
    CHECK(md.find("One environment only") != std::string::npos);
    CHECK(md.find("### Speed-up over the baseline\n\nLeft out: one environment only") != std::string::npos);
    CHECK(!fs::exists(out / "data" / "envbars-speedup.dat"));
}

TEST_CASE("older ledgers join: the bench CPU ledger of before the schema, its FLOPs recomputed, no roof") {
    fs::path out = scratch() / "compare" / "old_out";
    Run r = run({"compare", (data_dir / "old_bench_cpu.csv").string(), "--out", out.string()});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    std::string md = slurp(out / "report.md");
    CHECK(md.find("an older ridge bench CPU ledger") != std::string::npos);
    CHECK(md.find("no measured roof in its rows") != std::string::npos);
    // shufflenet_v2_x1_0 at 32x32, batch 1: the analysis gives the FLOPs the old ledger did not record.
    // Its two rows were measured by two builds of ridge: two environments, flagged, never averaged.
    CHECK(md.find("different ridge revisions or settings (git 383626eb1918+dirty against 994c1808f271+dirty)") !=
          std::string::npos);
    auto runs = ridge::bench::parse_csv(slurp(out / "runs.csv"));
    REQUIRE(runs.size() == 3);
    std::string summary = run({"summary", "shufflenet_v2_x1_0", "--res", "32", "--format", "csv"}).out;
    for (size_t i = 1; i < 3; ++i) {
        CHECK(runs[i][10] == "1");  // repeats
        CHECK(summary.find("," + runs[i][18] + ",") != std::string::npos);  // flops_per_step
    }
}

TEST_CASE("bad input: one line, exit 2, nothing written") {
    fs::path d = fresh("bad");
    fs::path out = d / "out";
    auto refused = [&](std::vector<std::string> args, const std::string& says) {
        CAPTURE(says);
        args.insert(args.begin(), "compare");
        args.insert(args.end(), {"--out", out.string()});
        Run r = run(args);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK(lines(r.err) == 1);
        CHECK_MESSAGE(r.err.find(says) != std::string::npos, r.err);
        CHECK(!fs::exists(out));
        for (const auto& e : fs::directory_iterator(d))
            CHECK_MESSAGE(e.path().filename().string().find(".partial.") == std::string::npos, e.path());
    };
    write(d / "photos" / "cat.txt", "not a result\n");
    refused({(d / "photos").string()}, "is not a ridge result");
    refused({(d / "missing").string()}, "does not exist");
    write(d / "other.csv", "x,y\n1,2\n");
    refused({(d / "other.csv").string()}, "unknown schema");

    // The same run twice with different figures.
    fs::path conflict = d / "conflict";
    fs::create_directories(conflict);
    std::string led = slurp(data_dir / "threads1" / "report" / "ledger.csv");
    write(conflict / "a.csv", led);
    size_t at = led.find(",resnet18,infer,1,");
    REQUIRE(at != std::string::npos);
    size_t row = led.rfind('\n', at) + 1;
    std::string changed = led;  // one row's median step time changed, nothing else
    std::vector<std::string> cells = ridge::bench::parse_csv(led.substr(row, led.find('\n', row) - row))[0];
    int median = ridge::bench::ledger_column("step_median_ms");
    std::string old_row = led.substr(row, led.find('\n', row) - row);
    std::string new_row;
    for (size_t k = 0; k < cells.size(); ++k) {
        std::string v = int(k) == median ? "999" : cells[k];
        new_row += (k ? "," : "") + ridge::bench::csv_cell(v);
    }
    changed.replace(row, old_row.size(), new_row);
    write(conflict / "b.csv", changed);
    refused({(conflict / "a.csv").string(), (conflict / "b.csv").string()}, "conflicting rows");

    // The same file twice is read once, not refused.
    fs::path twice = scratch() / "compare" / "twice_out";
    Run r = run({"compare", (conflict / "a.csv").string(), (conflict / "a.csv").string(), "--out", twice.string()});
    CHECK_MESSAGE(r.code == 0, r.err);

    // A report folder from before ridge compare, a baseline that names nothing, a net not in the zoo.
    write(d / "oldreport" / ".ridge-report", "");
    write(d / "oldreport" / "report.md", "# old\n");
    refused({(d / "oldreport").string()}, "has no ledger.csv");
    fs::create_directories(d / "results_old");
    fs::rename(d / "oldreport", d / "results_old" / "vm");
    refused({(d / "results_old").string()}, "holds no ledger to compare: '" + (d / "results_old" / "vm").string() +
                                                "' is a ridge report from before ridge compare");
    refused({(data_dir / "threads1").string(), "--baseline", "nowhere"}, "--baseline 'nowhere' names no environment");
    refused({(data_dir / "threads1").string(), "--nets", "resnet19"}, "not a net of the zoo");
    refused({(data_dir / "threads1").string(), "--label-by", "colour"}, "label-by 'colour'");
    // An --out that ridge did not write is never replaced.
    fs::create_directories(d / "mine");
    write(d / "mine" / "notes.txt", "keep\n");
    Run mine = run({"compare", (data_dir / "threads1").string(), "--out", (d / "mine").string()});
    CHECK(mine.code == 2);
    CHECK(slurp(d / "mine" / "notes.txt") == "keep\n");
    Run none = run({"compare"});
    CHECK(none.code == 2);
    CHECK(none.err.find("missing argument") != std::string::npos);
}

TEST_CASE("real fixtures: oneDNN capped at AVX2 by another build, kept apart with both differences named") {
    fs::path out = scratch() / "compare" / "avx2_out";
    Run r = run({"compare", (data_dir / "threads1").string(), (data_dir / "avx2").string(), "--out", out.string()});
    REQUIRE_MESSAGE(r.code == 0, r.err);
    // Named by host (the default), then by the first field that tells them apart.
    CHECK(r.out.find("baseline vm (runtime_env none)") != std::string::npos);
    CHECK(r.out.find("vm (runtime_env ONEDNN_MAX_CPU_ISA=AVX2)") != std::string::npos);
    std::string md = slurp(out / "report.md");
    CHECK(md.find("with different ridge revisions or settings (onednn_isa avx512_core_bf16 against avx2; runtime_env "
                  "none against ONEDNN_MAX_CPU_ISA=AVX2; git a5054c3d5d94+dirty against dbc673072bde+dirty)") !=
          std::string::npos);
    CHECK(md.find("part of their difference may be ridge's own") != std::string::npos);
    CHECK(md.find("| **onednn_isa** | **avx512_core_bf16** | **avx2** |") != std::string::npos);
    CHECK(md.find("| threads | 1 | 1 |") != std::string::npos);
}
