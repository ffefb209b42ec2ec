// The figures of `ridge compare` (report/compare.h): every environment's roofs with its runs on one
// figure (plots/envroofline.gp), and grouped bars per environment (plots/envbars.gp): latency at
// batch 1, each net's throughput per configuration, and the speed-up over the baseline.
#include <algorithm>
#include <cmath>

#include "report/compare.h"
#include "report/figures/dat.h"
#include "report/figures/roofs.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

// Tableau 10, as the throughput figure uses; an environment keeps its colour in every figure.
const char* const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                               "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
std::string colour(size_t env) { return palette[env % 10]; }

// gnuplot point types: circle, triangle, star.
int point_type(const Group& g) { return g.kind == "train" ? 3 : g.mode == "train" ? 9 : 7; }

// One bar: mean, min, max; NaN where the environment did not measure it.
struct Bar {
    double mean = NAN, min = NAN, max = NAN;
};
Bar bar(const Spread& s) { return s.n ? Bar{s.mean, s.min, s.max} : Bar{}; }

// Writes an envbars figure: rows of (label, a bar per environment of `envs`).
Figure bars_figure(const std::string& name, const std::string& title, const std::string& ylabel,
                   const std::vector<size_t>& envs, const std::vector<std::pair<std::string, std::vector<Bar>>>& rows,
                   const Comparison& c, const std::string& data_dir, bool baseline_line) {
    Figure f{name, title, "", ""};
    std::string dat = "# label";
    for (size_t e : envs) dat += " | " + c.envs[e].name + ": mean min max";
    dat += "\n";
    for (const auto& [label, bars] : rows) {
        dat += gp_quote(label);
        for (const Bar& b : bars) dat += " " + num(b.mean) + " " + num(b.min) + " " + num(b.max);
        dat += "\n";
    }
    std::string gpv = "title = " + gp_quote(title) + "\nylabel = " + gp_quote(ylabel) +
                      "\nnbars = " + std::to_string(envs.size()) + "\nngroups = " + std::to_string(rows.size()) +
                      "\nlogy = 0\nymin = 0\nymax = 1\nhline = " + (baseline_line ? "1" : "0") + "\n";
    for (size_t i = 0; i < envs.size(); ++i) {
        std::string k = std::to_string(i + 1);
        gpv += "bar_color_" + k + " = " + gp_quote(colour(envs[i])) + "\nbar_title_" + k + " = " +
               gp_quote(c.envs[envs[i]].name) + "\n";
    }
    write_data(data_dir, name, dat, gpv);
    return f;
}

// The environments that have at least one value among rows (a bar series with none would be an
// empty plot, which gnuplot warns about), and rows cut down to them.
std::vector<size_t> present(const std::vector<std::pair<std::string, std::vector<Bar>>>& rows, size_t n_envs) {
    std::vector<size_t> out;
    for (size_t e = 0; e < n_envs; ++e)
        for (const auto& row : rows)
            if (!std::isnan(row.second[e].mean)) {
                out.push_back(e);
                break;
            }
    return out;
}
std::vector<std::pair<std::string, std::vector<Bar>>> only(const std::vector<std::pair<std::string, std::vector<Bar>>>& rows,
                                                           const std::vector<size_t>& envs) {
    std::vector<std::pair<std::string, std::vector<Bar>>> out;
    for (const auto& [label, bars] : rows) {
        std::vector<Bar> kept;
        for (size_t e : envs) kept.push_back(bars[e]);
        out.emplace_back(label, kept);
    }
    return out;
}

// The configurations measured for a net, in the groups' order (inference by batch, training
// steps, training runs): (compare key, label).
std::vector<std::pair<std::string, std::string>> configs_of(const Comparison& c, const std::string& net) {
    std::vector<std::pair<std::string, std::string>> out;
    std::vector<std::pair<int, int64_t>> rank;
    for (const Group& g : c.groups)
        if (g.net == net && std::none_of(out.begin(), out.end(), [&](const auto& p) { return p.first == g.compare_key; })) {
            out.emplace_back(g.compare_key, g.label);
            rank.emplace_back(g.kind == "train" ? 2 : g.mode == "train" ? 1 : 0, g.batch);
        }
    std::vector<size_t> idx(out.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });
    std::vector<std::pair<std::string, std::string>> sorted;
    for (size_t i : idx) sorted.push_back(out[i]);
    return sorted;
}

