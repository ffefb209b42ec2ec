#pragma once
// The training ledger: LOG_DIR/metrics.csv, one row per run with its configuration, figures and
// environment, appended under flock by concurrent runs; and LOG_DIR/env_info.md, the same
// environment as a page with the command lines that produced the rows.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/env.h"
#include "bench/ledger_schema.h"
#include "train/run.h"

namespace ridge::train {

// Everything a row records about one run.
struct RunRecord {
    std::string label;  // NAME_runK
    int run = 1, runs = 1;
    std::string started;  // UTC start of the invocation, shared by its runs
    std::string date;     // UTC end of this run
    std::string host;
    std::string data;  // "synthetic" or the --data folder
    int64_t train_images = 0;
    std::string command;  // the exact command line, arguments quoted for a shell
    Config config;
    std::string backend;
    int64_t classes = 0;
    int64_t planned_bytes = 0;          // the executor's plan
    int64_t predicted_train_bytes = 0;  // the analysis: weights, gradients, momentum, saved activations
    int64_t flops_per_step = 0, bytes_per_step = 0;
    Result result;
    bench::Env env;
};

// The run as a row of the one ledger schema (bench/ledger_schema.h), kind "train".
bench::LedgerRow ledger_fields(const RunRecord& r);
std::string ledger_header();  // bench::ledger_header()
std::string ledger_row(const RunRecord& r);

using bench::parse_csv;

// A ledger read back: the header and the rows that have as many fields as it (a row cut short
// by a crash is skipped).
struct LedgerTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    int column(std::string_view name) const;                           // -1 when absent
    const std::string& at(size_t row, std::string_view column) const;  // throws when absent
};
// Reads the training runs (kind "train") of a ledger in the one schema or in an older train
// format; throws std::runtime_error naming the file when it cannot be read or has other columns.
LedgerTable read_ledger(const std::string& path);

// Checks, before any work and without creating anything, that the ledger can be written: the
// folder, or the nearest part of its path that exists, is a writable folder, and an existing
// file has this version's header. Throws std::runtime_error naming the problem.
void check_ledger(const std::string& path, const std::string& header);

// env_info.md: the environment of `latest` as a readable page, the measured roofline, and every
// command line recorded in the ledger's rows (grouped by invocation).
std::string env_info_page(const RunRecord& latest, const std::string& ledger_text);

}  // namespace ridge::train
