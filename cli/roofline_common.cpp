#include "cli/roofline_common.h"

#include <cctype>
#include <charconv>
#include <cmath>

#include "bench/format.h"

namespace ridge::cli::roofline_sub {

using bench::fixed, bench::si, bench::UsageError;

using namespace ridge::roofline;

std::string num(double v) {
    double a = std::fabs(v);
    if (v == std::floor(v) && a < 1e9) return std::to_string(int64_t(v));
    return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

std::string exact(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string si_unit(double v, std::string_view unit) {
    std::string s = si(v);
    if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back())))
        return s.substr(0, s.size() - 1) + " " + s.back() + std::string(unit);
    return s + " " + std::string(unit);
}

std::string time_text(double seconds) {
    if (seconds < 1e-3) return num(seconds * 1e6) + " us";
    if (seconds < 1) return num(seconds * 1e3) + " ms";
    return num(seconds) + " s";
}

std::string bytes_text(int64_t b) {
    if (b >= (int64_t(1) << 30) && b % (int64_t(1) << 30) == 0) return cat(b >> 30, " GiB");
    if (b >= (int64_t(1) << 20)) return fixed(double(b) / double(1 << 20), b % (1 << 20) ? 1 : 0) + " MiB";
    if (b >= 1024) return fixed(double(b) / 1024, b % 1024 ? 1 : 0) + " KiB";
    return cat(b, " B");
}

std::vector<Chip> load(const Args& a) {
    std::string path = a.get("--chips", default_chips_path());
    try {
        return load_chips(path);
    } catch (const ChipFileError& e) {
        throw UsageError(cat("ridge ", a.cmd->name, ": ", e.what()));
    }
}

std::vector<CpuClock> load_clocks(const Args& a) {
    try {
        return load_cpu_clocks(cpu_clocks_path(default_chips_path()));
    } catch (const ChipFileError& e) {
        throw UsageError(cat("ridge ", a.cmd->name, ": ", e.what()));
    }
}

std::string density_name(bool sparse) { return sparse ? "sparse" : "dense"; }

std::optional<Precision> precision_arg(const Args& a) {
    if (!a.has("--precision")) return std::nullopt;
    return parse_precision(a.choice("--precision", "", {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"}));
}

}  // namespace ridge::cli::roofline_sub
