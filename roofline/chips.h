#pragma once
// The chip database: roofline/chips.csv (one row per chip: kind, memory, power, source) and
// roofline/peaks.csv beside it (one row per chip, precision and density: the peak, its source and,
// where it is derived, the arithmetic). Loaded and validated together; a malformed file is refused
// with its name, line and field, and nothing is guessed or defaulted.
#include <array>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::roofline {

enum class ChipKind { cpu, gpu, asic, soc, fpga };
inline constexpr std::array<ChipKind, 5> chip_kinds{ChipKind::cpu, ChipKind::gpu, ChipKind::asic, ChipKind::soc,
                                                    ChipKind::fpga};
std::string_view kind_name(ChipKind k);
std::optional<ChipKind> parse_kind(std::string_view s);

// The input types a peak is quoted for. fp16 is IEEE half precision and bf16 bfloat16: a vendor
// that quotes one figure for "FP16/BF16" has a row for each. tf32 is NVIDIA's 19-bit tensor
// format (AWS quotes it too); fp8 is any 8-bit float (E4M3/E5M2, AWS's cFP8); int8 is counted in
// integer operations, not FLOPs.
enum class Precision { fp64, fp32, tf32, fp16, bf16, fp8, int8 };
inline constexpr int n_precisions = 7;
inline constexpr std::array<Precision, n_precisions> precisions{Precision::fp64, Precision::fp32, Precision::tf32,
                                                               Precision::fp16, Precision::bf16, Precision::fp8,
                                                               Precision::int8};
std::string_view precision_name(Precision p);
std::optional<Precision> parse_precision(std::string_view s);
inline int index(Precision p) { return static_cast<int>(p); }
inline bool is_integer(Precision p) { return p == Precision::int8; }
// "TFLOP/s" for the float formats, "TOP/s" for int8, with the SI prefix given.
std::string rate_unit(Precision p, std::string_view prefix = "T");

using PerPrecision = std::array<std::optional<double>, n_precisions>;

// One published (or derived) peak of a chip.
struct Peak {
    Precision precision = Precision::fp32;
    bool sparse = false;      // a 2:4 structured-sparsity figure; never drawn by default
    double tflops = 0;        // 1e12 FLOP/s (int8: 1e12 op/s)
    std::string derivation;   // the arithmetic the figure follows from (roofline/arithmetic.h), or empty
    std::string engine;       // the unit that reaches it ("tensor cores", "AI Engines", ...), may be empty
    std::string source, notes;
    int line = 0;             // its line in the peaks file
    bool derived() const { return !derivation.empty(); }
};

struct Chip {
    std::string name, vendor;
    ChipKind kind = ChipKind::cpu;
    int year = 0;
    std::vector<Peak> peaks;            // in file order
    std::optional<double> mem_bw_gbs;   // 1e9 B/s
    std::string mem_bw_derivation;      // arithmetic for mem_bw_gbs, or empty when it is quoted
    std::optional<double> mem_gb;       // 1e9 B
    std::string mem_type;
    std::optional<double> tdp_w;
    std::string source;      // where the row's figures were read
    std::string mem_source;  // where the memory figures were read, when not at `source`
    std::string notes;
    int line = 0;  // line of the row in the chips file

    const Peak* peak(Precision p, bool sparse = false) const;
    std::optional<double> peak_tflops(Precision p, bool sparse = false) const;
    std::optional<double> peak_flops(Precision p, bool sparse = false) const;  // FLOP/s (int8: op/s)
    std::optional<double> bandwidth_bytes() const;                             // B/s
};

// "file:line: field 'name': problem" for every defect of a chip file.
struct ChipFileError : std::runtime_error {
    ChipFileError(const std::string& file, int line, const std::string& field, const std::string& problem);
    std::string file, field;
    int line;
};

// The columns of each file, in the order they are written.
const std::vector<std::string_view>& chip_columns();
const std::vector<std::string_view>& peak_columns();

// How far a stated figure may sit from its derivation: datasheets round to 3-4 digits.
inline constexpr double derivation_tolerance = 0.005;

// A chip database is a few KiB; anything near these sizes is not one (/dev/zero, a disk image),
// and is refused before it fills memory.
inline constexpr size_t max_chip_file_bytes = size_t(1) << 20;
inline constexpr size_t max_chip_line_bytes = 16384;

// Parses and validates both files' text; the names appear in errors. A UTF-8 byte order mark is
// skipped; lines starting with '#' and blank lines are skipped; the first other line of each is
// its header. Every other line must be UTF-8 without control characters (names reach a terminal).
std::vector<Chip> parse_chips(std::string_view chips_text, const std::string& chips_file, std::string_view peaks_text,
                              const std::string& peaks_file);
// Loads `path` and the peaks file beside it (peaks_path(path)), each at most max_chip_file_bytes.
std::vector<Chip> load_chips(const std::string& path);
std::string peaks_path(const std::string& chips_path);  // "peaks.csv" in the chips file's folder

// The database shipped with ridge (RIDGE_CHIPS_CSV, set by CMake to the source tree's file).
std::string default_chips_path();

const Chip* find_chip(const std::vector<Chip>& chips, std::string_view name);  // case-insensitive

}  // namespace ridge::roofline
