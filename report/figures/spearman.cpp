#include <cmath>

#include "bench/format.h"
#include "report/figures/dat.h"
#include "report/figures/figures.h"
#include "report/spearman.h"

namespace ridge::report {

std::vector<Figure> spearman_figures(const Study& s, const std::string& data_dir) {
    Figure f{"spearman", "Rank correlation of latency and the analytic counts", "", ""};
    RankMatrix m = spearman_matrix(s);
    if (m.nets.size() < 3) {
        f.missing = "only " + std::to_string(m.nets.size()) +
                    " nets have a measured latency and their counts; a rank correlation needs 3";
        return {f};
    }
    f.caption = "Spearman's rank correlation over " + std::to_string(m.nets.size()) +
                " nets: 1 when two quantities order the nets alike, -1 when in reverse. Latency is the "
                "inference step's median; FLOPs, params, bytes (minimum forward traffic) and intensity "
                "are analytic, forward, at batch 1. n/a: one of the two is equal for every net.";
    std::string dat = "# Spearman's rank correlation over the nets:";
    for (const std::string& n : m.nets) dat += " " + n;
    dat += "\n# row col rho text (row and col index the quantities of spearman.gpv)\n";
    for (size_t i = 0; i < m.labels.size(); ++i)
        for (size_t j = 0; j < m.labels.size(); ++j) {
            double r = m.rho[i][j];
            dat += std::to_string(i) + " " + std::to_string(j) + " " + num(r) + " \"" +
                   (std::isnan(r) ? std::string("n/a") : bench::fixed(r, 2)) + "\"\n";
        }
    std::string gpv = "title = " + gp_quote("Spearman rank correlation over " + std::to_string(m.nets.size()) +
                                             " nets") + "\n";
    gpv += "n = " + std::to_string(m.labels.size()) + "\n";
    for (size_t i = 0; i < m.labels.size(); ++i)
        gpv += "label" + std::to_string(i) + " = " + gp_quote(m.labels[i]) + "\n";
    write_data(data_dir, f.name, dat, gpv);
    return {f};
}

}  // namespace ridge::report
