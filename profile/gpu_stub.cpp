// Builds without CUPTI or without nvcc: the GPU counters are absent and say why.
#include "profile/gpu.h"

namespace ridge::profile {

std::unique_ptr<CounterSource> open_gpu_counters(std::string* why) {
    *why = "this build has no CUPTI (configure found no CUDA toolkit with cupti_range_profiler.h)";
    return nullptr;
}

std::function<void()> gpu_cache_flush() { return {}; }

}  // namespace ridge::profile
