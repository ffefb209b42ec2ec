#include "report/markdown.h"

#include <algorithm>
#include <cmath>

#include "bench/format.h"
#include "report/spearman.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

using bench::fixed;
using bench::si;

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
    return markdown_table(head, rows, true);
}

std::string mode_name(Mode m) { return m == Mode::train ? "train" : "infer"; }
std::string ms(double seconds) { return fixed(seconds * 1e3, seconds < 0.01 ? 3 : seconds < 1 ? 2 : 1); }
std::string gflops(double f) { return fixed(f / 1e9, f < 1e10 ? 2 : 1); }
std::string mb(double bytes) { return fixed(bytes / 1e6, bytes < 1e7 ? 2 : 1); }

std::string heading(const Study& s, const ReportInfo& info) {
    std::string out = cat("# What these nets cost on ", s.host, "\n\n");
    out += cat("Written by `", info.command, "` (", info.scope, " study, ", fixed(info.seconds / 60, 1), " min) on ",
               s.env.date, ", ridge ", s.env.git, ".\n\n");
    out += cat("- CPU: ", s.env.cpu, ", ", s.env.cores, " cores, ", s.env.threads, " threads; ", s.env.compiler,
               s.env.onednn.empty() ? "" : ", oneDNN " + s.env.onednn, "\n");
    const Ceilings* gpu = s.ceilings_of("cuda");
    if (gpu && s.env.gpu)
        out += cat("- GPU: ", gpu->name, ", ", s.env.gpu_sms, " SMs, ", fixed(double(s.env.gpu_mem_bytes) / 1e9, 1),
                   " GB; driver ", s.env.driver, ", CUDA ", s.env.cuda_runtime, ", cuDNN ", s.env.cudnn, ", cuBLAS ",
                   s.env.cublas, "; fp32\n");
    else
        out += "- GPU: none measured\n";
    std::string nets;
    for (const std::string& n : s.nets) nets += (nets.empty() ? "" : ", ") + n;
    std::string batches;
    for (int64_t b : s.batches) batches += (batches.empty() ? "" : ", ") + std::to_string(b);
    out += cat("- Nets: ", nets, "; inference at batch ", batches,
               s.train_batch ? cat("; a training step (SGD) at batch ", s.train_batch) : std::string(),
               s.layer_net.empty() ? "" : "; layer by layer: " + s.layer_net, "\n");
    out += "- Counts are ridge's analytic model (fp32, each net at its own resolution); times are medians of "
           "repeats after warm-up. FLOPs count a multiply-add as two.\n\n";
    return out;
}

std::string counts_table(const Study& s) {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& n : s.nets) {
        const NetCounts* one = s.counts_of(n, 1);
        const NetCounts* big = s.counts_of(n, s.large_batch);
        if (!one || !big) continue;
        const Totals& t = one->a.totals;
        rows.push_back({n, fixed(double(t.params) / 1e6, 2), gflops(double(t.fwd_flops)),
                        gflops(double(t.fwd_flops + t.bwd_flops())), mb(double(t.activation_bytes)),
                        mb(double(big->a.totals.train_memory_bytes) / double(s.large_batch)),
                        fixed(t.fwd_intensity(), 1), fixed(big->a.totals.fwd_intensity(), 1)});
    }
    return cat("## The zoo's counts\n\nAnalytic, per image (batch 1) unless said otherwise. Training memory is "
               "weights, gradients, SGD momentum and saved activations at batch ",
               s.large_batch, ", divided by the batch.\n\n",
               table({"net", "params (M)", "forward GFLOPs", "training GFLOPs", "activations (MB)",
                      "training memory per image (MB)", "intensity b1 (FLOP/B)",
                      cat("intensity b", s.large_batch, " (FLOP/B)")},
                     rows));
}

