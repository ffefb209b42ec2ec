#pragma once
// A figure's .dat file as gnuplot reads it, for the figure tests: blocks of rows, a string field
// in double quotes read as one field without its quotes, the '#' lines of each block kept apart.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace dat {

using Row = std::vector<std::string>;

struct Block {
    std::vector<std::string> comments;
    std::vector<Row> rows;
};

// What separates two blocks: one blank line (gnuplot's data sets within an index) or two (its
// indexes, whose data sets then run together).
enum class Split { set, index };

inline Row fields(const std::string& line) {
    Row row;
    for (size_t i = 0; i < line.size();) {
        if (line[i] == ' ' || line[i] == '\t') {
            ++i;
        } else if (line[i] == '"') {
            size_t end = std::min(line.find('"', i + 1), line.size());
            row.push_back(line.substr(i + 1, end - i - 1));
            i = end + 1;
        } else {
            size_t end = std::min(line.find_first_of(" \t", i), line.size());
            row.push_back(line.substr(i, end - i));
            i = end;
        }
    }
    return row;
}

inline std::vector<Block> read(const std::filesystem::path& p, Split split) {
    std::ifstream f(p);
    std::vector<Block> blocks(1);
    int blank = 0;  // blank lines since the last line with text
    for (std::string line; std::getline(f, line);) {
        if (line.empty()) {
            ++blank;
            continue;
        }
        bool started = !blocks.back().rows.empty() || !blocks.back().comments.empty();
        if (started && blank >= (split == Split::index ? 2 : 1)) blocks.emplace_back();
        blank = 0;
        if (line[0] == '#') blocks.back().comments.push_back(line);
        else blocks.back().rows.push_back(fields(line));
    }
    if (blocks.back().rows.empty() && blocks.back().comments.empty()) blocks.pop_back();
    return blocks;
}

}  // namespace dat
