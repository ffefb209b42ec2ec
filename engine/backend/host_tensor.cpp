#include "engine/backend/host_tensor.h"

#include <algorithm>
#include <cmath>

namespace ridge {

uint64_t Rng::next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float Rng::uniform(float lo, float hi) {
    // 24 random bits: every value is an exact float in [0, 1).
    float u = float(next() >> 40) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

void fill_uniform(HostTensor& t, float lo, float hi, uint64_t seed) {
    Rng r(seed);
    for (float& x : t.v) x = r.uniform(lo, hi);
}

double max_rel_diff(const HostTensor& a, const HostTensor& b) {
    if (a.shape != b.shape)
        throw std::invalid_argument(cat("max_rel_diff: shapes ", to_string(a.shape), " and ", to_string(b.shape)));
    double worst = 0;
    for (size_t i = 0; i < a.v.size(); ++i) {
        double d = std::abs(double(a.v[i]) - double(b.v[i])) / std::max(1.0, std::abs(double(b.v[i])));
        if (!(d <= worst)) worst = d;  // NaN propagates as the worst
    }
    return worst;
}

}  // namespace ridge
