#include "engine/formula.h"

namespace ridge {

namespace {
std::string wrap(const std::string& s, bool paren) { return paren ? "(" + s + ")" : s; }
}  // namespace

Ex var(std::string name, int64_t value) { return {value, std::move(name), std::to_string(value), 0}; }
Ex lit(int64_t value) { return {value, std::to_string(value), std::to_string(value), 0}; }

Ex operator*(const Ex& a, const Ex& b) {
    return {checked_mul(a.v, b.v), wrap(a.sym, a.prec > 1) + "*" + wrap(b.sym, b.prec > 1),
            wrap(a.num, a.prec > 1) + "*" + wrap(b.num, b.prec > 1), 1};
}
Ex operator+(const Ex& a, const Ex& b) {
    return {checked_add(a.v, b.v), a.sym + " + " + b.sym, a.num + " + " + b.num, 2};
}
Ex operator-(const Ex& a, const Ex& b) {
    return {checked_add(a.v, -b.v), a.sym + " - " + wrap(b.sym, b.prec > 1), a.num + " - " + wrap(b.num, b.prec > 1), 2};
}

int64_t Work::note(const std::string& what, const Ex& e) {
    lines.emplace_back(what, e);
    return e.v;
}

}  // namespace ridge