std::string ceilings_table(const Study& s) {
    std::vector<std::vector<std::string>> rows;
    auto opt = [](const std::optional<double>& v, double scale) { return v ? fixed(*v / scale, 1) : std::string("—"); };
    std::string notes;
    for (const Ceilings& c : s.ceilings) {
        std::string sheet = opt(c.datasheet_peak_flops, 1e9);
        if (c.datasheet_peak_flops && c.datasheet_lower_bound) sheet = "≥ " + sheet;
        rows.push_back({c.device, c.name, c.isa.empty() ? std::string("—") : c.isa, fixed(c.peak_flops / 1e9, 1),
                        fixed(c.bytes_per_s / 1e9, 1), fixed(roofline::ridge_point(c.peak_flops, c.bytes_per_s), 2),
                        c.measured_clock_ghz ? fixed(*c.measured_clock_ghz, 2) : std::string("—"), sheet,
                        opt(c.datasheet_bytes_per_s, 1e9)});
        if (!c.datasheet_basis.empty())
            notes += cat("- ", c.device, ": the datasheet GFLOP/s is at ", c.datasheet_basis, ".\n");
    }
    if (rows.empty()) return "";
    return "## This machine's ceilings\n\nMeasured by ridge's probes (`ridge roofline measure`): the fp32 FMA peak "
           "with the widest vector unit the CPU has (the ISA column) and the STREAM triad bandwidth, with the clock "
           "the probes measured; the datasheet figures beside them where known (≥: a lower bound).\n\n" +
           table({"device", "chip", "ISA", "measured GFLOP/s", "measured GB/s", "ridge point (FLOP/B)",
                  "measured clock (GHz)", "datasheet GFLOP/s", "datasheet GB/s"},
                 rows) +
           (notes.empty() ? "" : notes + "\n");
}

std::string latency_table(const Study& s) {
    std::vector<std::vector<std::string>> rows;
    for (const Run& r : s.runs) {
        const Ceilings* c = s.ceilings_of(r.device);
        double intensity = double(r.flops()) / double(r.bytes());
        std::string roof = "—";
        if (c)
            roof = fixed(100 * roofline::fraction_of_roof(r.achieved_flops(), c->peak_flops, c->bytes_per_s, intensity), 0) + " %";
        // A wide spread means the machine was busy; the mark keeps such a median from being read alone.
        rows.push_back({r.net, r.device, mode_name(r.mode), std::to_string(r.batch),
                        ms(r.step.median) + (r.step.noisy() ? " ⚠" : ""), ms(r.step.min),
                        ms(r.step.iqr()), fixed(r.images_per_s(), 1), gflops(r.achieved_flops()), roof});
    }
    if (rows.empty()) return "";
    return "## Measured time\n\nA step is the forward pass (infer) or forward, loss and backward (train); the "
           "SGD update is not in it. GFLOP/s is the analytic FLOPs of the step over its median time; "
           "\"of roof\" divides it by the measured roofline at the step's intensity. ⚠: the interquartile range "
           "exceeds a tenth of the median (the machine was busy; more --repeat helps).\n\n" +
           table({"net", "device", "mode", "batch", "median (ms)", "min (ms)", "IQR (ms)", "images/s", "GFLOP/s",
                  "of roof"},
                 rows);
}

std::string fwdbwd_table(const Study& s) {
    std::vector<std::vector<std::string>> rows;
    for (const Run& r : s.runs) {
        if (r.mode != Mode::train) continue;
        const Totals& t = r.a.totals;
        rows.push_back({r.net, r.device, std::to_string(r.batch), ms(r.fwd.median), ms(r.bwd.median),
                        fixed(r.bwd.median / r.fwd.median, 2), fixed(double(t.bwd_flops()) / double(t.fwd_flops), 2)});
    }
    if (rows.empty()) return "";
    return "## Forward against backward\n\nThe measured ratio of backward to forward time beside the analytic ratio "
           "of their FLOPs (data and weight gradients over forward).\n\n" +
           table({"net", "device", "batch", "forward (ms)", "backward (ms)", "time ratio", "FLOPs ratio"}, rows);
}

std::string train_table(const Study& s) {
    if (s.train_log.empty()) return "";
    std::string out = cat("## Training runs (`ridge train`)\n\nThe rows of `", s.train_log,
                          "`: whole fixed-iteration runs with data loading and SGD (momentum, weight decay), on "
                          "whichever host wrote them. images/s is the measured iterations' images over their elapsed "
                          "time; \"data wait\" the share of it the compute waited for the loader; GFLOP/s the "
                          "analytic training FLOPs over it; \"of roof\" against the roofline that run measured; the "
                          "loss is the run's first step and its last.\n\n");
    if (s.train_runs.empty()) return out + "None found.\n\n";
    std::vector<std::vector<std::string>> rows;
    for (const TrainRun& t : s.train_runs)
        rows.push_back({t.label, t.host, t.device, t.net, std::to_string(t.batch), cat(t.height, "x", t.width),
                        t.data == "synthetic" ? "synthetic" : "images", std::to_string(t.workers),
                        fixed(t.images_per_s, 1), ms(t.step_median_s), fixed(100 * t.data_wait_share, 1) + " %",
                        gflops(t.achieved_flops), fixed(100 * t.roof_fraction, 0) + " %",
                        fixed(t.first_loss, 2) + " → " + fixed(t.last_loss, 2),
                        t.val_top1 < 0 ? "—" : fixed(100 * t.val_top1, 1) + " %"});
    return out + table({"label", "host", "device", "net", "batch", "input", "data", "workers", "images/s",
                        "step (ms)", "data wait", "GFLOP/s", "of roof", "loss", "val top-1"},
                       rows);
}

