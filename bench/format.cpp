#include "bench/format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "bench/interrupt.h"
#include "bench/usage_error.h"
#include "engine/shape.h"

namespace ridge::bench {

std::string si(double v) {
    static const char* units[] = {"", "k", "M", "G", "T", "P", "E"};
    double a = std::fabs(v);
    if (a < 1000) return a == std::floor(a) ? std::to_string(int64_t(v)) : fixed(v, a < 10 ? 2 : a < 100 ? 1 : 0);
    int u = 0;
    while (a >= 999.5 && u < 6) {
        a /= 1000;
        v /= 1000;
        ++u;
    }
    return fixed(v, a < 9.995 ? 2 : a < 99.95 ? 1 : 0) + units[u];
}

std::string grouped(int64_t v) {
    std::string d = std::to_string(v < 0 ? -v : v), out;
    for (size_t i = 0; i < d.size(); ++i) {
        if (i && (d.size() - i) % 3 == 0) out += ',';
        out += d[i];
    }
    return v < 0 ? "-" + out : out;
}

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string printable(std::string_view s) {
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_length(s, i);
        if (n == 0 || is_control(s, i, n)) {
            for (size_t k = 0; k < std::max<size_t>(n, 1); ++k) {
                unsigned char c = static_cast<unsigned char>(s[i + k]);
                out += cat("\\x", hex[c >> 4], hex[c & 15]);
            }
            i += std::max<size_t>(n, 1);
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

std::string json_quote(std::string_view s) {
    static const char* hex = "0123456789abcdef";
    std::string out = "\"";
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        size_t n = utf8_length(s, i);
        if (n == 0) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (c == '\n') {
            out += "\\n";
        } else if (is_control(s, i, n)) {
            unsigned char code = n == 1 ? c : static_cast<unsigned char>(s[i + 1]);  // C1: U+0080..U+009F
            out += cat("\\u00", hex[code >> 4], hex[code & 15]);
        } else {
            out.append(s.substr(i, n));
        }
        i += n;
    }
    return out + "\"";
}

void Json::prefix(std::string_view key) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    if (first_.size() > 1) out_ += "\n" + std::string(2 * (first_.size() - 1), ' ');
    if (!key.empty()) out_ += json_quote(key) + ": ";
}
Json& Json::begin_object(std::string_view key) {
    prefix(key);
    out_ += "{";
    first_.push_back(true);
    return *this;
}
Json& Json::end_object() {
    first_.pop_back();
    out_ += "\n" + std::string(2 * (first_.size() - 1), ' ') + "}";
    return *this;
}
Json& Json::begin_array(std::string_view key) {
    prefix(key);
    out_ += "[";
    first_.push_back(true);
    return *this;
}
Json& Json::end_array() {
    first_.pop_back();
    out_ += "\n" + std::string(2 * (first_.size() - 1), ' ') + "]";
    return *this;
}
Json& Json::field(std::string_view key, std::string_view v) {
    prefix(key);
    out_ += json_quote(v);
    return *this;
}
Json& Json::field(std::string_view key, int64_t v) {
    prefix(key);
    out_ += std::to_string(v);
    return *this;
}
Json& Json::field(std::string_view key, double v) {
    prefix(key);
    if (!std::isfinite(v)) {
        out_ += "null";
        return *this;
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    out_ += buf;
    return *this;
}
Json& Json::boolean(std::string_view key, bool v) {
    prefix(key);
    out_ += v ? "true" : "false";
    return *this;
}
Json& Json::array(std::string_view key, const std::vector<int64_t>& v) {
    prefix(key);
    out_ += "[";
    for (size_t i = 0; i < v.size(); ++i) out_ += (i ? ", " : "") + std::to_string(v[i]);
    out_ += "]";
    return *this;
}

std::string table_row(const std::vector<Column>& cols, const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cols.size(); ++i) {
        std::string c = cells[i];
        size_t w = size_t(cols[i].width);
        if (c.size() > w) c = "~" + c.substr(c.size() - w + 1);
        std::string pad(w - c.size(), ' ');
        out += (i ? " " : "") + (cols[i].left ? c + pad : pad + c);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
}

std::string table_header(const std::vector<Column>& cols) {
    std::vector<std::string> cells;
    for (const Column& c : cols) cells.emplace_back(c.header);
    return table_row(cols, cells);
}

namespace {
// Read once, before main, while ridge has one thread: umask() can only be read by setting it.
const mode_t process_umask = [] {
    mode_t m = ::umask(022);
    ::umask(m);
    return m;
}();

bool write_all(int fd, const std::string& text) {
    const char* p = text.data();
    size_t left = text.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        left -= size_t(n);
    }
    return true;
}
}  // namespace

unsigned new_file_mode(unsigned base) { return base & ~unsigned(process_umask); }

void write_output(const std::string& path, const std::string& text) {
    if (path.empty() || path == "-") {
        std::cout << text << std::flush;
        if (!std::cout) throw UsageError("ridge: cannot write to standard output");
        return;
    }
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path target(path);
    // A symlink is written through, not replaced: the rename goes to the file it names.
    for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
        fs::path next = fs::read_symlink(target, ec);
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    fs::file_status st = fs::status(target, ec);
    if (fs::is_directory(st) || path.back() == '/') throw UsageError(cat("ridge: cannot write '", path, "': it is a directory"));
    if (fs::exists(st) && !fs::is_regular_file(st)) {
        // A device or pipe (/dev/stdout, a fifo) cannot be renamed over: write to it directly.
        std::ofstream f(target, std::ios::binary);
        f << text;
        f.flush();
        if (!f) throw UsageError(cat("ridge: cannot write '", path, "'"));
        return;
    }
    // mkstemp creates a new file of a name nobody could guess (O_EXCL: a link planted there is
    // never followed), in the target's folder so that the rename stays within one file system.
    // The name is cut so that the temp name stays within NAME_MAX however long the target's is.
    std::string tmp = (target.parent_path() / (target.filename().string().substr(0, 200) + ".tmp.XXXXXX")).string();
    int fd = ::mkstemp(tmp.data());
    if (fd < 0) throw UsageError(cat("ridge: cannot write '", path, "': ", std::strerror(errno)));
    RemovedOnInterrupt guard(tmp);
    // mkstemp's 0600 would make every output private: an existing file keeps its mode, a new one
    // gets what the umask allows, as if created by open().
    struct stat old;
    mode_t mode = ::stat(target.c_str(), &old) == 0 ? old.st_mode & 07777 : mode_t(new_file_mode(0666));
    bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, text) && ::fsync(fd) == 0;
    int err = errno;
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
        ::unlink(tmp.c_str());
        throw UsageError(cat("ridge: cannot write '", path, "': ", std::strerror(err)));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        err = errno;
        ::unlink(tmp.c_str());
        throw UsageError(cat("ridge: cannot write '", path, "': ", std::strerror(err)));
    }
}

