#pragma once
// CSV ledgers: files that many runs append rows to over weeks (the bench ledgers, a training run's
// metrics), so a study can compare today's numbers with last week's. Several processes may append
// to one ledger at once; none of their rows may be lost and the file stays the user's file (its
// mode, owner and hard links are kept: rows are appended in place, the file is never replaced).
#include <functional>
#include <string>
#include <vector>

namespace ridge::bench {

// Appends rows (lines without their '\n') under header. The file is opened with O_APPEND and held
// under an exclusive flock while its header is checked and the rows are written in one piece, so
// concurrent appenders never lose or interleave rows. A new or empty file gets the header first; a
// file with another header is refused rather than mixed; a file whose last row lacks its newline
// (a writer killed mid-row) gets one before the new rows. Missing folders are created. A write
// that fails part way (disk full) is cut back, so no half row stays. Errors are UsageErrors naming
// the file. Then, still under the lock, `after` (if given) is called with the whole file's text,
// so that a page derived from the ledger (ridge train's env_info.md) is written from rows no
// other appender is adding to.
void append_csv_rows(const std::string& path, const std::string& header, const std::vector<std::string>& rows,
                     const std::function<void(const std::string&)>& after = {});
inline void append_csv_row(const std::string& path, const std::string& header, const std::string& row,
                           const std::function<void(const std::string&)>& after = {}) {
    append_csv_rows(path, header, {row}, after);
}

// Checks, before any work, that rows could be appended to path under header: the file is a regular
// file that opens for appending and has this header, or it does not exist and could be created
// (its nearest existing folder takes a new file). Creates and leaves nothing. Throws UsageError.
void check_csv_ledger(const std::string& path, const std::string& header);

// Whether two paths name the same file: the same device and inode when both exist, else the same
// path once symlinks and "." / ".." are resolved (so an output that does not exist yet but would
// land on an existing ledger is caught).
bool same_file(const std::string& a, const std::string& b);

std::string csv_cell(const std::string& s);  // quoted when it holds a comma, a quote or a newline

}  // namespace ridge::bench
