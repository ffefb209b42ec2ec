#pragma once
// One study across machines (`ridge compare`): the ledgers and report folders of several
// environments read into one schema, grouped into environments and repeated configurations, and
// written out as report.md, data files and figures (report/figures/compare.cpp).
//
// An environment is a set of rows that agree on every field of the machine and its settings
// (host, device, CPU or GPU and their software, threads, library settings, ridge's git revision);
// rows that differ in any of them are never pooled. A configuration is what ran (kind, net, mode,
// batch, resolution, precision, backend, ...); rows of one environment with the same
// configuration are repeats, shown as mean and spread.
#include <optional>
#include <string>
#include <vector>

#include "bench/ledger_schema.h"
#include "report/figures.h"

namespace ridge::report {

enum class LabelBy { host, device, label };

struct CompareOptions {
    LabelBy label_by = LabelBy::host;
    std::vector<std::string> nets;  // empty: every net found
    std::string baseline;           // an environment's name; empty: the first
};

// A row with where it came from.
struct SourcedRow {
    bench::LedgerRecord rec;
    std::string file;   // the ledger it was read from
    size_t input = 0;   // which command-line input found it
};

struct Environment {
    std::string name;                                        // as --label-by names it, made unique
    std::vector<std::pair<std::string, std::string>> fields;  // the identity fields, schema order
    std::string device;                                      // "cpu" or "cuda"
    // The measured roof: the largest its ridge report rows carry (a ceiling is the best attained),
    // else the largest its ridge train rows carry; and the datasheet's where a row names it.
    // Zero / nullopt: no row of this environment measured one.
    double peak_flops = 0, bytes_per_s = 0;
    std::optional<double> datasheet_peak_flops, datasheet_bytes_per_s;
    double clock_min_mhz = 0, clock_max_mhz = 0;  // the reported clock over its rows
    std::string first_date, last_date;
    std::vector<std::string> files;  // the ledgers its rows came from
    size_t rows = 0;
    const std::string& field(std::string_view name) const;  // "" when not an identity field
    bool has_roof() const { return peak_flops > 0 && bytes_per_s > 0; }
};

// A spread of repeats.
struct Spread {
    int n = 0;
    double mean = 0, min = 0, max = 0;
    bool noisy() const { return n > 1 && mean > 0 && (max - min) > 0.1 * mean; }  // more than 10 % of the mean
};

struct Group {
    size_t env = 0;
    // The configuration. `key` is every field of it; `compare_key` the part other environments
    // are matched on (kind, net, mode, batch, resolution, precision).
    std::string kind, net, mode, precision, backend;
    int64_t batch = 0, height = 0, width = 0;
    std::string key, compare_key, label;  // label: "infer b1", "train step b8", "train run b32"
    Spread images_per_s, step_ms;
    double gflops = 0;                     // mean achieved GFLOP/s
    int64_t flops_per_step = 0, bytes_per_step = 0;  // 0: unknown
    std::vector<const SourcedRow*> rows;
    double intensity() const { return bytes_per_step > 0 ? double(flops_per_step) / double(bytes_per_step) : 0; }
};

struct Comparison {
    std::vector<SourcedRow> rows;  // every distinct row read, in input order
    std::vector<Environment> envs;
    std::vector<Group> groups;     // by environment, then in the order first read
    std::vector<std::string> nets;  // in the order first read (or --nets')
    size_t baseline = 0;
    std::vector<std::string> inputs;  // as given
    std::vector<std::string> flags;   // what the reader must know: settings or revisions that differ, ...
    std::vector<std::string> notes;   // what was skipped and why
    int duplicates = 0;               // identical rows read twice, counted once

    size_t rows_compared() const;  // the rows in groups (--nets may leave rows out)
    std::vector<const Group*> groups_of(size_t env) const;
    // The group of env matching compare_key (the one with the most repeats when several do).
    const Group* match(size_t env, const std::string& compare_key) const;
};

// Reads every input (a report folder, a folder of results, a ledger file) and builds the
// comparison. Throws bench::UsageError, naming the input, for: a path that does not exist, a folder
// that holds no ridge result, a ledger of an unknown schema, a row whose figures are not numbers,
// two rows of the same run with different figures, a --nets name not in the zoo, a --baseline
// that names no environment.
Comparison load_comparison(const std::vector<std::string>& inputs, const CompareOptions& o);

// The marker a `ridge compare` folder holds besides .ridge-report: a later scan of a folder of
// results skips it instead of reading its merged rows again.
inline constexpr const char* compare_marker_file = ".ridge-compare";

// The files of a comparison (report.md is written by compare_markdown).
std::string environments_csv(const Comparison& c);  // one row per environment and field
std::string groups_csv(const Comparison& c);        // one row per environment and configuration
std::string rows_csv(const Comparison& c);          // every row, in the ledger schema, its environment first

std::vector<Figure> compare_figures(const Comparison& c, const std::string& data_dir);
std::string compare_markdown(const Comparison& c, const std::vector<Figure>& figures, const std::string& command);

// How a group stands on its environment's measured roof.
struct RoofPlace {
    bool known = false;       // the environment has a roof and the group its FLOPs and bytes
    bool memory_bound = false;
    double roof_flops = 0;    // min(peak, bandwidth x intensity), FLOP/s
    double fraction = 0;      // achieved / roof
};
RoofPlace roof_place(const Comparison& c, const Group& g);

}  // namespace ridge::report
