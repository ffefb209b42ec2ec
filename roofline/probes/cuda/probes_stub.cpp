// The GPU probes in a build without a CUDA compiler: they report why they cannot run.
#include <stdexcept>

#include "roofline/probes/cuda/probes.h"

namespace ridge::probe::gpu {

bool built_with_cuda() { return false; }
std::string unavailable_reason() {
    return "no CUDA device is available (ridge was built without CUDA: no nvcc at configure time)";
}
GpuCeilings measure(bool) { throw std::runtime_error(unavailable_reason()); }
Device device_info() { throw std::runtime_error(unavailable_reason()); }
int64_t free_memory_bytes() { throw std::runtime_error(unavailable_reason()); }
std::string driver_version() { throw std::runtime_error(unavailable_reason()); }
std::string runtime_version() { throw std::runtime_error(unavailable_reason()); }

}  // namespace ridge::probe::gpu
