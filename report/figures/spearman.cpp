#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> spearman_figures(const Study&, const std::string&) {
    return {{"spearman", "spearman", "", "not drawn yet"}};
}

}  // namespace ridge::report