Figure roofline_figure(const Comparison& c, const std::string& data_dir) {
    Figure f{"envroofline", "Every environment on its own roofline", "", ""};
    double x_lo = INFINITY, x_hi = 0, y_lo = INFINITY, y_hi = 0;
    bool any_roof = false;
    for (const Environment& e : c.envs) {
        if (!e.has_roof()) continue;
        any_roof = true;
        double ridge = roofline::ridge_point(e.peak_flops, e.bytes_per_s);
        x_lo = std::min(x_lo, ridge / 10);
        x_hi = std::max(x_hi, ridge * 10);
        y_hi = std::max(y_hi, std::max(e.peak_flops, e.datasheet_peak_flops.value_or(0)));
    }
    std::vector<const Group*> placed;
    for (const Group& g : c.groups)
        if (g.intensity() > 0 && g.gflops > 0 && c.envs[g.env].has_roof()) placed.push_back(&g);
    if (!any_roof || placed.empty()) {
        f.missing = any_roof ? "no run has analytic FLOPs and bytes to place it"
                             : "no environment has a measured roof (bench ledgers carry none; a ridge report folder "
                               "or a ridge train row does)";
        return f;
    }
    for (const Group* g : placed) {
        x_lo = std::min(x_lo, g->intensity());
        x_hi = std::max(x_hi, g->intensity());
        y_lo = std::min(y_lo, g->gflops * 1e9);
        y_hi = std::max(y_hi, g->gflops * 1e9);
    }
    for (const Environment& e : c.envs)
        if (e.has_roof()) y_lo = std::min(y_lo, roofline::attainable(e.peak_flops, e.bytes_per_s, x_lo));
    x_lo = decade_below(x_lo);
    x_hi = decade_above(x_hi);
    FlopUnit u = flop_unit(y_hi);
    std::string dat, gpv;
    int index = 0, nroofs = 0, npoints = 0;
    bool train_step = false, train_run = false;
    for (size_t e = 0; e < c.envs.size(); ++e) {
        const Environment& env = c.envs[e];
        if (!env.has_roof()) continue;
        auto roof = [&](double peak, std::optional<double> bw, int dt, const std::string& what) {
            dat += "# " + env.name + ": " + what + " roof, intensity (FLOP/B), attainable (" + u.name + ")\n" +
                   roof_rows(peak, bw, x_lo, x_hi, u) + "\n\n";
            std::string k = std::to_string(++nroofs);
            gpv += "roof_index_" + k + " = " + std::to_string(index++) + "\nroof_dt_" + k + " = " + std::to_string(dt) +
                   "\nroof_color_" + k + " = " + gp_quote(colour(e)) + "\nroof_title_" + k + " = " +
                   gp_quote(env.name + ": " + what) + "\n";
        };
        roof(env.peak_flops, env.bytes_per_s, 1, "measured");
        if (env.datasheet_peak_flops) roof(*env.datasheet_peak_flops, env.datasheet_bytes_per_s, 2, "datasheet");
        std::string points;
        for (const Group* g : placed) {
            if (g->env != e) continue;
            points += "# " + g->net + " " + g->label + "\n" + num(g->intensity()) + " " + num(g->gflops * 1e9 / u.per) +
                      " " + std::to_string(point_type(*g)) + "\n";
            train_step |= g->kind != "train" && g->mode == "train";
            train_run |= g->kind == "train";
        }
        if (points.empty()) continue;
        dat += "# " + env.name + ": runs, intensity (FLOP/B), achieved (" + u.name + "), point type\n" + points + "\n\n";
        std::string k = std::to_string(++npoints);
        gpv += "points_index_" + k + " = " + std::to_string(index++) + "\npoints_color_" + k + " = " +
               gp_quote(colour(e)) + "\n";
    }
    gpv = "title = " + gp_quote("Measured roofs and runs, one colour per environment") + "\nxmin = " + num(x_lo) +
          "\nxmax = " + num(x_hi) + "\nymin = " + num(decade_below(y_lo / u.per)) +
          "\nymax = " + num(decade_above(y_hi / u.per)) + "\nyunit = " + gp_quote(u.name) +
          "\nnroofs = " + std::to_string(nroofs) + "\nnpoints = " + std::to_string(npoints) +
          "\nhas_train_step = " + (train_step ? "1" : "0") + "\nhas_train_run = " + (train_run ? "1" : "0") + "\n" + gpv;
    f.caption = "Each environment's measured roof (solid; its ridge report's ceilings, else its training runs') and "
                "datasheet roof where known (dashed), in its own colour; each of its runs at the analytic intensity "
                "of a step (FLOPs over minimum bytes) and its achieved FLOP/s (mean of repeats). A run is read against "
                "its own roof only: below the slope it is memory-bound on that machine, under the flat part "
                "compute-bound.";
    write_data(data_dir, f.name, dat, gpv);
    return f;
}

}  // namespace

