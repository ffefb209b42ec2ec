#pragma once
// Roofline arithmetic (Williams, Waterman, Patterson 2009): a compute ceiling per precision and a
// bandwidth ceiling per memory level. Intensity is FLOP per byte moved at that level.
#include <optional>
#include <string>
#include <vector>

#include "roofline/chips.h"

namespace ridge::roofline {

// Intensity at which the bandwidth slope meets the compute roof, FLOP/B.
double ridge_point(double peak_flops, double bytes_per_s);
// min(peak, bandwidth x intensity), FLOP/s.
double attainable(double peak_flops, double bytes_per_s, double intensity);

enum class Bound { memory, compute };
const char* bound_name(Bound b);
// Memory-bound strictly below the ridge point; at or above it the roof is the compute peak.
Bound bound_at(double peak_flops, double bytes_per_s, double intensity);

// A measured point against the roof at its intensity: achieved / attainable.
double fraction_of_roof(double achieved_flops, double peak_flops, double bytes_per_s, double intensity);

// How far from the ridge, as a factor: intensity / ridge point. Below 1 a layer is memory-bound
// and would need that much more reuse to reach the compute roof; above 1 it is compute-bound
// with that much headroom before bandwidth matters.
double ridge_ratio(double peak_flops, double bytes_per_s, double intensity);

// The lower bound on time: the slower of doing the FLOPs at peak and moving the bytes at bandwidth.
double min_seconds(double flops, double bytes, double peak_flops, double bytes_per_s);

// A measured time against that lower bound: slow when it takes more than slow_factor times the
// bound and more than slow_floor_seconds (below which a call's fixed cost, not its work, decides).
// ridge bench flags such layers ("slow: 37x its bound").
constexpr double slow_factor = 4.0, slow_floor_seconds = 20e-6;
struct Verdict {
    double bound_seconds = 0;  // min_seconds of the work
    double ratio = 0;          // seconds / bound_seconds; 0 where the work moves nothing (bound 0)
    bool slow = false;
};
Verdict judge(double seconds, double flops, double bytes, double peak_flops, double bytes_per_s);

// One chip's ceilings: compute peaks per precision and bandwidth per memory level ("DRAM" is the
// level datasheets give; measured machines add L1/L2/L3).
struct MemoryLevel {
    std::string name;
    double bytes_per_s = 0;
};
struct Roofline {
    std::string chip;
    PerPrecision peak_flops;  // FLOP/s
    std::vector<MemoryLevel> levels;

    std::optional<double> peak(Precision p) const { return peak_flops[size_t(index(p))]; }
    const MemoryLevel* level(std::string_view name) const;  // case-insensitive
};

// The datasheet roofline of a database chip (one level, "DRAM", when its bandwidth is known).
Roofline datasheet_roofline(const Chip& c);

// Where one workload (a layer or a net) sits on a roofline at one precision and memory level.
struct Placement {
    double flops = 0, bytes = 0, intensity = 0;
    double peak_flops = 0, bytes_per_s = 0;
    double ridge = 0, attainable_flops = 0, min_seconds = 0, ratio = 0;
    Bound bound = Bound::memory;
};
Placement place(double flops, double bytes, double peak_flops, double bytes_per_s);

}  // namespace ridge::roofline
