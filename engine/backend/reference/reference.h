#pragma once
// The reference executor: runs a graph one layer at a time through the CPU reference kernels
// (kernels/cpu/), in graph order forward and in reverse for backward, single-threaded, with one
// dense fp32 buffer per graph tensor (views are copies). It is the oracle the library backends
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

// g must outlive the executor.
std::unique_ptr<Executor> make_reference_executor(const Graph& g, const ExecOptions& o);

}  // namespace ridge
