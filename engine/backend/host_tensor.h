#pragma once
// A dense fp32 tensor in host memory, row-major in its shape's order (NCHW for images). It is how
// weights, inputs and results cross between the executors, whatever layout each uses inside. The
// double form carries the results of the double-precision reference executor.
#include <cstdint>
#include <vector>

#include "engine/shape.h"

namespace ridge {

template <class T>
struct HostTensorT {
    Shape shape;
    std::vector<T> v;

    HostTensorT() = default;
    explicit HostTensorT(Shape s) : shape(std::move(s)), v(size_t(numel(shape)), T(0)) {}
    int64_t size() const { return int64_t(v.size()); }
    T* data() { return v.data(); }
    const T* data() const { return v.data(); }
};
using HostTensor = HostTensorT<float>;
using HostTensor64 = HostTensorT<double>;

// The same tensor in another element type: exact from float to double, rounded to nearest the
// other way.
template <class U, class T>
HostTensorT<U> convert(const HostTensorT<T>& t) {
    HostTensorT<U> u;
    u.shape = t.shape;
    u.v.assign(t.v.begin(), t.v.end());
    return u;
}

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
