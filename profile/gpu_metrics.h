#pragma once
// What ridge reads on an NVIDIA GPU, as CUPTI metrics (Nsight Compute's names), and what each is
// worth: the FLOPs of the FP32/FP16/FP64 pipes from thread instructions (an FMA is 2), tensor-core
// operations (already 2 per multiply-add), DRAM and L2 bytes. The host-side check (cupti_host.h)
// asks CUPTI whether a chip offers them all and in how many passes.
#include "profile/counters.h"

namespace ridge::profile {

std::vector<Counter> gpu_metrics();

}  // namespace ridge::profile
