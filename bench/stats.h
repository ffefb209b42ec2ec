#pragma once
// Summaries of repeated timings. Medians and quartiles, not means: one preempted repeat on a
// busy machine moves a mean far more than it moves the median.
#include <vector>

namespace ridge::bench {

struct Stats {
    double median = 0, min = 0, max = 0, q1 = 0, q3 = 0;
    int n = 0;
    double iqr() const { return q3 - q1; }
    // The spread is large when the interquartile range exceeds this fraction of the median.
    bool noisy(double fraction = 0.1) const { return median > 0 && iqr() > fraction * median; }
};

// Quartiles by linear interpolation between order statistics (NumPy's default).
Stats summarize(std::vector<double> samples);

}  // namespace ridge::bench
