#pragma once
// report.md: the study's key tables and every figure, each figure embedded or, where its data do
// not exist, a line saying why it is left out. Links are relative to the report's folder.
#include <string>
#include <vector>

#include "report/figures.h"

namespace ridge::report {

struct ReportInfo {
    std::string command;  // the command line that produced it
    std::string scope;    // "quick" or "full"
    double seconds = 0;   // how long the study took
};

std::string report_markdown(const Study& s, const std::vector<Figure>& figures, const ReportInfo& info);

// A Markdown table, a blank line after it. The first column is left-aligned; the others too, or
// right-aligned (numbers) when numbers_right.
std::string markdown_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                           bool numbers_right);

}  // namespace ridge::report
