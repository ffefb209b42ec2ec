#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> throughput_figures(const Study&, const std::string&) {
    return {{"throughput", "throughput", "", "not drawn yet"}};
}

}  // namespace ridge::report
