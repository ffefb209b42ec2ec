// CUPTI range profiling on device 0 (CUDA 13); first ran on an H200 (Firecracker VM, driver
// 580.159.04) on 2026-12-04, where `ridge profile resnet18 --device cuda` counted every layer.
//
// The sequence: initialize the profiler, enable range profiling on the current context, read the
// chip's name and counter availability, build the configuration image of gpu_metrics() with the
// host API, size and initialize a counter-data image for the step's ranges, set user ranges with
// user replay, then per pass start / push and pop a range per step / stop; finally decode and
// evaluate each range's metrics on the host.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <cmath>
#include <deque>
#include <stdexcept>

#include "engine/shape.h"
#include "profile/gpu.h"
#include "profile/gpu_metrics.h"

#define RIDGE_CUPTI_CHECK(expr)                                                                    \
    do {                                                                                           \
        CUptiResult ridge_r_ = (expr);                                                             \
        if (ridge_r_ != CUPTI_SUCCESS) {                                                           \
            const char* ridge_s_ = nullptr;                                                        \
            cuptiGetResultString(ridge_r_, &ridge_s_);                                             \
            throw std::runtime_error(::ridge::cat("CUPTI call ", #expr, " failed: ",               \
                                                  ridge_s_ ? ridge_s_ : "?", " at ", __FILE__, ":", \
                                                  __LINE__));                                      \
        }                                                                                          \
    } while (0)

namespace ridge::profile {

namespace {

std::string result_string(CUptiResult r) {
    const char* s = nullptr;
    cuptiGetResultString(r, &s);
    return s ? s : "unknown CUPTI error";
}

template <typename P>
P params(size_t size) {
    P p{};
    p.structSize = size;
    return p;
}

class CuptiCounters final : public CounterSource {
public:
    CuptiCounters() : counters_(gpu_metrics()) {
        for (const Counter& c : counters_) names_.push_back(c.name.c_str());
    }

    ~CuptiCounters() override {
        if (object_) {
            auto p = params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
            p.pRangeProfilerObject = object_;
            cuptiRangeProfilerDisable(&p);
        }
        if (host_) {
            auto p = params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
            p.pHostObject = host_;
            cuptiProfilerHostDeinitialize(&p);
        }
        if (initialized_) {
            auto p = params<CUpti_Profiler_DeInitialize_Params>(CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
            cuptiProfilerDeInitialize(&p);
        }
    }

    // Everything that can fail for want of a device or of privileges, before any work runs.
    bool open(std::string* why) {
        if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) {
            cudaGetLastError();
            *why = "no CUDA device to profile";
            return false;
        }
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
            found != cudaDriverEntryPointSuccess || !fn) {
            *why = "the CUDA driver offers no cuCtxGetCurrent";
            return false;
        }
        CUcontext ctx = nullptr;
        reinterpret_cast<CUresult (*)(CUcontext*)>(fn)(&ctx);

        auto init = params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
        if (CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
            *why = cat("cuptiProfilerInitialize: ", result_string(r));
            return false;
        }
        initialized_ = true;

        auto chip = params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
        chip.deviceIndex = 0;
        RIDGE_CUPTI_CHECK(cuptiDeviceGetChipName(&chip));
        chip_ = chip.pChipName;

        auto avail = params<CUpti_Profiler_GetCounterAvailability_Params>(
            CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
        avail.ctx = ctx;
        RIDGE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));
        availability_.resize(avail.counterAvailabilityImageSize);
        avail.pCounterAvailabilityImage = availability_.data();
        RIDGE_CUPTI_CHECK(cuptiProfilerGetCounterAvailability(&avail));

        auto enable = params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
        enable.ctx = ctx;
        if (CUptiResult r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS) {
            *why = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                       ? "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: this GPU's counters are restricted to administrators "
                         "(NVreg_RestrictProfilingToAdminUsers=1); run as root or lift the restriction"
                       : cat("cuptiRangeProfilerEnable: ", result_string(r));
            return false;
        }
        object_ = enable.pRangeProfilerObject;

        auto host = params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
        host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        host.pChipName = chip_.c_str();
        host.pCounterAvailabilityImage = availability_.data();
        RIDGE_CUPTI_CHECK(cuptiProfilerHostInitialize(&host));
        host_ = host.pHostObject;

        auto add = params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
            CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
        add.pHostObject = host_;
        add.ppMetricNames = names_.data();
        add.numMetrics = names_.size();
        RIDGE_CUPTI_CHECK(cuptiProfilerHostConfigAddMetrics(&add));
        auto size = params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
            CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
        size.pHostObject = host_;
        RIDGE_CUPTI_CHECK(cuptiProfilerHostGetConfigImageSize(&size));
        config_.resize(size.configImageSize);
        auto image = params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
        image.pHostObject = host_;
        image.configImageSize = config_.size();
        image.pConfigImage = config_.data();
        RIDGE_CUPTI_CHECK(cuptiProfilerHostGetConfigImage(&image));
        auto passes = params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
        passes.configImageSize = config_.size();
        passes.pConfigImage = config_.data();
        RIDGE_CUPTI_CHECK(cuptiProfilerHostGetNumOfPasses(&passes));
        passes_ = int(passes.numOfPasses);
        return true;
    }

