#include "roofline/chips.h"

#include <charconv>
#include <filesystem>
#include <map>

#include "roofline/csv_table.h"

namespace ridge::roofline {

namespace {

const std::array<std::string_view, 5> kind_names{"cpu", "gpu", "asic", "soc", "fpga"};
const std::array<std::string_view, n_precisions> precision_names{"fp64", "fp32", "tf32", "fp16",
                                                                 "bf16", "fp8",  "int8"};

}  // namespace

std::string_view kind_name(ChipKind k) { return kind_names[static_cast<size_t>(k)]; }

std::optional<ChipKind> parse_kind(std::string_view s) {
    for (ChipKind k : chip_kinds)
        if (kind_name(k) == s) return k;
    return std::nullopt;
}

std::string_view precision_name(Precision p) { return precision_names[static_cast<size_t>(p)]; }

std::optional<Precision> parse_precision(std::string_view s) {
    for (Precision p : precisions)
        if (precision_name(p) == s) return p;
    return std::nullopt;
}

std::string rate_unit(Precision p, std::string_view prefix) {
    return std::string(prefix) + (is_integer(p) ? "OP/s" : "FLOP/s");
}

const Peak* Chip::peak(Precision p, bool sparse) const {
    for (const Peak& k : peaks)
        if (k.precision == p && k.sparse == sparse) return &k;
    return nullptr;
}

std::optional<double> Chip::peak_tflops(Precision p, bool sparse) const {
    const Peak* k = peak(p, sparse);
    return k ? std::optional<double>(k->tflops) : std::nullopt;
}

std::optional<double> Chip::peak_flops(Precision p, bool sparse) const {
    auto v = peak_tflops(p, sparse);
    return v ? std::optional<double>(*v * 1e12) : std::nullopt;
}

std::optional<double> Chip::bandwidth_bytes() const {
    return mem_bw_gbs ? std::optional<double>(*mem_bw_gbs * 1e9) : std::nullopt;
}

ChipFileError::ChipFileError(const std::string& file_, int line_, const std::string& field_, const std::string& problem)
    : std::runtime_error(file_ + ":" + std::to_string(line_) + ": field '" + field_ + "': " + problem),
      file(file_), field(field_), line(line_) {}

const std::vector<std::string_view>& chip_columns() {
    static const std::vector<std::string_view> cols{"name",    "kind",   "vendor",     "year",   "mem_bw_gbs",
                                                    "mem_bw_derivation", "mem_gb", "mem_type", "tdp_w",
                                                    "source",  "mem_source", "notes"};
    return cols;
}

const std::vector<std::string_view>& peak_columns() {
    static const std::vector<std::string_view> cols{"chip",   "precision", "density", "tflops",
                                                    "derivation", "engine", "source",  "notes"};
    return cols;
}

namespace {

int year_of(const csv::Row& r) {
    const std::string& y = r.required("year");
    int year = 0;
    auto [end, ec] = std::from_chars(y.data(), y.data() + y.size(), year);
    if (ec != std::errc() || end != y.data() + y.size() || year < 1970 || year > 2100)
        r.fail("year", "'" + y + "' is not a year");
    return year;
}

// One row of the chips file; `seen` maps the lower-case names read so far to their lines.
Chip read_chip(const csv::Row& r, std::map<std::string, int>& seen) {
    Chip c;
    c.line = r.line;
    c.name = r.unique_key("name", seen);
    auto kind = parse_kind(r.text("kind"));
    if (!kind) r.fail("kind", "'" + r.text("kind") + "' is not one of cpu, gpu, asic, soc, fpga");
    c.kind = *kind;
    c.vendor = r.required("vendor");
    c.year = year_of(r);
    c.mem_bw_gbs = r.number("mem_bw_gbs");
    c.mem_bw_derivation = r.derivation("mem_bw_derivation", "mem_bw_gbs", c.mem_bw_gbs);
    c.mem_gb = r.number("mem_gb");
    c.mem_type = r.text("mem_type");
    c.tdp_w = r.number("tdp_w");
    c.source = r.url("source", true);
    c.mem_source = r.url("mem_source", false);
    c.notes = r.text("notes");
    return c;
}

std::vector<Chip> read_chips(std::string_view text, const std::string& file) {
    std::vector<Chip> chips;
    std::map<std::string, int> seen;
    csv::for_each_row(text, file, chip_columns(), [&](const csv::Row& r) { chips.push_back(read_chip(r, seen)); });
    if (chips.empty()) throw ChipFileError(file, 0, "name", "no chips after the header");
    return chips;
}

// One row of the peaks file, of the chip `name`; `lines` maps each "chip|precision|density" read
// so far (chip in lower case) to its line.
Peak read_peak(const csv::Row& r, const std::string& name, std::map<std::string, int>& lines) {
    Peak k;
    k.line = r.line;
    auto p = parse_precision(r.text("precision"));
    if (!p) r.fail("precision", "'" + r.text("precision") + "' is not one of fp64, fp32, tf32, fp16, bf16, fp8, int8");
    k.precision = *p;
    const std::string& density = r.text("density");
    if (density != "dense" && density != "sparse") r.fail("density", "'" + density + "' is not dense or sparse");
    k.sparse = density == "sparse";
    std::string key = csv::lower(name) + "|" + r.text("precision") + "|" + density;
    if (auto seen_at = lines.find(key); seen_at != lines.end())
        r.fail("precision", "a " + density + " " + r.text("precision") + " peak of '" + name + "' is already on line " +
                                std::to_string(seen_at->second));
    lines.emplace(key, r.line);
    auto v = r.number("tflops");
    if (!v) r.fail("tflops", "is empty");
    k.tflops = *v;
    k.derivation = r.derivation("derivation", "tflops", v);
    k.engine = r.text("engine");
    k.source = r.url("source", true);
    k.notes = r.text("notes");
    return k;
}

// Hands each row of the peaks file to its chip, which must be one of `chips` (read from chips_file).
void add_peaks(std::vector<Chip>& chips, const std::string& chips_file, std::string_view text, const std::string& file) {
    std::map<std::string, size_t> by_name;  // lower-case name -> index
    for (size_t i = 0; i < chips.size(); ++i) by_name.emplace(csv::lower(chips[i].name), i);
    std::map<std::string, int> lines;
    csv::for_each_row(text, file, peak_columns(), [&](const csv::Row& r) {
        std::string name = r.required("chip");
        auto it = by_name.find(csv::lower(name));
        if (it == by_name.end()) r.fail("chip", "'" + name + "' is not a chip of " + chips_file);
        chips[it->second].peaks.push_back(read_peak(r, name, lines));
    });
}

}  // namespace

std::vector<Chip> parse_chips(std::string_view chips_text, const std::string& chips_file, std::string_view peaks_text,
                              const std::string& peaks_file) {
    std::vector<Chip> chips = read_chips(chips_text, chips_file);
    add_peaks(chips, chips_file, peaks_text, peaks_file);
    for (const Chip& c : chips)
        if (c.peaks.empty()) throw ChipFileError(chips_file, c.line, "name", "'" + c.name + "' has no peak in " + peaks_file);
    return chips;
}

std::string peaks_path(const std::string& chips_path) {
    return (std::filesystem::path(chips_path).parent_path() / "peaks.csv").string();
}

std::vector<Chip> load_chips(const std::string& path) {
    std::string chips = csv::read_file(path);
    std::string peaks_file = peaks_path(path);
    return parse_chips(chips, path, csv::read_file(peaks_file), peaks_file);
}

std::string default_chips_path() {
#ifdef RIDGE_CHIPS_CSV
    return RIDGE_CHIPS_CSV;
#else
    return "roofline/chips.csv";
#endif
}

const Chip* find_chip(const std::vector<Chip>& chips, std::string_view name) {
    std::string want = csv::lower(name);
    for (const Chip& c : chips)
        if (csv::lower(c.name) == want) return &c;
    return nullptr;
}

}  // namespace ridge::roofline
