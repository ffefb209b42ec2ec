#include "profile/gpu_metrics.h"

#include "engine/shape.h"

namespace ridge::profile {

std::vector<Counter> gpu_metrics() {
    auto sass = [](const char* op, const char* label, int64_t weight) {
        return Counter{cat("sm__sass_thread_inst_executed_op_", op, "_pred_on.sum"), label, Measure::flops, weight};
    };
    return {sass("ffma", "fp32 fma", 2),
            sass("fadd", "fp32 add", 1),
            sass("fmul", "fp32 mul", 1),
            sass("hfma", "fp16 fma", 2),
            sass("hadd", "fp16 add", 1),
            sass("hmul", "fp16 mul", 1),
            sass("dfma", "fp64 fma", 2),
            sass("dadd", "fp64 add", 1),
            sass("dmul", "fp64 mul", 1),
            {"sm__ops_path_tensor_src_fp16.sum", "tensor fp16", Measure::flops, 1},
            {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", "tensor bf16", Measure::flops, 1},
            {"sm__ops_path_tensor_src_tf32_dst_fp32.sum", "tensor tf32", Measure::flops, 1},
            {"dram__bytes_read.sum", "dram read", Measure::dram_read, 1},
            {"dram__bytes_write.sum", "dram write", Measure::dram_write, 1},
            {"lts__t_bytes.sum", "l2", Measure::l2_bytes, 1}};
}

}  // namespace ridge::profile
