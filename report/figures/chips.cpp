// Figure 1: the chip database on datasheet rooflines at one precision (the study's, fp32 unless
// `ridge report --precision` says otherwise): every chip, one figure per kind, and every dense
// ceiling of one chip stacked over its memory slope.
#include <algorithm>
#include <cmath>

#include "bench/format.h"
#include "report/figures/figures.h"
#include "report/figures/roofs.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

using roofline::Chip;
using roofline::ChipKind;
using roofline::Precision;

struct Roof {
    const Chip* chip;
    double peak, bw, ridge;  // FLOP/s (int8: op/s), B/s, FLOP/B
    std::string label;
    int colour = 0;      // gnuplot linetype, see draw_roofs
    double label_y = 0;  // TFLOP/s, moved off its roof's peak so labels do not overlap
};

std::string kind_title(ChipKind k) {
    switch (k) {
        case ChipKind::cpu: return "CPUs";
        case ChipKind::gpu: return "GPUs";
        case ChipKind::asic: return "ASICs";
        case ChipKind::soc: return "SoCs";
        case ChipKind::fpga: return "FPGAs";
    }
    return {};
}

std::string names(const std::vector<std::string>& items) {
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += (i ? "; " : "") + items[i];
    return s;
}

// Stacks labels in log space at least `sep` decades apart, each as near its roof's peak as the
// others allow: upward from the lowest, then back down from the top if the stack ran past it.
void place_labels(std::vector<Roof>& roofs, double sep, double top) {
    std::sort(roofs.begin(), roofs.end(), [](const Roof& a, const Roof& b) {
        return a.peak != b.peak ? a.peak < b.peak : a.ridge < b.ridge;
    });
    std::vector<double> y;
    for (const Roof& r : roofs) y.push_back(std::log10(r.peak / 1e12));
    for (size_t i = 1; i < y.size(); ++i) y[i] = std::max(y[i], y[i - 1] + sep);
    if (!y.empty() && y.back() > top) {
        y.back() = top;
        for (size_t i = y.size() - 1; i-- > 0;) y[i] = std::min(y[i], y[i + 1] - sep);
    }
    for (size_t i = 0; i < roofs.size(); ++i) roofs[i].label_y = std::pow(10.0, y[i]);
}

// The plot's extent. The roofs end at x_end; leader lines run from there to the labels set beyond
// the right border (x_max), so every label sits in one column however close the peaks are.
struct Extent {
    double x_min, x_end, x_max, y_min, y_max;  // FLOP/B; TFLOP/s
};

Extent extent_of(const std::vector<Roof>& roofs) {
    double min_ridge = roofs[0].ridge, max_ridge = 0, min_bw = roofs[0].bw, max_peak = 0;
    for (const Roof& r : roofs) {
        min_ridge = std::min(min_ridge, r.ridge);
        max_ridge = std::max(max_ridge, r.ridge);
        min_bw = std::min(min_bw, r.bw);
        max_peak = std::max(max_peak, r.peak);
    }
    double x_min = decade_below(min_ridge / 5), x_end = max_ridge * 4;
    return {x_min, x_end, x_end * 3, decade_below(min_bw * x_min / 1e12), decade_above(max_peak * 3 / 1e12)};
}

// The data file: the roofs, their ridge points, the leader lines and the labels, an index each.
std::string roofs_dat(const Figure& f, const std::vector<Roof>& roofs, const Extent& e, const std::string& y_unit) {
    auto colour_of = [](const Roof& r) { return std::to_string(r.colour); };
    std::string dat = "# " + f.name + ": " + f.title + "\n"
                      "# colour: 1-5 the chip's kind (cpu gpu asic soc fpga), from 6 one per roof\n"
                      "# index 0, one block per roof: intensity (FLOP/B), attainable (" + y_unit + "), colour\n";
    for (const Roof& r : roofs) {
        dat += "# " + r.label + ": peak " + num(r.peak) + " per s, bandwidth " + num(r.bw) + " B/s\n";
        std::string k = " " + colour_of(r);
        for (double x : {e.x_min, r.ridge, e.x_end})
            dat += num(x) + " " + num(roofline::attainable(r.peak, r.bw, x) / 1e12) + k + "\n";
        dat += "\n";
    }
    dat += "\n# index 1: ridge points: intensity (FLOP/B), peak (" + y_unit + "), colour\n";
    for (const Roof& r : roofs) dat += num(r.ridge) + " " + num(r.peak / 1e12) + " " + colour_of(r) + "\n";
    dat += "\n\n# index 2: leader lines from a roof's end to its label: intensity (FLOP/B), " + y_unit + ", colour\n";
    for (const Roof& r : roofs) {
        std::string k = " " + colour_of(r) + "\n";
        dat += num(e.x_end) + " " + num(r.peak / 1e12) + k + num(e.x_max) + " " + num(r.label_y) + k + "\n";
    }
    dat += "\n# index 3: labels: intensity (FLOP/B), " + y_unit + ", colour, label\n";
    for (const Roof& r : roofs)
        dat += num(e.x_max) + " " + num(r.label_y) + " " + colour_of(r) + " " + gp_quote(r.label) + "\n";
    return dat;
}

