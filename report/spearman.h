#pragma once
// Spearman's rank correlation, and the matrix of it over the study's nets that the spearman
// figure draws and report.md prints: does a cheaper net by FLOPs, params or bytes run faster?
#include <string>
#include <vector>

#include "report/study.h"

namespace ridge::report {

// 1-based ranks, ties given the average of the ranks they span: {10, 20, 20, 30} -> {1, 2.5, 2.5, 4}.
std::vector<double> average_ranks(const std::vector<double>& v);

// Pearson's correlation of the average ranks of x and y (the same length). NaN when it is
// undefined: fewer than two values, or either input constant (its ranks have no variance).
double spearman(const std::vector<double>& x, const std::vector<double>& y);

struct RankMatrix {
    std::vector<std::string> labels;      // the quantities, e.g. "CPU latency (batch 1)", "FLOPs"
    std::vector<std::string> nets;        // the nets that have every quantity, in study order
    std::vector<std::vector<double>> values;  // values[quantity][net]
    std::vector<std::vector<double>> rho;     // rho[i][j], symmetric; NaN where undefined
};

// Over the nets that have all of: CPU inference latency at the smallest batch measured on the
// CPU, the same on the GPU when CUDA runs exist, and the analytic forward FLOPs, params, forward
// minimum traffic and forward intensity at batch 1.
RankMatrix spearman_matrix(const Study& s);

}  // namespace ridge::report
