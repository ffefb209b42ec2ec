#pragma once
// ridge-kernels' command line: which kernels, which shape, which instruction sets, how to time.
#include <optional>
#include <string>
#include <vector>

#include "bench/kernels/cases.h"

namespace ridge::kbench {

struct Options {
    bool help = false, list = false, csv = false;
    std::vector<const Kernel*> kernels;  // none named: every CPU kernel
    // Shape overrides; a kernel's own default where not given.
    std::optional<int64_t> N, C, H, W, K, R, S, stride, pad;
    std::optional<int64_t> rows;  // linear-row's (its N); --n stays the maps' batch
    std::optional<std::string> layout;
    std::string isa = "all";  // all: dispatch and each single-ISA build this CPU runs
    int threads = 0;          // 0: OpenMP's default
    TimingOptions timing;
    int ref_repeats = 3;      // 0: the reference is run once, for the check, and not timed
};

// Throws bench::UsageError (one line) on an unknown option or kernel, a malformed or out-of-range
// number, an instruction set this CPU lacks, or a shape a named kernel cannot take.
Options parse_options(const std::vector<std::string>& args);

Problem problem_for(const Kernel& k, const Options& o);
// The CPU variants --isa selects on this host.
std::vector<SimdVariant> selected_variants(const Options& o);

std::string usage();

}  // namespace ridge::kbench
