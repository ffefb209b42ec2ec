#pragma once
// The figures of a study. Each figure NAME has its data in data/NAME.dat (whitespace-separated
// columns, '#' header lines; gnuplot `index` blocks where a figure has several series) and its
// scalars in data/NAME.gpv (gnuplot assignments: titles, roofs, axis ranges), both written here.
// Makefile.gnuplot renders figures/NAME.png and figures/NAME.svg with plots/KIND.gp, where KIND is
// NAME up to its first '-' (chips-gpu is drawn by plots/chips.gp).
#include <string>
#include <vector>

#include "report/study.h"

namespace ridge::report {

struct Figure {
    std::string name;     // file stem, see above
    std::string title;    // its heading in report.md
    std::string caption;  // what it shows and how to read it, a sentence or two
    std::string missing;  // empty when its data were written; otherwise why it is left out
};

// Writes the data of every figure the study supports into data_dir and returns all figures of
// the study in report order, those without data carrying the reason.
std::vector<Figure> write_figure_data(const Study& s, const std::string& data_dir);

// Draws every figure that has data with Makefile.gnuplot, run inside dir (the folder holding
// data/) so that the folder's name reaches neither make nor a shell, `jobs` at a time; gnuplot's
// messages go to stderr. A figure whose PNG or SVG is then missing or empty is marked missing with
// the reason. Returns how many were not drawn.
int draw_figures(const std::string& dir, std::vector<Figure>& figures, int jobs);

// Writes a figure's two files (atomically, each a temp file renamed into place).
void write_data(const std::string& data_dir, const std::string& name, const std::string& dat,
                const std::string& gpv);

// A string as a gnuplot double-quoted literal.
std::string gp_quote(std::string_view s);

}  // namespace ridge::report