std::string cannot_create(const std::string& path, bool make_folders) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // A symlink to a file that does not exist yet: the file is created where it points.
    fs::path target = path;
    struct stat ls;
    for (int hops = 0; hops < 40 && ::lstat(target.c_str(), &ls) == 0 && S_ISLNK(ls.st_mode); ++hops) {
        fs::path next = fs::read_symlink(target, ec);
        if (ec) return ec.message();
        target = next.is_absolute() ? next : target.parent_path() / next;
    }
    fs::path dir = fs::absolute(target, ec).parent_path();
    if (ec) return ec.message();
    struct stat st;
    while (::stat(dir.c_str(), &st) != 0) {
        if (errno != ENOENT) return cat("'", dir.string(), "': ", std::strerror(errno));
        if (!make_folders) return cat("the folder '", dir.string(), "' does not exist");
        dir = dir.parent_path();
    }
    if (!S_ISDIR(st.st_mode)) return cat("'", dir.string(), "' is not a folder");
    std::string probe = (dir / ".ridge-probe-XXXXXX").string();
    int fd = ::mkstemp(probe.data());
    if (fd < 0) return cat("cannot create a file in '", dir.string(), "': ", std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
    return "";
}

void check_output(const std::string& path) {
    if (path.empty() || path == "-") return;
    auto refuse = [&](const std::string& why) { throw UsageError(cat("ridge: cannot write '", path, "': ", why)); };
    if (path.back() == '/') refuse("it is a directory");
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) refuse(std::strerror(errno));
        if (std::string why = cannot_create(path, false); !why.empty()) refuse(why);
        return;
    }
    if (S_ISDIR(st.st_mode)) refuse("it is a directory");
    if (S_ISREG(st.st_mode)) {
        // The new text goes into a temp file beside the file the name resolves to, then is renamed.
        std::error_code ec;
        std::filesystem::path target = std::filesystem::canonical(path, ec);
        if (ec) refuse(ec.message());
        if (std::string why = cannot_create(target.string(), false); !why.empty()) refuse(why);
        return;
    }
    // A device or a pipe is written directly; O_NONBLOCK makes a fifo nobody reads fail now
    // (ENXIO) instead of blocking the run at its end.
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) refuse(errno == ENXIO ? std::string("it is a pipe that nothing reads") : std::strerror(errno));
    ::close(fd);
}

}  // namespace ridge::bench
