#pragma once
// The study's measurements as CSV beside report.md, for a student's own tables and plots.
#include <string>

#include "report/study.h"

namespace ridge::report {

std::string runs_csv(const Study& s);    // one row per measured step, with its analytic counts
std::string layers_csv(const Study& s);  // the layer net's run, one row per layer

}  // namespace ridge::report
