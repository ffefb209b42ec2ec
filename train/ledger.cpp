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
#include <optional>
#include <stdexcept>

#include "bench/format.h"
#include "bench/usage_error.h"
#include "bench/ledger.h"

namespace ridge::train {

namespace {

std::string num(double v) { return bench::ledger_num(v); }
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

std::string other_columns(const std::string& path, const std::string& text) {
    std::optional<bench::LedgerFormat> f = bench::ledger_format(first_line(text));
    if (f && *f != bench::LedgerFormat::current)
        return cat(path, " is ", bench::format_name(*f),
                   "; ridge train appends only in the one schema: move it aside (ridge compare still reads it) or use "
                   "another --log-dir");
    return cat(path,
               " has other columns than this version of ridge train writes; move it aside or use another --log-dir");
}

}  // namespace

bench::LedgerRow ledger_fields(const RunRecord& r) {
    const Config& c = r.config;
    const Result& x = r.result;
    bench::LedgerRow row;
    bench::set_environment(row, r.env, r.host);
    row.set("kind", "train")
        .set("label", r.label)
        .set("run", num(r.run))
        .set("runs", num(r.runs))
        .set("started", r.started)
        .set("date", r.date)
        .set("device", c.device)
        .set("backend", r.backend)
        .set("winograd", r.backend == "onednn" ? "1" : "")
        .set("precision", std::string(precision_name(c.precision)))
        .set("net", c.net)
        .set("mode", "train")
        .set("batch", num(c.batch))
        .set("height", num(c.height))
        .set("width", num(c.width))
        .set("workers", num(c.workers))
        .set("warmup_iters", num(c.warmup))
        .set("iters", num(c.iters))
        .set("seed", std::to_string(c.seed))
        .set("data", r.data)
        .set("classes", num(r.classes))
        .set("train_images", num(r.train_images))
        .set("lr", num(double(c.lr)))
        .set("momentum", num(double(c.momentum)))
        .set("weight_decay", num(double(c.weight_decay)))
        .set("elapsed_s", num(x.elapsed_s))
        .set("images_per_s", num(x.images_per_s))
        .set("step_median_ms", num(x.step.median * 1e3))
        .set("step_min_ms", num(x.step.min * 1e3))
        .set("step_iqr_ms", num(x.step.iqr() * 1e3))
        .set("data_wait_share", num(x.data_wait_share))
        .set("first_loss", num(x.first_loss))
        .set("last_loss", num(x.last_loss))
        .set("tail_loss", num(x.tail_loss))
        .set("val_images", num(x.val_images))
        .set("val_top1", x.val_top1 < 0 ? "" : num(x.val_top1))
        .set("undecodable", num(x.undecodable))
        .set("wall_s", num(x.wall_s))
        .set("user_s", num(x.user_s))
        .set("sys_s", num(x.sys_s))
        .set("peak_rss_bytes", num(x.peak_rss_bytes))
        .set("peak_device_bytes", x.peak_device_bytes < 0 ? "" : num(x.peak_device_bytes))
        .set("planned_bytes", num(r.planned_bytes))
        .set("predicted_train_bytes", num(r.predicted_train_bytes))
        .set("flops_per_step", num(r.flops_per_step))
        .set("bytes_per_step", num(r.bytes_per_step))
        .set("gflops", num(x.gflops))
        .set("roof_peak_gflops", num(c.peak_flops / 1e9))
        .set("roof_bandwidth_gbs", num(c.bytes_per_s / 1e9))
        .set("roof_gflops", num(x.roof_gflops))
        .set("roof_fraction", num(x.roof_fraction))
        .set("command", r.command);
    return row;
}

std::string ledger_header() { return bench::ledger_header(); }

std::string ledger_row(const RunRecord& r) { return ledger_fields(r).csv(); }

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
        throw std::runtime_error(other_columns(path, text));
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
    bench::LedgerFile f;
    try {
        f = bench::read_ledger_file(path);
    } catch (const bench::UsageError& e) {
        std::string why = e.what();
        if (why.rfind("ridge: ", 0) == 0) why = why.substr(7);
        throw std::runtime_error(why);
    }
    LedgerTable t;
    for (const bench::LedgerColumn& c : bench::ledger_columns()) t.header.emplace_back(c.name);
    for (bench::LedgerRecord& r : f.rows)
        if (r.get("kind") == "train") t.rows.push_back(std::move(r.cells));
    return t;
}

std::string env_info_page(const RunRecord& r, const std::string& ledger_text) {
    const bench::Env& e = r.env;
    auto gb = [](double b) { return bench::fixed(b / 1e9, 1) + " GB"; };
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
    row("clock reported by /proc/cpuinfo", e.clock_mhz > 0 ? bench::fixed(e.clock_mhz, 0) + " MHz" : "unknown");
    row("maximum clock (cpufreq)", e.clock_max_mhz > 0 ? bench::fixed(e.clock_max_mhz, 0) + " MHz" : "not exposed");
    row("memory", gb(double(e.memory_bytes)));
    row("measured roofline (fp32 FMA peak, STREAM triad)",
        r.config.peak_flops > 0 ? cat(bench::fixed(r.config.peak_flops / 1e9, 1), " GFLOP/s, ",
                                      bench::fixed(r.config.bytes_per_s / 1e9, 1), " GB/s")
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
