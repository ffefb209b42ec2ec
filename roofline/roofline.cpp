#include "roofline/roofline.h"

#include <algorithm>
#include <cctype>

namespace ridge::roofline {

double ridge_point(double peak_flops, double bytes_per_s) { return peak_flops / bytes_per_s; }

double attainable(double peak_flops, double bytes_per_s, double intensity) {
    return std::min(peak_flops, bytes_per_s * intensity);
}

const char* bound_name(Bound b) { return b == Bound::memory ? "memory" : "compute"; }

Bound bound_at(double peak_flops, double bytes_per_s, double intensity) {
    return intensity < ridge_point(peak_flops, bytes_per_s) ? Bound::memory : Bound::compute;
}

double fraction_of_roof(double achieved_flops, double peak_flops, double bytes_per_s, double intensity) {
    return achieved_flops / attainable(peak_flops, bytes_per_s, intensity);
}

double ridge_ratio(double peak_flops, double bytes_per_s, double intensity) {
    return intensity / ridge_point(peak_flops, bytes_per_s);
}

double min_seconds(double flops, double bytes, double peak_flops, double bytes_per_s) {
    return std::max(flops / peak_flops, bytes / bytes_per_s);
}

Verdict judge(double seconds, double flops, double bytes, double peak_flops, double bytes_per_s) {
    Verdict v;
    v.bound_seconds = min_seconds(flops, bytes, peak_flops, bytes_per_s);
    v.ratio = v.bound_seconds > 0 ? seconds / v.bound_seconds : 0;
    v.slow = seconds > slow_factor * v.bound_seconds && seconds > slow_floor_seconds;
    return v;
}

const MemoryLevel* Roofline::level(std::string_view name) const {
    auto eq = [](std::string_view a, std::string_view b) {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
                   return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
               });
    };
    for (const MemoryLevel& l : levels)
        if (eq(l.name, name)) return &l;
    return nullptr;
}

Roofline datasheet_roofline(const Chip& c) {
    Roofline r;
    r.chip = c.name;
    for (Precision p : precisions) r.peak_flops[size_t(index(p))] = c.peak_flops(p);
    if (auto bw = c.bandwidth_bytes()) r.levels.push_back({"DRAM", *bw});
    return r;
}

Placement place(double flops, double bytes, double peak_flops, double bytes_per_s) {
    Placement p;
    p.flops = flops;
    p.bytes = bytes;
    p.intensity = bytes > 0 ? flops / bytes : 0;
    p.peak_flops = peak_flops;
    p.bytes_per_s = bytes_per_s;
    p.ridge = ridge_point(peak_flops, bytes_per_s);
    p.attainable_flops = attainable(peak_flops, bytes_per_s, p.intensity);
    p.min_seconds = min_seconds(flops, bytes, peak_flops, bytes_per_s);
    p.ratio = ridge_ratio(peak_flops, bytes_per_s, p.intensity);
    p.bound = bound_at(peak_flops, bytes_per_s, p.intensity);
    return p;
}

}  // namespace ridge::roofline
