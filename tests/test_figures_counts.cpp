// The report's counted-FLOPs figure and section (report/figures/counts.cpp, markdown.cpp), built
// from the fixture study with a profile of scripted counts: the figure's bars are the sums of the
// profile's rows per layer type, worked out here; gnuplot draws it (with the bytes panel when DRAM
// was counted) without a word on stderr; and a study without counts has neither figure nor
// section, as before.
#include <doctest/doctest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "report/figures.h"
#include "report/figures/dat.h"
#include "report/figures/figures.h"
#include "report/markdown.h"
#include "study_fixture.h"

namespace fs = std::filesystem;
using namespace ridge;
using namespace ridge::report;

namespace {

// resnet18's training step at batch 2 as if counted: batchnorm twice the model's FLOPs, ReLU none
// (the counters' blind spot), every other layer exactly the model; DRAM, when counted, a 32-byte
// line per 32 analytic bytes of each forward step.
profile::Profile counted(const std::string& device, bool dram) {
    Graph g = build(*find_net("resnet18"), 2, 224, 224);
    Analysis a = analyze(g, DType::fp32);
    std::vector<StepInfo> steps;
    std::vector<std::vector<int64_t>> counts;
    std::vector<profile::Counter> counters = {{"flops", "flops", profile::Measure::flops, 1}};
    if (dram) {
        counters.push_back({"dram__bytes_read.sum", "dram read", profile::Measure::dram_read, 32});
        counters.push_back({"dram__bytes_write.sum", "dram write", profile::Measure::dram_write, 32});
    }
    for (size_t l = 0; l < a.layers.size(); ++l) {
        const LayerCost& c = a.layers[l];
        auto add = [&](StepPhase ph, int64_t analytic, int64_t bytes) {
            StepInfo s;
            s.node = int(l);
            s.phase = ph;
            s.primitive = "kernel";
            s.impl = "test";
            steps.push_back(s);
            int64_t f = c.kind == "batchnorm" ? 2 * analytic : c.kind == "relu" ? 0 : analytic;
            std::vector<int64_t> row = {f};
            if (dram) row.insert(row.end(), {bytes / 64, bytes / 64});
            counts.push_back(row);
        };
        add(StepPhase::fwd, c.c.fwd_flops, c.c.fwd_traffic_bytes);
        if (c.c.dgrad_flops > 0) add(StepPhase::dgrad, c.c.dgrad_flops, 0);
        if (c.c.wgrad_flops > 0) add(StepPhase::wgrad, c.c.wgrad_flops, 0);
    }
    profile::Profile p;
    p.model = "resnet18";
    p.device = device;
    p.backend = device == "cpu" ? "onednn" : "cudnn";
    p.mode = Mode::train;
    p.batch = 2;
    p.source = "scripted counts";
    profile::PhaseTimes t;
    t.layers.assign(a.layers.size(), {});
    profile::attribute(p, g, a, steps, counters, counts, t);
    return p;
}

double d64(const std::string& s) { return std::stod(s); }

std::map<std::string, std::vector<std::string>> read_dat(const fs::path& path) {
    std::map<std::string, std::vector<std::string>> rows;
    std::istringstream in(clitest::slurp(path));
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream f(line);
        std::string type, v;
        f >> type;
        while (f >> v) rows[type].push_back(v);
    }
    return rows;
}

struct Drawn {
    fs::path dir;
    std::vector<Figure> figures;
    int code = -1;
    std::string err;
    ~Drawn() { fs::remove_all(dir); }
};

void draw(Drawn& d, const Study& s, const std::string& tag) {
    d.dir = fs::temp_directory_path() / ("ridge_counts." + std::to_string(::getpid()) + "." + tag);
    fs::remove_all(d.dir);
    fs::create_directories(d.dir / "data");
    d.figures = counts_figures(s, (d.dir / "data").string());
    std::string cmd = "make -s -f '" RIDGE_SOURCE_DIR "/Makefile.gnuplot' DIR='" + d.dir.string() + "' >'" +
                      (d.dir / "out").string() + "' 2>'" + (d.dir / "err").string() + "'";
    int status = std::system(cmd.c_str());
    d.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    d.err = clitest::slurp(d.dir / "err");
}

}  // namespace

