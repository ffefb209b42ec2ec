#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> latency_figures(const Study&, const std::string&) {
    return {{"latency", "latency", "", "not drawn yet"}};
}

}  // namespace ridge::report
