#include "roofline/chips.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "engine/shape.h"

namespace ridge::roofline {

namespace {

const std::array<std::string_view, 5> kind_names{"cpu", "gpu", "asic", "soc", "fpga"};
const std::array<std::string_view, n_precisions> precision_names{"fp64", "fp32", "tf32", "fp16", "int8"};
const std::array<std::string_view, n_precisions> peak_columns{"fp64_tflops", "fp32_tflops", "tf32_tflops",
                                                              "fp16_tflops", "int8_tops"};
const std::array<std::string_view, n_precisions> per_cycle_columns{
    "fp64_per_cycle", "fp32_per_cycle", "tf32_per_cycle", "fp16_per_cycle", "int8_per_cycle"};

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string trim(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

// One CSV line into fields: commas separate, double quotes enclose a field ("" is a quote).
// Returns false on an unterminated quote.
bool split_csv(std::string_view line, std::vector<std::string>& out) {
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

// The first byte of line that is a control character or not UTF-8, as "what (byte 0xNN)" with its
// position; nullopt when the line is clean text.
std::optional<std::pair<size_t, std::string>> bad_text(std::string_view line) {
    for (size_t i = 0; i < line.size();) {
        size_t n = utf8_length(line, i);
        if (n == 0 || is_control(line, i, n)) {
            unsigned char c = static_cast<unsigned char>(line[n == 2 ? i + 1 : i]);
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02x", c);
            return std::pair{i, std::string(n == 0 ? "is not UTF-8 (byte " : "holds a control character (") + hex + ")"};
        }
        i += n;
    }
    return std::nullopt;
}

std::string shortest(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

struct RowReader {
    const std::string& file;
    int line;
    const std::map<std::string, size_t, std::less<>>& col;
    const std::vector<std::string>& cells;

    const std::string& text(std::string_view field) const { return cells[col.find(field)->second]; }
    [[noreturn]] void fail(std::string_view field, const std::string& problem) const {
        throw ChipFileError(file, line, std::string(field), problem);
    }
    std::string required(std::string_view field) const {
        const std::string& s = text(field);
        if (s.empty()) fail(field, "is empty");
        return s;
    }
    std::optional<double> number(std::string_view field) const {
        const std::string& s = text(field);
        if (s.empty()) return std::nullopt;
        double v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
            fail(field, "'" + s + "' is not a number");
        if (v <= 0) fail(field, "must be positive, got " + s);
        return v;
    }
};

}  // namespace

std::string_view kind_name(ChipKind k) { return kind_names[static_cast<size_t>(k)]; }

std::optional<ChipKind> parse_kind(std::string_view s) {
    for (ChipKind k : chip_kinds)
        if (kind_name(k) == s) return k;
    return std::nullopt;
}

std::string_view precision_name(Precision p) { return precision_names[static_cast<size_t>(p)]; }

std::optional<double> Chip::peak_flops(Precision p) const {
    const auto& v = peak_tflops[size_t(index(p))];
    return v ? std::optional<double>(*v * 1e12) : std::nullopt;
}

std::optional<double> Chip::bandwidth_bytes() const {
    return mem_bw_gbs ? std::optional<double>(*mem_bw_gbs * 1e9) : std::nullopt;
}

std::optional<double> Chip::derived_tflops(Precision p) const {
    const auto& f = per_cycle[size_t(index(p))];
    if (!f || !units || !clock_ghz) return std::nullopt;
    return *units * *clock_ghz * *f / 1000.0;
}

ChipFileError::ChipFileError(const std::string& file_, int line_, const std::string& field_, const std::string& problem)
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": field '" + field_ + "': " + problem),
      file(file_), field(field_), line(line_) {}

const std::vector<std::string_view>& chip_columns() {
    static const std::vector<std::string_view> cols = [] {
        std::vector<std::string_view> c{"name", "kind", "vendor", "year"};
        c.insert(c.end(), peak_columns.begin(), peak_columns.end());
        for (std::string_view s : {"mem_bw_gbs", "mem_gb", "mem_type", "tdp_w", "units", "clock_ghz"}) c.push_back(s);
        c.insert(c.end(), per_cycle_columns.begin(), per_cycle_columns.end());
        c.push_back("source");
        c.push_back("notes");
        return c;
    }();
    return cols;
}

std::vector<Chip> parse_chips(std::string_view text, const std::string& file) {
    std::vector<Chip> chips;
    std::map<std::string, size_t, std::less<>> col;
    std::map<std::string, int> seen;  // lower-case name -> line
    std::vector<std::string> cells;
    int header_line = 0, n = 0;
    // Spreadsheets and Windows editors start UTF-8 files with a byte order mark.
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t nl = text.find('\n', pos);
        std::string_view raw = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
        ++n;
        if (raw.size() > max_chip_line_bytes)
            throw ChipFileError(file, n, "(line)", "is longer than " + std::to_string(max_chip_line_bytes) + " bytes");
        std::string line = trim(raw);
        if (line.empty() || line[0] == '#') continue;
        if (auto bad = bad_text(line)) {
            // Name the field the byte sits in: the header's name for it once the header is known.
            std::vector<std::string> before;
            split_csv(line.substr(0, bad->first), before);
            size_t column = before.empty() ? 0 : before.size() - 1;
            std::string field = "column " + std::to_string(column + 1);
            for (const auto& [name, i] : col)
                if (i == column) field = name;
            throw ChipFileError(file, n, field, bad->second);
        }
        if (!split_csv(line, cells)) throw ChipFileError(file, n, "(line)", "unterminated quote");
        if (!header_line) {
            header_line = n;
            for (size_t i = 0; i < cells.size(); ++i) {
                const std::string& h = cells[i];
                if (std::find(chip_columns().begin(), chip_columns().end(), h) == chip_columns().end())
                    throw ChipFileError(file, n, h, "unknown column");
                if (!col.emplace(h, i).second) throw ChipFileError(file, n, h, "column appears twice");
            }
            for (std::string_view c : chip_columns())
                if (!col.count(c)) throw ChipFileError(file, n, std::string(c), "missing column in the header");
            continue;
        }
        if (cells.size() != col.size()) {
            std::string field = cells.size() < col.size() ? std::string(chip_columns()[0]) : "(end)";
            for (const auto& [name, i] : col)
                if (i == cells.size()) field = name;
            throw ChipFileError(file, n, field,
                                "row has " + std::to_string(cells.size()) + " fields, the header " +
                                    std::to_string(col.size()));
        }
        RowReader r{file, n, col, cells};
        Chip c;
        c.line = n;
        c.name = r.required("name");
        if (auto it = seen.find(lower(c.name)); it != seen.end())
            r.fail("name", "'" + c.name + "' duplicates line " + std::to_string(it->second));
        seen.emplace(lower(c.name), n);
        auto kind = parse_kind(r.text("kind"));
        if (!kind) r.fail("kind", "'" + r.text("kind") + "' is not one of cpu, gpu, asic, soc, fpga");
        c.kind = *kind;
        c.vendor = r.required("vendor");
        {
            const std::string& y = r.required("year");
            int year = 0;
            auto [end, ec] = std::from_chars(y.data(), y.data() + y.size(), year);
            if (ec != std::errc() || end != y.data() + y.size() || year < 1970 || year > 2100)
                r.fail("year", "'" + y + "' is not a year");
            c.year = year;
        }
        bool any_peak = false;
        for (Precision p : precisions) {
            c.peak_tflops[size_t(index(p))] = r.number(peak_columns[size_t(index(p))]);
            c.per_cycle[size_t(index(p))] = r.number(per_cycle_columns[size_t(index(p))]);
            any_peak = any_peak || c.peak_tflops[size_t(index(p))];
        }
        if (!any_peak) r.fail("fp32_tflops", "the row has no peak in any precision");
        c.mem_bw_gbs = r.number("mem_bw_gbs");
        c.mem_gb = r.number("mem_gb");
        c.mem_type = r.text("mem_type");
        c.tdp_w = r.number("tdp_w");
        c.units = r.number("units");
        c.clock_ghz = r.number("clock_ghz");
        for (Precision p : precisions) {
            size_t i = size_t(index(p));
            if (!c.per_cycle[i]) continue;
            std::string_view factor = per_cycle_columns[i];
            if (!c.units) r.fail("units", "is empty but " + std::string(factor) + " needs it");
            if (!c.clock_ghz) r.fail("clock_ghz", "is empty but " + std::string(factor) + " needs it");
            if (!c.peak_tflops[i]) r.fail(peak_columns[i], "is empty but " + std::string(factor) + " is given");
            double derived = *c.derived_tflops(p), stated = *c.peak_tflops[i];
            if (std::fabs(stated - derived) > derivation_tolerance * derived)
                r.fail(peak_columns[i], shortest(stated) + " differs from units x clock_ghz x " + std::string(factor) +
                                            " / 1000 = " + shortest(derived) + " by more than 0.5%");
        }
        c.source = r.required("source");
        if (!c.source.starts_with("https://") && !c.source.starts_with("http://"))
            r.fail("source", "'" + c.source + "' is not an http(s) URL");
        c.notes = r.text("notes");
        chips.push_back(std::move(c));
    }
    if (!header_line) throw ChipFileError(file, n, "name", "no header line");
    if (chips.empty()) throw ChipFileError(file, n, "name", "no chips after the header");
    return chips;
}

std::vector<Chip> load_chips(const std::string& path) {
    auto fail = [&](const std::string& why) { throw ChipFileError(path, 0, "(file)", why); };
    // O_NONBLOCK: a fifo with no writer opens (and reads as empty) instead of waiting for one.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) fail(std::string("cannot be read: ") + std::strerror(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) fail("cannot be read: it is a directory");
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    // One byte past the cap tells a file at the limit from a larger one.
    std::string text(max_chip_file_bytes + 1, '\0');
    size_t got = 0;
    while (got < text.size()) {
        ssize_t r = ::read(fd, text.data() + got, text.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) fail(std::string("cannot be read: ") + std::strerror(errno));
        if (r == 0) break;
        got += size_t(r);
    }
    if (got > max_chip_file_bytes)
        fail("is larger than " + std::to_string(max_chip_file_bytes >> 20) + " MiB; a chip database is a few KiB");
    text.resize(got);
    return parse_chips(text, path);
}

std::string default_chips_path() {
#ifdef RIDGE_CHIPS_CSV
    return RIDGE_CHIPS_CSV;
#else
    return "roofline/chips.csv";
#endif
}

const Chip* find_chip(const std::vector<Chip>& chips, std::string_view name) {
    std::string want = lower(name);
    for (const Chip& c : chips)
        if (lower(c.name) == want) return &c;
    return nullptr;
}

}  // namespace ridge::roofline
