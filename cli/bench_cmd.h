#pragma once
// `ridge bench`: measured time of a zoo net, whole step and per layer, beside the analytic counts.
#include "cli/args.h"

namespace ridge::cli {

extern const Command bench_cmd;
int run_bench(const Args& a);

}  // namespace ridge::cli
