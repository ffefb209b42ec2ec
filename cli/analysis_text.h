#pragma once
// Renders analyses as text: `table` for a 100-column terminal (SI-scaled), `csv` and `json` with
// exact integers for scripts and plots.
#include <string>

#include "engine/analysis.h"

namespace ridge::cli {

std::string summary_table(const Analysis& a);
std::string summary_csv(const Analysis& a);
std::string summary_json(const Analysis& a);

// One row per net; with layers, csv has one row per layer and json nests each net's layers.
std::string zoo_table(const std::vector<Analysis>& nets);
std::string zoo_csv(const std::vector<Analysis>& nets, bool layers);
std::string zoo_json(const std::vector<Analysis>& nets, bool layers);

std::string explain_text(const Graph& g, const Node& n, DType dtype);

}  // namespace ridge::cli
