#include "cli/args.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace ridge::cli {

using bench::UsageError;

namespace {
const Option* find_option(const Command& cmd, std::string_view name) {
    for (const Option& o : cmd.options)
        if (o.name == name) return &o;
    return nullptr;
}

std::string where(const Command& cmd) { return cat("ridge ", cmd.name, ": "); }

bool parse_int(std::string_view s, int64_t& out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            size_t up = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
            diag = up;
        }
    }
    return row[b.size()];
}
}  // namespace

Args parse(const Command& cmd, const std::vector<std::string>& argv) {
    Args a{&cmd, {}, {}, false};
    bool options_done = false;  // after "--" everything is positional
    for (size_t i = 0; i < argv.size(); ++i) {
        std::string arg = argv[i];
        if (options_done || arg == "-" || !arg.starts_with("-")) {
            a.pos.push_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "--help" || arg == "-h") {
            a.help = true;
            return a;
        }
        std::string name = arg, value;
        bool inline_value = false;
        if (size_t eq = arg.find('='); eq != std::string::npos) {
            name = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            inline_value = true;
        }
        const Option* o = find_option(cmd, name);
        if (!o) throw UsageError(where(cmd) + "unknown option '" + name + "' (see ridge " + std::string(cmd.name) + " --help)");
        if (o->value.empty()) {
            if (inline_value) throw UsageError(where(cmd) + name + " takes no value");
        } else if (!inline_value) {
            if (i + 1 >= argv.size()) throw UsageError(where(cmd) + name + " needs a value " + std::string(o->value));
            value = argv[++i];
        }
        if (a.opt.count(name)) throw UsageError(where(cmd) + name + " is given twice");
        a.opt[name] = value;
    }
    // A negative count -n: at least n (ridge compare takes one input or more).
    bool count_ok = cmd.positionals >= 0 ? int(a.pos.size()) == cmd.positionals : int(a.pos.size()) >= -cmd.positionals;
    if (!count_ok)
        throw UsageError(where(cmd) + (int(a.pos.size()) < std::abs(cmd.positionals) ? "missing argument" : "unexpected argument") +
                         " (usage: ridge " + std::string(cmd.name) + " " + std::string(cmd.synopsis) + ")");
    return a;
}

std::string help_text(const Command& cmd) {
    std::string s = cat("usage: ridge ", cmd.name, " ", cmd.synopsis, "\n\n", cmd.about, "\n");
    if (!cmd.options.empty()) s += "\noptions:\n";
    for (const Option& o : cmd.options) {
        std::string left = cat("  ", o.name, o.value.empty() ? "" : " ", o.value);
        s += left + std::string(left.size() < 24 ? 24 - left.size() : 1, ' ') + std::string(o.help) + "\n";
    }
    return s + "  --help, -h              this text\n";
}

std::string Args::get(std::string_view name, std::string_view fallback) const {
    auto it = opt.find(name);
    return it == opt.end() ? std::string(fallback) : it->second;
}

namespace {
int64_t bounded(const Args& a, std::string_view name, int64_t fallback, int64_t min, int64_t max) {
    if (!a.has(name)) return fallback;
    std::string s = a.get(name, "");
    std::string_view what = min > 0 ? "a positive integer" : "a non-negative integer";
    int64_t v = 0;
    if (!parse_int(s, v)) {
        bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
        if (digits) throw UsageError(cat(where(*a.cmd), name, " ", s, " is above the limit of ", max));
        throw UsageError(cat(where(*a.cmd), name, " must be ", what, ", got '", s, "'"));
    }
    if (v < min) throw UsageError(cat(where(*a.cmd), name, " must be ", what, ", got '", s, "'"));
    if (v > max) throw UsageError(cat(where(*a.cmd), name, " ", v, " is above the limit of ", max));
    return v;
}
}  // namespace

int64_t Args::positive(std::string_view name, int64_t fallback, int64_t max) const {
    return bounded(*this, name, fallback, 1, max);
}

int64_t Args::non_negative(std::string_view name, int64_t fallback, int64_t max) const {
    return bounded(*this, name, fallback, 0, max);
}

std::vector<std::string> Args::list(std::string_view name) const {
    std::string v = get(name, "");
    std::vector<std::string> out;
    size_t start = 0;
    while (start <= v.size()) {
        size_t end = v.find(',', start);
        if (end == std::string::npos) end = v.size();
        out.push_back(v.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

std::vector<int64_t> Args::positive_list(std::string_view name, std::vector<int64_t> fallback, int64_t max) const {
    if (!has(name)) return fallback;
    std::string s = get(name, "");
    std::vector<int64_t> out;
    size_t start = 0;
    while (true) {
        size_t end = s.find(',', start);
        std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
        int64_t v = 0;
        if (!parse_int(item, v) || v < 1)
            throw UsageError(cat(where(*cmd), name, " must be positive integers separated by commas, got '", s, "'"));
        if (v > max) throw UsageError(cat(where(*cmd), name, " ", v, " is above the limit of ", max));
        if (std::find(out.begin(), out.end(), v) != out.end())
            throw UsageError(cat(where(*cmd), name, " lists ", v, " twice"));
        out.push_back(v);
        if (end == std::string::npos) return out;
        start = end + 1;
    }
}

DType Args::dtype() const {
    std::string s = get("--dtype", "fp32");
    if (auto t = parse_dtype(s)) return *t;
    throw UsageError(cat(where(*cmd), "unknown dtype '", s, "' (fp32, fp16 or bf16)"));
}

std::string Args::choice(std::string_view name, std::string_view fallback,
                         const std::vector<std::string_view>& allowed) const {
    std::string s = get(name, fallback);
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
    std::string list;
    for (auto c : allowed) list += (list.empty() ? "" : ", ") + std::string(c);
    throw UsageError(cat(where(*cmd), "unknown ", name.substr(2), " '", s, "' (", list, ")"));
}

std::pair<int64_t, int64_t> Args::resolution(int64_t max) const {
    std::string s = get("--res", "");
    std::string_view v = s;
    size_t x = v.find('x');
    int64_t h = 0, w = 0;
    bool ok = x == std::string_view::npos ? parse_int(v, h) && (w = h, true)
                                           : parse_int(v.substr(0, x), h) && parse_int(v.substr(x + 1), w);
    if (!ok || h < 1 || w < 1)
        throw UsageError(cat(where(*cmd), "--res must be H or HxW with positive integers, got '", s, "'"));
    if (h > max || w > max) throw UsageError(cat(where(*cmd), "--res ", s, " is above the limit of ", max));
    return {h, w};
}

std::string closest(std::string_view name, const std::vector<std::string_view>& candidates, size_t count) {
    std::vector<std::pair<size_t, std::string_view>> scored;
    for (auto c : candidates) scored.emplace_back(c.starts_with(name) ? 0 : edit_distance(name, c), c);
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string out;
    for (size_t i = 0; i < std::min(count, scored.size()); ++i) out += (i ? ", " : "") + std::string(scored[i].second);
    return out;
}

}  // namespace ridge::cli
