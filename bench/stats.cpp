#include "bench/stats.h"

#include <algorithm>
#include <cmath>

namespace ridge::bench {

namespace {
double quantile(const std::vector<double>& sorted, double q) {
    double pos = q * double(sorted.size() - 1);
    size_t lo = size_t(std::floor(pos));
    size_t hi = std::min(lo + 1, sorted.size() - 1);
    return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
}
}  // namespace

Stats summarize(std::vector<double> s) {
    Stats st;
    if (s.empty()) return st;
    std::sort(s.begin(), s.end());
    st.n = int(s.size());
    st.min = s.front();
    st.max = s.back();
    st.median = quantile(s, 0.5);
    st.q1 = quantile(s, 0.25);
    st.q3 = quantile(s, 0.75);
    return st;
}

}  // namespace ridge::bench
