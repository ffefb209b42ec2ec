// Figure 2: the zoo's analytic counts as bars, one group per net in the study's order.
#include "report/figures/figures.h"
#include "report/figures/roofs.h"

namespace ridge::report {

namespace {

struct Series {
    std::string title;
    double (*value)(const Analysis& at_1, const Analysis& at_large);
};

// One bar chart: a row per net, a column per series. Its figure is missing when no net has counts
// at both batches.
Figure zoo_figure(const Study& s, const std::string& name, const std::string& title, const std::string& caption,
                  const std::string& unit, const std::vector<Series>& series, const std::string& data_dir) {
    Figure f{name, title, caption, ""};
    std::string dat = "# " + name + ": " + title + "\n# net";
    for (const Series& c : series) dat += " | " + c.title + " [" + unit + "]";
    dat += "\n";
    int rows = 0;
    for (const std::string& net : s.nets) {
        const NetCounts* one = s.counts_of(net, 1);
        const NetCounts* large = s.counts_of(net, s.large_batch);
        if (!one || !large) continue;
        dat += gp_quote(net);
        for (const Series& c : series) dat += " " + num(c.value(one->a, large->a));
        dat += "\n";
        ++rows;
    }
    if (!rows) {
        f.missing = "no net has analytic counts at batch 1 and " + std::to_string(s.large_batch);
        return f;
    }
    std::string gpv = "title = " + gp_quote(title) + "\nylabel = " + gp_quote(unit) +
                      "\nnseries = " + std::to_string(series.size()) +
                      "\nnnets = " + std::to_string(rows) + "\n";
    for (size_t i = 0; i < series.size(); ++i)
        gpv += "series_" + std::to_string(i + 1) + " = " + gp_quote(series[i].title) + "\n";
    write_data(data_dir, name, dat, gpv);
    return f;
}

}  // namespace

std::vector<Figure> zoo_figures(const Study& s, const std::string& data_dir) {
    std::string large = std::to_string(s.large_batch);
    std::vector<Figure> out;
    out.push_back(zoo_figure(
        s, "zoo-flops", "FLOPs per image (batch 1)",
        "Analytic fp32 FLOPs of one image: the forward pass, and a training step's forward, input-gradient "
        "(dgrad) and weight-gradient (wgrad) passes together. Training costs about three forwards.",
        "GFLOP per image",
        {{"forward", [](const Analysis& a, const Analysis&) { return double(a.totals.fwd_flops) / 1e9; }},
         {"training step (forward + dgrad + wgrad)",
          [](const Analysis& a, const Analysis&) {
              return double(a.totals.fwd_flops + a.totals.bwd_flops()) / 1e9;
          }}},
        data_dir));
    out.push_back(zoo_figure(
        s, "zoo-params", "Parameters",
        "Learned parameters (weights, biases, batch-norm scales and shifts), millions.", "millions of parameters",
        {{"parameters", [](const Analysis& a, const Analysis&) { return double(a.totals.params) / 1e6; }}},
        data_dir));
    out.push_back(zoo_figure(
        s, "zoo-memory", "Memory at batch 1 (fp32)",
        "Activation memory: every layer output of one forward pass, none reused. Training memory: weights, "
        "their gradients and SGD momentum plus the activations kept for backward, each counted once. At batch 1 "
        "the weights dominate training memory for the large nets; activations grow with the batch, weights do not.",
        "MB (1e6 bytes)",
        {{"activations (forward)",
          [](const Analysis& a, const Analysis&) { return double(a.totals.activation_bytes) / 1e6; }},
         {"training (weights x3 + saved activations)",
          [](const Analysis& a, const Analysis&) { return double(a.totals.train_memory_bytes) / 1e6; }}},
        data_dir));
    out.push_back(zoo_figure(
        s, "zoo-intensity", "Forward intensity at batch 1 and " + large,
        "Forward FLOPs per byte of minimum DRAM traffic (every input, weight and output moved once). A larger "
        "batch reads the weights once for more images, so intensity rises most for the nets with many weights "
        "per FLOP.",
        "FLOP/byte",
        {{"batch 1", [](const Analysis& a, const Analysis&) { return a.totals.fwd_intensity(); }},
         {"batch " + large, [](const Analysis&, const Analysis& l) { return l.totals.fwd_intensity(); }}},
        data_dir));
    return out;
}

}  // namespace ridge::report
