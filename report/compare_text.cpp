// report.md and the CSV files of `ridge compare` (report/compare.h).
#include <algorithm>
#include <cmath>

#include "bench/format.h"
#include "bench/ledger.h"
#include "report/compare.h"
#include "report/markdown.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

using bench::fixed;

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    return markdown_table(head, rows, false);
}

// Markdown table cells must not hold '|' or line breaks.
std::string cell(std::string s) {
    for (char& ch : s)
        if (ch == '|' || ch == '\n' || ch == '\r') ch = ' ';
    return s;
}

// Three significant digits at least, whatever the scale.
std::string fig(double v) {
    if (!std::isfinite(v)) return "—";
    double a = std::fabs(v);
    return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

std::string spread(const Spread& s) {
    if (s.n == 0) return "—";
    if (s.n == 1) return fig(s.mean);
    return cat(fig(s.mean), " (", fig(s.min), "–", fig(s.max), ")", s.noisy() ? " ⚠" : "");
}

double speedup(const Comparison& c, const Group& g) {
    if (c.envs.size() < 2) return NAN;
    const Group* base = c.match(c.baseline, g.compare_key);
    return base ? g.images_per_s.mean / base->images_per_s.mean : NAN;
}

std::string bound_text(const RoofPlace& p) {
    if (!p.known) return "—";
    return cat(p.memory_bound ? "memory" : "compute", ", ", fixed(100 * p.fraction, 0), " % of roof");
}

std::string gb(double v) { return fixed(v / 1e9, 1); }

// The rows of the environments table: (field, value per environment).
std::vector<std::pair<std::string, std::vector<std::string>>> env_table_rows(const Comparison& c) {
    std::vector<std::pair<std::string, std::vector<std::string>>> rows;
    auto add = [&](const std::string& name, auto value) {
        std::vector<std::string> v;
        for (const Environment& e : c.envs) v.push_back(value(e));
        if (std::any_of(v.begin(), v.end(), [](const std::string& s) { return !s.empty(); })) rows.emplace_back(name, v);
    };
    for (const auto& [name, value] : c.envs[0].fields) {
        std::string field = name;
        add(field, [&](const Environment& e) {
            const std::string& v = e.field(field);
            if ((field == "memory_bytes" || field == "gpu_memory_bytes") && !v.empty())
                return gb(std::stod(v)) + " GB";
            return v;
        });
    }
    add("reported clock (MHz)", [](const Environment& e) {
        if (e.clock_max_mhz <= 0) return std::string();
        return e.clock_min_mhz == e.clock_max_mhz ? fixed(e.clock_max_mhz, 0)
                                                  : fixed(e.clock_min_mhz, 0) + "–" + fixed(e.clock_max_mhz, 0);
    });
    add("measured peak (GFLOP/s)", [](const Environment& e) { return e.peak_flops > 0 ? fig(e.peak_flops / 1e9) : ""; });
    add("measured bandwidth (GB/s)", [](const Environment& e) { return e.bytes_per_s > 0 ? fig(e.bytes_per_s / 1e9) : ""; });
    add("ridge point (FLOP/B)", [](const Environment& e) {
        return e.has_roof() ? fig(roofline::ridge_point(e.peak_flops, e.bytes_per_s)) : "";
    });
    add("datasheet peak (GFLOP/s)", [](const Environment& e) {
        return e.datasheet_peak_flops ? fig(*e.datasheet_peak_flops / 1e9) : "";
    });
    add("datasheet bandwidth (GB/s)", [](const Environment& e) {
        return e.datasheet_bytes_per_s ? fig(*e.datasheet_bytes_per_s / 1e9) : "";
    });
    add("rows", [](const Environment& e) { return std::to_string(e.rows); });
    add("measured (UTC)", [](const Environment& e) {
        return e.first_date == e.last_date ? e.first_date : e.first_date + " to " + e.last_date;
    });
    add("read from", [](const Environment& e) {
        std::string s;
        for (const std::string& f : e.files) s += (s.empty() ? "" : ", ") + ("`" + f + "`");
        return s;
    });
    return rows;
}

// Fields that are facts of the measurement, not of the environment: they differ anyway.
bool always_differs(const std::string& field) {
    return field == "rows" || field == "measured (UTC)" || field == "read from" || field == "reported clock (MHz)";
}

}  // namespace

