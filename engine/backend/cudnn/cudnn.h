#pragma once
// The GPU executor on cuDNN, cuBLAS and the hand-written kernels of kernels/cuda (see
// executor.cpp for the design).
#include <memory>

#include "engine/backend/executor.h"

namespace ridge {

// Plans without touching a device; prepare() needs one and throws gpu::CudaError without.
std::unique_ptr<Executor> make_cudnn_executor(const Graph& g, const ExecOptions& o);

// Versions of the cuDNN and cuBLAS libraries loaded at run time: "9.19.0".
std::string cudnn_version();
std::string cublas_version();

}  // namespace ridge
