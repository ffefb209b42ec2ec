// A build without the CUDA kernels (no CUDA compiler or no cuDNN found at configure): the CUDA
// kernels are still named by --list, and asking for one says why it cannot run.
#include <stdexcept>

#include "bench/kernels/cases.h"

namespace ridge::kbench {

std::string cuda_unavailable() {
    return "this build has no CUDA kernels (configure found no CUDA compiler, or no cuDNN and cuBLAS)";
}

std::unique_ptr<Case> make_cuda_case(const Kernel& k, const Problem&) {
    throw std::logic_error("make_cuda_case: " + k.name + ": " + cuda_unavailable());
}

}  // namespace ridge::kbench
