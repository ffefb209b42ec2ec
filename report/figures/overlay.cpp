// Figure 3: every net's forward intensity placed on this machine's roofs, CPU and GPU.
#include <algorithm>
#include <cmath>

#include "report/figures/figures.h"
#include "report/figures/roofs.h"
#include "roofline/roofline.h"

namespace ridge::report {

namespace {

struct Placed {
    std::string net;
    int colour = 0;  // the net's position in the study, from 1: its linetype
    int batch_kind = 0;  // 1: batch 1, 2: the large batch
    double intensity = 0, attainable = 0;
    int side = 1;  // label above (+1) or below (-1) the point
};

Figure overlay_figure(const Study& s, const std::string& device, const std::string& data_dir) {
    std::string name = "overlay-" + device, large = std::to_string(s.large_batch);
    Figure f{name, "Nets on this machine's " + device_title(device) + " roofline",
             "Each net's forward intensity (analytic FLOPs per byte of minimum traffic) at batch 1 (circle) and "
             "batch " +
                 large + " (square), placed on the measured roof at min(peak, bandwidth x intensity): the best this "
                 "machine could do at that intensity, not a measurement. Solid: measured roof (probes); dashed: "
                 "datasheet roof (only its peak where no bandwidth is known).",
             ""};
    const Ceilings* c = s.ceilings_of(device);
    if (!c) {
        f.missing = device_missing(s, device, "no " + device + " ceilings were measured");
        return f;
    }
    f.caption += datasheet_note(*c);
    std::vector<Placed> pts;
    for (size_t i = 0; i < s.nets.size(); ++i)
        for (int k : {1, 2}) {
            const NetCounts* n = s.counts_of(s.nets[i], k == 1 ? 1 : s.large_batch);
            if (!n || n->a.totals.fwd_traffic_bytes == 0) continue;
            double x = n->a.totals.fwd_intensity();
            pts.push_back({s.nets[i], int(i % 10) + 1, k, x, roofline::attainable(c->peak_flops, c->bytes_per_s, x)});
        }
    if (pts.empty()) {
        f.missing = "no net has analytic counts";
        return f;
    }
    // Neighbours along the intensity axis take turns above and below the roof, so two nets of
    // nearly equal intensity do not write over each other.
    std::sort(pts.begin(), pts.end(), [](const Placed& a, const Placed& b) { return a.intensity < b.intensity; });
    for (size_t i = 0; i < pts.size(); ++i) pts[i].side = i % 2 ? -1 : 1;

    double peak = std::max(c->peak_flops, c->datasheet_peak_flops.value_or(0));
    double ridge = roofline::ridge_point(c->peak_flops, c->bytes_per_s);
    double lo = std::min(pts.front().intensity, ridge), hi = std::max(pts.back().intensity, ridge);
    double x_min = decade_below(lo / 2), x_max = decade_above(hi * 2);
    double floor = roofline::attainable(c->peak_flops, c->bytes_per_s, x_min);
    if (c->datasheet_bytes_per_s)
        floor = std::min(floor, roofline::attainable(*c->datasheet_peak_flops, *c->datasheet_bytes_per_s, x_min));
    FlopUnit u = flop_unit(peak);
    double y_min = decade_below(floor / u.per);
    // Room above the roof for the labels written upward: about a third of the decades below it.
    double y_max = peak / u.per * std::pow(10.0, 0.35 * std::log10(peak / u.per / y_min));

    DeviceRoofs roofs = device_roofs(*c, x_min, x_max, u);
    std::string dat = "# " + name + ": " + f.title + "\n" + roofs.blocks +
                      "# nets: intensity (FLOP/B), attainable on the measured roof (" + u.name +
                      "), colour, batch (1: batch 1, 2: batch " + large + "), label side (1 above, -1 below), net\n";
    for (const Placed& p : pts)
        dat += num(p.intensity) + " " + num(p.attainable / u.per) + " " + std::to_string(p.colour) + " " +
               std::to_string(p.batch_kind) + " " + std::to_string(p.side) + " " + gp_quote(p.net) + "\n";
    std::string gpv = "title = " + gp_quote(f.title + ": " + c->name) + "\n" + roofs.gpv +
                      "nets_index = " + std::to_string(roofs.n_blocks) + "\nlarge_batch = " + large +
                      "\nxmin = " + num(x_min) + "\nxmax = " + num(x_max) + "\nymin = " + num(y_min) +
                      "\nymax = " + num(y_max) + "\n";
    write_data(data_dir, name, dat, gpv);
    return f;
}

}  // namespace

std::vector<Figure> overlay_figures(const Study& s, const std::string& data_dir) {
    return {overlay_figure(s, "cpu", data_dir), overlay_figure(s, "cuda", data_dir)};
}

}  // namespace ridge::report
