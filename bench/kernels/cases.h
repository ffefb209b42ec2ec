#pragma once
// The kernels ridge-kernels can run, each as a Case: inputs of one shape, the reference output
// and its bound computed once, then the fast kernel run, checked and timed on its own.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/kernels/check.h"
#include "bench/kernels/measure.h"
#include "bench/kernels/simd_variants.h"

namespace ridge::kbench {

// One problem size in the vocabulary of engine/README.md. The filter fields apply to the
// convolution kernels only; layout is the activations' layout (simd.h's ChannelLayout names).
struct Problem {
    int64_t N = 0, C = 0, H = 0, W = 0;
    int64_t K = 0;  // outputs of the linear kernel
    int64_t R = 0, S = 0, stride = 1, pad = 0;
    std::string layout;
    int64_t P() const { return (H + 2 * pad - R) / stride + 1; }
    int64_t Q() const { return (W + 2 * pad - S) / stride + 1; }
    // The floats a position's channels lie apart in the layout (simd.h's ChannelLayout block): 8 or
    // 16 blocked, C channels-last, 1 plain.
    int64_t block() const { return layout == "nChw8c" ? 8 : layout == "nChw16c" ? 16 : layout == "nhwc" ? C : 1; }
    std::string describe(bool filter) const;  // "N32 C672 14x14 nChw16c" (+ " 5x5/1 pad 2 -> 14x14")
    // The depthwise convolution it describes, its weights blocked as the executor keeps them
    // (oneDNN's Abcde16a / Abcde8a, by depthwise_lanes).
    simd::Depthwise depthwise() const;
    // The average pooling it describes, counting the padding (PyTorch's default), the same on
    // every side.
    simd::AvgPool avg_pool() const;
    // The max pooling it describes.
    simd::MaxPool max_pool() const;
};

struct Kernel {
    std::string name;
    bool cuda = false;
    bool filter = false;                // R, S, stride and pad apply
    std::vector<std::string> layouts;   // accepted --layout values; empty: plain NCHW only
    std::string what;                   // one line for --list
    std::string origin;                 // where the default shape comes from
    Problem defaults;
    bool whole_blocks = false;          // nChw8c / nChw16c need C a multiple of the block
    bool outputs = false;               // K applies: a linear layer on N rows (H and W are 1)
};

// The channel counts of concat-bn's pieces: DenseNet's growth of 32 channels a layer, the first
// piece (the dense block's input) taking what is left, so C = 480 is 15 pieces of 32 and C = 80
// is 16, 32, 32. Where C is a multiple of 8 or 16, every piece fills whole blocks of it.
std::vector<int64_t> concat_pieces(int64_t C);

// n values uniform in [lo, hi), from a fixed seed so every run checks the same numbers.
Floats uniform(size_t n, float lo, float hi, unsigned seed);

const std::vector<Kernel>& kernels();
const Kernel* find_kernel(const std::string& name);

// Throws bench::UsageError with one line naming the problem when p does not fit k (or would need
// more memory than this host has), before anything is allocated.
void validate(const Kernel& k, const Problem& p);

class Case {
public:
    virtual ~Case() = default;
    virtual std::string variant() const = 0;  // the instruction set, or "cuda"
    virtual void run_fast() = 0;
    virtual void run_reference() = 0;
    // Runs the fast kernel once on fresh outputs and compares with the reference. `tamper`, when
    // given, changes the fast output before the comparison (output name, values, their bounds):
    // the tests use it to show an error just past the bound is caught.
    using Tamper = std::function<void(const std::string&, Floats&, const std::vector<double>&)>;
    virtual Check check(const Tamper& tamper = nullptr) = 0;
    virtual double flops() const = 0;  // analytic, per call
    virtual double bytes() const = 0;  // compulsory traffic per call: each operand read or written once
    virtual Timing time_fast(const TimingOptions& o) { return time_cpu([this] { run_fast(); }, o); }
    virtual Timing time_reference(const TimingOptions& o) { return time_cpu([this] { run_reference(); }, o); }
    virtual std::string reference_device() const { return "cpu"; }
};

// One Case per variant given (CPU kernels: the variants must be ones this host supports); the
// reference output is computed once and shared. threads: for the fast kernels and the flush.
std::vector<std::unique_ptr<Case>> make_cpu_cases(const Kernel& k, const Problem& p,
                                                  const std::vector<SimdVariant>& variants, int threads);

// Why CUDA kernels cannot run here ("" when they can): not built, or no device.
std::string cuda_unavailable();
std::unique_ptr<Case> make_cuda_case(const Kernel& k, const Problem& p);

}  // namespace ridge::kbench