    std::string describe() const override {
        return cat("CUPTI range profiler on ", chip_, ", user ranges per step, user replay, ", passes_, " passes");
    }
    std::string scope() const override {
        return "thread instructions of the FP32/FP16/FP64 pipes (FMA as 2) and tensor-core operations; not SFU "
               "(exp, rsqrt) or integer work";
    }
    const std::vector<Counter>& counters() const override { return counters_; }
    int passes() const override { return passes_; }

    void prepare(size_t ranges) override {
        ranges_ = ranges;
        auto size = params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
            CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
        size.pRangeProfilerObject = object_;
        size.pMetricNames = names_.data();
        size.numMetrics = names_.size();
        size.maxNumOfRanges = ranges;
        size.maxNumRangeTreeNodes = uint32_t(ranges);
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataSize(&size));
        data_.assign(size.counterDataSize, 0);
        auto init = params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
        init.pRangeProfilerObject = object_;
        init.counterDataSize = data_.size();
        init.pCounterData = data_.data();
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerCounterDataImageInitialize(&init));
        auto set = params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
        set.pRangeProfilerObject = object_;
        set.configSize = config_.size();
        set.pConfig = config_.data();
        set.counterDataImageSize = data_.size();
        set.pCounterDataImage = data_.data();
        set.range = CUPTI_UserRange;
        set.replayMode = CUPTI_UserReplay;
        set.maxRangesPerPass = ranges;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerSetConfig(&set));
    }

    void begin_pass(int) override {
        auto p = params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = object_;
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerStart(&p));
    }
    void begin_range(std::string_view name) override {
        names_held_.emplace_back(name);
        auto p = params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = object_;
        p.pRangeName = names_held_.back().c_str();
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerPushRange(&p));
    }
    void end_range() override {
        auto p = params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = object_;
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerPopRange(&p));
    }
    void end_pass() override {
        auto p = params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
        p.pRangeProfilerObject = object_;
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerStop(&p));
        all_submitted_ = p.isAllPassSubmitted != 0;
    }

    std::vector<std::vector<int64_t>> results() override {
        if (!all_submitted_)
            throw std::runtime_error(cat("CUPTI still wants passes after the ", passes_, " its host API announced"));
        auto decode = params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
        decode.pRangeProfilerObject = object_;
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerDecodeData(&decode));
        if (decode.numOfRangeDropped > 0)
            throw std::runtime_error(cat("CUPTI dropped ", decode.numOfRangeDropped, " of ", ranges_, " ranges"));
        auto info = params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
            CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
        info.pCounterDataImage = data_.data();
        info.counterDataImageSize = data_.size();
        RIDGE_CUPTI_CHECK(cuptiRangeProfilerGetCounterDataInfo(&info));
        std::vector<std::vector<int64_t>> out;
        std::vector<double> values(names_.size());
        for (size_t r = 0; r < info.numTotalRanges; ++r) {
            auto eval = params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
                CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
            eval.pHostObject = host_;
            eval.pCounterDataImage = data_.data();
            eval.counterDataImageSize = data_.size();
            eval.rangeIndex = r;
            eval.ppMetricNames = names_.data();
            eval.numMetrics = names_.size();
            eval.pMetricValues = values.data();
            RIDGE_CUPTI_CHECK(cuptiProfilerHostEvaluateToGpuValues(&eval));
            std::vector<int64_t> row;
            for (double v : values) row.push_back(std::llround(v));
            out.push_back(std::move(row));
        }
        return out;
    }

private:
    std::vector<Counter> counters_;
    std::vector<const char*> names_;
    std::deque<std::string> names_held_;  // range names CUPTI may read until decoding
    bool initialized_ = false, all_submitted_ = false;
    std::string chip_;
    std::vector<uint8_t> availability_, config_, data_;
    CUpti_RangeProfiler_Object* object_ = nullptr;
    CUpti_Profiler_Host_Object* host_ = nullptr;
    int passes_ = 0;
    size_t ranges_ = 0;
};

}  // namespace

std::unique_ptr<CounterSource> open_gpu_counters(std::string* why) {
    auto c = std::make_unique<CuptiCounters>();
    if (!c->open(why)) return nullptr;
    return c;
}

std::function<void()> gpu_cache_flush() {
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0) != cudaSuccess || l2 <= 0) {
        cudaGetLastError();
        return {};
    }
    size_t bytes = 2 * size_t(l2);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        cudaGetLastError();
        return {};
    }
    std::shared_ptr<void> buffer(p, [](void* q) { cudaFree(q); });
    return [buffer, bytes] {
        cudaMemset(buffer.get(), 1, bytes);
        cudaDeviceSynchronize();
    };
}

}  // namespace ridge::profile
