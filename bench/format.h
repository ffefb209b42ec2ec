#pragma once
// Text output: SI-scaled numbers for people, exact integers for machines, a small JSON writer,
// aligned tables, and atomic file output (a temp file renamed into place, never half-written).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::cli {

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
    Json& field(std::string_view key, double v);
    Json& boolean(std::string_view key, bool v);  // true or false (field() would take a bool as an int)
    Json& array(std::string_view key, const std::vector<int64_t>& v);
    std::string str() const { return out_ + "\n"; }

private:
    void prefix(std::string_view key);
    std::string out_;
    std::vector<bool> first_{true};
};

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

// Writes to path through a temp file and a rename; "-" or empty writes to stdout.
void write_output(const std::string& path, const std::string& text);

}  // namespace ridge::cli
