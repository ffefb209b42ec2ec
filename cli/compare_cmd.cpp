#include "cli/compare_cmd.h"

#include <filesystem>
#include <iostream>

#include "bench/env.h"
#include "bench/format.h"
#include "bench/spawn.h"
#include "report/compare.h"
#include "report/folder.h"

namespace ridge::cli {

using bench::hardware_threads, bench::run_program, bench::RunOptions, bench::shell_quoted, bench::UsageError,
    bench::write_output;

const Command compare_cmd{
    "compare", "DIR_OR_LEDGER... [options]",
    "One study across machines: reads the results of several environments (ridge report folders,\n"
    "folders of results copied from other machines, ledgers of ridge bench and ridge train, older\n"
    "ledger formats too) and writes one report.md with figures: the environments side by side (what\n"
    "differs in bold), every environment's measured roofs with its runs on one roofline, latency,\n"
    "throughput and training images/s per net as bars per environment, the speed-up over a\n"
    "baseline, and for each run whether it is memory- or compute-bound on its own machine and the\n"
    "fraction of that roof it reached. Rows that differ in machine, settings or ridge's revision\n"
    "are different environments; repeats of one configuration are shown as mean and spread.\n"
    "The folder is written beside --out and swapped in when complete; an existing one is replaced\n"
    "only if ridge wrote it. Needs gnuplot.",
    -1,
    {{"--out", "DIR", "where to write (default results/compare)"},
     {"--nets", "A,B,..", "only these nets (default: every net found)"},
     {"--label-by", "L", "name environments by host (default), device (the CPU or GPU model) or label (the input)"},
     {"--baseline", "ENV", "the environment speed-ups are over (default: the first)"}}};

int run_compare(const Args& a) {
    namespace fs = std::filesystem;
    report::CompareOptions o;
    std::string by = a.choice("--label-by", "host", {"host", "device", "label"});
    o.label_by = by == "device" ? report::LabelBy::device : by == "label" ? report::LabelBy::label : report::LabelBy::host;
    if (a.has("--nets")) o.nets = a.list("--nets");
    o.baseline = a.get("--baseline", "");
    fs::path out = report::check_destination(a.get("--out", "results/compare"));
    for (const std::string& in : a.pos) {
        std::error_code ec;
        if (fs::exists(in, ec) && fs::exists(out, ec) && fs::equivalent(in, out, ec))
            throw UsageError(cat("ridge compare: --out '", out.string(), "' is one of the inputs"));
    }
    // Everything is read and checked before anything is created.
    report::Comparison c = report::load_comparison(a.pos, o);
    RunOptions silent;
    silent.shown = RunOptions::Shown::nothing;
    if (run_program({"gnuplot", "--version"}, silent) != 0) {
        std::cerr << "ridge compare: gnuplot is not installed (Debian: apt install gnuplot-nox; `make deps` does it)\n";
        return 1;
    }
    report::ReportFolder folder(out);
    std::string command = "ridge compare";
    for (const std::string& p : a.pos) command += " " + shell_quoted(p);
    for (const auto& [k, v] : a.opt) command += " " + k + (v.empty() ? "" : " " + shell_quoted(v));
    std::vector<report::Figure> figures = report::compare_figures(c, (folder.dir() / "data").string());
    int not_drawn = report::draw_figures(folder.dir().string(), figures, hardware_threads());
    write_output((folder.dir() / "report.md").string(), report::compare_markdown(c, figures, command));
    write_output((folder.dir() / "environments.csv").string(), report::environments_csv(c));
    write_output((folder.dir() / "runs.csv").string(), report::groups_csv(c));
    write_output((folder.dir() / "rows.csv").string(), report::rows_csv(c));
    write_output((folder.dir() / report::compare_marker_file).string(), "written by ridge compare\n");
    try {
        folder.commit();
    } catch (const report::NotPlaced& e) {
        std::cerr << e.what() << "\n";
        return 1;
    }
    int drawn = 0;
    for (const report::Figure& f : figures) drawn += f.missing.empty();
    std::cout << "ridge compare: " << (out / "report.md").string() << ": " << c.envs.size()
              << (c.envs.size() == 1 ? " environment" : " environments") << ", " << c.groups.size()
              << " configurations, " << c.rows_compared() << " rows, " << drawn << " figures\n";
    if (c.envs.size() == 1) std::cout << "  one environment only: nothing to compare it with, so no speed-ups\n";
    for (size_t e = 0; e < c.envs.size(); ++e)
        std::cout << "  " << (e == c.baseline ? "baseline " : "         ") << c.envs[e].name << "\n";
    if (not_drawn > 0) {
        std::cerr << "ridge compare: gnuplot did not draw " << not_drawn
                  << " of the figures (its messages are above); report.md lists them as left out\n";
        return 1;
    }
    return 0;
}

}  // namespace ridge::cli
