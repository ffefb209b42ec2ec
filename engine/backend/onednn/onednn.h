#pragma once
// The CPU executor on oneDNN primitives (see executor.cpp for the design).
#include <memory>

#include "engine/backend/executor.h"

namespace ridge {

std::unique_ptr<Executor> make_onednn_executor(const Graph& g, const ExecOptions& o);

}  // namespace ridge
