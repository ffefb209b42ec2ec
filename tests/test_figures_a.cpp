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

TEST_CASE("chips: one roof per chip with a bandwidth and a FLOP peak, its ridge at peak / bandwidth") {
    Study s = fixture::study(false);
    Written w(s, "chips");
    std::vector<Block> b = w.blocks("chips");
    REQUIRE(b.size() == 4);
    // Worked out from the database: fp32, else the 16-bit peak; no bandwidth, no roof.
    std::vector<std::pair<double, double>> expected;  // ridge FLOP/B, peak TFLOP/s
    for (const roofline::Chip& c : s.chips) {
        std::optional<double> peak = c.peak_tflops[1] ? c.peak_tflops[1] : c.peak_tflops[3];
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
    CHECK(labelled("Google TPU v4 [16-bit], ridge 229") == 1);

    const std::string& caption = w.at("chips").caption;
    for (const char* left_out : {"Apple M1", "Intel Stratix 10 NX 2100", "AMD Versal AI Core VC1902"})
        CHECK_MESSAGE(caption.find(left_out) != std::string::npos, left_out);
    CHECK(w.at("chips-gpu").missing.empty());
    CHECK(w.blocks("chips-gpu")[1].size() == 7);
    // No FPGA publishes a bandwidth: the first figure's caption names them instead.
    CHECK(w.figures.count("chips-fpga") == 0);
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
