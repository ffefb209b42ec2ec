#pragma once
// Numbers in the figures' data files: full precision, so a figure and a test read the same value.
#include <cmath>
#include <cstdio>
#include <string>

namespace ridge::report {

// "%.9g"; NaN as "NaN", which gnuplot reads as an undefined value and skips.
inline std::string num(double v) {
    if (std::isnan(v)) return "NaN";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

}  // namespace ridge::report