struct Roof {
    std::string name;
    double peak, bw;
};

// The measured devices, then the newest chip of each kind in the database that has both an fp32
// peak and a bandwidth, so the table spans the kinds without a hand-picked list.
std::vector<Roof> bound_roofs(const Study& s) {
    std::vector<Roof> roofs;
    for (const Ceilings& c : s.ceilings) roofs.push_back({c.name + ", measured", c.peak_flops, c.bytes_per_s});
    for (roofline::ChipKind k : roofline::chip_kinds) {
        const roofline::Chip* best = nullptr;
        for (const roofline::Chip& c : s.chips)
            if (c.kind == k && c.peak_flops(roofline::Precision::fp32) && c.bandwidth_bytes() && (!best || c.year > best->year))
                best = &c;
        if (best) roofs.push_back({best->name, *best->peak_flops(roofline::Precision::fp32), *best->bandwidth_bytes()});
    }
    return roofs;
}

std::string bound_table(const Study& s) {
    std::vector<Roof> roofs = bound_roofs(s);
    std::vector<std::string> head = {"net", "intensity b1 / b" + std::to_string(s.large_batch)};
    for (const Roof& r : roofs) head.push_back(cat(r.name, " (ridge ", fixed(roofline::ridge_point(r.peak, r.bw), 1), ")"));
    std::vector<std::vector<std::string>> rows;
    for (const std::string& n : s.nets) {
        const NetCounts* one = s.counts_of(n, 1);
        const NetCounts* big = s.counts_of(n, s.large_batch);
        if (!one || !big) continue;
        double i1 = one->a.totals.fwd_intensity(), ib = big->a.totals.fwd_intensity();
        std::vector<std::string> row = {n, fixed(i1, 1) + " / " + fixed(ib, 1)};
        for (const Roof& r : roofs) {
            auto b = [&](double i) { return roofline::bound_at(r.peak, r.bw, i) == roofline::Bound::memory ? "memory" : "compute"; };
            row.push_back(std::string(b(i1)) + " / " + b(ib));
        }
        rows.push_back(row);
    }
    return cat("## Memory- or compute-bound\n\nEach net's forward pass as a whole (its FLOPs over its minimum "
               "traffic, fp32) against each roofline's ridge point, at batch 1 / batch ",
               s.large_batch,
               ". Whole-net intensity hides layers on the other side of the ridge: `ridge roofline place NET "
               "--chip C` lists every layer.\n\n",
               table(head, rows));
}

std::string rank_table(const Study& s) {
    RankMatrix m = spearman_matrix(s);
    if (m.nets.size() < 3) return "";
    std::vector<std::string> head = {""};
    head.insert(head.end(), m.labels.begin(), m.labels.end());
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < m.labels.size(); ++i) {
        std::vector<std::string> row = {m.labels[i]};
        for (size_t j = 0; j < m.labels.size(); ++j) row.push_back(std::isnan(m.rho[i][j]) ? "n/a" : fixed(m.rho[i][j], 2));
        rows.push_back(row);
    }
    return cat("## Rank correlations\n\nSpearman's rho over the ", m.nets.size(),
               " nets that have every quantity: does a net that is cheaper by FLOPs, params or bytes also run "
               "faster? 1: the same order; 0: unrelated; -1: reversed.\n\n",
               table(head, rows));
}

std::string phase_name(const profile::Row& r) {
    return r.with_wgrad ? "dgrad+wgrad" : std::string(step_phase_name(r.phase));
}

