#include "report/figures/roofs.h"

#include <cctype>
#include <cmath>

#include "bench/format.h"
#include "report/figures.h"
#include "roofline/roofline.h"

namespace ridge::report {

FlopUnit flop_unit(double largest_flops) {
    if (largest_flops >= 1e13) return {1e12, "TFLOP/s"};
    return {1e9, "GFLOP/s"};
}

double decade_below(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double decade_above(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

std::string roof_rows(double peak_flops, std::optional<double> bytes_per_s, double x_lo, double x_hi,
                      const FlopUnit& u) {
    auto row = [&](double x, double y) { return num(x) + " " + num(y / u.per) + "\n"; };
    if (!bytes_per_s) return row(x_lo, peak_flops) + row(x_hi, peak_flops);
    double ridge = roofline::ridge_point(peak_flops, *bytes_per_s);
    std::string out = row(x_lo, roofline::attainable(peak_flops, *bytes_per_s, x_lo));
    if (ridge > x_lo && ridge < x_hi) out += row(ridge, peak_flops);
    return out + row(x_hi, roofline::attainable(peak_flops, *bytes_per_s, x_hi));
}

namespace {
// "3.00 TB/s": the SI prefix joins the unit, as people write it.
std::string with_unit(double v, const std::string& unit) {
    std::string n = bench::si(v);
    if (!n.empty() && std::isalpha(static_cast<unsigned char>(n.back())))
        return n.substr(0, n.size() - 1) + " " + n.back() + unit;
    return n + " " + unit;
}
}  // namespace

DeviceRoofs device_roofs(const Ceilings& c, double x_lo, double x_hi, const FlopUnit& u) {
    DeviceRoofs r;
    r.blocks = "# measured roof: intensity (FLOP/B), attainable (" + u.name + "); peak " + num(c.peak_flops) +
               " FLOP/s, bandwidth " + num(c.bytes_per_s) + " B/s\n" +
               roof_rows(c.peak_flops, c.bytes_per_s, x_lo, x_hi, u) + "\n\n";
    r.n_blocks = 1;
    std::string measured = "measured: " + with_unit(c.peak_flops, "FLOP/s") + ", " + with_unit(c.bytes_per_s, "B/s");
    std::string datasheet;
    if (c.datasheet_peak_flops) {
        double peak = *c.datasheet_peak_flops;
        r.blocks += "# datasheet roof: intensity (FLOP/B), attainable (" + u.name + "); peak " + num(peak) +
                    " FLOP/s, bandwidth " +
                    (c.datasheet_bytes_per_s ? num(*c.datasheet_bytes_per_s) + " B/s" : "unknown") + "\n" +
                    roof_rows(peak, c.datasheet_bytes_per_s, x_lo, x_hi, u) + "\n\n";
        ++r.n_blocks;
        datasheet = std::string(c.datasheet_lower_bound ? "datasheet, a lower bound: " : "datasheet: ") +
                    with_unit(peak, "FLOP/s") + ", " +
                    (c.datasheet_bytes_per_s ? with_unit(*c.datasheet_bytes_per_s, "B/s")
                                             : std::string("bandwidth unknown (peak only)"));
    }
    r.gpv = "has_datasheet = " + std::to_string(r.n_blocks - 1) + "\n" +
            "measured_title = " + gp_quote(measured) + "\n" + "datasheet_title = " + gp_quote(datasheet) + "\n" +
            "yunit = " + gp_quote(u.name) + "\n";
    return r;
}

std::string datasheet_note(const Ceilings& c) {
    if (!c.datasheet_peak_flops || c.datasheet_basis.empty()) return "";
    std::string s = " The datasheet peak is at " + c.datasheet_basis;
    if (c.measured_clock_ghz) s += "; the probes measured " + bench::fixed(*c.measured_clock_ghz, 2) + " GHz";
    return s + ".";
}

std::string device_title(std::string_view device) {
    if (device == "cpu") return "CPU";
    if (device == "cuda") return "GPU";
    return std::string(device);
}

std::string device_missing(const Study& s, std::string_view device, const std::string& what) {
    std::string prefix = std::string(device) + ":";
    for (const std::string& n : s.notes)
        if (n.compare(0, prefix.size(), prefix) == 0) return what + " (" + n + ")";
    return what;
}

}  // namespace ridge::report
