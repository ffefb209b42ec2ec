// `ridge report`: report.md names every figure of the study and every file it links exists, on a
// fixture and on a real (tiny) run; bad input is one line and a non-zero exit with nothing left
// behind.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <regex>
#include <set>
#include <thread>

#include "bench/ledger.h"
#include "cli.h"
#include "roofline/probes/cuda/probes.h"
#include "bench/env.h"
#include "report/folder.h"
#include "report/markdown.h"
#include "train/ledger.h"
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
        // The ceilings table names the instruction set each peak was measured with.
        CHECK(md.find("| cpu | Fixture CPU (2 cores) | avx512 | 200.0 | 40.0 |") != std::string::npos);
        CHECK((md.find("| cuda |") != std::string::npos) == gpu);
        CHECK((md.find("cuda: no CUDA device is available") != std::string::npos) == !gpu);
    }
}

TEST_CASE("report.md lists the training ledger's runs, or says it found none") {
    Study s = fixture::study(false);
    s.train_log = "logs/metrics.csv";
    TrainRun t;
    t.label = "r18_run2";
    t.host = "box";
    t.device = "cpu";
    t.net = "resnet18";
    t.data = "/data/imagenet-subset";
    t.batch = 32;
    t.height = t.width = 224;
    t.workers = 2;
    t.images_per_s = 14.25;
    t.step_median_s = 2.25;
    t.data_wait_share = 0.012;
    t.achieved_flops = 152.4e9;
    t.roof_fraction = 0.31;
    t.first_loss = 6.91;
    t.last_loss = 6.5;
    s.train_runs = {t};
    std::string md = report_markdown(s, {}, {"ridge report --quick", "quick", 61});
    CHECK(md.find("## Training runs (`ridge train`)") != std::string::npos);
    CHECK(md.find("| r18_run2 | box | cpu | resnet18 | 32 | 224x224 | images | 2 | 14.2 | 2250.0 | 1.2 % | 152.4 | "
                  "31 % | 6.91 → 6.50 | — |") != std::string::npos);
    s.train_runs.clear();
    CHECK(report_markdown(s, {}, {"ridge report --quick", "quick", 61}).find("None found.") != std::string::npos);
}

// One tiny real study, shared by the cases below. Its --out has everything a shell, make or gnuplot
// could misread (spaces, quotes, ';', $(...), backticks, a trailing slash), names a folder a
// previous ridge report left (its marker and a stale file), and ridge runs in a folder of its own,
// so that a command smuggled in through the path would leave its file there.
struct TinyStudy {
    clitest::Run run;
    fs::path root, cwd, out, log;
};

const TinyStudy& tiny_study() {
    static const TinyStudy t = [] {
        TinyStudy t;
        t.root = clitest::scratch() / "study";
        t.cwd = t.root / "cwd";
        t.out = t.root / "a b';touch PWNED;echo '$(shell touch MADE)`touch TICKED`";
        fs::create_directories(t.cwd);
        fs::create_directories(t.out);
        std::ofstream(t.out / marker_file) << "";
        std::ofstream(t.out / "stale.txt") << "from an earlier study\n";
        // A training run of this host in the ledger, written as `ridge train` writes it.
        t.log = t.root / "train_log" / "metrics.csv";
        ridge::train::RunRecord rec;
        rec.label = "tiny_run1";
        rec.host = ridge::bench::host_name();
        rec.config.net = "squeezenet1_1";
        rec.config.batch = 4;
        rec.data = "synthetic";
        rec.flops_per_step = 4000;
        rec.bytes_per_step = 100;
        rec.result.images_per_s = 3.5;
        rec.result.gflops = 1.25;
        ridge::bench::append_csv_row(t.log.string(), ridge::train::ledger_header(), ridge::train::ledger_row(rec));
        t.run = clitest::run({"report", "--nets", "squeezenet1_1,mobilenet_v3_small,shufflenet_v2_x1_0", "--batches",
                              "1,2", "--train-batch", "2", "--warmup", "0", "--repeat", "1", "--precision", "bf16", "--quiet", "--train-log",
                              t.log.string(), "--out", t.out.string() + "/"},
                             t.cwd);
        return t;
    }();
    return t;
}

