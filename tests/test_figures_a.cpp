// The data behind the chips, zoo, overlay and measured figures, checked against numbers worked
// out here from the fixture study's analyses, ceilings and chip database, not read back from the
// figure writers' own arithmetic.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <unistd.h>

#include "cli.h"
#include "report/figures.h"
#include "report/figures/roofs.h"
#include "study_fixture.h"

namespace fs = std::filesystem;
using namespace ridge;
using namespace ridge::report;

namespace {

using Row = std::vector<std::string>;
using Block = std::vector<Row>;  // one gnuplot index, its sub-blocks run together

// A data file's index blocks (two blank lines apart), '#' lines dropped, quoted fields unquoted.
std::vector<Block> read_blocks(const fs::path& p) {
    std::vector<Block> blocks(1);
    int blank = 0;
    std::istringstream in(clitest::slurp(p));
    for (std::string line; std::getline(in, line);) {
        if (line.empty()) {
            if (++blank == 2 && !blocks.back().empty()) blocks.emplace_back();
            continue;
        }
        blank = 0;
        if (line[0] == '#') continue;
        Row row;
        for (size_t i = 0; i < line.size();) {
            if (line[i] == ' ') {
                ++i;
            } else if (line[i] == '"') {
                size_t end = line.find('"', i + 1);
                row.push_back(line.substr(i + 1, end - i - 1));
                i = end + 1;
            } else {
                size_t end = std::min(line.find(' ', i), line.size());
                row.push_back(line.substr(i, end - i));
                i = end;
            }
        }
        blocks.back().push_back(row);
    }
    if (blocks.back().empty()) blocks.pop_back();
    return blocks;
}

double d(const std::string& s) { return std::stod(s); }

struct Written {
    fs::path dir;
    std::map<std::string, Figure> figures;
    explicit Written(const Study& s, const std::string& tag) {
        dir = fs::temp_directory_path() / ("ridge_figures_a." + std::to_string(::getpid()) + "." + tag);
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (Figure& f : write_figure_data(s, dir.string())) figures[f.name] = f;
    }
    ~Written() { fs::remove_all(dir); }
    std::vector<Block> blocks(const std::string& name) const { return read_blocks(dir / (name + ".dat")); }
    const Figure& at(const std::string& name) const {
        auto it = figures.find(name);
        REQUIRE_MESSAGE(it != figures.end(), name);
        return it->second;
    }
};

const Row& row_of(const Block& b, const std::string& net) {
    for (const Row& r : b)
        if (r[0] == net) return r;
    FAIL("no row for " << net);
    throw;
}

}  // namespace

TEST_CASE("every figure writes its numbers one way: 9 significant digits, NaN as gnuplot's NaN") {
    // The roofline figures once had their own num() spelling NaN "nan", which a .gpv line reads as
    // an undefined variable; two definitions of one function, and which one ran depended on inlining.
    CHECK(num(std::nan("")) == "NaN");
    CHECK(num(-std::nan("")) == "NaN");
    CHECK(num(0.1) == "0.1");
    CHECK(num(1.0 / 3) == "0.333333333");
    CHECK(num(123456789012.0) == "1.23456789e+11");
    CHECK(num(-2.5e-7) == "-2.5e-07");
}

