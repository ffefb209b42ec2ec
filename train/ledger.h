#pragma once
// The training ledger: LOG_DIR/metrics.csv, one row per run with its configuration, figures and
// environment, appended under flock by concurrent runs; and LOG_DIR/env_info.md, the same
// environment as a page with the command lines that produced the rows.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/env.h"
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
    cli::Env env;
};

// (column, value) in ledger order; the header is the names, so the two cannot drift apart.
std::vector<std::pair<std::string, std::string>> ledger_fields(const RunRecord& r);
std::string ledger_header();
std::string ledger_row(const RunRecord& r);

// The fields of a CSV text, quoted fields (with commas, quotes or line breaks) unquoted.
std::vector<std::vector<std::string>> parse_csv(const std::string& text);

// Appends `row` to the CSV at `path` (its folder made if need be) under an exclusive flock,
// writing `header` first when the file is empty and refusing (a std::runtime_error naming the
// file) one whose header differs; then, still under the lock, calls `after` with the whole
// file's text (to write a page derived from it). The row goes out in one write() on an
// O_APPEND descriptor; a row cut short by a crash is left on a line of its own by the next one.
// One locked appender with bench/ledger is the goal: this one is kept small and local until
// bench/ledger has a general flock-based append that both can share.
void append_row_locked(const std::string& path, const std::string& header, const std::string& row,
                       const std::function<void(const std::string&)>& after = {});

// A ledger read back: the header and the rows that have as many fields as it (a row cut short
// by a crash is skipped).
struct LedgerTable {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    int column(std::string_view name) const;                           // -1 when absent
    const std::string& at(size_t row, std::string_view column) const;  // throws when absent
};
// Reads a ledger this version of ridge train wrote; throws std::runtime_error naming the file
// when it cannot be read or has other columns.
LedgerTable read_ledger(const std::string& path);

// Checks, before any work and without creating anything, that the ledger can be written: the
// folder, or the nearest part of its path that exists, is a writable folder, and an existing
// file has this version's header. Throws std::runtime_error naming the problem.
void check_ledger(const std::string& path, const std::string& header);

// env_info.md: the environment of `latest` as a readable page, the measured roofline, and every
// command line recorded in the ledger's rows (grouped by invocation).
std::string env_info_page(const RunRecord& latest, const std::string& ledger_text);

}  // namespace ridge::train
