#pragma once
// `ridge train`: fixed-iteration training runs on an image folder or synthetic data, timed and
// logged to LOG_DIR/metrics.csv and LOG_DIR/env_info.md.
#include "bench/args.h"

namespace ridge::cli {

extern const Command train_cmd;
// argv: the command's own arguments as given (recorded in the ledger as the command line).
int run_train(const Args& a, const std::vector<std::string>& argv);

}  // namespace ridge::cli
