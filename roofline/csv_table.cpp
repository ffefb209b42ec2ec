#include "roofline/csv_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

#include "roofline/arithmetic.h"

namespace ridge::roofline::csv {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

bool split(std::string_view line, std::vector<std::string>& out) {
    out.clear();
    std::string cur;
    bool quoted = false, was_quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') cur += '"', ++i;
            else if (c == '"') quoted = false;
            else cur += c;
        } else if (c == '"') {
            quoted = was_quoted = true;
        } else if (c == ',') {
            out.push_back(was_quoted ? cur : trim(cur));
            cur.clear();
            was_quoted = false;
        } else {
            cur += c;
        }
    }
    if (quoted) return false;
    out.push_back(was_quoted ? cur : trim(cur));
    return true;
}

std::string shortest(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

void Row::fail(std::string_view field, const std::string& problem) const {
    throw ChipFileError(file, line, std::string(field), problem);
}

std::string Row::required(std::string_view field) const {
    const std::string& s = text(field);
    if (s.empty()) fail(field, "is empty");
    return s;
}

std::optional<double> Row::number(std::string_view field) const {
    const std::string& s = text(field);
    if (s.empty()) return std::nullopt;
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) fail(field, "'" + s + "' is not a number");
    if (v <= 0) fail(field, "must be positive, got " + s);
    return v;
}

std::string Row::url(std::string_view field, bool is_required) const {
    std::string s = is_required ? required(field) : text(field);
    if (!s.empty() && !s.starts_with("https://") && !s.starts_with("http://"))
        fail(field, "'" + s + "' is not an http(s) URL");
    return s;
}

std::string Row::derivation(std::string_view field, std::string_view value_field, std::optional<double> value) const {
    const std::string& d = text(field);
    if (d.empty()) return d;
    ArithmeticResult r = evaluate_arithmetic(d);
    if (!r.ok()) fail(field, "'" + d + "' is not arithmetic: " + r.error);
    if (!value) fail(value_field, "is empty but " + std::string(field) + " is given");
    if (std::fabs(*value - r.value) > derivation_tolerance * std::fabs(r.value))
        fail(value_field, shortest(*value) + " differs from " + std::string(field) + " " + d + " = " + shortest(r.value) +
                              " by more than 0.5%");
    return d;
}

int for_each_row(std::string_view text, const std::string& file, const std::vector<std::string_view>& columns,
                 const std::function<void(const Row&)>& on_row) {
    std::map<std::string, size_t, std::less<>> col;
    std::vector<std::string> cells;
    int header_line = 0, n = 0, rows = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++n;
        std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        if (!split(line, cells)) throw ChipFileError(file, n, "(line)", "unterminated quote");
        if (!header_line) {
            header_line = n;
            for (size_t i = 0; i < cells.size(); ++i) {
                const std::string& h = cells[i];
                if (std::find(columns.begin(), columns.end(), h) == columns.end())
                    throw ChipFileError(file, n, h, "unknown column");
                if (!col.emplace(h, i).second) throw ChipFileError(file, n, h, "column appears twice");
            }
            for (std::string_view c : columns)
                if (!col.count(c)) throw ChipFileError(file, n, std::string(c), "missing column in the header");
            continue;
        }
        if (cells.size() != col.size()) {
            std::string field = cells.size() < col.size() ? std::string(columns[0]) : "(end)";
            for (const auto& [name, i] : col)
                if (i == cells.size()) field = name;
            throw ChipFileError(file, n, field,
                                "row has " + std::to_string(cells.size()) + " fields, the header " +
                                    std::to_string(col.size()));
        }
        on_row(Row{file, n, col, cells});
        ++rows;
    }
    if (!header_line) throw ChipFileError(file, n, std::string(columns[0]), "no header line");
    return rows;
}

std::string read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw ChipFileError(path, 0, "(file)", "cannot be read");
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace ridge::roofline::csv