std::string environments_csv(const Comparison& c) {
    std::string out = "environment,field,value\n";
    for (const auto& [field, values] : env_table_rows(c))
        for (size_t e = 0; e < c.envs.size(); ++e)
            out += cat(bench::csv_cell(c.envs[e].name), ",", bench::csv_cell(field), ",", bench::csv_cell(values[e]), "\n");
    return out;
}

std::string groups_csv(const Comparison& c) {
    std::string out =
        "environment,kind,net,mode,batch,height,width,precision,backend,configuration,repeats,images_per_s_mean,"
        "images_per_s_min,images_per_s_max,step_ms_mean,step_ms_min,step_ms_max,gflops,flops_per_step,bytes_per_step,"
        "intensity,roof_gflops,bound,roof_fraction,speedup\n";
    auto n = [](double v) { return std::isfinite(v) ? bench::ledger_num(v) : std::string(); };
    for (const Group& g : c.groups) {
        RoofPlace p = roof_place(c, g);
        const Spread &i = g.images_per_s, &t = g.step_ms;
        out += cat(bench::csv_cell(c.envs[g.env].name), ",", g.kind, ",", g.net, ",", g.mode, ",", g.batch, ",", g.height,
                   ",", g.width, ",", g.precision, ",", g.backend, ",", bench::csv_cell(g.label), ",", i.n, ",",
                   n(i.mean), ",", n(i.min), ",", n(i.max), ",", t.n ? n(t.mean) : "", ",", t.n ? n(t.min) : "", ",",
                   t.n ? n(t.max) : "", ",", n(g.gflops), ",", g.flops_per_step, ",", g.bytes_per_step, ",",
                   g.intensity() > 0 ? n(g.intensity()) : "", ",", p.known ? n(p.roof_flops / 1e9) : "", ",",
                   p.known ? (p.memory_bound ? "memory" : "compute") : "", ",", p.known ? n(p.fraction) : "", ",",
                   n(speedup(c, g)), "\n");
    }
    return out;
}

std::string rows_csv(const Comparison& c) {
    std::string out = "environment," + bench::ledger_header() + "\n";
    for (const Group& g : c.groups)
        for (const SourcedRow* r : g.rows) {
            out += bench::csv_cell(c.envs[g.env].name);
            for (const std::string& v : r->rec.cells) out += "," + bench::csv_cell(v);
            out += "\n";
        }
    return out;
}

