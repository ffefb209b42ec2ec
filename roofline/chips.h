#pragma once
// The chip database (roofline/chips.csv): datasheet ceilings of many chips, loaded and validated.
// A malformed file is refused with its name, line and field; nothing is guessed or defaulted.
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

// The precisions a chip row records. fp16 holds the fp16/bf16 figure (vendors quote one number
// for both where both exist); int8 is in integer op/s.
enum class Precision { fp64, fp32, tf32, fp16, int8 };
inline constexpr int n_precisions = 5;
inline constexpr std::array<Precision, n_precisions> precisions{Precision::fp64, Precision::fp32, Precision::tf32,
                                                               Precision::fp16, Precision::int8};
std::string_view precision_name(Precision p);
inline int index(Precision p) { return static_cast<int>(p); }

using PerPrecision = std::array<std::optional<double>, n_precisions>;

struct Chip {
    std::string name, vendor;
    ChipKind kind = ChipKind::cpu;
    int year = 0;
    PerPrecision peak_tflops;            // dense peaks, 1e12 FLOP/s (int8: 1e12 op/s)
    std::optional<double> mem_bw_gbs;    // 1e9 B/s
    std::optional<double> mem_gb;        // 1e9 B
    std::string mem_type;
    std::optional<double> tdp_w;
    // Derived peaks: peak = units * clock_ghz * per_cycle / 1000 TFLOP/s.
    std::optional<double> units, clock_ghz;
    PerPrecision per_cycle;
    std::string source, notes;
    int line = 0;  // line of the row in its file

    std::optional<double> peak_flops(Precision p) const;     // FLOP/s
    std::optional<double> bandwidth_bytes() const;           // B/s
    std::optional<double> derived_tflops(Precision p) const;  // units * clock * per_cycle, when recorded
};

// "file:line: field 'x': problem" for every defect of a chip file.
struct ChipFileError : std::runtime_error {
    ChipFileError(const std::string& file, int line, const std::string& field, const std::string& problem);
    std::string file, field;
    int line;
};

// The columns of a chip file, in the order they are written back (csv output uses them too).
const std::vector<std::string_view>& chip_columns();

// How far a stated peak may sit from units * clock * per_cycle: datasheets round to 3-4 digits.
inline constexpr double derivation_tolerance = 0.005;

// A chip database is a few KiB; anything near these sizes is not one (/dev/zero, a disk image),
// and is refused before it fills memory.
inline constexpr size_t max_chip_file_bytes = size_t(1) << 20;
inline constexpr size_t max_chip_line_bytes = 16384;

// Parses and validates a chip file's text; `file` names it in errors. A UTF-8 byte order mark is
// skipped; lines starting with '#' and blank lines are skipped; the first other line is the
// header. Every other line must be UTF-8 without control characters (names reach a terminal).
std::vector<Chip> parse_chips(std::string_view text, const std::string& file);
std::vector<Chip> load_chips(const std::string& path);  // at most max_chip_file_bytes

// The database shipped with ridge (RIDGE_CHIPS_CSV, set by CMake to the source tree's file).
std::string default_chips_path();

const Chip* find_chip(const std::vector<Chip>& chips, std::string_view name);  // case-insensitive

}  // namespace ridge::roofline