TEST_CASE("chips: one roof per chip with a bandwidth and a dense fp32 peak, its ridge at peak / bandwidth") {
    Study s = fixture::study(false);
    Written w(s, "chips");
    std::vector<Block> b = w.blocks("chips");
    REQUIRE(b.size() == 4);
    // Worked out from the database: the dense fp32 peak; no peak or no bandwidth, no roof.
    std::vector<std::pair<double, double>> expected;  // ridge FLOP/B, peak TFLOP/s
    for (const roofline::Chip& c : s.chips) {
        std::optional<double> peak = c.peak_tflops(roofline::Precision::fp32);
        if (!peak || !c.mem_bw_gbs) continue;
        expected.push_back({*peak * 1e12 / (*c.mem_bw_gbs * 1e9), *peak});
    }
    REQUIRE(b[0].size() == 3 * expected.size());  // slope start, ridge, end of the flat peak
    REQUIRE(b[1].size() == expected.size());
    // The figure lists roofs by peak, then ridge (its labels stack in that order).
    std::sort(expected.begin(), expected.end(), [](auto& x, auto& y) {
        return x.second != y.second ? x.second < y.second : x.first < y.first;
    });
    for (size_t i = 0; i < expected.size(); ++i) {
        INFO(i);
        CHECK(d(b[1][i][0]) == doctest::Approx(expected[i].first).epsilon(1e-8));
        CHECK(d(b[1][i][1]) == doctest::Approx(expected[i].second).epsilon(1e-8));
        const Row& ridge_corner = b[0][3 * i + 1];
        CHECK(d(ridge_corner[0]) == doctest::Approx(expected[i].first).epsilon(1e-8));
        CHECK(d(ridge_corner[1]) == doctest::Approx(expected[i].second).epsilon(1e-8));
        // The slope's start lies on the bandwidth line: y = bandwidth x intensity.
        const Row& start = b[0][3 * i];
        CHECK(d(start[1]) == doctest::Approx(d(start[0]) * expected[i].second / expected[i].first).epsilon(1e-8));
    }
    REQUIRE(b[3].size() == expected.size());
    auto labelled = [&](const std::string& label) {
        return std::count_if(b[3].begin(), b[3].end(), [&](const Row& r) { return r[3] == label; });
    };
    CHECK(labelled("NVIDIA H100 SXM5 80GB, ridge 20.0") == 1);
    // Apple M1: 2.6 TFLOP/s over LPDDR4X-4266 x 16 B = 68.256 GB/s, a ridge of 38.1 FLOP/B.
    CHECK(labelled("Apple M1, ridge 38.1") == 1);
    // Stratix 10 MX: 7.92 TFLOP/s over 512 GB/s.
    CHECK(labelled("Intel Stratix 10 MX 2100, ridge 15.5") == 1);

    const Figure& all = w.at("chips");
    CHECK(all.title == "Datasheet rooflines (fp32): every chip in the database");
    CHECK(all.caption.find("dense fp32 peak (TFLOP/s") != std::string::npos);
    // No fp32 figure: TPUs, Gaudi, Wormhole, the NX; an fp32 figure but no bandwidth: the VC1902.
    auto no_peak = all.caption.find("Left out, no dense fp32 peak in the database: ");
    auto no_bw = all.caption.find("Left out, no memory bandwidth in the database: ");
    REQUIRE(no_peak != std::string::npos);
    REQUIRE(no_bw != std::string::npos);
    for (const char* name : {"Google TPU v4", "Intel Gaudi 3", "Intel Stratix 10 NX 2100"})
        CHECK_MESSAGE(all.caption.find(name, no_peak) < no_bw, name);
    CHECK(all.caption.find("AMD Versal AI Core VC1902", no_bw) != std::string::npos);
    CHECK(clitest::slurp(w.dir / "chips.gpv").find("ylabel = \"attainable performance (TFLOP/s)\"") != std::string::npos);

    // Every kind is drawn, each with at least three chips, and exactly those of the database.
    for (roofline::ChipKind k : roofline::chip_kinds) {
        std::string name = "chips-" + std::string(roofline::kind_name(k));
        CAPTURE(name);
        size_t n = 0;
        for (const roofline::Chip& c : s.chips) n += c.kind == k && c.peak(roofline::Precision::fp32) && c.mem_bw_gbs;
        REQUIRE(w.at(name).missing.empty());
        CHECK(w.at(name).title.find("(fp32)") != std::string::npos);
        CHECK(w.blocks(name)[1].size() == n);
        CHECK(n >= 3);
    }
    CHECK(w.blocks("chips-gpu")[1].size() == 7);
    CHECK(w.blocks("chips-fpga")[1].size() == 3);
}

