// Every figure of a study renders from a small fixture through Makefile.gnuplot and the scripts
// in plots/, with nothing at all on gnuplot's stderr (a warning fails the test), and figures
// without data are left out with a reason, never drawn empty.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

#include "report/figures.h"
#include "study_fixture.h"
#include "cli.h"

namespace fs = std::filesystem;
using namespace ridge::report;

namespace {

struct Rendered {
    std::vector<Figure> figures;
    fs::path dir;
    int code = -1;
    std::string err;
};

// RIDGE_KEEP_PLOTS=DIR keeps the rendered fixture in DIR/<tag> for looking at the figures.
fs::path keep_dir() {
    const char* d = std::getenv("RIDGE_KEEP_PLOTS");
    return d ? fs::path(d) : fs::path();
}

void done_with(const fs::path& dir) {
    if (keep_dir().empty()) fs::remove_all(dir);
}

Rendered render(const Study& s, const std::string& tag) {
    Rendered r;
    r.dir = keep_dir().empty() ? fs::temp_directory_path() / ("ridge_plots." + std::to_string(::getpid()) + "." + tag)
                               : keep_dir() / tag;
    fs::remove_all(r.dir);
    fs::create_directories(r.dir / "data");
    r.figures = write_figure_data(s, (r.dir / "data").string());
    std::string cmd = "make -s -f '" RIDGE_SOURCE_DIR "/Makefile.gnuplot' DIR='" + r.dir.string() + "' -j2 >'" +
                      (r.dir / "out").string() + "' 2>'" + (r.dir / "err").string() + "'";
    int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = clitest::slurp(r.dir / "err");
    return r;
}

void check_rendered(const Rendered& r) {
    CHECK(r.code == 0);
    CHECK_MESSAGE(r.err.empty(), r.err);
    std::set<std::string> names;
    for (const Figure& f : r.figures) {
        INFO(f.name);
        CHECK(names.insert(f.name).second);
        CHECK_FALSE(f.title.empty());
        bool has_data = fs::exists(r.dir / "data" / (f.name + ".dat"));
        CHECK(has_data == f.missing.empty());
        if (!f.missing.empty()) continue;
        for (const char* ext : {".png", ".svg"}) {
            fs::path p = r.dir / "figures" / (f.name + ext);
            CHECK_MESSAGE(fs::exists(p), p.string());
            if (fs::exists(p)) CHECK(fs::file_size(p) > 1000);
        }
    }
}

}  // namespace

TEST_CASE("every figure renders without a gnuplot warning, CPU and GPU results") {
    Rendered r = render(fixture::study(true), "gpu");
    check_rendered(r);
    for (const Figure& f : r.figures) CHECK_MESSAGE(f.missing.empty(), f.name, ": ", f.missing);
    done_with(r.dir);
}

TEST_CASE("without GPU results, the GPU figures are left out with a reason and the rest render") {
    Rendered r = render(fixture::study(false), "cpu");
    check_rendered(r);
    int left_out = 0;
    for (const Figure& f : r.figures) left_out += !f.missing.empty();
    CHECK(left_out > 0);
    done_with(r.dir);
}

TEST_CASE("a figure gnuplot fails to draw is marked as not drawn, and nothing half-drawn is left") {
    fs::path dir = fs::temp_directory_path() / ("ridge_plots." + std::to_string(::getpid()) + ".broken");
    fs::remove_all(dir);
    fs::create_directories(dir / "data");
    std::vector<Figure> figures = write_figure_data(fixture::study(false), (dir / "data").string());
    std::ofstream(dir / "data" / "fwdbwd.gpv", std::ios::app) << "this is not gnuplot\n";
    // gnuplot names the broken line on stderr here: that message is expected.
    CHECK(draw_figures(dir.string(), figures, 2) == 1);
    for (const Figure& f : figures) {
        INFO(f.name);
        bool has_data = fs::exists(dir / "data" / (f.name + ".dat"));
        if (f.name == "fwdbwd") {
            CHECK(f.missing.find("gnuplot did not draw it") == 0);
            CHECK_FALSE(fs::exists(dir / "figures" / "fwdbwd.png"));
            CHECK_FALSE(fs::exists(dir / "figures" / "fwdbwd.svg"));
        } else {
            CHECK(f.missing.empty() == has_data);
            if (has_data) CHECK(fs::exists(dir / "figures" / (f.name + ".svg")));
        }
    }
    fs::remove_all(dir);
}
