#pragma once
// The reference executor: runs a graph one layer at a time through the CPU reference kernels
// (kernels/cpu/), in graph order forward and in reverse for backward, single-threaded, with one
// dense buffer per graph tensor (views are copies). It is the oracle the library backends
// are compared with, not a fast path.
//
// Beyond executor.h:
// - ExecOptions::fused and ::threads are ignored: every layer runs on its own, on one thread, so
//   each layer's time is its own in either mode.
// - With time_layers(true), backward calls each layer's kernel twice, once for the input gradients
//   (dgrad) and once for the weight gradients (wgrad), and times each call; the gradients are the
//   same as with timing off.
// - The loss reads the graph's output as (N, numel/N) logits, so a fragment whose output is not
//   (N, classes) still trains and has an input gradient; labels must lie in [0, numel/N).
// - input_gradient() is empty when the graph's input does not require a gradient.
#include <memory>

#include "engine/backend/executor.h"

namespace ridge {

// g must outlive the executor. fp32 tensors: make_executor("reference", ...) gives this one.
std::unique_ptr<Executor> make_reference_executor(const Graph& g, const ExecOptions& o);

// The same executor storing every tensor in double and running the kernels' double instantiation.
// Its own rounding (about 1e-16 per operation) is far below float32's, so tests measure a float
// backend's error against it, and finite differences through it can use small steps. The
// Executor interface loads float weights exactly and hands results back rounded to float; the
// methods below keep double throughout.
class Reference64 : public Executor {
public:
    virtual void load64(Weights64 w) = 0;  // taken over: a caller done with w moves it in
    virtual void set_input64(const HostTensor64& x, const std::vector<int32_t>& labels) = 0;
    virtual double backward64() = 0;  // backward(), its loss in double
    virtual const HostTensor64& output64() const = 0;
    virtual const Weights64& weights64() const = 0;
    virtual const Weights64& gradients64() const = 0;
    virtual const HostTensor64& input_gradient64() const = 0;
};

std::unique_ptr<Reference64> make_reference64(const Graph& g, Mode mode);

// The float executor with every sum accumulated in float too, in the kernels' plain order (the
// least accurate a float32 library could be): tests take its distance from make_reference64 as the
// size of float32 rounding in a net, against which they judge the float backends. Not an oracle.
std::unique_ptr<Executor> make_reference_float_sums(const Graph& g, Mode mode);

}  // namespace ridge