TEST_CASE("chips at another precision (ridge report --precision): bf16 and int8 roofs, the rest named") {
    Study s = fixture::study(false);
    s.chips_precision = roofline::Precision::bf16;
    Written w(s, "chips-bf16");
    const Figure& all = w.at("chips");
    CHECK(all.title == "Datasheet rooflines (bf16): every chip in the database");
    CHECK(all.caption.find("dense bf16 peak") != std::string::npos);
    CHECK(all.caption.find("AMD EPYC 7763") != std::string::npos);  // no CPU quotes a bf16 peak
    size_t n = 0;
    for (const roofline::Chip& c : s.chips) n += c.peak(roofline::Precision::bf16) && c.mem_bw_gbs;
    CHECK(w.blocks("chips")[1].size() == n);
    // TPU v4: 275 TFLOP/s bf16 over 1200 GB/s.
    Block ridges = w.blocks("chips-asic")[1];
    CHECK(std::count_if(ridges.begin(), ridges.end(), [](const Row& r) {
              return std::abs(d(r[0]) - 275e12 / 1200e9) < 1e-6 && std::abs(d(r[1]) - 275) < 1e-9;
          }) == 1);
    CHECK(w.at("chips-cpu").missing.starts_with("no chip of this kind has both a memory bandwidth and a dense bf16 peak."));
    CHECK(!fs::exists(w.dir / "chips-cpu.dat"));

    s.chips_precision = roofline::Precision::int8;
    Written w8(s, "chips-int8");
    CHECK(w8.at("chips").title.find("(int8)") != std::string::npos);
    CHECK(clitest::slurp(w8.dir / "chips.gpv").find("ylabel = \"attainable performance (TOP/s)\"") != std::string::npos);
}

