#include "report/figures/roofs.h"

#include <cmath>
#include <cstdio>

#include "bench/format.h"
#include "report/figures.h"
#include "roofline/roofline.h"

namespace ridge::report {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

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

DeviceRoofs device_roofs(const Ceilings& c, double x_lo, double x_hi, const FlopUnit& u) {
    DeviceRoofs r;
    r.blocks = "# measured roof: intensity (FLOP/B), attainable (" + u.name + "); peak " + num(c.peak_flops) +
               " FLOP/s, bandwidth " + num(c.bytes_per_s) + " B/s\n" +
               roof_rows(c.peak_flops, c.bytes_per_s, x_lo, x_hi, u) + "\n\n";
    r.n_blocks = 1;
    std::string measured = "measured: " + cli::si(c.peak_flops) + "FLOP/s, " + cli::si(c.bytes_per_s) + "B/s";
    std::string datasheet;
    if (c.datasheet_peak_flops) {
        double peak = *c.datasheet_peak_flops;
        r.blocks += "# datasheet roof: intensity (FLOP/B), attainable (" + u.name + "); peak " + num(peak) +
                    " FLOP/s, bandwidth " + (c.datasheet_bytes_per_s ? num(*c.datasheet_bytes_per_s) + " B/s" : "unknown") +
                    "\n" + roof_rows(peak, c.datasheet_bytes_per_s, x_lo, x_hi, u) + "\n\n";
        ++r.n_blocks;
        datasheet = "datasheet: " + cli::si(peak) + "FLOP/s, " +
                    (c.datasheet_bytes_per_s ? cli::si(*c.datasheet_bytes_per_s) + "B/s"
                                             : std::string("bandwidth unknown (peak only)"));
    }
    r.gpv = "has_datasheet = " + std::to_string(r.n_blocks - 1) + "\n" +
            "measured_title = " + gp_quote(measured) + "\n" + "datasheet_title = " + gp_quote(datasheet) + "\n" +
            "yunit = " + gp_quote(u.name) + "\n";
    return r;
}

}  // namespace ridge::report
