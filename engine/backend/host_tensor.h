#pragma once
// A dense fp32 tensor in host memory, row-major in its shape's order (NCHW for images). It is how
// weights, inputs and results cross between the executors, whatever layout each uses inside.
#include <cstdint>
#include <vector>

#include "engine/shape.h"

namespace ridge {

struct HostTensor {
    Shape shape;
    std::vector<float> v;

    HostTensor() = default;
    explicit HostTensor(Shape s) : shape(std::move(s)), v(size_t(numel(shape)), 0.0f) {}
    int64_t size() const { return int64_t(v.size()); }
    float* data() { return v.data(); }
    const float* data() const { return v.data(); }
};

// A small deterministic generator (splitmix64), so a seed gives the same numbers with every
// compiler and standard library.
class Rng {
public:
    explicit Rng(uint64_t seed) : s_(seed) {}
    uint64_t next();
    float uniform(float lo, float hi);  // [lo, hi)

private:
    uint64_t s_;
};

void fill_uniform(HostTensor& t, float lo, float hi, uint64_t seed);

// Largest |a-b| / max(1, |b|) over all elements; shapes must match.
double max_rel_diff(const HostTensor& a, const HostTensor& b);

}  // namespace ridge
