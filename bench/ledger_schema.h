#pragma once
// The one ledger schema: every row ridge appends (a `ridge bench` batch, a `ridge report` run, a
// `ridge train` run, on any device) has the same columns, so ledgers from several machines can be
// read side by side (`ridge compare`). A field that does not apply to a row is an empty cell.
// README "The ledger" documents each column with its unit.
//
// Ledgers written before this schema (the bench CPU and GPU ledgers, the training ledger) are
// still read: their columns are renamed to this schema's and what they lack is left empty.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/env.h"

namespace ridge::bench {

struct LedgerColumn {
    std::string_view name;
    std::string_view unit;  // "ms", "B", "GFLOP/s", ... ; empty for names and counts
};
const std::vector<LedgerColumn>& ledger_columns();
std::string ledger_header();  // the column names joined by commas
int ledger_column(std::string_view name);  // index in ledger_columns(), -1 when absent

// A row being written: cells by column name, CSV-quoted on output. Naming a column the schema
// does not have is a programming error (std::logic_error), so a writer cannot drift from it.
class LedgerRow {
public:
    LedgerRow();
    LedgerRow& set(std::string_view column, std::string value);
    const std::string& get(std::string_view column) const;
    std::string csv() const;

private:
    std::vector<std::string> cells_;
};

// A measured figure as the ledger writes it: 6 significant digits ("%.6g").
std::string ledger_num(double v);
// The environment's columns (host, git, the machine, the software, the GPU when e.gpu), the same
// for every kind of row.
void set_environment(LedgerRow& row, const Env& e, const std::string& host);

// The formats a ledger's first line can name.
enum class LedgerFormat { current, bench_cpu_v1, bench_cuda_v1, train_v1, train_v2, schema_v1 };
std::optional<LedgerFormat> ledger_format(std::string_view header_line);
std::string_view format_name(LedgerFormat f);  // "ridge's ledger", "the bench CPU ledger of ridge before ..."

// A ledger read back into this schema: rows in file order (each with its line number in the
// file), older formats converted. Rows cut short by a crash (fewer fields than the header) are
// skipped and counted.
struct LedgerRecord {
    std::vector<std::string> cells;  // indexed like ledger_columns()
    int line = 0;                    // 1-based line of the row's start in its file
    const std::string& get(std::string_view column) const;
};
struct LedgerFile {
    LedgerFormat format = LedgerFormat::current;
    std::vector<LedgerRecord> rows;
    int torn_rows = 0;
};
// Reads path under a shared flock (a row being appended is read whole or not at all). A
// UsageError naming the file when it cannot be read or its header is none of the formats above.
LedgerFile read_ledger_file(const std::string& path);
// The same from text already read; `path` only names it in messages.
LedgerFile parse_ledger(const std::string& text, const std::string& path);

// The message for appending to a file whose first line is `header_line`, not ridge's current
// header: names the older format when it is one, and what to do.
std::string other_columns_message(const std::string& path, std::string_view header_line);

// The fields of a CSV text, quoted fields (with commas, quotes or line breaks) unquoted; `lines`,
// when given, gets each row's 1-based starting line.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, std::vector<int>* lines = nullptr);

}  // namespace ridge::bench