// The script's variables: title, axes, the kinds in the legend (by_kind only) and the widest
// label, which sets the right margin.
std::string roofs_gpv(const Figure& f, const std::vector<Roof>& roofs, bool by_kind, const Extent& e,
                      const std::string& y_unit) {
    std::string kinds;
    for (ChipKind k : roofline::chip_kinds)
        for (const Roof& r : roofs)
            if (by_kind && r.chip->kind == k) {
                kinds += std::to_string(int(k) + 1) + " ";
                break;
            }
    size_t label_chars = 0;
    for (const Roof& r : roofs) label_chars = std::max(label_chars, r.label.size());
    std::string gpv = "title = " + gp_quote(f.title) + "\n" + "ylabel = " +
                      gp_quote("attainable performance (" + y_unit + ")") + "\nxmin = " + num(e.x_min) +
                      "\nxmax = " + num(e.x_max) + "\nymin = " + num(e.y_min) + "\nymax = " + num(e.y_max) +
                      "\nkinds = " + gp_quote(kinds) + "\nlabel_chars = " + std::to_string(label_chars) + "\n";
    for (ChipKind k : roofline::chip_kinds)
        gpv += "kind_title_" + std::to_string(int(k) + 1) + " = " + gp_quote(kind_title(k)) + "\n";
    return gpv;
}

// Writes the roofs of one figure. by_kind: one colour per kind with a legend of kinds (the mixed
// figure); otherwise one colour per roof, which the labels name.
void draw_roofs(const Figure& f, std::vector<Roof> roofs, bool by_kind, const std::string& y_unit,
                const std::string& data_dir) {
    Extent e = extent_of(roofs);
    // A label row is about 18 px of the plot's roughly 680: that fraction of the decades shown.
    double decades = std::log10(e.y_max / e.y_min);
    place_labels(roofs, decades * 18 / 680, std::log10(e.y_max) - decades * 0.02);
    for (size_t i = 0; i < roofs.size(); ++i)
        roofs[i].colour = by_kind ? int(roofs[i].chip->kind) + 1 : 6 + int(i % 8);
    write_data(data_dir, f.name, roofs_dat(f, roofs, e, y_unit), roofs_gpv(f, roofs, by_kind, e, y_unit));
}

// Every chip of `chips` that has a bandwidth and a dense peak in `p`, each drawn at that peak.
Figure precision_figure(const std::string& name, const std::string& subject, const std::vector<const Chip*>& chips,
                        bool by_kind, Precision p, const std::string& data_dir) {
    std::string pn(roofline::precision_name(p));
    Figure f{name, "Datasheet rooflines (" + pn + "): " + subject, "", ""};
    std::vector<Roof> roofs;
    std::vector<std::string> no_peak, no_bandwidth;
    for (const Chip* c : chips) {
        auto peak = c->peak_flops(p);
        if (!peak) no_peak.push_back(c->name);
        else if (!c->bandwidth_bytes()) no_bandwidth.push_back(c->name);
        if (!peak || !c->bandwidth_bytes()) continue;
        double bw = *c->bandwidth_bytes(), ridge = roofline::ridge_point(*peak, bw);
        roofs.push_back({c, *peak, bw, ridge, c->name + ", ridge " + bench::si(ridge)});
    }
    std::string omitted;
    if (!no_peak.empty()) omitted += " Left out, no dense " + pn + " peak in the database: " + names(no_peak) + ".";
    if (!no_bandwidth.empty())
        omitted += " Left out, no memory bandwidth in the database: " + names(no_bandwidth) + ".";
    if (roofs.empty()) {
        f.missing = "no chip of this kind has both a memory bandwidth and a dense " + pn + " peak." + omitted;
        return f;
    }
    std::string unit = roofline::rate_unit(p);
    f.caption = "Each chip's roof at its dense " + pn + " peak (" + unit + "; 2:4-sparse figures are not drawn): its "
                "DRAM bandwidth slope up to the ridge point (dot, " + std::string(roofline::is_integer(p) ? "op" : "FLOP") +
                "/B given in the label), then the peak. Some peaks and bandwidths are derived from published "
                "factors (`ridge roofline chips` marks them =, roofline/README.md shows the arithmetic)." + omitted;
    draw_roofs(f, std::move(roofs), by_kind, unit, data_dir);
    return f;
}

