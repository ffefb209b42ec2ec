#include <algorithm>
#include <map>

#include "report/figures/dat.h"
#include "report/figures/figures.h"

namespace ridge::report {

namespace {

// One figure: every inference run as a point (x: a count of its net at batch 1, y: the step's
// median), a block per device and batch, then a block placing each net's label above its column.
Figure latency_figure(const Study& s, const std::string& data_dir, const std::string& name,
                      const std::string& what, const std::string& xlabel, double (*x_of)(const Totals&)) {
    Figure f{name, "Latency against " + what, "", ""};
    const std::pair<const char*, const char*> devices[] = {{"cpu", "CPU"}, {"cuda", "GPU"}};
    std::vector<int64_t> batches;
    for (const Run& r : s.runs)
        if (r.mode == Mode::infer && std::find(batches.begin(), batches.end(), r.batch) == batches.end())
            batches.push_back(r.batch);
    std::sort(batches.begin(), batches.end());
    std::string dat = "# inference latency against " + what + ", a block per device and batch, then the labels\n";
    std::string gpv;
    std::map<std::string, std::pair<double, double>> top;  // net -> (x, highest latency in ms)
    int n = 0;
    bool gpu = false;
    for (const auto& [device, shown] : devices)
        for (size_t b = 0; b < batches.size(); ++b) {
            std::string block;
            for (const std::string& net : s.nets) {
                const Run* r = s.run_of(device, net, Mode::infer, batches[b]);
                const NetCounts* c = s.counts_of(net, 1);
                if (!r || !c) continue;
                double x = x_of(c->a.totals), ms = r->step.median * 1e3;
                block += net + " " + num(x) + " " + num(ms) + "\n";
                auto [it, fresh] = top.try_emplace(net, x, ms);
                if (!fresh) it->second.second = std::max(it->second.second, ms);
            }
            if (block.empty()) continue;
            dat += (n ? "\n\n" : "") + std::string("# ") + shown + " batch " + std::to_string(batches[b]) +
                   "\n# net " + xlabel + " latency_ms\n" + block;
            std::string i = std::to_string(n++);
            gpv += "batch" + i + " = " + std::to_string(b) + "\ngpu" + i + " = " +
                   (std::string(device) == "cuda" ? "1" : "0") + "\n";
            gpu |= std::string(device) == "cuda";
        }
    if (n == 0) {
        f.missing = "no inference runs were measured";
        return {f};
    }
    dat += "\n\n# labels: net " + xlabel + " highest_latency_ms\n";
    for (const std::string& net : s.nets)
        if (auto it = top.find(net); it != top.end())
            dat += net + " " + num(it->second.first) + " " + num(it->second.second) + "\n";
    f.caption = "Median inference latency of every measured run against the net's " + what +
                ", one colour per batch size" + (gpu ? ", circles on the CPU and triangles on the GPU" : "") +
                ". A net's runs share one x, so they stand in a column; the net is named once, above it.";
    gpv = "title = " + gp_quote("Inference latency against " + what) + "\nxlabel = " +
          gp_quote(name == "latency-flops" ? "forward GFLOPs per image" : "parameters (millions)") +
          "\nnseries = " + std::to_string(n) + "\nhasgpu = " + (gpu ? "1" : "0") +
          "\nnbatches = " + std::to_string(batches.size()) + "\n" + gpv;
    for (size_t b = 0; b < batches.size(); ++b)
        gpv += "batchname" + std::to_string(b) + " = " + gp_quote("batch " + std::to_string(batches[b])) + "\n";
    write_data(data_dir, f.name, dat, gpv);
    return f;
}

}  // namespace

std::vector<Figure> latency_figures(const Study& s, const std::string& data_dir) {
    return {latency_figure(s, data_dir, "latency-flops", "forward FLOPs", "GFLOPs_per_image",
                           [](const Totals& t) { return double(t.fwd_flops) / 1e9; }),
            latency_figure(s, data_dir, "latency-params", "parameter count", "Mparams",
                           [](const Totals& t) { return double(t.params) / 1e6; })};
}

}  // namespace ridge::report
