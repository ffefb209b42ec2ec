#include "roofline/csv_table.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "engine/shape.h"
#include "roofline/arithmetic.h"

namespace ridge::roofline::csv {

namespace {

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

}  // namespace

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

std::string Row::unique_key(std::string_view field, std::map<std::string, int>& seen) const {
    std::string key = required(field);
    if (auto it = seen.find(lower(key)); it != seen.end())
        fail(field, "'" + key + "' duplicates line " + std::to_string(it->second));
    seen.emplace(lower(key), line);
    return key;
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
            split(line.substr(0, bad->first), before);
            size_t column = before.empty() ? 0 : before.size() - 1;
            std::string field = "column " + std::to_string(column + 1);
            for (const auto& [name, i] : col)
                if (i == column) field = name;
            throw ChipFileError(file, n, field, bad->second);
        }
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
    return text;
}

}  // namespace ridge::roofline::csv