TEST_CASE("chips-ceilings: every dense ceiling of one GPU over its one memory slope") {
    Study s = fixture::study(true);  // the fixture GPU is not a database row by name
    Written w(s, "ceilings");
    const Figure& f = w.at("chips-ceilings");
    REQUIRE(f.missing.empty());
    // The GPU with the most dense precisions, the newest of those: H200 over H100 (both have 7).
    CHECK(f.title == "Datasheet rooflines: every dense ceiling of the NVIDIA H200 SXM 141GB");
    std::vector<Block> b = w.blocks("chips-ceilings");
    REQUIRE(b.size() == 4);
    // Peaks (TFLOP/s, int8 TOP/s) from the datasheet, by hand, each over 4800 GB/s of HBM3e.
    std::vector<double> peaks = {66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9};
    REQUIRE(b[1].size() == peaks.size());
    for (size_t i = 0; i < peaks.size(); ++i) {
        INFO(i);
        CHECK(d(b[1][i][1]) == doctest::Approx(peaks[i]).epsilon(1e-9));
        CHECK(d(b[1][i][0]) == doctest::Approx(peaks[i] * 1e12 / 4800e9).epsilon(1e-9));
        // One slope for all: at the first point every roof is bandwidth x intensity.
        CHECK(d(b[0][3 * i][1]) == doctest::Approx(d(b[0][3 * i][0]) * 4800e9 / 1e12).epsilon(1e-9));
    }
    for (const char* p : {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"})
        CHECK_MESSAGE(f.caption.find(p) != std::string::npos, p);
    CHECK(f.caption.find("The 2:4-sparse figures (") != std::string::npos);
    auto labelled = [&](const std::string& label) {
        return std::count_if(b[3].begin(), b[3].end(), [&](const Row& r) { return r[3] == label; });
    };
    CHECK(labelled("int8 1979 TOP/s (tensor cores), ridge 412") == 1);
    CHECK(labelled("fp32 66.9 TFLOP/s (CUDA cores), ridge 13.9") == 1);
}

TEST_CASE("the datasheet line: its basis and the measured clock in the captions, a lower bound marked") {
    Study s = fixture::study(true);
    Written w(s, "datasheet");
    const Figure& cpu = w.at("overlay-cpu");
    CHECK(cpu.caption.find("The datasheet peak is at the reported 2.5 GHz (a lower bound: 'Fixture CPU' names no model "
                           "in roofline/cpu_clocks.csv); the probes measured 3.12 GHz.") != std::string::npos);
    CHECK(w.at("measured-cpu").caption.find("a lower bound") != std::string::npos);
    CHECK(clitest::slurp(w.dir / "overlay-cpu.gpv").find("datasheet_title = \"datasheet, a lower bound: 160 GFLOP/s")
          != std::string::npos);
    CHECK(w.at("overlay-cuda").caption.find("The datasheet peak is at the chip database's NVIDIA H100 SXM5 80GB; "
                                            "the probes measured 1.98 GHz.") != std::string::npos);
    CHECK(clitest::slurp(w.dir / "overlay-cuda.gpv").find("datasheet_title = \"datasheet: 67.0 TFLOP/s") !=
          std::string::npos);
}

TEST_CASE("zoo: per-image counts at batch 1 and intensity at the large batch") {
    Study s = fixture::study(false);
    Written w(s, "zoo");
    const Totals& r18 = s.counts_of("resnet18", 1)->a.totals;
    Row flops = row_of(w.blocks("zoo-flops")[0], "resnet18");
    // resnet18 at 224x224: 1.814 G multiply-adds (torchvision), so about 3.63 GFLOP forward.
    CHECK(d(flops[1]) == doctest::Approx(2 * 1.814).epsilon(0.01));
    CHECK(d(flops[1]) == doctest::Approx(double(r18.fwd_flops) / 1e9).epsilon(1e-8));
    double train = double(r18.fwd_flops + r18.dgrad_flops + r18.wgrad_flops);
    CHECK(d(flops[2]) == doctest::Approx(train / 1e9).epsilon(1e-8));
    // torchvision's resnet18 has 11,689,512 parameters.
    CHECK(d(row_of(w.blocks("zoo-params")[0], "resnet18")[1]) == doctest::Approx(11.689512).epsilon(1e-9));
    Row mem = row_of(w.blocks("zoo-memory")[0], "vgg11");
    const Totals& vgg = s.counts_of("vgg11", 1)->a.totals;
    CHECK(d(mem[1]) == doctest::Approx(double(vgg.activation_bytes) / 1e6).epsilon(1e-8));
    CHECK(d(mem[2]) == doctest::Approx(double(vgg.train_memory_bytes) / 1e6).epsilon(1e-8));
    Row in = row_of(w.blocks("zoo-intensity")[0], "vgg11");
    const Totals& vgg_large = s.counts_of("vgg11", s.large_batch)->a.totals;
    CHECK(d(in[1]) == doctest::Approx(double(vgg.fwd_flops) / double(vgg.fwd_traffic_bytes)).epsilon(1e-8));
    CHECK(d(in[2]) == doctest::Approx(double(vgg_large.fwd_flops) / double(vgg_large.fwd_traffic_bytes)).epsilon(1e-8));
    // Rows follow the study's order of nets.
    Block params = w.blocks("zoo-params")[0];
    REQUIRE(params.size() == s.nets.size());
    for (size_t i = 0; i < s.nets.size(); ++i) CHECK(params[i][0] == s.nets[i]);
}

TEST_CASE("overlay: every net at batch 1 and the large batch, at min(peak, bandwidth x intensity)") {
    Study s = fixture::study(false);
    Written w(s, "overlay");
    std::vector<Block> b = w.blocks("overlay-cpu");
    // Measured roof, datasheet peak (the fixture CPU has no datasheet bandwidth), then the nets.
    REQUIRE(b.size() == 3);
    CHECK(b[1].size() == 2);
    CHECK(d(b[1][0][1]) == doctest::Approx(160));  // 1.6e11 FLOP/s in GFLOP/s
    CHECK(d(b[1][1][1]) == doctest::Approx(160));
    const Block& nets = b[2];
    REQUIRE(nets.size() == 2 * s.nets.size());
    for (const std::string& net : s.nets)
        for (int64_t batch : {int64_t(1), s.large_batch}) {
            const Totals& t = s.counts_of(net, batch)->a.totals;
            double x = double(t.fwd_flops) / double(t.fwd_traffic_bytes);
            double y = std::min(2.0e11, 4.0e10 * x) / 1e9;
            std::string kind = batch == 1 ? "1" : "2";
            auto it = std::find_if(nets.begin(), nets.end(),
                                   [&](const Row& r) { return r[5] == net && r[3] == kind; });
            REQUIRE_MESSAGE(it != nets.end(), net, " batch ", batch);
            CHECK(d((*it)[0]) == doctest::Approx(x).epsilon(1e-8));
            CHECK(d((*it)[1]) == doctest::Approx(y).epsilon(1e-8));
        }

    CHECK(w.at("overlay-cuda").missing == "no cuda ceilings were measured (cuda: no CUDA device is available)");
    CHECK_FALSE(fs::exists(w.dir / "overlay-cuda.dat"));
}

TEST_CASE("overlay and measured: with GPU results the cuda figures have data, in TFLOP/s") {
    Study s = fixture::study(true);
    Written w(s, "gpu");
    CHECK(w.at("overlay-cuda").missing.empty());
    CHECK(w.at("measured-cuda").missing.empty());
    std::vector<Block> b = w.blocks("overlay-cuda");
    REQUIRE(b.size() == 3);  // measured roof, datasheet roof, nets
    CHECK(d(b[0].back()[1]) == doctest::Approx(50));
    CHECK(d(b[1].back()[1]) == doctest::Approx(67));
}

TEST_CASE("measured: every run at its FLOPs over its median time, against FLOPs over bytes") {
    Study s = fixture::study(false);
    Written w(s, "measured");
    std::vector<Block> b = w.blocks("measured-cpu");
    REQUIRE(b.size() == 2 + 4);  // two roofs; infer at batches 1, 4, 16; train at 4
    size_t points = 0;
    for (size_t i = 2; i < b.size(); ++i) points += b[i].size();
    CHECK(points == s.runs_of("cpu", Mode::infer).size() + s.runs_of("cpu", Mode::train).size());
    // The train block comes last; alexnet is the study's fourth net, its colour 4.
    const Run& r = *s.run_of("cpu", "alexnet", Mode::train, 4);
    const Totals& t = r.a.totals;
    double flops = double(t.fwd_flops + t.dgrad_flops + t.wgrad_flops);
    double bytes = double(t.fwd_traffic_bytes + t.bwd_traffic_bytes);
    const Row& p = b[5][3];
    CHECK(p[2] == "4");
    CHECK(d(p[0]) == doctest::Approx(flops / bytes).epsilon(1e-8));
    CHECK(d(p[1]) == doctest::Approx(flops / r.step.median / 1e9).epsilon(1e-8));

    CHECK(w.at("measured-cuda").missing == "no cuda runs were measured (cuda: no CUDA device is available)");
    CHECK_FALSE(fs::exists(w.dir / "measured-cuda.dat"));
}

TEST_CASE("measured: this host's ridge train runs join the cpu figure as a block of their own") {
    Study s = fixture::study(false);
    auto train_run = [](std::string host, std::string device, std::string net, double gflops) {
        TrainRun t;
        t.host = std::move(host);
        t.device = std::move(device);
        t.net = std::move(net);
        t.flops_per_step = 600;
        t.bytes_per_step = 40;  // intensity 15 FLOP/B
        t.achieved_flops = gflops * 1e9;
        return t;
    };
    s.train_runs = {train_run("fixture", "cpu", "mobilenet_v2", 12.5), train_run("fixture", "cpu", "googlenet", 30),
                    train_run("elsewhere", "cpu", "resnet18", 50), train_run("fixture", "cuda", "resnet18", 900)};
    Written w(s, "measured_train");
    std::vector<Block> b = w.blocks("measured-cpu");
    REQUIRE(b.size() == 2 + 4 + 1);  // roofs, the bench runs' four configurations, the training runs
    const Block& t = b.back();
    REQUIRE(t.size() == 2);  // the other host's and the GPU's runs are not on this CPU's roofline
    CHECK(d(t[0][0]) == doctest::Approx(15));
    CHECK(d(t[0][1]) == doctest::Approx(12.5));  // GFLOP/s, the figure's unit at this peak
    CHECK(t[0][2] == "2");   // mobilenet_v2 is the study's second net
    CHECK(t[1][2] == "20");  // googlenet is not studied: black
    std::string gpv = clitest::slurp(w.dir / "measured-cpu.gpv");
    CHECK(gpv.find("ridge train runs") != std::string::npos);
}

TEST_CASE("measured-layers: layers without FLOPs or time are left out; backward intensity from half the bwd traffic") {
    Study s = fixture::study(false);
    Run* r = nullptr;
    for (Run& run : s.runs)
        if (run.net == s.layer_net && !run.layers.empty()) r = &run;
    REQUIRE(r);
    // The first convolution's forward time zeroed: its forward point must go.
    size_t conv1 = 0;
    while (r->a.layers[conv1].kind != "conv2d") ++conv1;
    REQUIRE(r->a.layers[conv1].c.wgrad_flops > 0);
    r->layers[conv1].fwd = Stats{};

    size_t fwd = 0, dgrad = 0, wgrad = 0;
    for (size_t i = 0; i < r->a.layers.size(); ++i) {
        const Counts& c = r->a.layers[i].c;
        fwd += c.fwd_flops > 0 && r->layers[i].fwd.median > 0;
        dgrad += c.dgrad_flops > 0 && r->layers[i].dgrad.median > 0;
        wgrad += c.wgrad_flops > 0 && r->layers[i].wgrad.median > 0;
    }
    Written w(s, "layers");
    const Figure& f = w.at("measured-layers");
    CHECK(f.missing.empty());
    CHECK(f.caption.find("1 with FLOPs but no measured time") != std::string::npos);
    std::vector<Block> b = w.blocks("measured-layers");
    REQUIRE(b.size() == 2 + 3);
    CHECK(b[2].size() == fwd);
    CHECK(b[3].size() == dgrad);
    CHECK(b[4].size() == wgrad);

    // A 3x3 convolution in the first stage: its wgrad point at wgrad / (bwd traffic / 2).
    size_t conv = conv1 + 1;
    while (r->a.layers[conv].kind != "conv2d") ++conv;
    const Counts& c = r->a.layers[conv].c;
    double x = double(c.wgrad_flops) / (double(c.bwd_traffic_bytes) / 2);
    double y = double(c.wgrad_flops) / r->layers[conv].wgrad.median / 1e9;
    auto it = std::find_if(b[4].begin(), b[4].end(), [&](const Row& p) {
        return std::abs(d(p[0]) / x - 1) < 1e-8 && std::abs(d(p[1]) / y - 1) < 1e-8;
    });
    CHECK(it != b[4].end());
    // conv1's forward intensity does not appear among the forward points.
    double x1 = double(r->a.layers[conv1].c.fwd_flops) / double(r->a.layers[conv1].c.fwd_traffic_bytes);
    CHECK(std::none_of(b[2].begin(), b[2].end(), [&](const Row& p) { return std::abs(d(p[0]) / x1 - 1) < 1e-8; }));
}
