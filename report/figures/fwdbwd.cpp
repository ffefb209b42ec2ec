#include "report/figures/figures.h"

namespace ridge::report {

std::vector<Figure> fwdbwd_figures(const Study&, const std::string&) {
    return {{"fwdbwd", "fwdbwd", "", "not drawn yet"}};
}

}  // namespace ridge::report
