#include "report/spearman.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>

namespace ridge::report {

std::vector<double> average_ranks(const std::vector<double>& v) {
    std::vector<size_t> order(v.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
    std::vector<double> rank(v.size());
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
        // Positions i..j (0-based) hold equal values: each gets the mean of ranks i+1..j+1.
        double r = double(i + j) / 2 + 1;
        for (size_t k = i; k <= j; ++k) rank[order[k]] = r;
        i = j + 1;
    }
    return rank;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    size_t n = x.size();
    if (n < 2 || y.size() != n) return nan;
    std::vector<double> rx = average_ranks(x), ry = average_ranks(y);
    // Both rank vectors have mean (n+1)/2 whatever the ties, since ties share their ranks' mean.
    double mean = double(n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; ++i) {
        double dx = rx[i] - mean, dy = ry[i] - mean;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if (sxx == 0 || syy == 0) return nan;
    return sxy / std::sqrt(sxx * syy);
}

namespace {

// The smallest inference batch measured on a device, so every net's latency is at one batch.
std::optional<int64_t> smallest_batch(const Study& s, std::string_view device) {
    std::optional<int64_t> b;
    for (const Run* r : s.runs_of(device, Mode::infer))
        if (!b || r->batch < *b) b = r->batch;
    return b;
}

}  // namespace

RankMatrix spearman_matrix(const Study& s) {
    std::vector<std::string> labels;
    std::vector<std::vector<std::optional<double>>> cols;
    const std::pair<const char*, const char*> devices[] = {{"cpu", "CPU"}, {"cuda", "GPU"}};
    for (const auto& [device, shown] : devices) {
        std::optional<int64_t> b = smallest_batch(s, device);
        if (!b) continue;
        labels.push_back(std::string(shown) + " latency (batch " + std::to_string(*b) + ")");
        std::vector<std::optional<double>> col;
        for (const std::string& net : s.nets) {
            const Run* r = s.run_of(device, net, Mode::infer, *b);
            col.push_back(r ? std::optional<double>(r->step.median) : std::nullopt);
        }
        cols.push_back(std::move(col));
    }
    using Of = double (*)(const Totals&);
    const std::pair<const char*, Of> analytic[] = {
        {"FLOPs", [](const Totals& t) { return double(t.fwd_flops); }},
        {"params", [](const Totals& t) { return double(t.params); }},
        {"bytes", [](const Totals& t) { return double(t.fwd_traffic_bytes); }},
        {"intensity", [](const Totals& t) { return t.fwd_intensity(); }},
    };
    for (const auto& [label, of] : analytic) {
        labels.push_back(label);
        std::vector<std::optional<double>> col;
        for (const std::string& net : s.nets) {
            const NetCounts* c = s.counts_of(net, 1);
            col.push_back(c ? std::optional<double>(of(c->a.totals)) : std::nullopt);
        }
        cols.push_back(std::move(col));
    }

    RankMatrix m;
    m.labels = labels;
    m.values.resize(cols.size());
    for (size_t n = 0; n < s.nets.size(); ++n) {
        bool all = std::all_of(cols.begin(), cols.end(), [&](const auto& col) { return col[n].has_value(); });
        if (!all) continue;
        m.nets.push_back(s.nets[n]);
        for (size_t q = 0; q < cols.size(); ++q) m.values[q].push_back(*cols[q][n]);
    }
    m.rho.assign(cols.size(), std::vector<double>(cols.size()));
    for (size_t i = 0; i < cols.size(); ++i)
        for (size_t j = 0; j <= i; ++j) m.rho[i][j] = m.rho[j][i] = spearman(m.values[i], m.values[j]);
    return m;
}

}  // namespace ridge::report
