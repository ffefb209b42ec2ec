#pragma once
// One checked-call macro for the CUDA runtime: the failing expression, file and line, thrown as
// CudaError so the CLI prints one line. Check the last error after every launch:
//   kernel<<<grid, block>>>(...);
//   RIDGE_CUDA_CHECK_LAUNCH();
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ridge::gpu {

struct CudaError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void cuda_fail(cudaError_t e, const char* expr, const char* file, int line) {
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + cudaGetErrorName(e) + " (" +
                    cudaGetErrorString(e) + ")");
}

}  // namespace ridge::gpu

#define RIDGE_CUDA_CHECK(expr)                                                          \
    do {                                                                                \
        cudaError_t ridge_cuda_status_ = (expr);                                        \
        if (ridge_cuda_status_ != cudaSuccess)                                          \
            ::ridge::gpu::cuda_fail(ridge_cuda_status_, #expr, __FILE__, __LINE__);     \
    } while (0)

#define RIDGE_CUDA_CHECK_LAUNCH() RIDGE_CUDA_CHECK(cudaGetLastError())
