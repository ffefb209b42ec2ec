#pragma once
// The study's measurements as CSV beside report.md, for a student's own tables and plots.
#include <string>

#include "report/study.h"

namespace ridge::report {

std::string runs_csv(const Study& s);    // one row per measured step, with its analytic counts
std::string layers_csv(const Study& s);  // the layer net's run, one row per layer
// Where FLOPs were counted (Study::profiles): per device, `ridge profile --format csv` of the
// layer net, keyed by the file's name ("counts-cpu.csv").
std::vector<std::pair<std::string, std::string>> counts_csvs(const Study& s);

}  // namespace ridge::report
