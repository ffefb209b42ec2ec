#include <array>

#include "bench/format.h"
#include "report/figures/dat.h"
#include "report/figures/figures.h"

namespace ridge::report {

namespace {

// Slices below this share of their pie are merged into "other": too thin to see or to label.
constexpr double other_below_percent = 3;
constexpr int other = category_count;  // the category index "other" takes in the data

using ByCategory = std::array<double, category_count>;

// A share as its label: "<0.1%", "4.2%", "35%", "99.7%" (never a rounded "100%" beside another slice).
std::string percent(double share) {
    if (share < 0.1) return "<0.1%";
    return bench::fixed(share, share < 10 || (share > 99 && share < 100) ? 1 : 0) + "%";
}

// "14.6 GFLOP", "132 MB", "512 B": bench::si's number and prefix with a space before them.
std::string with_unit(double v, const std::string& unit) {
    std::string n = bench::si(v);
    size_t prefix = n.find_first_not_of("0123456789.-");
    if (prefix == std::string::npos) return n + " " + unit;
    return n.substr(0, prefix) + " " + n.substr(prefix) + unit;
}

struct Pie {
    std::string what, total;  // "forward FLOPs", "14.6 GFLOP"
    ByCategory v{};
};

// One pie's block: a row per slice, in Category order with "other" last.
// category share_percent start_percent label; start is the sum of the shares before it.
std::string pie_block(const Pie& p, std::array<bool, category_count + 1>& used) {
    double total = 0;
    for (double x : p.v) total += x;
    std::string out = "# " + p.what + ": " + p.total + "\n# category share_percent start_percent label\n";
    if (total <= 0) return out + std::to_string(other) + " 100 0 \"none\"\n";
    int small = 0;
    for (double x : p.v) small += x > 0 && 100 * x / total < other_below_percent;
    double start = 0, rest = 0;
    auto row = [&](int cat, double share) {
        used[size_t(cat)] = true;
        out += std::to_string(cat) + " " + num(share) + " " + num(start) + " \"" + percent(share) + "\"\n";
        start += share;
    };
    for (int c = 0; c < category_count; ++c) {
        double share = 100 * p.v[size_t(c)] / total;
        if (share <= 0) continue;
        // A lone thin slice keeps its own name: "other" would only rename it.
        if (share < other_below_percent && small > 1)
            rest += share;
        else
            row(c, share);
    }
    if (rest > 0) row(other, rest);
    return out;
}

}  // namespace

std::vector<Figure> pies_figures(const Study& s, const std::string& data_dir) {
    Figure f{"pies", "Where " + s.layer_net + "'s time, FLOPs and memory go, by layer type", "", ""};
    const Run* r = s.layer_run();
    if (!r) {
        f.missing = "no net's layers were timed";
        return {f};
    }
    f.title = "Where " + r->net + "'s time, FLOPs and memory go, by layer type";
    std::array<Pie, 6> pies;
    for (size_t i = 0; i < r->a.layers.size() && i < r->layers.size(); ++i) {
        const LayerCost& l = r->a.layers[i];
        const LayerResult& t = r->layers[i];
        size_t c = size_t(l.category);
        pies[0].v[c] += t.fwd.median;
        pies[1].v[c] += t.dgrad.median + t.wgrad.median;
        pies[2].v[c] += double(l.c.fwd_flops);
        pies[3].v[c] += double(l.c.bwd_flops());
        pies[4].v[c] += double(l.c.activation_bytes);
        pies[5].v[c] += double(l.c.saved_bytes);
    }
    auto sum = [](const Pie& p) {
        double t = 0;
        for (double x : p.v) t += x;
        return t;
    };
    const char* what[] = {"forward latency", "backward latency", "forward FLOPs", "backward FLOPs",
                          "forward memory: activations written", "backward memory: saved for backward"};
    for (size_t p = 0; p < pies.size(); ++p) {
        pies[p].what = what[p];
        pies[p].total = p < 2 ? with_unit(sum(pies[p]) * 1e3, "ms") : with_unit(sum(pies[p]), p < 4 ? "FLOP" : "B");
    }

    std::array<bool, category_count + 1> used{};
    std::string dat = "# " + r->net + " at batch " + std::to_string(r->batch) + " on " + r->device +
                      ", by layer type; a block per pie: latency fwd, bwd; FLOPs fwd, bwd; memory fwd, bwd\n";
    for (size_t p = 0; p < pies.size(); ++p) dat += (p ? "\n\n" : "") + pie_block(pies[p], used);

    f.caption = "Shares of " + r->net + "'s training step at batch " + std::to_string(r->batch) + " on the " +
                (r->device == "cuda" ? "GPU" : "CPU") +
                " by layer type: the layers' timed forward and backward (data plus weight gradient) medians, "
                "their forward and backward FLOPs, the activations they write and the tensors they keep for "
                "backward. Types under " + bench::fixed(other_below_percent, 0) + " % of a pie are merged into other.";
    std::string gpv = "title = " + gp_quote(r->net + ", training step at batch " + std::to_string(r->batch) + " on " +
                                            (r->device == "cuda" ? "GPU" : "CPU") + ", by layer type") + "\n";
    for (size_t p = 0; p < pies.size(); ++p)
        gpv += "pie" + std::to_string(p) + " = " + gp_quote(pies[p].what) + "\ntotal" + std::to_string(p) + " = " +
               gp_quote(pies[p].total) + "\n";
    int n = 0;
    for (int c = 0; c <= category_count; ++c) {
        if (!used[size_t(c)]) continue;
        std::string name = c == other ? "other" : std::string(category_name(Category(c)));
        gpv += "cat" + std::to_string(n) + " = " + std::to_string(c) + "\ncatname" + std::to_string(n) + " = " +
               gp_quote(name) + "\n";
        ++n;
    }
    gpv += "ncat = " + std::to_string(n) + "\n";
    write_data(data_dir, f.name, dat, gpv);
    return {f};
}

}  // namespace ridge::report
