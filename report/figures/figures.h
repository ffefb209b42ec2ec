#pragma once
// One writer per kind of figure, each beside its script plots/KIND.gp. Each returns its figures
// (see report/figures.h), having written the data of those it can draw into data_dir.
#include "report/figures.h"

namespace ridge::report {

std::vector<Figure> chips_figures(const Study& s, const std::string& data_dir);       // 1. chips on rooflines
std::vector<Figure> zoo_figures(const Study& s, const std::string& data_dir);         // 2. the zoo's counts as bars
std::vector<Figure> overlay_figures(const Study& s, const std::string& data_dir);     // 3. nets' intensity on this machine's roofs
std::vector<Figure> latency_figures(const Study& s, const std::string& data_dir);     // 4. latency vs FLOPs, vs params
std::vector<Figure> spearman_figures(const Study& s, const std::string& data_dir);    // 5. rank correlations
std::vector<Figure> throughput_figures(const Study& s, const std::string& data_dir);  // 6. throughput vs batch
std::vector<Figure> measured_figures(const Study& s, const std::string& data_dir);    // 7. measured points on the roofline
std::vector<Figure> fwdbwd_figures(const Study& s, const std::string& data_dir);      // 8. backward / forward
std::vector<Figure> pies_figures(const Study& s, const std::string& data_dir);        // 9. where a net's time, FLOPs, memory go
std::vector<Figure> counts_figures(const Study& s, const std::string& data_dir);      // 10. counted against analytic, by type

}  // namespace ridge::report