TEST_CASE("counted-FLOPs figure: a bar per layer type, the sums of its rows") {
    Study s = fixture::study(false);
    s.profiles.push_back(counted("cpu", false));
    const profile::Profile& p = s.profiles.back();
    Drawn d;
    draw(d, s, "cpu");
    REQUIRE(d.figures.size() == 1);
    CHECK(d.figures[0].name == "counts-cpu");
    CHECK(d.figures[0].missing.empty());
    std::map<std::string, std::vector<std::string>> dat = read_dat(d.dir / "data" / "counts-cpu.dat");

    std::map<std::string, std::array<int64_t, 4>> sums;  // analytic, expected, counted, bytes
    for (const profile::Row& r : p.rows) {
        auto& t = sums[r.kind];
        t[0] += r.analytic_flops;
        t[1] += r.expected_flops;
        t[2] += r.measured->flops;
        t[3] += std::max<int64_t>(r.analytic_bytes, 0);
    }
    auto cell = [](int64_t v) { return v > 0 ? num(double(v)) : std::string("NaN"); };
    for (const auto& [kind, t] : sums) {
        CAPTURE(kind);
        if (t[0] == 0 && t[2] == 0) {
            CHECK(dat.count(kind) == 0);
            continue;
        }
        REQUIRE(dat.count(kind) == 1);
        CHECK(dat[kind] == std::vector<std::string>{cell(t[0]), cell(t[1]), cell(t[2]), cell(t[3]), "NaN"});
    }
    // The scripted counts: convolutions as the model, batchnorm twice, ReLU nothing (no bar).
    CHECK(dat["conv2d"][0] == dat["conv2d"][2]);
    CHECK(d64(dat["batchnorm"][2]) == 2 * d64(dat["batchnorm"][0]));
    CHECK(dat["relu"][2] == "NaN");
    CHECK(d.code == 0);
    CHECK_MESSAGE(d.err.empty(), d.err);
    for (const char* ext : {".png", ".svg"}) CHECK(fs::file_size(d.dir / "figures" / (std::string("counts-cpu") + ext)) > 1000);
}

TEST_CASE("counted-FLOPs figure: with DRAM counted (a GPU), a bytes panel") {
    Study s = fixture::study(true);
    s.profiles.push_back(counted("cuda", true));
    Drawn d;
    draw(d, s, "gpu");
    REQUIRE(d.figures.size() == 1);
    CHECK(d.figures[0].name == "counts-cuda");
    CHECK(clitest::slurp(d.dir / "data" / "counts-cuda.gpv").find("hasbytes = 1") != std::string::npos);
    std::map<std::string, std::vector<std::string>> dat = read_dat(d.dir / "data" / "counts-cuda.dat");
    // Each forward step counted bytes/64 lines of 32 bytes read and as many written.
    int64_t conv_bytes = 0;
    for (const profile::Row& r : s.profiles.back().rows)
        if (r.kind == "conv2d" && r.phase == StepPhase::fwd) conv_bytes += 2 * 32 * (r.analytic_bytes / 64);
    CHECK(dat["conv2d"][4] == num(double(conv_bytes)));
    CHECK(d.code == 0);
    CHECK_MESSAGE(d.err.empty(), d.err);
    CHECK(fs::file_size(d.dir / "figures" / "counts-cuda.png") > 1000);
}

TEST_CASE("report.md: a section where counts exist, no trace of them where none do") {
    Study s = fixture::study(false);
    std::vector<Figure> none = counts_figures(s, (fs::temp_directory_path()).string());
    CHECK(none.empty());
    ReportInfo info{"ridge report --quick", "quick", 60};
    std::string plain = report_markdown(s, {}, info);
    CHECK(plain.find("Counted FLOPs") == std::string::npos);
    CHECK(plain.find("counts-") == std::string::npos);

    s.profiles.push_back(counted("cpu", false));
    std::string md = report_markdown(s, {}, info);
    CHECK(md.find("## Counted FLOPs beside the model") != std::string::npos);
    CHECK(md.find("Counters: scripted counts.") != std::string::npos);
    CHECK(md.find("`counts-DEVICE.csv`") != std::string::npos);
    // The per-type table: batchnorm counted twice the model.
    CHECK(md.find("| batchnorm |") != std::string::npos);
    CHECK(md.find("| 2.00 | 2.00 |") != std::string::npos);
    // The gaps: every phase of the 17 ReLUs (fwd, dgrad) and the 20 batchnorms (fwd, dgrad, wgrad),
    // the largest 25 listed, each with its reason.
    CHECK(md.find("94 layer phases differ from the model by more than 5 %; the 25 largest in FLOPs") != std::string::npos);
    CHECK(md.find("per output element the model counts") != std::string::npos);
}
