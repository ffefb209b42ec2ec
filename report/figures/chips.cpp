// Figure 1: the chip database on datasheet rooflines, all chips and one figure per kind.
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

// fp32 where the datasheet gives it; else the 16-bit (fp16/bf16) matrix peak, marked in the
// label, since a 16-bit roof is the only one such a chip publishes. int8-only chips are left out:
// integer op/s on a FLOP/s axis would compare unlike things.
std::optional<Precision> drawn_precision(const Chip& c) {
    for (Precision p : {Precision::fp32, Precision::fp16})
        if (c.peak_flops(p)) return p;
    return std::nullopt;
}

std::string left_out_reason(const Chip& c) {
    if (!c.bandwidth_bytes()) return "no published memory bandwidth";
    if (!drawn_precision(c)) return "only an int8 peak";
    return {};
}

struct Roof {
    const Chip* chip;
    double peak, bw, ridge;
    std::string label;
    int colour = 0;      // gnuplot linetype, see chips_figure
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

// by_kind: one colour per kind with a legend of kinds (the mixed figure); otherwise one colour
// per chip, which the labels name.
Figure chips_figure(const std::string& name, const std::string& subject, const std::vector<const Chip*>& chips,
                    bool by_kind, const std::string& data_dir) {
    Figure f{name, "Datasheet rooflines: " + subject, "", ""};
    std::vector<Roof> roofs;
    std::vector<std::string> left_out;
    bool any_16bit = false;
    for (const Chip* c : chips) {
        std::string why = left_out_reason(*c);
        if (!why.empty()) {
            left_out.push_back(c->name + " (" + why + ")");
            continue;
        }
        Precision p = *drawn_precision(*c);
        double peak = *c->peak_flops(p), bw = *c->bandwidth_bytes();
        double ridge = roofline::ridge_point(peak, bw);
        any_16bit = any_16bit || p != Precision::fp32;
        std::string label = c->name + (p == Precision::fp32 ? "" : " [16-bit]") + ", ridge " + cli::si(ridge);
        roofs.push_back({c, peak, bw, ridge, label});
    }
    std::string rule = "Peaks are fp32 where the datasheet gives one";
    rule += any_16bit ? "; chips that publish only a 16-bit (fp16/bf16) peak are drawn with it and marked [16-bit]"
                      : "";
    rule += "; chips with only an int8 peak are left out.";
    std::string omitted = left_out.empty() ? "" : " Left out: ";
    for (size_t i = 0; i < left_out.size(); ++i) omitted += (i ? "; " : "") + left_out[i];
    if (!left_out.empty()) omitted += ".";
    if (roofs.empty()) {
        f.missing = "no chip of this kind can be drawn." + omitted;
        return f;
    }
    f.caption = "Each chip's roof: its DRAM bandwidth slope up to the ridge point (dot, FLOP/B given in the label), "
                "then its dense peak. " + rule + omitted;

    double min_ridge = roofs[0].ridge, max_ridge = 0, min_bw = roofs[0].bw, max_peak = 0;
    for (const Roof& r : roofs) {
        min_ridge = std::min(min_ridge, r.ridge);
        max_ridge = std::max(max_ridge, r.ridge);
        min_bw = std::min(min_bw, r.bw);
        max_peak = std::max(max_peak, r.peak);
    }
    // The roofs end at x_end; leader lines run from there to the labels set beyond the right
    // border (x_max), so every label sits in one column however close the peaks are.
    double x_min = decade_below(min_ridge / 5), x_end = max_ridge * 4, x_max = x_end * 3;
    double y_min = decade_below(min_bw * x_min / 1e12), y_max = decade_above(max_peak * 3 / 1e12);
    // A label row is about 18 px of the plot's roughly 680: that fraction of the decades shown.
    double decades = std::log10(y_max / y_min);
    place_labels(roofs, decades * 18 / 680, std::log10(y_max) - decades * 0.02);

    for (size_t i = 0; i < roofs.size(); ++i)
        roofs[i].colour = by_kind ? int(roofs[i].chip->kind) + 1 : 6 + int(i % 8);
    auto colour_of = [](const Roof& r) { return std::to_string(r.colour); };
    std::string dat = "# " + name + ": datasheet rooflines of the chip database\n"
                      "# colour: 1-5 the chip's kind (cpu gpu asic soc fpga), from 6 one per chip\n"
                      "# index 0, one block per chip: intensity (FLOP/B), attainable (TFLOP/s), colour\n";
    for (const Roof& r : roofs) {
        dat += "# " + r.chip->name + ": peak " + num(r.peak) + " FLOP/s, bandwidth " + num(r.bw) + " B/s\n";
        std::string k = " " + colour_of(r);
        for (double x : {x_min, r.ridge, x_end})
            dat += num(x) + " " + num(roofline::attainable(r.peak, r.bw, x) / 1e12) + k + "\n";
        dat += "\n";
    }
    dat += "\n# index 1: ridge points: intensity (FLOP/B), peak (TFLOP/s), colour\n";
    for (const Roof& r : roofs) dat += num(r.ridge) + " " + num(r.peak / 1e12) + " " + colour_of(r) + "\n";
    dat += "\n\n# index 2: leader lines from a roof's end to its label: intensity (FLOP/B), TFLOP/s, colour\n";
    for (const Roof& r : roofs) {
        std::string k = " " + colour_of(r) + "\n";
        dat += num(x_end) + " " + num(r.peak / 1e12) + k + num(x_max) + " " + num(r.label_y) + k + "\n";
    }
    dat += "\n# index 3: labels: intensity (FLOP/B), TFLOP/s, colour, label\n";
    size_t label_chars = 0;
    for (const Roof& r : roofs) {
        dat += num(x_max) + " " + num(r.label_y) + " " + colour_of(r) + " " + gp_quote(r.label) + "\n";
        label_chars = std::max(label_chars, r.label.size());
    }

    std::string kinds;
    for (ChipKind k : roofline::chip_kinds)
        for (const Roof& r : roofs)
            if (by_kind && r.chip->kind == k) {
                kinds += std::to_string(int(k) + 1) + " ";
                break;
            }
    std::string gpv = "title = " + gp_quote(f.title) + "\n" + "xmin = " + num(x_min) + "\nxmax = " + num(x_max) +
                      "\nymin = " + num(y_min) + "\nymax = " + num(y_max) + "\nkinds = " + gp_quote(kinds) +
                      "\nlabel_chars = " + std::to_string(label_chars) + "\n";
    for (ChipKind k : roofline::chip_kinds)
        gpv += "kind_title_" + std::to_string(int(k) + 1) + " = " + gp_quote(kind_title(k)) + "\n";
    write_data(data_dir, name, dat, gpv);
    return f;
}

}  // namespace

std::vector<Figure> chips_figures(const Study& s, const std::string& data_dir) {
    std::vector<const Chip*> all;
    for (const Chip& c : s.chips) all.push_back(&c);
    std::vector<Figure> out{chips_figure("chips", "every chip in the database", all, true, data_dir)};
    for (ChipKind k : roofline::chip_kinds) {
        std::vector<const Chip*> of_kind;
        for (const Chip* c : all)
            if (c->kind == k) of_kind.push_back(c);
        std::string kind(roofline::kind_name(k));
        Figure f = chips_figure("chips-" + kind, "the " + kind_title(k), of_kind, false, data_dir);
        // A kind with no drawable chip (the FPGAs publish no bandwidth) is named in the first
        // figure's caption; a figure of its own would say nothing more.
        if (f.missing.empty()) out.push_back(std::move(f));
    }
    return out;
}

}  // namespace ridge::report