std::vector<Figure> compare_figures(const Comparison& c, const std::string& data_dir) {
    std::vector<Figure> figs;
    figs.push_back(roofline_figure(c, data_dir));
    const size_t n = c.envs.size();

    // Latency at batch 1: a group per net.
    {
        std::vector<std::pair<std::string, std::vector<Bar>>> rows;
        for (const std::string& net : c.nets) {
            std::vector<Bar> bars(n);
            bool any = false;
            for (size_t e = 0; e < n; ++e)
                for (const Group* g : c.groups_of(e))
                    if (g->net == net && g->kind == "bench" && g->mode == "infer" && g->batch == 1 &&
                        g == c.match(e, g->compare_key) && g->step_ms.n) {
                        bars[e] = bar(g->step_ms);
                        any = true;
                        break;
                    }
            if (any) rows.emplace_back(net, bars);
        }
        if (rows.empty()) {
            figs.push_back({"envbars-latency", "Latency at batch 1", "", "no inference run at batch 1"});
        } else {
            std::vector<size_t> envs = present(rows, n);
            Figure f = bars_figure("envbars-latency", "Inference latency at batch 1 (lower is faster)",
                                   "step time, median (ms)", envs, only(rows, envs), c, data_dir, false);
            f.caption = "The median time of one inference step at batch 1, a bar per environment (mean of its "
                        "repeats; the error bar spans their min and max).";
            figs.push_back(f);
        }
    }

    // Per net: images/s of every configuration.
    for (const std::string& net : c.nets) {
        std::vector<std::pair<std::string, std::vector<Bar>>> rows;
        for (const auto& [key, label] : configs_of(c, net)) {
            std::vector<Bar> bars(n);
            for (size_t e = 0; e < n; ++e)
                if (const Group* g = c.match(e, key)) bars[e] = bar(g->images_per_s);
            rows.emplace_back(label, bars);
        }
        std::vector<size_t> envs = present(rows, n);
        Figure f = bars_figure("envbars-" + net, net + ": throughput per configuration (higher is faster)",
                               "images/s", envs, only(rows, envs), c, data_dir, false);
        f.title = net + ": throughput";
        f.caption = "Images per second of " + net +
                    " in each configuration, a bar per environment (mean of repeats, error bar min to max): "
                    "inference at each batch (batch / median step), the training step of ridge bench or ridge "
                    "report (forward, loss, backward), and ridge train's runs (images of the timed iterations over "
                    "their elapsed time, data loading and the update included).";
        figs.push_back(f);
    }

    // Speed-up over the baseline: a group per (net, configuration) both measured.
    if (n < 2) {
        figs.push_back({"envbars-speedup", "Speed-up over the baseline", "",
                        "one environment only: there is nothing to compare it with"});
        return figs;
    }
    std::vector<std::pair<std::string, std::vector<Bar>>> rows;
    for (const std::string& net : c.nets)
        for (const auto& [key, label] : configs_of(c, net)) {
            const Group* base = c.match(c.baseline, key);
            if (!base) continue;
            std::vector<Bar> bars(n);
            bool any = false;
            for (size_t e = 0; e < n; ++e) {
                const Group* g = e == c.baseline ? nullptr : c.match(e, key);
                if (!g) continue;
                const Spread &x = g->images_per_s, &b = base->images_per_s;
                bars[e] = {x.mean / b.mean, x.min / b.max, x.max / b.min};
                any = true;
            }
            if (any) rows.emplace_back(net + " " + label, bars);
        }
    if (rows.empty()) {
        figs.push_back({"envbars-speedup", "Speed-up over the baseline", "",
                        "no configuration was measured both in the baseline and in another environment"});
        return figs;
    }
    std::vector<size_t> envs = present(rows, n);
    Figure f = bars_figure("envbars-speedup", "Speed-up over " + c.envs[c.baseline].name + " (above 1: faster)",
                           "images/s over the baseline's", envs, only(rows, envs), c, data_dir, true);
    f.title = "Speed-up over the baseline";
    f.caption = "Each environment's images/s over the baseline's (" + c.envs[c.baseline].name +
                ") in the same configuration, from the means of repeats; the error bar runs from its slowest repeat "
                "over the baseline's fastest to its fastest over the baseline's slowest. The dashed line is 1.";
    figs.push_back(f);
    return figs;
}

}  // namespace ridge::report
