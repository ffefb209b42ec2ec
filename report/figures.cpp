#include "report/figures.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "bench/format.h"
#include "bench/spawn.h"
#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> write_figure_data(const Study& s, const std::string& data_dir) {
    using Writer = std::vector<Figure> (*)(const Study&, const std::string&);
    const Writer writers[] = {chips_figures,      zoo_figures,      overlay_figures,
                              latency_figures,    spearman_figures, throughput_figures,
                              measured_figures,   fwdbwd_figures,   pies_figures,
                              counts_figures};
    std::vector<Figure> all;
    for (Writer w : writers)
        for (Figure& f : w(s, data_dir)) all.push_back(std::move(f));
    return all;
}

int draw_figures(const std::string& dir, std::vector<Figure>& figures, int jobs) {
    namespace fs = std::filesystem;
    // -k: one figure's failure does not stop the others; the makefile deletes what a failed
    // gnuplot left half-written. A make that runs ridge (make report) must not pass its own flags
    // and jobserver on to this one, which has its own -j.
    bench::RunOptions in_dir;
    in_dir.cwd = dir;
    in_dir.shown = bench::RunOptions::Shown::errors;
    in_dir.unset = {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"};
    int status = bench::run_program(
        {"make", "-s", "-k", "-f", RIDGE_SOURCE_DIR "/Makefile.gnuplot", "DIR=.", cat("-j", std::max(1, jobs))}, in_dir);
    int not_drawn = 0;
    for (Figure& f : figures) {
        if (!f.missing.empty()) continue;
        for (const char* ext : {".png", ".svg"}) {
            std::error_code ec;
            fs::path p = fs::path(dir) / "figures" / (f.name + ext);
            if (fs::is_regular_file(p, ec) && fs::file_size(p, ec) > 0) continue;
            f.missing = status == 127 ? "make could not be run, so nothing was drawn"
                                      : cat("gnuplot did not draw it (plots/", f.name.substr(0, f.name.find('-')),
                                            ".gp; its messages went to stderr)");
            ++not_drawn;
            break;
        }
    }
    return not_drawn;
}

void write_data(const std::string& data_dir, const std::string& name, const std::string& dat,
                const std::string& gpv) {
    bench::write_output(data_dir + "/" + name + ".dat", dat);
    bench::write_output(data_dir + "/" + name + ".gpv", gpv);
}

std::string gp_quote(std::string_view s) {
    // gnuplot runs `command` found in a double-quoted string (even in a loaded file) and ends a
    // command at a newline, so those never reach it raw: octal escapes are expanded only after
    // the command substitution has looked at the line.
    std::string out = "\"";
    for (char c : s) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (c == '`' || u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", unsigned(u));
            out += buf;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

}  // namespace ridge::report
