#include "bench/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "bench/format.h"
#include "bench/ledger_schema.h"
#include "bench/usage_error.h"
#include "engine/shape.h"

namespace ridge::bench {

namespace fs = std::filesystem;

namespace {

struct Fd {
    int fd = -1;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    explicit Fd(int f) : fd(f) {}
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw UsageError(cat("ridge: cannot append to the ledger '", path, "': ", why));
}

// O_NONBLOCK: a fifo named as a ledger fails at once (or is refused below) instead of waiting
// for a reader; a regular file ignores the flag.
int open_ledger(const std::string& path, int create) {
    return ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | create, 0666);
}

void require_regular(int fd, const std::string& path, struct stat& st) {
    if (::fstat(fd, &st) != 0) refuse(path, std::strerror(errno));
    if (!S_ISREG(st.st_mode)) refuse(path, "it is not a regular file (--no-ledger skips the ledger)");
}

// The file's first line has to be header: read one byte more than the header, from offset 0.
void require_header(int fd, const std::string& path, const std::string& header, off_t size) {
    if (size == 0) return;
    std::string buf(header.size() + 1, '\0');
    ssize_t got;
    do got = ::pread(fd, buf.data(), buf.size(), 0);
    while (got < 0 && errno == EINTR);
    if (got < 0) refuse(path, std::strerror(errno));
    std::string_view head(buf.data(), size_t(got));
    std::string_view first = head.substr(0, head.find('\n'));
    if (first != header) throw UsageError(other_columns_message(path, first));
}
}  // namespace

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

void check_csv_ledger(const std::string& path, const std::string& header) {
    if (path.empty()) throw UsageError("ridge: the ledger's file name is empty");
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) refuse(path, std::strerror(errno));
        if (path.back() == '/') refuse(path, "the name ends in '/', a folder's");
        if (std::string why = cannot_create(path, true); !why.empty()) refuse(path, why);
        return;
    }
    if (S_ISDIR(st.st_mode)) refuse(path, "it is a directory");
    Fd f(open_ledger(path, 0));
    if (f.fd < 0) refuse(path, std::strerror(errno));
    require_regular(f.fd, path, st);
    require_header(f.fd, path, header, st.st_size);
}

void append_csv_rows(const std::string& path, const std::string& header, const std::vector<std::string>& rows,
                     const std::function<void(const std::string&)>& after) {
    if (path.empty()) throw UsageError("ridge: the ledger's file name is empty");
    std::error_code ec;
    if (fs::path dir = fs::path(path).parent_path(); !dir.empty() && !fs::exists(dir, ec)) {
        fs::create_directories(dir, ec);
        if (ec) refuse(path, cat("cannot create its folder: ", ec.message()));
    }
    Fd f(open_ledger(path, O_CREAT));
    if (f.fd < 0) refuse(path, std::strerror(errno));
    struct stat st;
    require_regular(f.fd, path, st);
    int locked;
    do locked = ::flock(f.fd, LOCK_EX);
    while (locked != 0 && errno == EINTR);
    if (locked != 0) refuse(path, cat("cannot lock it: ", std::strerror(errno)));
    // Under the lock the size is final: another appender may have written since the open.
    if (::fstat(f.fd, &st) != 0) refuse(path, std::strerror(errno));
    require_header(f.fd, path, header, st.st_size);

    std::string text;
    if (st.st_size == 0) {
        text = header + "\n";
    } else {
        char last = '\n';
        if (::pread(f.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') text = "\n";
    }
    for (const std::string& r : rows) text += r + "\n";
    size_t done = 0;
    while (done < text.size()) {
        ssize_t w = ::write(f.fd, text.data() + done, text.size() - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            // Still under the lock, so nobody has appended after the partial rows: cut them off.
            // Should the cut fail too, the next appender starts a fresh line (see above).
            [[maybe_unused]] int cut = ::ftruncate(f.fd, st.st_size);
            refuse(path, std::strerror(e));
        }
        done += size_t(w);
    }
    if (::fsync(f.fd) != 0 && errno != EINVAL) refuse(path, std::strerror(errno));
    if (!after) return;
    std::string whole;
    char buf[65536];
    for (off_t at = 0;;) {
        ssize_t n = ::pread(f.fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) refuse(path, std::strerror(errno));
        if (n == 0) break;
        whole.append(buf, size_t(n));
        at += n;
    }
    after(whole);
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa, sb;
    if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    auto resolved = [](const std::string& p) -> std::optional<fs::path> {
        std::error_code e;
        fs::path abs = fs::absolute(p, e);
        if (!e) abs = fs::weakly_canonical(abs, e);
        if (e) return std::nullopt;
        return abs;
    };
    std::optional<fs::path> ra = resolved(a), rb = resolved(b);
    return ra && rb && *ra == *rb;
}

}  // namespace ridge::bench
