#pragma once
// The results ledger: one CSV row per measurement, appended across runs, so a study can compare
// today's numbers with last week's and see what changed in the environment between them.
#include <string>
#include <vector>

namespace ridge::cli {

// Appends rows under header. The file is rewritten through a temp file and renamed, so a crash
// leaves either the old ledger or the new one. A ledger with another header is refused rather
// than mixed (a UsageError naming the file).
void append_ledger(const std::string& path, const std::string& header, const std::vector<std::string>& rows);

std::string csv_cell(const std::string& s);  // quoted when it holds a comma or a quote

}  // namespace ridge::cli
