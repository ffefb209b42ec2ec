#include "roofline/cpu_clocks.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "roofline/csv_table.h"

namespace ridge::roofline {

namespace {

const std::vector<std::string_view> columns{"model", "base_ghz", "boost_ghz", "source", "notes"};

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> out;
    std::istringstream in{std::string(s)};
    for (std::string w; in >> w;) out.push_back(csv::lower(w));
    return out;
}

// "3.5 GHz", "2.45 GHz", "3.675 GHz": as many decimals as a published clock has, at most three.
std::string ghz(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    std::string s = buf;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s + " GHz";
}

}  // namespace

std::vector<CpuClock> parse_cpu_clocks(std::string_view text, const std::string& file) {
    std::vector<CpuClock> out;
    std::map<std::string, int> seen;
    csv::for_each_row(text, file, columns, [&](const csv::Row& r) {
        CpuClock c;
        c.line = r.line;
        c.model = r.unique_key("model", seen);
        auto base = r.number("base_ghz"), boost = r.number("boost_ghz");
        if (!base) r.fail("base_ghz", "is empty");
        if (!boost) r.fail("boost_ghz", "is empty");
        if (*boost < *base) r.fail("boost_ghz", csv::shortest(*boost) + " is below the base clock " + csv::shortest(*base));
        if (*boost > 8) r.fail("boost_ghz", csv::shortest(*boost) + " is not a clock in GHz");
        c.base_ghz = *base;
        c.boost_ghz = *boost;
        c.source = r.url("source", true);
        c.notes = r.text("notes");
        out.push_back(std::move(c));
    });
    return out;
}

std::vector<CpuClock> load_cpu_clocks(const std::string& path) { return parse_cpu_clocks(csv::read_file(path), path); }

std::string cpu_clocks_path(const std::string& chips_path) {
    return (std::filesystem::path(chips_path).parent_path() / "cpu_clocks.csv").string();
}

const CpuClock* find_cpu_clock(const std::vector<CpuClock>& table, std::string_view reported_model) {
    std::vector<std::string> have = words(reported_model);
    for (const CpuClock& c : table) {
        std::vector<std::string> want = words(c.model);
        if (want.empty() || want.size() > have.size()) continue;
        for (size_t i = 0; i + want.size() <= have.size(); ++i)
            if (std::equal(want.begin(), want.end(), have.begin() + long(i))) return &c;
    }
    return nullptr;
}

std::optional<DatasheetClock> datasheet_clock(const std::vector<CpuClock>& table, std::string_view reported_model,
                                              std::optional<double> reported_ghz) {
    if (const CpuClock* c = find_cpu_clock(table, reported_model))
        return DatasheetClock{c->boost_ghz, false, c, "the max boost " + ghz(c->boost_ghz) + " of " + c->model};
    if (!reported_ghz) return std::nullopt;
    std::string model(reported_model);
    return DatasheetClock{*reported_ghz, true, nullptr,
                          "the reported " + ghz(*reported_ghz) + " (a lower bound: '" + model +
                              "' names no model in roofline/cpu_clocks.csv)"};
}

}  // namespace ridge::roofline
