#pragma once
// Does a fast kernel's output agree with the reference's? Element by element within a bound the
// kernel states, in the unit it is derived in (check.cpp: dot_bound). A NaN anywhere fails.
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <vector>

namespace ridge::kbench {

// An allocator on 64-byte boundaries, as the executor's arena places every buffer. glibc puts a
// large std::vector's floats 16 bytes past a page, so every 64-byte vector access of a kernel
// spanned two cache lines (ridge-kernels timed them so before).
template <class T>
struct LineAligned {
    using value_type = T;
    LineAligned() = default;
    template <class U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(64))); }
    void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t(64)); }
    template <class U>
    bool operator==(const LineAligned<U>&) const {
        return true;
    }
};
// The floats of every buffer a case hands a kernel, and of the outputs it compares.
using Floats = std::vector<float, LineAligned<float>>;

struct Check {
    bool ok = true;
    int64_t checked = 0;       // elements compared
    int64_t failures = 0;      // elements outside their bound
    int64_t worst = -1;        // the element with the largest |fast - ref| / bound (or error, when bound is 0)
    double worst_error = 0;    // |fast - ref| there
    double worst_bound = 0;    // its bound
    double max_error = 0;      // the largest |fast - ref| anywhere
    std::string what;          // the output the worst element belongs to ("y", "dw", ...)
    std::string summary() const;  // "ok: 1024 within bound, max |err| 3.1e-07" or where it failed
};

// |fast[i] - ref[i]| <= bound[i] for every i; bound empty: exact equality.
Check compare(const std::string& what, const Floats& fast, const Floats& ref,
              const std::vector<double>& bound);
// Both checks must hold; the report names the worse.
Check merge(const Check& a, const Check& b);

// The bound on a float dot product of `terms` products, summed in any order and with or without
// fused multiply-adds, against a reference that rounds each product to float, sums in double and
// rounds the sum once: gamma(terms) * sum|a*b| for the fast kernel (Higham, Accuracy and
// Stability, the bound for any summation order), plus 2u * sum|a*b| for the reference's rounded
// products and the double sum's own error (far below u for any length here), plus u * |ref| for its
// final rounding (u = 2^-24).
// magnitude is sum|a*b| (the reference run on |a|, |b|).
double dot_bound(int64_t terms, double magnitude, double ref);

}  // namespace ridge::kbench
