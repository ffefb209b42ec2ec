// Figure 7: measured points on this machine's roofs: whole runs per device, and the layers of
// the layer net.
#include <algorithm>
#include <cmath>
#include <map>

#include "report/figures/figures.h"
#include "report/figures/roofs.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

struct Point {
    double intensity = 0, flops = 0;  // FLOP/B, FLOP/s
    int colour = 0;                   // gnuplot linetype
};

// Points of one mark type: a gnuplot index block of their own.
struct Series {
    std::string title;
    int pt = 7;         // point type
    int legend_lt = 0;  // the legend sample's colour (20: black, where colour means something else)
    std::vector<Point> pts;
};

// The device's roofs with the points of every non-empty series over them; colour_titles name the
// colours of a second legend (the nets), if any.
void write_points_figure(const Figure& f, const Ceilings& c, const std::vector<Series>& series,
                         const std::vector<std::string>& colour_titles, const std::string& data_dir) {
    double ridge = roofline::ridge_point(c.peak_flops, c.bytes_per_s);
    double lo = ridge, hi = ridge, low_flops = c.peak_flops;
    double peak = std::max(c.peak_flops, c.datasheet_peak_flops.value_or(0));
    for (const Series& s : series)
        for (const Point& p : s.pts) {
            lo = std::min(lo, p.intensity);
            hi = std::max(hi, p.intensity);
            low_flops = std::min(low_flops, p.flops);
            peak = std::max(peak, p.flops);
        }
    double x_min = decade_below(lo / 2), x_max = decade_above(hi * 2);
    FlopUnit u = flop_unit(peak);
    double floor = std::min(low_flops, roofline::attainable(c.peak_flops, c.bytes_per_s, x_min));
    if (c.datasheet_bytes_per_s)
        floor = std::min(floor, roofline::attainable(*c.datasheet_peak_flops, *c.datasheet_bytes_per_s, x_min));
    double y_min = decade_below(floor / u.per / 1.5), y_max = decade_above(peak / u.per * 1.5);

    DeviceRoofs roofs = device_roofs(c, x_min, x_max, u);
    std::string dat = "# " + f.name + ": " + f.title + "\n" + roofs.blocks;
    std::string gpv = "title = " + gp_quote(f.title + ": " + c.name) + "\n" + roofs.gpv + "first_series = " +
                      std::to_string(roofs.n_blocks) + "\nxmin = " + num(x_min) + "\nxmax = " + num(x_max) +
                      "\nymin = " + num(y_min) + "\nymax = " + num(y_max) + "\n";
    int n = 0;
    for (const Series& s : series) {
        if (s.pts.empty()) continue;
        ++n;
        dat += "# " + s.title + ": intensity (FLOP/B), achieved (" + u.name + "), colour\n";
        for (const Point& p : s.pts)
            dat += num(p.intensity) + " " + num(p.flops / u.per) + " " + std::to_string(p.colour) + "\n";
        dat += "\n\n";
        std::string i = std::to_string(n);
        gpv += "series_title_" + i + " = " + gp_quote(s.title) + "\nseries_pt_" + i + " = " + std::to_string(s.pt) +
               "\nseries_lt_" + i + " = " + std::to_string(s.legend_lt) + "\n";
    }
    gpv += "nseries = " + std::to_string(n) + "\nncolours = " + std::to_string(colour_titles.size()) + "\n";
    for (size_t j = 0; j < colour_titles.size(); ++j)
        gpv += "colour_title_" + std::to_string(j + 1) + " = " + gp_quote(colour_titles[j]) + "\n";
    write_data(data_dir, f.name, dat, gpv);
}

