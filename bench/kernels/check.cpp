#include "bench/kernels/check.h"

#include <cmath>
#include <cstdio>

namespace ridge::kbench {

namespace {

std::string sci(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2g", v);
    return b;
}

}  // namespace

std::string Check::summary() const {
    if (ok) return "ok: " + std::to_string(checked) + " " + what + " within bound, max |err| " + sci(max_error);
    return "FAILED: " + std::to_string(failures) + " of " + std::to_string(checked) + " " + what + " outside bound; " +
           what + "[" + std::to_string(worst) + "] off by " + sci(worst_error) + ", bound " + sci(worst_bound);
}

Check compare(const std::string& what, const Floats& fast, const Floats& ref,
              const std::vector<double>& bound) {
    Check c;
    c.what = what;
    if (fast.size() != ref.size() || (!bound.empty() && bound.size() != ref.size())) {
        c.ok = false;
        c.failures = 1;
        c.what = what + " (sizes differ)";
        return c;
    }
    double worst_ratio = -1;
    for (size_t i = 0; i < ref.size(); ++i) {
        double err = std::fabs(double(fast[i]) - double(ref[i]));
        double b = bound.empty() ? 0.0 : bound[i];
        bool bad = !(err <= b);  // a NaN in either fails
        double ratio = std::isnan(err) ? INFINITY : b > 0 ? err / b : err;
        ++c.checked;
        if (bad) ++c.failures;
        if (!std::isnan(err)) c.max_error = std::max(c.max_error, err);
        if (ratio > worst_ratio) {
            worst_ratio = ratio;
            c.worst = int64_t(i);
            c.worst_error = err;
            c.worst_bound = b;
        }
    }
    c.ok = c.failures == 0;
    return c;
}

Check merge(const Check& a, const Check& b) {
    Check m = !b.ok && a.ok ? b : a;
    if (a.ok && b.ok) m = a.max_error >= b.max_error ? a : b;
    m.ok = a.ok && b.ok;
    m.checked = a.checked + b.checked;
    m.failures = a.failures + b.failures;
    m.max_error = std::max(a.max_error, b.max_error);
    if (m.ok) m.what = a.what + ", " + b.what;
    return m;
}

double dot_bound(int64_t terms, double magnitude, double ref) {
    const double u = std::ldexp(1.0, -24);
    const double nu = double(terms) * u;
    const double gamma = nu < 0.5 ? nu / (1 - nu) : 1.0;
    return (gamma + 2 * u) * magnitude + u * std::fabs(ref);
}

}  // namespace ridge::kbench
