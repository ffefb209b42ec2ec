#include <stdexcept>

#include "engine/backend/executor.h"
#include "engine/backend/reference/reference.h"
#ifdef RIDGE_HAVE_ONEDNN
#include "engine/backend/onednn/onednn.h"
#endif

namespace ridge {

std::vector<std::string> cpu_backends() {
#ifdef RIDGE_HAVE_ONEDNN
    return {"onednn", "reference"};
#else
    return {"reference"};
#endif
}

std::vector<std::string> gpu_backends() { return {}; }

std::unique_ptr<Executor> make_executor(std::string_view backend, const Graph& g, const ExecOptions& o) {
    if (backend == "reference") return make_reference_executor(g, o);
#ifdef RIDGE_HAVE_ONEDNN
    if (backend == "onednn") return make_onednn_executor(g, o);
#endif
    std::string have;
    for (const auto& b : cpu_backends()) have += (have.empty() ? "" : ", ") + b;
    throw std::invalid_argument(cat("no backend '", backend, "' in this build (have: ", have, ")"));
}

}  // namespace ridge