// Where counts were read: per device, the totals by layer type and the rows whose counted FLOPs
// differ from the model's by more than 5 %, largest difference first, each with its reasons.
std::string counts_section(const Study& s) {
    if (s.profiles.empty()) return "";
    constexpr size_t shown = 25;
    std::string out =
        "## Counted FLOPs beside the model\n\nThe layer net run layer by layer (one executor step per layer and "
        "phase) with a hardware counter range around every step, as `ridge profile` does. \"expected\" is the "
        "model's count less the taps on zero padding where a direct convolution ran; the reasons are facts read "
        "from what ran (implementation, extra steps, padded layouts) and from the counts themselves.\n\n";
    for (const profile::Profile& p : s.profiles) {
        out += cat("### ", p.model, " ", p.mode == Mode::train ? "train" : "infer", ", batch ", p.batch, ", ", p.device,
                   " (", p.backend, ")\n\nCounters: ", p.source, ".", p.scope.empty() ? "" : " They count " + p.scope + ".",
                   " All rows: `counts-", p.device, ".csv`.\n\n");
        std::vector<std::vector<std::string>> rows;
        auto total_row = [&](const profile::Total& t) {
            int64_t c = t.measured ? t.measured->flops : 0;
            rows.push_back({t.kind, std::to_string(t.rows), si(double(t.analytic_flops)), si(double(t.expected_flops)),
                            si(double(c)), t.analytic_flops ? fixed(profile::ratio(c, t.analytic_flops), 2) : "—",
                            t.expected_flops ? fixed(profile::ratio(c, t.expected_flops), 2) : "—"});
        };
        for (const profile::Total& t : p.by_type) total_row(t);
        total_row(p.total);
        out += table({"type", "rows", "analytic FLOPs", "expected", "counted", "counted / analytic", "counted / expected"},
                     rows);
        std::vector<const profile::Row*> gaps;
        for (const profile::Row& r : p.rows)
            if (r.measured && r.analytic_flops > 0 &&
                std::abs(profile::ratio(r.measured->flops, r.analytic_flops) - 1) > profile::notable_gap)
                gaps.push_back(&r);
        std::stable_sort(gaps.begin(), gaps.end(), [](const profile::Row* a, const profile::Row* b) {
            return std::llabs(a->measured->flops - a->analytic_flops) > std::llabs(b->measured->flops - b->analytic_flops);
        });
        std::vector<std::vector<std::string>> g;
        for (size_t i = 0; i < gaps.size() && i < shown; ++i) {
            const profile::Row& r = *gaps[i];
            std::string why;
            for (const std::string& w : r.why) why += (why.empty() ? "" : "; ") + w;
            g.push_back({r.name, phase_name(r), r.impl, si(double(r.analytic_flops)), si(double(r.measured->flops)),
                         fixed(profile::ratio(r.measured->flops, r.analytic_flops), 2), why});
        }
        if (g.empty()) continue;
        out += cat(gaps.size(), " layer phases differ from the model by more than 5 %",
                   gaps.size() > shown ? cat("; the ", shown, " largest in FLOPs") : std::string(), ":\n\n");
        out += table({"layer", "phase", "implementation", "analytic", "counted", "ratio", "why"}, g);
    }
    return out;
}

std::string figures_section(const std::vector<Figure>& figures) {
    std::string out = "## Figures\n\nEach as PNG (shown) and SVG (linked); the data behind each is in `data/`.\n\n";
    for (const Figure& f : figures) {
        out += cat("### ", f.title, "\n\n");
        if (!f.missing.empty()) {
            out += cat("Left out: ", f.missing, "\n\n");
            continue;
        }
        out += cat(f.caption, "\n\n![", f.title, "](figures/", f.name, ".png)\n\n[SVG](figures/", f.name, ".svg) · [data](data/",
                   f.name, ".dat)\n\n");
    }
    return out;
}

}  // namespace

std::string report_markdown(const Study& s, const std::vector<Figure>& figures, const ReportInfo& info) {
    std::string out = heading(s, info);
    out += counts_table(s);
    out += ceilings_table(s);
    out += latency_table(s);
    out += fwdbwd_table(s);
    out += train_table(s);
    out += bound_table(s);
    out += rank_table(s);
    out += counts_section(s);
    out += figures_section(figures);
    out += cat("## Files\n\n`runs.csv` (every measured step), `layers.csv` (the layer-by-layer run), ",
               s.profiles.empty() ? "" : "`counts-DEVICE.csv` (the counted FLOPs per layer phase), ",
               "`data/` (each figure's numbers), `figures/` (PNG and SVG); `make -f Makefile.gnuplot DIR=<this "
               "folder>` redraws the figures after a script is edited.\n\n");
    if (!s.notes.empty()) {
        out += "## Left out\n\n";
        for (const std::string& n : s.notes) out += "- " + n + "\n";
        out += "\n";
    }
    return out;
}

std::string markdown_table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                           bool numbers_right) {
    std::string s = "|";
    for (const std::string& h : head) s += " " + h + " |";
    s += "\n|";
    for (size_t i = 0; i < head.size(); ++i) s += i == 0 || !numbers_right ? "---|" : "--:|";
    s += "\n";
    for (const auto& r : rows) {
        s += "|";
        for (const std::string& c : r) s += " " + c + " |";
        s += "\n";
    }
    return s + "\n";
}

}  // namespace ridge::report