std::string compare_markdown(const Comparison& c, const std::vector<Figure>& figures, const std::string& command) {
    const size_t n = c.envs.size();
    std::string out = cat("# Comparing ", n, n == 1 ? " environment" : " environments", "\n\nWritten by `", command,
                          "` from ", c.inputs.size(), c.inputs.size() == 1 ? " input" : " inputs", ": ");
    for (size_t i = 0; i < c.inputs.size(); ++i) out += cat(i ? ", " : "", "`", c.inputs[i], "`");
    out += cat(". ", c.rows_compared(), " rows, ", c.groups.size(), " configurations. Baseline: `",
               c.envs[c.baseline].name, "`.\n\n");
    out += "An environment is a set of rows that agree on the machine and its settings (host, device, CPU or GPU "
           "and their software, threads, library settings, ridge's revision); rows that differ in any are kept "
           "apart. Repeats (rows of one environment with the same configuration) are shown as the mean with the "
           "min–max in brackets (⚠: the spread exceeds 10 % of the mean); different configurations are never "
           "averaged.\n\n";
    for (const std::string& f : c.flags) out += "- **Note:** " + f + "\n";
    if (!c.flags.empty()) out += "\n";

    // The answer first: per net and configuration, who is fastest and which roof binds it.
    out += "## Which environment is faster for which net, and why\n\n";
    {
        std::vector<std::string> head = {"net", "configuration"};
        for (const Environment& e : c.envs) head.push_back(cell(e.name) + " images/s");
        head.insert(head.end(), {"fastest", "what binds the fastest (on its own roof)"});
        std::vector<std::vector<std::string>> rows;
        for (const std::string& net : c.nets) {
            std::vector<std::string> keys;
            for (const Group& g : c.groups)
                if (g.net == net && std::find(keys.begin(), keys.end(), g.compare_key) == keys.end())
                    keys.push_back(g.compare_key);
            for (const std::string& key : keys) {
                std::vector<std::string> row = {net, ""};
                const Group* best = nullptr;
                for (size_t e = 0; e < n; ++e) {
                    const Group* g = c.match(e, key);
                    if (g && row[1].empty()) row[1] = g->label;
                    std::string v = g ? spread(g->images_per_s) : "—";
                    if (g && e != c.baseline && n > 1) {
                        double s = speedup(c, *g);
                        if (std::isfinite(s)) v += cat(" (", fixed(s, 2), "x)");
                    }
                    row.push_back(v);
                    if (g && (!best || g->images_per_s.mean > best->images_per_s.mean)) best = g;
                }
                row.push_back(best ? cell(c.envs[best->env].name) : "—");
                row.push_back(best ? bound_text(roof_place(c, *best)) : "—");
                rows.push_back(row);
            }
        }
        out += cat("Images/s per environment (mean of repeats); in brackets the speed-up over the baseline `",
                   c.envs[c.baseline].name,
                   "`. The bound is the fastest run's: memory-bound when its intensity (analytic FLOPs over minimum "
                   "bytes) is below its machine's ridge point, and how much of that machine's measured roof it "
                   "reached.\n\n");
        out += table(head, rows);
    }

    out += "## Environments\n\nEvery field of each environment; **bold**: the values differ between environments.\n\n";
    {
        std::vector<std::string> head = {"field"};
        for (const Environment& e : c.envs) head.push_back(cell(e.name));
        std::vector<std::vector<std::string>> rows;
        for (const auto& [field, values] : env_table_rows(c)) {
            bool differs = n > 1 && !always_differs(field) &&
                           std::any_of(values.begin(), values.end(), [&](const std::string& v) { return v != values[0]; });
            std::vector<std::string> row = {differs ? "**" + field + "**" : field};
            for (const std::string& v : values) row.push_back(cell(differs && !v.empty() ? "**" + v + "**" : v.empty() ? "—" : v));
            rows.push_back(row);
        }
        out += table(head, rows);
    }

    out += "## Every configuration\n\n";
    {
        std::vector<std::vector<std::string>> rows;
        for (const Group& g : c.groups) {
            double s = speedup(c, g);
            rows.push_back({cell(c.envs[g.env].name), g.net, g.label, std::to_string(g.images_per_s.n),
                            spread(g.images_per_s), spread(g.step_ms), fig(g.gflops),
                            g.intensity() > 0 ? fig(g.intensity()) : "—", bound_text(roof_place(c, g)),
                            g.env == c.baseline || !std::isfinite(s) ? "—" : fixed(s, 2) + "x"});
        }
        out += "Step time is the median of one step's times (a training run's median step, without data waits). "
               "GFLOP/s: the analytic FLOPs of a step over its time (a training run: over its elapsed time).\n\n";
        out += table({"environment", "net", "configuration", "repeats", "images/s", "step (ms)", "GFLOP/s",
                      "intensity (FLOP/B)", "bound on its own roof", "speed-up"},
                     rows);
    }

    out += "## Figures\n\n";
    for (const Figure& f : figures) {
        out += "### " + f.title + "\n\n";
        if (!f.missing.empty()) {
            out += "Left out: " + f.missing + ".\n\n";
            continue;
        }
        out += cat("![", f.title, "](figures/", f.name, ".png)\n\n", f.caption, " Data: `data/", f.name, ".dat`.\n\n");
    }
    if (!c.notes.empty()) {
        out += "## Notes\n\n";
        for (const std::string& note : c.notes) out += "- " + note + "\n";
        out += "\n";
    }
    out += "## Files\n\n`environments.csv` (every field of each environment), `runs.csv` (each environment's "
           "configurations: repeats, mean, min and max, roof and speed-up), `rows.csv` (every row read, in the ledger "
           "schema, its environment first), `data/` and `figures/` (`make -f Makefile.gnuplot DIR=.` redraws).\n";
    return out;
}

}  // namespace ridge::report
