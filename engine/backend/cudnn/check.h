#pragma once
// One checked-call macro per library: cuDNN and cuBLAS calls that fail throw LibraryError naming
// the call, file, line and status, like RIDGE_CUDA_CHECK (kernels/cuda/check.h) for the runtime;
// the executor adds the layer, and the CLI prints the whole as one line.
#include <cublas_v2.h>
#include <cudnn.h>

#include <stdexcept>
#include <string>

#include "kernels/cuda/check.h"

namespace ridge::gpu {

struct LibraryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

[[noreturn]] inline void library_fail(const char* lib, const char* status, const char* expr, const char* file,
                                      int line) {
    throw LibraryError(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + lib + " " + status);
}

}  // namespace ridge::gpu

#define RIDGE_CUDNN_CHECK(expr)                                                                              \
    do {                                                                                                     \
        cudnnStatus_t ridge_cudnn_status_ = (expr);                                                          \
        if (ridge_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                                     \
            ::ridge::gpu::library_fail("cuDNN", cudnnGetErrorString(ridge_cudnn_status_), #expr, __FILE__, \
                                       __LINE__);                                                            \
    } while (0)

#define RIDGE_CUBLAS_CHECK(expr)                                                                               \
    do {                                                                                                       \
        cublasStatus_t ridge_cublas_status_ = (expr);                                                          \
        if (ridge_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                                     \
            ::ridge::gpu::library_fail("cuBLAS", cublasGetStatusString(ridge_cublas_status_), #expr, __FILE__, \
                                       __LINE__);                                                              \
    } while (0)
