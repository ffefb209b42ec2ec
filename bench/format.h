#pragma once
// Text output: SI-scaled numbers for people, exact integers for machines, a small JSON writer,
// aligned tables, and atomic file output (a temp file renamed into place, never half-written).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::bench {

std::string si(double v);          // 3 significant digits: "4.09G", "118M", "512", "0"
std::string grouped(int64_t v);    // "4,089,184,256"
std::string fixed(double v, int decimals);

class Json {
public:
    Json& begin_object(std::string_view key = {});
    Json& end_object();
    Json& begin_array(std::string_view key = {});
    Json& end_array();
    Json& field(std::string_view key, std::string_view v);
    Json& field(std::string_view key, const char* v) { return field(key, std::string_view(v)); }
    Json& field(std::string_view key, int64_t v);
    Json& field(std::string_view key, int v) { return field(key, int64_t(v)); }
    Json& field(std::string_view key, double v);  // NaN and infinities as null: JSON has no spelling for them
    Json& boolean(std::string_view key, bool v);  // named apart: a bool overload would catch pointers
    Json& array(std::string_view key, const std::vector<int64_t>& v);
    std::string str() const { return out_ + "\n"; }

private:
    void prefix(std::string_view key);
    std::string out_;
    std::vector<bool> first_{true};
};

// s with control characters and bytes that are not UTF-8 written as \xNN: what a user typed or a
// file held reaches the terminal as text, and an error message stays on one line.
std::string printable(std::string_view s);

// A JSON string: control characters escaped, and bytes that are not UTF-8 as U+FFFD, since JSON
// text must be UTF-8.
std::string json_quote(std::string_view s);

// Columns: a header, a width and whether text is left-aligned; cells longer than the width are
// cut from the left (layer names keep their distinguishing tail).
struct Column {
    std::string_view header;
    int width;
    bool left = false;
};
std::string table_row(const std::vector<Column>& cols, const std::vector<std::string>& cells);
std::string table_header(const std::vector<Column>& cols);

// Writes to path through a temp file (mkstemp, in path's folder) and a rename; "-" or empty
// writes to stdout. An existing file keeps its mode; a new one gets 0666 less the umask.
void write_output(const std::string& path, const std::string& text);

// base less the process's umask: the mode open() or mkdir() would give (mkstemp and mkdtemp give
// 0600 and 0700).
unsigned new_file_mode(unsigned base);

// Checks, before any work, that write_output(path, ...) will find its destination: not a folder,
// a folder that exists and takes a new file (tried with a temp file, removed at once), or a
// device or pipe that opens for writing now. Throws UsageError; creates and leaves nothing.
void check_output(const std::string& path);

// Why no new file can be created at path, or "" when one can: its folder (where a symlink at
// path points, if it is one) must exist and take a file (tried). With make_folders, missing
// folders would be created first, so the nearest existing one is tried instead.
std::string cannot_create(const std::string& path, bool make_folders);

}  // namespace ridge::bench
