// `ridge report`: report.md names every figure of the study and every file it links exists, on a
// fixture and on a real (tiny) run; bad input is one line and a non-zero exit with nothing left
// behind.
#include <doctest/doctest.h>

#include <regex>
#include <set>

#include "cli.h"
#include "kernels/cuda/probes.h"
#include "report/markdown.h"
#include "skip.h"
#include "study_fixture.h"

using namespace ridge::report;

namespace {

// Every link target of a markdown text: ![..](x) and [..](x).
std::vector<std::string> links(const std::string& md) {
    std::vector<std::string> out;
    std::regex link(R"(\]\(([^)]+)\))");
    for (auto it = std::sregex_iterator(md.begin(), md.end(), link); it != std::sregex_iterator(); ++it)
        out.push_back((*it)[1]);
    return out;
}

// Each figure appears under its title, as an image of its own name or with the reason it is left out.
void check_figures_listed(const std::string& md, const std::vector<Figure>& figures) {
    std::vector<std::string> targets = links(md);
    std::set<std::string> linked(targets.begin(), targets.end());
    for (const Figure& f : figures) {
        INFO(f.name);
        CHECK(md.find("### " + f.title + "\n") != std::string::npos);
        bool embedded = linked.count("figures/" + f.name + ".png") > 0;
        CHECK(embedded == f.missing.empty());
        if (!f.missing.empty()) CHECK(md.find("Left out: " + f.missing) != std::string::npos);
    }
}

}  // namespace

TEST_CASE("report.md on a fixture study: tables, every figure, GPU rows only with GPU results") {
    for (bool gpu : {true, false}) {
        CAPTURE(gpu);
        Study s = fixture::study(gpu);
        std::vector<Figure> figures = {{"chips", "Chips on their rooflines", "All chips.", ""},
                                       {"overlay-cuda", "The nets on the GPU roofline", "", gpu ? "" : "no GPU results"}};
        std::string md = report_markdown(s, figures, {"ridge report --quick", "quick", 61});
        check_figures_listed(md, figures);
        for (const char* section : {"## The zoo's counts", "## This machine's ceilings", "## Measured time",
                                    "## Forward against backward", "## Memory- or compute-bound", "## Figures"})
            CHECK_MESSAGE(md.find(section) != std::string::npos, section);
        // One row per measured step in the time table: the net, the device and the mode.
        for (const Run& r : s.runs) {
            std::string row = "| " + r.net + " | " + r.device + " | " + (r.mode == ridge::Mode::train ? "train" : "infer") +
                              " | " + std::to_string(r.batch) + " |";
            CHECK_MESSAGE(md.find(row) != std::string::npos, row);
        }
        CHECK((md.find("| cuda |") != std::string::npos) == gpu);
        CHECK((md.find("cuda: no CUDA device is available") != std::string::npos) == !gpu);
    }
}

TEST_CASE("ridge report: a tiny real study writes report.md whose every link exists") {
    fs::path out = clitest::scratch() / "study";
    auto r = clitest::ridge("report --nets squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x1_0 --batches 1,2 "
                            "--train-batch 2 --warmup 0 --repeat 1 --quiet --out '" + out.string() + "'");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.err.empty());
    CHECK(r.out.find("report.md: 9 runs") != std::string::npos);
    std::string md = clitest::slurp(out / "report.md");
    std::vector<std::string> targets = links(md);
    CHECK(targets.size() > 10);
    for (const std::string& t : targets) CHECK_MESSAGE(fs::exists(out / t), t);
    CHECK(md.find("### ") != std::string::npos);
    // Written beside the final folder and renamed: nothing else is left in the parent.
    for (const auto& e : fs::directory_iterator(clitest::scratch()))
        CHECK_MESSAGE(e.path().filename().string().find("study.") == std::string::npos, e.path().string());
    // runs.csv: a header and one row per run.
    CHECK(clitest::lines(clitest::slurp(out / "runs.csv")) == 10);
    // The layer net is the first net when resnet18 is not studied, timed in its training step.
    std::string layers = clitest::slurp(out / "layers.csv");
    CHECK(layers.find("\ncpu,squeezenet1_1,train,2,") != std::string::npos);
}

TEST_CASE("ridge report: bad input is one line and a non-zero exit, nothing written") {
    fs::path out = clitest::scratch() / "refused";
    std::string o = " --out '" + out.string() + "'";
    clitest::check_usage_error(("report --nets resnet18,resnte50" + o), "unknown net 'resnte50'");
    clitest::check_usage_error(("report --quick --full" + o), "--quick and --full exclude each other");
    clitest::check_usage_error(("report --nets alexnet --layer-net resnet18" + o), "not one of the studied nets");
    clitest::check_usage_error(("report --nets alexnet,alexnet" + o), "alexnet twice");
    clitest::check_usage_error(("report --batches 0" + o), "--batches");
    clitest::check_usage_error(("report --device tpu" + o), "unknown device 'tpu'");
    CHECK_FALSE(fs::exists(out));
}

TEST_CASE("ridge report --device cuda without a GPU: one line, exit 3, nothing written [may skip]") {
    if (ridge::probe::gpu::unavailable_reason().empty())
        return testskip::skip("a GPU is here: the study would run on it");
    fs::path out = clitest::scratch() / "no_gpu";
    auto r = clitest::ridge("report --device cuda --out '" + out.string() + "'");
    CHECK(r.code == 3);
    CHECK(clitest::lines(r.err) == 1);
    CHECK(r.err.find("CUDA") != std::string::npos);
    CHECK_FALSE(fs::exists(out));
}