TEST_CASE("ridge report: a tiny real study writes report.md whose every link exists") {
    const TinyStudy& t = tiny_study();
    const clitest::Run& r = t.run;
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.err.empty());
    CHECK(r.out.find("report.md: 9 runs") != std::string::npos);
    std::string md = clitest::slurp(t.out / "report.md");
    std::vector<std::string> targets = links(md);
    CHECK(targets.size() > 10);
    for (const std::string& target : targets) CHECK_MESSAGE(fs::exists(t.out / target), target);
    CHECK(md.find("### ") != std::string::npos);
    // Written beside the final folder and put in its place: nothing else is left in the parent.
    std::set<fs::path> left;
    for (const auto& e : fs::directory_iterator(t.root)) left.insert(e.path());
    CHECK(left == std::set<fs::path>{t.cwd, t.out, t.log.parent_path()});
    // --precision bf16: the chips figures' titles name it; the stacked ceilings and the datasheet
    // line's basis beside the measured clock are there whatever the precision.
    CHECK(md.find("### Datasheet rooflines (bf16): every chip in the database\n") != std::string::npos);
    CHECK(md.find("figures/chips-ceilings.png") != std::string::npos);
    CHECK(md.find("| measured clock (GHz) |") != std::string::npos);
    CHECK(md.find("- cpu: the datasheet GFLOP/s is at the ") != std::string::npos);
    // runs.csv: a header and one row per run.
    CHECK(clitest::lines(clitest::slurp(t.out / "runs.csv")) == 10);
    // The layer net is the first net when resnet18 is not studied, timed in its training step.
    std::string layers = clitest::slurp(t.out / "layers.csv");
    CHECK(layers.find("\ncpu,squeezenet1_1,train,2,") != std::string::npos);
    // The training run: a row of the table, a point on the measured-runs roofline (40 FLOP/B).
    CHECK(md.find("| tiny_run1 | " + ridge::bench::host_name() + " | cpu | squeezenet1_1 | 4 |") != std::string::npos);
    std::string dat = clitest::slurp(t.out / "data" / "measured-cpu.dat");
    CHECK(dat.find("\n40 1.25 1\n") != std::string::npos);
}

TEST_CASE("ridge report: no command hidden in --out runs, through a shell, make or gnuplot") {
    const TinyStudy& t = tiny_study();
    CHECK(fs::is_empty(t.cwd));
    for (const auto& e : fs::recursive_directory_iterator(t.root)) {
        std::string name = e.path().filename().string();
        CHECK_MESSAGE((name != "PWNED" && name != "MADE" && name != "TICKED"), e.path().string());
    }
    CHECK_MESSAGE(t.run.code == 0, t.run.err);
}

TEST_CASE("ridge report: a path with spaces and a trailing slash gets every figure drawn") {
    const TinyStudy& t = tiny_study();
    REQUIRE_MESSAGE(t.run.code == 0, t.run.err);
    // Every figure with data has both drawings, and report.md embeds each of them.
    std::string md = clitest::slurp(t.out / "report.md");
    std::vector<std::string> targets = links(md);
    std::set<std::string> linked(targets.begin(), targets.end());
    int figures = 0;
    for (const auto& e : fs::directory_iterator(t.out / "data")) {
        if (e.path().extension() != ".dat") continue;
        std::string name = e.path().stem().string();
        INFO(name);
        ++figures;
        for (const char* ext : {".png", ".svg"}) {
            fs::path p = t.out / "figures" / (name + ext);
            CHECK(fs::exists(p));
            if (fs::exists(p)) CHECK(fs::file_size(p) > 1000);
        }
        CHECK(linked.count("figures/" + name + ".png") == 1);
    }
    CHECK(figures > 10);
    CHECK(t.run.out.find(" " + std::to_string(figures) + " figures") != std::string::npos);
}

TEST_CASE("ridge report: a folder ridge wrote is replaced whole, and marked as ridge's") {
    const TinyStudy& t = tiny_study();
    REQUIRE_MESSAGE(t.run.code == 0, t.run.err);
    CHECK_FALSE(fs::exists(t.out / "stale.txt"));
    CHECK(fs::is_regular_file(t.out / marker_file));
}

