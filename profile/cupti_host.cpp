#include "profile/cupti_host.h"

#include <cupti_profiler_host.h>

#include "engine/shape.h"

namespace ridge::profile {

namespace {

// CUPTI's parameter structs: zeroed, with the size of the version compiled against.
template <typename P>
P params(size_t size) {
    P p{};
    p.structSize = size;
    return p;
}

std::string result_string(CUptiResult r) {
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    return cat(s ? s : "unknown CUPTI error", " (", int(r), ")");
}

// The host object of one chip, released when done.
class Host {
public:
    explicit Host(const std::string& chip) {
        auto p = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
        p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        p.pChipName = chip.c_str();
        status = cuptiProfilerHostInitialize(&p);
        object = status == CUPTI_SUCCESS ? p.pHostObject : nullptr;
    }
    ~Host() {
        if (!object) return;
        auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        p.pHostObject = object;
        cuptiProfilerHostDeinitialize(&p);
    }
    Host(const Host&) = delete;
    Host& operator=(const Host&) = delete;
    CUptiResult status;
    CUpti_Profiler_Host_Object* object;
};

}  // namespace

std::vector<std::string> cupti_chips(std::string* error) {
    auto p = params<CUpti_Profiler_Host_GetSupportedChips_Params>(CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE);
    CUptiResult r = cuptiProfilerHostGetSupportedChips(&p);
    if (r != CUPTI_SUCCESS) {
        *error = cat("cuptiProfilerHostGetSupportedChips: ", result_string(r));
        return {};
    }
    return std::vector<std::string>(p.ppChipNames, p.ppChipNames + p.numChips);
}

MetricCheck check_metrics(const std::string& chip, const std::vector<std::string>& metrics) {
    MetricCheck c;
    c.chip = chip;
    Host host(chip);
    if (!host.object) {
        c.error = cat("cuptiProfilerHostInitialize for chip ", chip, ": ", result_string(host.status));
        return c;
    }
    std::vector<const char*> known;
    for (const std::string& m : metrics) {
        auto q = params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
        q.pHostObject = host.object;
        q.pMetricName = m.c_str();
        MetricCheck::Metric out;
        out.name = m;
        if (cuptiProfilerHostGetMetricProperties(&q) == CUPTI_SUCCESS) {
            out.known = true;
            out.unit = q.pDimUnit ? q.pDimUnit : "";
            out.description = q.pDescription ? q.pDescription : "";
            known.push_back(m.c_str());
        }
        c.metrics.push_back(out);
    }
    if (known.empty()) return c;
    auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host.object;
    add.ppMetricNames = known.data();
    add.numMetrics = known.size();
    if (CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
        c.error = cat("cuptiProfilerHostConfigAddMetrics: ", result_string(r));
        return c;
    }
    auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host.object;
    if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS) {
        c.error = cat("cuptiProfilerHostGetConfigImageSize: ", result_string(r));
        return c;
    }
    std::vector<uint8_t> image(size.configImageSize);
    auto get = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    get.pHostObject = host.object;
    get.configImageSize = image.size();
    get.pConfigImage = image.data();
    if (CUptiResult r = cuptiProfilerHostGetConfigImage(&get); r != CUPTI_SUCCESS) {
        c.error = cat("cuptiProfilerHostGetConfigImage: ", result_string(r));
        return c;
    }
    auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    passes.configImageSize = image.size();
    passes.pConfigImage = image.data();
    if (CUptiResult r = cuptiProfilerHostGetNumOfPasses(&passes); r != CUPTI_SUCCESS) {
        c.error = cat("cuptiProfilerHostGetNumOfPasses: ", result_string(r));
        return c;
    }
    c.config_bytes = image.size();
    c.passes = passes.numOfPasses;
    return c;
}

}  // namespace ridge::profile
