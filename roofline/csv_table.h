#pragma once
// Reading the roofline data files (chips.csv, peaks.csv, cpu_clocks.csv): '#' comment lines, a
// header naming every column exactly once, then rows of quoted-where-needed fields. Every defect
// becomes a ChipFileError naming the file, line and field.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/chips.h"

namespace ridge::roofline::csv {

// One CSV line into fields: commas separate, double quotes enclose a field ("" is a quote).
// Returns false on an unterminated quote.
bool split(std::string_view line, std::vector<std::string>& out);
std::string trim(std::string_view s);
std::string lower(std::string_view s);
std::string shortest(double v);  // the shortest text that reads back as v

// One row's cells, looked up by column name.
struct Row {
    const std::string& file;
    int line;
    const std::map<std::string, size_t, std::less<>>& col;
    const std::vector<std::string>& cells;

    const std::string& text(std::string_view field) const { return cells[col.find(field)->second]; }
    [[noreturn]] void fail(std::string_view field, const std::string& problem) const;
    std::string required(std::string_view field) const;       // non-empty
    // required(field), refused when another row already has it (letter case aside); `seen` maps
    // the lower-case keys read so far to their lines.
    std::string unique_key(std::string_view field, std::map<std::string, int>& seen) const;
    std::optional<double> number(std::string_view field) const;  // empty, or a positive finite number
    std::string url(std::string_view field, bool required) const;  // empty (when allowed) or http(s)://
    // `field` holds arithmetic (roofline/arithmetic.h); when it is non-empty, the value of
    // `value_field` must be within derivation_tolerance of it.
    std::string derivation(std::string_view field, std::string_view value_field, std::optional<double> value) const;
};

// Calls on_row for every row of `text`, after checking the header holds exactly `columns` (in
// any order) and every row has one field per column. Returns the number of rows.
int for_each_row(std::string_view text, const std::string& file, const std::vector<std::string_view>& columns,
                 const std::function<void(const Row&)>& on_row);

std::string read_file(const std::string& path);  // throws ChipFileError(path, 0, "(file)", ...)

}  // namespace ridge::roofline::csv