TEST_CASE("ridge report: a destination it may not use is refused before any work, in one line, touching nothing") {
    fs::path root = clitest::scratch() / "refusals", cwd = root / "cwd", mine = root / "mine", file = root / "file";
    fs::create_directories(cwd);
    fs::create_directories(mine);
    std::ofstream(mine / "thesis.tex") << "months of work\n";
    std::ofstream(file) << "a file\n";
    fs::create_directory_symlink(mine, root / "link");
    // cwd holding the destination: ridge would pull its own folder away.
    fs::create_directories(root / "old_report" / "inner");
    std::ofstream(root / "old_report" / marker_file) << "";
    auto listing = [&] {
        std::set<std::string> all;
        for (const auto& e : fs::recursive_directory_iterator(root)) all.insert(e.path().string());
        return all;
    };
    std::set<std::string> before = listing();
    struct Case {
        std::string out, says;
        fs::path cwd;
    };
    for (const Case& c : std::vector<Case>{{".", "ends in '.'", cwd},
                                          {"./", "ends in '.'", cwd},
                                          {"..", "ends in '..'", cwd},
                                          {"/", "root folder", cwd},
                                          {"", "--out is empty", cwd},
                                          {mine.string(), "not written by ridge report", cwd},
                                          {mine.string() + "/", "not written by ridge report", cwd},
                                          {file.string(), "not a folder", cwd},
                                          {(file / "report").string(), "parents is a file", cwd},
                                          {(root / "link").string(), "symbolic link", cwd},
                                          {"../../old_report", "holds the current folder", root / "old_report" / "inner"},
                                          {"/proc/ridge-test/report", "cannot make the folder '/proc/ridge-test'", cwd},
                                          {"/proc/ridge-test", "cannot write in '/proc'", cwd}}) {
        CAPTURE(c.out);
        // Without --quiet: a study that had started would have printed its progress.
        clitest::Run r = clitest::run({"report", "--nets", "squeezenet1_1", "--batches", "1", "--train-batch", "0",
                                       "--warmup", "0", "--repeat", "1", "--out", c.out},
                                      c.cwd);
        CHECK(r.code == 2);
        CHECK(r.out.empty());
        CHECK(clitest::lines(r.err) == 1);
        CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
        CHECK(listing() == before);
    }
    CHECK(clitest::slurp(mine / "thesis.tex") == "months of work\n");
}

TEST_CASE("ridge report: SIGTERM in the study or SIGINT while drawing leaves nothing and exits 128 + signal") {
    // The destination's parents do not exist yet: ridge makes them, and must remove them too.
    fs::path root = clitest::scratch() / "signals";
    fs::create_directories(root);
    struct Case {
        int sig;
        std::string during;
        std::string ready;  // inside the unfinished folder: appears once the phase has begun
    };
    for (const Case& c : {Case{SIGTERM, "the study", "data"}, Case{SIGINT, "drawing", "figures"}}) {
        CAPTURE(c.during);
        fs::path out = root / "new" / "report";
        clitest::Child child = clitest::start({"report", "--nets", "squeezenet1_1", "--batches", "1", "--train-batch",
                                               "0", "--warmup", "0", "--repeat", "1", "--quiet", "--out", out.string()});
        // Wait for the unfinished folder (data/ is made right after it is registered for removal;
        // make creates figures/ before it starts gnuplot).
        fs::path partial;
        auto until = std::chrono::steady_clock::now() + std::chrono::minutes(5);
        while (partial.empty() && clitest::running(child) && std::chrono::steady_clock::now() < until) {
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(root / "new", ec))
                if (e.path().filename().string().rfind("report.partial.", 0) == 0 && fs::exists(e.path() / c.ready))
                    partial = e.path();
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        REQUIRE_MESSAGE(!partial.empty(), "the run ended or hung before ", c.during);
        // While drawing, make (and gnuplot) work inside the folder; none may outlive ridge there.
        auto working_inside = [&] {
            int n = 0;
            for (const auto& e : fs::directory_iterator("/proc")) {
                std::error_code ec;
                fs::path cwd = fs::read_symlink(e.path() / "cwd", ec);
                n += !ec && cwd.string().rfind(partial.string(), 0) == 0;
            }
            return n;
        };
        if (c.sig == SIGINT) CHECK(working_inside() > 0);
        ::kill(child.pid, c.sig);
        clitest::Run r = clitest::finish(child, 120);
        CHECK(r.code == 128 + c.sig);
        CHECK(r.out.empty());
        CHECK(r.err.find("internal error") == std::string::npos);
        std::string last = r.err.substr(r.err.rfind('\n', r.err.size() - 2) + 1);
        CHECK_MESSAGE(last.find(std::string("ridge: interrupted by ") + (c.sig == SIGINT ? "SIGINT" : "SIGTERM")) == 0, r.err);
        CHECK(working_inside() == 0);
        CHECK_MESSAGE(fs::is_empty(root), "left behind under ", root.string());
    }
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
    clitest::check_usage_error(("report --precision fp12" + o),
                               "ridge report: unknown precision 'fp12' (fp64, fp32, tf32, fp16, bf16, fp8, int8)");
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
