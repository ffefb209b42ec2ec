#pragma once
// `ridge report`: the whole study in one command: analysis, ceilings, benchmarks, figures and
// results/<host>/report.md.
#include "cli/args.h"

namespace ridge::cli {

extern const Command report_cmd;
int run_report(const Args& a);

}  // namespace ridge::cli
