#include "bench/ledger.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/args.h"
#include "bench/format.h"

namespace ridge::cli {

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

void append_ledger(const std::string& path, const std::string& header, const std::vector<std::string>& rows) {
    namespace fs = std::filesystem;
    std::string text;
    std::error_code ec;
    if (fs::exists(path, ec)) {
        std::ifstream f(path, std::ios::binary);
        std::stringstream s;
        s << f.rdbuf();
        if (!f && !f.eof()) throw UsageError(cat("ridge: cannot read the ledger '", path, "'"));
        text = s.str();
        std::string first = text.substr(0, text.find('\n'));
        if (!text.empty() && first != header)
            throw UsageError(cat("ridge: the ledger '", path,
                                 "' has other columns than this version writes; move it aside or pass --ledger FILE"));
        if (!text.empty() && text.back() != '\n') text += '\n';
    } else {
        fs::path dir = fs::path(path).parent_path();
        if (!dir.empty()) fs::create_directories(dir, ec);
    }
    if (text.empty()) text = header + "\n";
    for (const auto& r : rows) text += r + "\n";
    write_output(path, text);
}

}  // namespace ridge::cli
