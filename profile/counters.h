#pragma once
// Hardware counters read around ranges of work (one range per executor step), behind one
// interface so that the attribution (profile.h) is the same for a CPU's perf events, a GPU's CUPTI
// metrics and a test's scripted counts.
//
// A source may need several passes over the same work: a CPU has a handful of counter registers,
// CUPTI schedules its metrics over replay passes. The caller runs the identical sequence of ranges
// once per pass; results() then holds every counter for every range.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::profile {

// What a counter's value, times its weight, adds to.
enum class Measure {
    flops,        // floating-point operations, any precision
    dram_read,    // bytes read from DRAM
    dram_write,   // bytes written to DRAM
    l2_bytes,     // bytes requested from the L2 (GPU)
    breakdown,    // FLOPs again, split another way (by precision, by width): a cross-check, not a total
};

struct Counter {
    std::string name;    // as the vendor names it: "fp_ret_sse_avx_ops.mac_flops", "dram__bytes_read.sum"
    std::string label;   // short column name: "fma", "fp32 packed", "dram read"
    Measure measure = Measure::flops;
    int64_t weight = 1;  // operations (or bytes) per count: 16 for a 512-bit fp32 instruction count
};

class CounterSource {
public:
    virtual ~CounterSource() = default;
    // One line: what is counted and how, e.g. "AMD Zen 5 PMCx003 retired SSE/AVX FLOPs, 2 threads".
    virtual std::string describe() const = 0;
    // What the counters leave out, for readers of the measured column (e.g. max and compare
    // instructions are not FLOPs to this event). May be empty.
    virtual std::string scope() const { return {}; }
    virtual const std::vector<Counter>& counters() const = 0;
    virtual int passes() const = 0;

    // Before the first pass: how many ranges each pass will have.
    virtual void prepare(size_t /*ranges*/) {}
    virtual void begin_pass(int pass) = 0;
    virtual void begin_range(std::string_view name) = 0;
    virtual void end_range() = 0;
    virtual void end_pass() = 0;

    // After the last pass: per range, in the order begun, one raw count per counter (before weights).
    virtual std::vector<std::vector<int64_t>> results() = 0;
};

// Counting could not be done, or not trusted, on this run (the counters were shared with another
// user, a thread appeared mid-pass, privileges): the profile goes on without counts, saying why.
struct CountingError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A counter's weighted value.
inline int64_t weighted(const Counter& c, int64_t count) { return c.weight * count; }

}  // namespace ridge::profile
