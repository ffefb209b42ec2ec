#pragma once
// Published clocks of CPU models (roofline/cpu_clocks.csv): what the datasheet line under this
// machine's measured roof is computed at. The vendors' peak FLOP/s figures assume the maximum
// boost clock; a VM often hides the model ("AMD EPYC") and reports only a nominal clock, which
// then gives a lower bound.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::roofline {

struct CpuClock {
    std::string model;  // as the vendor names it, e.g. "AMD EPYC 7763"
    double base_ghz = 0, boost_ghz = 0;
    std::string source, notes;
    int line = 0;
};

std::vector<CpuClock> parse_cpu_clocks(std::string_view text, const std::string& file);
std::vector<CpuClock> load_cpu_clocks(const std::string& path);
std::string cpu_clocks_path(const std::string& chips_path);  // "cpu_clocks.csv" beside the chip database

// The table row whose model names this CPU: its words appear in order, each whole, in the model
// name the CPU reports ("AMD EPYC 7543" matches "AMD EPYC 7543 32-Core Processor", not
// "AMD EPYC 7543P 32-Core Processor"). Null when none does.
const CpuClock* find_cpu_clock(const std::vector<CpuClock>& table, std::string_view reported_model);

// The clock the datasheet line is drawn at, and why.
struct DatasheetClock {
    double ghz = 0;
    bool lower_bound = false;       // the model is unknown: the reported (nominal) clock was used
    const CpuClock* row = nullptr;  // the table row, when the model is known
    std::string why;                // one phrase: "the max boost 3.5 GHz of AMD EPYC 7763"
};
// Max boost of the table's row for this model; else the reported clock, marked a lower bound; none
// when neither exists.
std::optional<DatasheetClock> datasheet_clock(const std::vector<CpuClock>& table, std::string_view reported_model,
                                              std::optional<double> reported_ghz);

}  // namespace ridge::roofline