Figure runs_figure(const Study& s, const std::string& device, const std::string& data_dir) {
    Figure f{"measured-" + device, "Measured runs on the " + device_title(device) + " roofline",
             "Every measured run: its analytic FLOPs over its median time, against its intensity (analytic FLOPs "
             "over minimum traffic: the forward pass for inference, forward and backward for a training step). "
             "Colour is the net, the mark the batch; filled marks infer, open marks train. The gap below the roof "
             "is what the run leaves unused. A point above the sloped part ran partly from cache: the minimum "
             "traffic counts every tensor as coming from DRAM once, and a small working set stays in L2/L3. "
             "Stars are this host's `ridge train` runs from the training ledger: whole runs with data loading and "
             "the SGD update, coloured by net where the net is studied, black otherwise.",
             ""};
    const Ceilings* c = s.ceilings_of(device);
    // Filled marks for inference batches, open ones for training: batch and mode read apart.
    static const int filled[] = {7, 5, 9, 11, 13, 15}, open[] = {6, 4, 8, 10, 12, 14};
    std::map<std::pair<Mode, int64_t>, Series> by_config;
    for (const Run& r : s.runs) {
        if (r.device != device || r.step.median <= 0 || r.bytes() <= 0) continue;
        auto at = std::find(s.nets.begin(), s.nets.end(), r.net);
        int colour = int(at - s.nets.begin()) % 10 + 1;
        Series& series = by_config[{r.mode, r.batch}];
        series.pts.push_back({double(r.flops()) / double(r.bytes()), r.achieved_flops(), colour});
    }
    Series trained{"ridge train runs (whole runs)", 3, 20, {}};
    for (const TrainRun& t : s.train_runs) {
        if (t.device != device || t.host != s.host || t.achieved_flops <= 0 || t.intensity() <= 0) continue;
        auto at = std::find(s.nets.begin(), s.nets.end(), t.net);
        int colour = at == s.nets.end() ? 20 : int(at - s.nets.begin()) % 10 + 1;
        trained.pts.push_back({t.intensity(), t.achieved_flops, colour});
    }
    if (by_config.empty() && trained.pts.empty()) {
        f.missing = device_missing(s, device, "no " + device + " runs were measured");
        return f;
    }
    if (!c) {
        f.missing = "no " + device + " ceilings were measured to draw the runs against";
        return f;
    }
    f.caption += datasheet_note(*c);
    std::vector<Series> series;
    int n_infer = 0, n_train = 0;
    for (auto& [config, sr] : by_config) {
        bool train = config.first == Mode::train;
        sr.title = std::string(train ? "train" : "infer") + ", batch " + std::to_string(config.second);
        sr.pt = train ? open[n_train++ % 6] : filled[n_infer++ % 6];
        sr.legend_lt = 20;
        series.push_back(std::move(sr));
    }
    series.push_back(std::move(trained));
    write_points_figure(f, *c, series, s.nets, data_dir);
    return f;
}

Figure layers_figure(const Study& s, const std::string& data_dir) {
    Figure f{"measured-layers", "Layers on the roofline", "", ""};
    const Run* r = s.layer_run();
    if (!r) {
        f.missing = "no layer times were measured";
        return f;
    }
    const Ceilings* c = s.ceilings_of(r->device);
    if (!c) {
        f.missing = "no " + r->device + " ceilings were measured to draw the layers against";
        return f;
    }
    f.title = "Layers of " + r->net + " (" + (r->mode == Mode::train ? "training step" : "inference") + ", batch " +
              std::to_string(r->batch) + ") on the " + device_title(r->device) + " roofline";
    std::vector<Series> series{{"forward", 7, 1, {}}, {"dgrad (input gradient)", 5, 2, {}},
                               {"wgrad (weight gradient)", 9, 4, {}}};
    int skipped = 0;
    auto add = [&](Series& sr, int64_t flops, double bytes, const Stats& t) {
        if (flops <= 0 || bytes <= 0 || t.median <= 0) {
            skipped += flops > 0;
            return;
        }
        sr.pts.push_back({double(flops) / bytes, double(flops) / t.median, sr.legend_lt});
    };
    size_t n = std::min(r->layers.size(), r->a.layers.size());
    for (size_t i = 0; i < n; ++i) {
        const Counts& k = r->a.layers[i].c;
        const LayerResult& t = r->layers[i];
        // The analysis gives one backward traffic per layer; where both passes run, each is
        // charged half of it (both read dy; dgrad reads the weights and writes dx, wgrad reads
        // the saved input and writes dw: roughly even for a convolution).
        double bwd = double(k.bwd_traffic_bytes) / (k.dgrad_flops > 0 && k.wgrad_flops > 0 ? 2 : 1);
        add(series[0], k.fwd_flops, double(k.fwd_traffic_bytes), t.fwd);
        add(series[1], k.dgrad_flops, bwd, t.dgrad);
        add(series[2], k.wgrad_flops, bwd, t.wgrad);
    }
    if (series[0].pts.empty() && series[1].pts.empty() && series[2].pts.empty()) {
        f.missing = "no layer of " + r->net + " has both FLOPs and a measured time";
        return f;
    }
    f.caption = "Each layer pass of " + r->net + " timed alone: its analytic FLOPs over its median time, against its "
                "intensity. Forward: forward FLOPs over forward traffic. Backward: the analysis gives one "
                "backward traffic per layer (read dy, the saved tensors and the weights; write the gradients); "
                "where a layer has both dgrad and wgrad each is charged half of it, else the one pass all of it. "
                "Passes without FLOPs (views, most data movement) are not drawn";
    f.caption += skipped ? "; " + std::to_string(skipped) + " with FLOPs but no measured time are left out too." : ".";
    f.caption += datasheet_note(*c);
    write_points_figure(f, *c, series, {}, data_dir);
    return f;
}

}  // namespace

std::vector<Figure> measured_figures(const Study& s, const std::string& data_dir) {
    return {runs_figure(s, "cpu", data_dir), runs_figure(s, "cuda", data_dir), layers_figure(s, data_dir)};
}

}  // namespace ridge::report
