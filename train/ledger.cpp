#include "train/ledger.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "bench/format.h"
#include "bench/ledger.h"

namespace ridge::train {

namespace {

std::string num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}
std::string num(int64_t v) { return std::to_string(v); }
std::string num(int v) { return std::to_string(v); }

// Closes the descriptor (and so releases its flock) however the caller leaves.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

std::string read_all(int fd) {
    std::string text;
    char buf[65536];
    off_t at = 0;
    for (;;) {
        ssize_t n = ::pread(fd, buf, sizeof buf, at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        text.append(buf, size_t(n));
        at += n;
    }
    return text;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string other_columns(const std::string& path) {
    return cat(path,
               " has other columns than this version of ridge train writes; move it aside or use another --log-dir");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> ledger_fields(const RunRecord& r) {
    const Config& c = r.config;
    const Result& x = r.result;
    const cli::Env& e = r.env;
    auto s = [](const std::string& v) { return cli::csv_cell(v); };
    return {
        {"label", s(r.label)},
        {"run", num(r.run)},
        {"runs", num(r.runs)},
        {"started", r.started},
        {"date", r.date},
        {"git", e.git},
        {"host", s(r.host)},
        {"device", c.device},
        {"backend", r.backend},
        {"net", c.net},
        {"batch", num(c.batch)},
        {"height", num(c.height)},
        {"width", num(c.width)},
        {"precision", std::string(precision_name(c.precision))},
        {"iters", num(c.iters)},
        {"warmup_iters", num(c.warmup)},
        {"workers", num(c.workers)},
        {"threads", num(e.threads)},
        {"data", s(r.data)},
        {"classes", num(r.classes)},
        {"train_images", num(r.train_images)},
        {"lr", num(double(c.lr))},
        {"momentum", num(double(c.momentum))},
        {"weight_decay", num(double(c.weight_decay))},
        {"seed", std::to_string(c.seed)},
        {"elapsed_s", num(x.elapsed_s)},
        {"images_per_s", num(x.images_per_s)},
        {"step_median_ms", num(x.step.median * 1e3)},
        {"step_iqr_ms", num(x.step.iqr() * 1e3)},
        {"step_min_ms", num(x.step.min * 1e3)},
        {"data_wait_share", num(x.data_wait_share)},
        {"first_loss", num(x.first_loss)},
        {"last_loss", num(x.last_loss)},
        {"val_images", num(x.val_images)},
        {"val_top1", x.val_top1 < 0 ? "" : num(x.val_top1)},
        {"undecodable", num(x.undecodable)},
        {"wall_s", num(x.wall_s)},
        {"user_s", num(x.user_s)},
        {"sys_s", num(x.sys_s)},
        {"peak_rss_bytes", num(x.peak_rss_bytes)},
        {"peak_device_bytes", x.peak_device_bytes < 0 ? "" : num(x.peak_device_bytes)},
        {"planned_bytes", num(r.planned_bytes)},
        {"predicted_train_bytes", num(r.predicted_train_bytes)},
        {"train_flops_per_step", num(r.flops_per_step)},
        {"train_bytes_per_step", num(r.bytes_per_step)},
        {"gflops", num(x.gflops)},
        {"roof_peak_gflops", num(c.peak_flops / 1e9)},
        {"roof_bandwidth_gbs", num(c.bytes_per_s / 1e9)},
        {"roof_gflops", num(x.roof_gflops)},
        {"roof_fraction", num(x.roof_fraction)},
        {"os", s(e.os)},
        {"kernel", s(e.kernel)},
        {"cpu", s(e.cpu)},
        {"isa", s(e.isa)},
        {"onednn_isa", s(e.onednn_isa)},
        {"cores", num(e.cores)},
        {"clock_mhz", num(e.clock_mhz)},
        {"clock_max_mhz", num(e.clock_max_mhz)},
        {"memory_bytes", num(e.memory_bytes)},
        {"compiler", s(e.compiler)},
        {"onednn", e.onednn},
        {"runtime_env", s(e.runtime_env)},
        {"gpu", s(e.gpu ? e.gpu_name : "")},
        {"gpu_memory_bytes", e.gpu ? num(e.gpu_mem_bytes) : ""},
        {"driver", e.gpu ? e.driver : ""},
        {"cuda", e.gpu ? e.cuda_runtime : ""},
        {"cudnn", e.gpu ? e.cudnn : ""},
        {"cublas", e.gpu ? e.cublas : ""},
        {"command", s(r.command)},
    };
}

std::string ledger_header() {
    std::string h;
    for (const auto& [name, value] : ledger_fields(RunRecord{})) h += (h.empty() ? "" : ",") + name;
    return h;
}

std::string ledger_row(const RunRecord& r) {
    std::string row;
    bool first = true;
    for (const auto& [name, value] : ledger_fields(r)) {
        row += (first ? "" : ",") + value;
        first = false;
    }
    return row;
}

std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string cell;
    bool quoted = false, any = false;
    for (size_t i = 0; i < text.size(); ++i) {
        char ch = text[i];
        if (quoted) {
            if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                cell += '"';
                ++i;
            } else if (ch == '"') {
                quoted = false;
            } else {
                cell += ch;
            }
            continue;
        }
        if (ch == '"') {
            quoted = any = true;
        } else if (ch == ',') {
            row.push_back(std::move(cell));
            cell.clear();
            any = true;
        } else if (ch == '\n') {
            row.push_back(std::move(cell));
            cell.clear();
            rows.push_back(std::move(row));
            row.clear();
            any = false;
        } else if (ch != '\r') {
            cell += ch;
            any = true;
        }
    }
    if (any || !cell.empty() || !row.empty()) {
        row.push_back(std::move(cell));
        rows.push_back(std::move(row));
    }
    return rows;
}

void check_ledger(const std::string& path, const std::string& header) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // The folder is made only when the first row is appended: a refused run leaves nothing.
    fs::path dir = fs::path(path).parent_path();
    fs::path existing = dir.empty() ? fs::path(".") : dir;
    while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
    if (existing.empty()) existing = ".";
    if (!fs::is_directory(existing, ec))
        throw std::runtime_error(cat("--log-dir ", dir.string(), ": ", existing.string(), " is not a folder"));
    if (::access(existing.c_str(), W_OK) != 0)
        throw std::runtime_error(
            cat("--log-dir ", dir.string(), ": ", existing.string(), " is not writable: ", std::strerror(errno)));
    if (!fs::exists(path, ec)) return;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(cat(path, " cannot be read: ", std::strerror(errno)));
    Fd guard{fd};
    std::string text = read_all(fd);
    if (!text.empty() && first_line(text) != header)
        throw std::runtime_error(other_columns(path));
}

int LedgerTable::column(std::string_view name) const {
    for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return int(i);
    return -1;
}

const std::string& LedgerTable::at(size_t row, std::string_view name) const {
    int c = column(name);
    if (c < 0) throw std::runtime_error(cat("the ledger has no column '", name, "'"));
    return rows.at(row).at(size_t(c));
}

LedgerTable read_ledger(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(cat(path, " cannot be read: ", std::strerror(errno)));
    Fd guard{fd};
    // A shared lock: a row being appended is read whole or not at all.
    while (::flock(fd, LOCK_SH) != 0)
        if (errno != EINTR) throw std::runtime_error(cat(path, " cannot be locked: ", std::strerror(errno)));
    std::string text = read_all(fd);
    if (text.empty()) return {};
    if (first_line(text) != ledger_header())
        throw std::runtime_error(other_columns(path));
    std::vector<std::vector<std::string>> all = parse_csv(text);
    LedgerTable t{all[0], {}};
    for (size_t i = 1; i < all.size(); ++i)
        if (all[i].size() == t.header.size()) t.rows.push_back(std::move(all[i]));
    return t;
}

void append_row_locked(const std::string& path, const std::string& header, const std::string& row,
                       const std::function<void(const std::string&)>& after) {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(cat(path, " cannot be opened for appending: ", std::strerror(errno)));
    Fd guard{fd};
    while (::flock(fd, LOCK_EX) != 0)
        if (errno != EINTR) throw std::runtime_error(cat(path, " cannot be locked: ", std::strerror(errno)));
    std::string text = read_all(fd);
    if (!text.empty() && first_line(text) != header)
        throw std::runtime_error(other_columns(path));
    std::string out = text.empty() ? header + "\n" : "";
    if (!text.empty() && text.back() != '\n') out += "\n";  // a row cut short by a crash stays alone on its line
    out += row + "\n";
    size_t done = 0;
    while (done < out.size()) {
        ssize_t n = ::write(fd, out.data() + done, out.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(cat(path, " cannot be written: ", std::strerror(errno)));
        done += size_t(n);
    }
    if (after) after(text + out);
}

std::string env_info_page(const RunRecord& r, const std::string& ledger_text) {
    const cli::Env& e = r.env;
    auto gb = [](double b) { return cli::fixed(b / 1e9, 1) + " GB"; };
    std::string s = cat("# Environment of `ridge train` runs\n\n",
                        "Rewritten by each `ridge train` that appends to `metrics.csv` beside it (last: ", r.date,
                        ", label ", r.label, "). Every row of `metrics.csv` carries these fields for its own run.\n\n",
                        "## Machine\n\n| | |\n|---|---|\n");
    auto row = [&](const std::string& k, const std::string& v) { s += cat("| ", k, " | ", v, " |\n"); };
    row("host", r.host);
    row("OS", e.os);
    row("kernel", e.kernel);
    row("CPU", e.cpu);
    row("ISA", e.isa);
    row("oneDNN dispatches to", e.onednn_isa);
    row("logical CPUs available", std::to_string(e.cores));
    row("clock reported by /proc/cpuinfo", e.clock_mhz > 0 ? cli::fixed(e.clock_mhz, 0) + " MHz" : "unknown");
    row("maximum clock (cpufreq)", e.clock_max_mhz > 0 ? cli::fixed(e.clock_max_mhz, 0) + " MHz" : "not exposed");
    row("memory", gb(double(e.memory_bytes)));
    row("measured roofline (fp32 FMA peak, STREAM triad)",
        r.config.peak_flops > 0 ? cat(cli::fixed(r.config.peak_flops / 1e9, 1), " GFLOP/s, ",
                                      cli::fixed(r.config.bytes_per_s / 1e9, 1), " GB/s")
                                : "not measured");
    s += "\n## Software\n\n| | |\n|---|---|\n";
    row("compiler", e.compiler);
    row("oneDNN", e.onednn);
    row("ridge git revision", e.git);
    row("library settings in the environment", e.runtime_env.empty() ? "none" : "`" + e.runtime_env + "`");
    s += "\n## GPU\n\n";
    if (e.gpu) {
        s += "| | |\n|---|---|\n";
        row("GPU", e.gpu_name);
        row("memory", gb(double(e.gpu_mem_bytes)));
        row("SMs", std::to_string(e.gpu_sms));
        row("driver", e.driver);
        row("CUDA runtime", e.cuda_runtime);
        row("cuDNN", e.cudnn);
        row("cuBLAS", e.cublas);
    } else {
        s += "None used by the last run (device cpu).\n";
    }

    // One entry per invocation: rows that share their start, host and command line.
    s += "\n## Commands run\n\nEach command line as given, with the runs it added to `metrics.csv`.\n\n";
    std::vector<std::vector<std::string>> rows = parse_csv(ledger_text);
    if (rows.empty()) return s;
    const std::vector<std::string>& head = rows[0];
    auto col = [&](const char* name) {
        for (size_t i = 0; i < head.size(); ++i)
            if (head[i] == name) return int(i);
        return -1;
    };
    int c_started = col("started"), c_host = col("host"), c_cmd = col("command"), c_label = col("label");
    std::string last_key;
    std::vector<std::string> labels;
    std::string entry;
    auto flush = [&] {
        if (entry.empty()) return;
        std::string joined;
        for (const auto& l : labels) joined += (joined.empty() ? "" : ", ") + l;
        s += cat(entry, " (", joined, ")\n\n");
        entry.clear();
        labels.clear();
    };
    for (size_t i = 1; i < rows.size(); ++i) {
        const auto& x = rows[i];
        if (int(x.size()) != int(head.size())) continue;
        std::string key = x[size_t(c_started)] + "\x1f" + x[size_t(c_host)] + "\x1f" + x[size_t(c_cmd)];
        if (key != last_key) {
            flush();
            entry = cat("- ", x[size_t(c_started)], " on ", x[size_t(c_host)], ":\n  `", x[size_t(c_cmd)], "`");
            last_key = key;
        }
        labels.push_back(x[size_t(c_label)]);
    }
    flush();
    return s;
}

}  // namespace ridge::train
