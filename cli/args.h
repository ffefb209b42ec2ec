#pragma once
// Command-line parsing for the ridge CLI: every command declares its options once; help text,
// unknown-option errors and typed validation all come from that declaration.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "bench/usage_error.h"
#include "engine/shape.h"

namespace ridge::cli {

struct Option {
    std::string_view name;   // "--batch"
    std::string_view value;  // "N"; empty for a flag
    std::string_view help;
};

struct Command {
    std::string_view name;      // "summary"
    std::string_view synopsis;  // "NET [options]"
    std::string_view about;
    int positionals;            // required positional arguments; -n: n or more
    std::vector<Option> options;
};

struct Args {
    const Command* cmd;
    std::vector<std::string> pos;
    std::map<std::string, std::string, std::less<>> opt;
    bool help = false;

    bool has(std::string_view name) const { return opt.count(name) > 0; }
    std::string get(std::string_view name, std::string_view fallback) const;
    int64_t positive(std::string_view name, int64_t fallback, int64_t max) const;
    int64_t non_negative(std::string_view name, int64_t fallback, int64_t max) const;
    // "1,16,64": positive integers, each at most max, no repeats, in the order given.
    std::vector<int64_t> positive_list(std::string_view name, std::vector<int64_t> fallback, int64_t max) const;
    // "a,b,c": the option's value cut at every comma, empty fields kept (the caller judges them).
    std::vector<std::string> list(std::string_view name) const;
    DType dtype() const;                                             // --dtype, fp32 by default
    std::pair<int64_t, int64_t> resolution(int64_t max) const;       // --res "H" or "HxW"
    std::string choice(std::string_view name, std::string_view fallback,
                       const std::vector<std::string_view>& allowed) const;
};

Args parse(const Command& cmd, const std::vector<std::string>& argv);
std::string help_text(const Command& cmd);

// The candidates closest to a mistyped name (prefix matches first, then edit distance).
std::string closest(std::string_view name, const std::vector<std::string_view>& candidates, size_t count = 3);

}  // namespace ridge::cli