// The chip whose ceilings are stacked: the measured GPU when the database has it, else the GPU
// with the most dense precisions and a bandwidth (the newest of those).
const Chip* stacked_chip(const Study& s) {
    if (const Ceilings* g = s.ceilings_of("cuda"))
        if (const Chip* c = roofline::find_chip(s.chips, g->name); c && c->bandwidth_bytes()) return c;
    const Chip* best = nullptr;
    size_t best_n = 0;
    for (const Chip& c : s.chips) {
        if (c.kind != ChipKind::gpu || !c.bandwidth_bytes()) continue;
        size_t n = 0;
        for (Precision p : roofline::precisions) n += c.peak(p) != nullptr;
        if (!best || n > best_n || (n == best_n && c.year > best->year)) best = &c, best_n = n;
    }
    return best;
}

// Every dense ceiling of one chip over its one memory slope, as Nsight Compute's roofline stacks
// the peaks of a GPU.
Figure ceilings_figure(const Study& s, const std::string& data_dir) {
    Figure f{"chips-ceilings", "Datasheet rooflines: every dense ceiling of one chip", "", ""};
    const Chip* c = stacked_chip(s);
    if (!c) {
        f.missing = "no GPU in the database has a memory bandwidth";
        return f;
    }
    f.title = "Datasheet rooflines: every dense ceiling of the " + c->name;
    std::vector<Roof> roofs;
    std::vector<std::string> drawn, absent;
    double bw = *c->bandwidth_bytes();
    for (Precision p : roofline::precisions) {
        std::string pn(roofline::precision_name(p));
        const roofline::Peak* k = c->peak(p);
        if (!k) {
            absent.push_back(pn);
            continue;
        }
        double peak = k->tflops * 1e12, ridge = roofline::ridge_point(peak, bw);
        std::string label = pn + " " + bench::fixed(k->tflops, k->tflops < 100 ? 1 : 0) + " " + roofline::rate_unit(p) +
                            (k->engine.empty() ? "" : " (" + k->engine + ")") + ", ridge " + bench::si(ridge);
        roofs.push_back({c, peak, bw, ridge, label});
        drawn.push_back(pn);
    }
    std::string sparse;
    for (const roofline::Peak& k : c->peaks)
        if (k.sparse) sparse += (sparse.empty() ? "" : ", ") + std::string(roofline::precision_name(k.precision));
    f.caption = "One memory slope (" + bench::fixed(bw / 1e9, 0) + " GB/s) under a ceiling for each precision the "
                "database has a dense peak for (" + names(drawn) + "), each ending at its ridge point. int8 is in "
                "TOP/s on the same axis. The higher ceilings need narrower inputs and the tensor (matrix) units; "
                "the farther right a ridge, the more reuse a kernel needs to reach it.";
    if (!absent.empty()) f.caption += " No dense peak in the database: " + names(absent) + ".";
    if (!sparse.empty()) f.caption += " The 2:4-sparse figures (" + sparse + ") are not drawn.";
    draw_roofs(f, std::move(roofs), false, "TFLOP/s; int8: TOP/s", data_dir);
    return f;
}

}  // namespace

std::vector<Figure> chips_figures(const Study& s, const std::string& data_dir) {
    std::vector<const Chip*> all;
    for (const Chip& c : s.chips) all.push_back(&c);
    Precision p = s.chips_precision;
    std::vector<Figure> out{precision_figure("chips", "every chip in the database", all, true, p, data_dir)};
    for (ChipKind k : roofline::chip_kinds) {
        std::vector<const Chip*> of_kind;
        for (const Chip* c : all)
            if (c->kind == k) of_kind.push_back(c);
        out.push_back(precision_figure("chips-" + std::string(roofline::kind_name(k)), "the " + kind_title(k), of_kind,
                                       false, p, data_dir));
    }
    out.push_back(ceilings_figure(s, data_dir));
    return out;
}

}  // namespace ridge::report
