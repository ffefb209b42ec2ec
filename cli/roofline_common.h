#pragma once
// What the three `ridge roofline` subcommands (roofline_chips.cpp, roofline_measure.cpp,
// roofline_place.cpp) share: their common options, the number formats of their tables and CSVs,
// and the loading of the chip database with its errors as usage errors.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.h"
#include "roofline/chips.h"
#include "roofline/cpu_clocks.h"

namespace ridge::cli::roofline_sub {

constexpr int exit_no_device = 3;

inline constexpr Option chips_opt{"--chips", "FILE", "chip database (default: this tree's roofline/chips.csv; peaks.csv beside it)"};
inline constexpr Option out_opt{"--out", "FILE", "write to FILE (atomically) instead of stdout"};
inline constexpr Option precision_opt{"--precision", "P", "fp64, fp32, tf32, fp16, bf16, fp8 or int8"};
inline constexpr Option sparse_opt{"--sparse", "", "the 2:4-sparse peak instead of the dense one (where a datasheet gives one)"};

extern const Command chips_cmd, measure_cmd, place_cmd;
int run_chips(const Args& a);
int run_measure(const Args& a);
int run_place(const Args& a);

// Numbers for people: three significant digits, no exponent.
std::string num(double v);
// Numbers for machines: the shortest text that reads back as the same double.
std::string exact(double v);
// "8.22 GFLOP", "3.35 TB", "512 FLOP/s": SI-scaled with the prefix on the unit.
std::string si_unit(double v, std::string_view unit);
std::string time_text(double seconds);
std::string bytes_text(int64_t b);  // "1 GiB", "1.5 MiB", "32 KiB", "512 B"
std::string density_name(bool sparse);

std::vector<roofline::Chip> load(const Args& a);  // --chips, or the tree's database
std::vector<roofline::CpuClock> load_clocks(const Args& a);
std::optional<roofline::Precision> precision_arg(const Args& a);  // --precision, if given

}  // namespace ridge::cli::roofline_sub
