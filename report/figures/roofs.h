#pragma once
// What the roofline figures (chips, overlay, measured) share: numbers written as every data file
// writes them (dat.h), the FLOP/s unit of an axis, log-axis bounds and the corner points of a roof.
#include <optional>
#include <string>

#include "report/figures/dat.h"
#include "report/study.h"

namespace ridge::report {

// The unit of a FLOP/s axis: GFLOP/s below 10 TFLOP/s, TFLOP/s above, so tic labels stay short.
struct FlopUnit {
    double per = 1e9;  // FLOP/s per unit
    std::string name = "GFLOP/s";
};
FlopUnit flop_unit(double largest_flops);

// Whole decades around [lo, hi]: a log axis whose end tics are labelled.
double decade_below(double v);
double decade_above(double v);

// A roof as gnuplot line points (x FLOP/B, y in unit): the bandwidth slope from x_lo up to the
// ridge point, then the flat peak to x_hi. Without a bandwidth only the flat peak.
std::string roof_rows(double peak_flops, std::optional<double> bytes_per_s, double x_lo, double x_hi,
                      const FlopUnit& u);

// One device's two roofs as data blocks, measured then datasheet (the datasheet block only when
// it has a peak), each ending in the two blank lines that close a gnuplot index; and the gpv
// lines that tell the script whether the datasheet block exists and how to name both.
struct DeviceRoofs {
    std::string blocks, gpv;
    int n_blocks = 0;
};
DeviceRoofs device_roofs(const Ceilings& c, double x_lo, double x_hi, const FlopUnit& u);

// A sentence for a caption: what the datasheet roof was computed at, beside the measured clock
// (empty without a datasheet peak).
std::string datasheet_note(const Ceilings& c);

// "CPU" for "cpu", "GPU" for "cuda": how titles name a device.
std::string device_title(std::string_view device);

// Why a device's figure is left out: `what`, then the study's note on that device if it has one
// ("cuda: no CUDA device is available").
std::string device_missing(const Study& s, std::string_view device, const std::string& what);

}  // namespace ridge::report
