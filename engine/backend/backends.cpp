#include <stdexcept>

#include "engine/backend/executor.h"
#include "engine/backend/reference/reference.h"
#ifdef RIDGE_HAVE_ONEDNN
#include "engine/backend/onednn/onednn.h"
#endif
#ifdef RIDGE_HAVE_CUDNN
#include "engine/backend/cudnn/cudnn.h"
#endif

namespace ridge {

std::vector<std::string> cpu_backends() {
#ifdef RIDGE_HAVE_ONEDNN
    return {"onednn", "reference"};
#else
    return {"reference"};
#endif
}

std::vector<std::string> gpu_backends() {
#ifdef RIDGE_HAVE_CUDNN
    return {"cudnn"};
#else
    return {};
#endif
}

std::string_view precision_name(Precision p) {
    switch (p) {
        case Precision::fp32: return "fp32";
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
    }
    return "?";
}

std::string_view step_phase_name(StepPhase p) {
    switch (p) {
        case StepPhase::fwd: return "fwd";
        case StepPhase::dgrad: return "dgrad";
        case StepPhase::wgrad: return "wgrad";
        case StepPhase::loss: return "loss";
        case StepPhase::update: return "update";
    }
    return "?";
}

std::optional<Precision> parse_precision(std::string_view s) {
    for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16})
        if (precision_name(p) == s) return p;
    return std::nullopt;
}

std::unique_ptr<Executor> make_executor(std::string_view backend, const Graph& g, const ExecOptions& o) {
    bool cpu = backend == "reference" || backend == "onednn";
    if (cpu && o.precision != Precision::fp32)
        throw std::invalid_argument(cat("backend '", backend, "' computes in fp32 only, not ", precision_name(o.precision)));
    if (backend == "reference") return make_reference_executor(g, o);
#ifdef RIDGE_HAVE_ONEDNN
    if (backend == "onednn") return make_onednn_executor(g, o);
#endif
#ifdef RIDGE_HAVE_CUDNN
    if (backend == "cudnn") return make_cudnn_executor(g, o);
#endif
    std::string have;
    for (const auto& b : cpu_backends()) have += (have.empty() ? "" : ", ") + b;
    for (const auto& b : gpu_backends()) have += (have.empty() ? "" : ", ") + b;
    throw std::invalid_argument(cat("no backend '", backend, "' in this build (have: ", have, ")"));
}

}  // namespace ridge
