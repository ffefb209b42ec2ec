#pragma once
// Numbers in the figures' data files: full precision, so a figure and a test read the same value.
#include <cmath>
#include <cstdio>
#include <string>

namespace ridge::report {

// "%.9g": enough digits that a double read back is the one written, to 1e-9. NaN as "NaN", the one
// spelling both consumers take: a .dat column reads it as an undefined value and skips the point,
// and a .gpv line ("xmin = NaN") names gnuplot's NaN constant, where printf's "nan" would be an
// undefined variable. The only definition: every figure writes numbers through this one.
inline std::string num(double v) {
    if (std::isnan(v)) return "NaN";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

}  // namespace ridge::report
