#pragma once
// `ridge compare`: the results of several environments (report folders, ledgers) side by side in
// one report; the work is report/compare.*.
#include "bench/args.h"

namespace ridge::cli {

extern const Command compare_cmd;
int run_compare(const Args& a);

}  // namespace ridge::cli
