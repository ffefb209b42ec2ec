#include "engine/backend/onednn/step_info.h"

#include <oneapi/dnnl/dnnl_debug.h>

#include <algorithm>

namespace ridge::onednn {

namespace {

std::string arg_name(int arg) {
    switch (arg) {
        case DNNL_ARG_SRC: return "src";
        case DNNL_ARG_SRC_1: return "src_1";
        case DNNL_ARG_SRC_2: return "src_2";
        case DNNL_ARG_DST: return "dst";
        case DNNL_ARG_WEIGHTS: return "weights";
        case DNNL_ARG_BIAS: return "bias";
        case DNNL_ARG_MEAN: return "mean";
        case DNNL_ARG_VARIANCE: return "variance";
        case DNNL_ARG_SCALE: return "scale";
        case DNNL_ARG_SHIFT: return "shift";
        case DNNL_ARG_WORKSPACE: return "workspace";
        case DNNL_ARG_SCRATCHPAD: return "scratchpad";
        case DNNL_ARG_DIFF_SRC: return "diff_src";
        case DNNL_ARG_DIFF_DST: return "diff_dst";
        case DNNL_ARG_DIFF_WEIGHTS: return "diff_weights";
        case DNNL_ARG_DIFF_BIAS: return "diff_bias";
        case DNNL_ARG_DIFF_SCALE: return "diff_scale";
        case DNNL_ARG_DIFF_SHIFT: return "diff_shift";
    }
    if (arg >= DNNL_ARG_MULTIPLE_SRC && arg < DNNL_ARG_MULTIPLE_SRC + 1024)
        return cat("src_", arg - DNNL_ARG_MULTIPLE_SRC);
    if (arg >= DNNL_ARG_ATTR_MULTIPLE_POST_OP_BASE) return "post_op";
    if (arg & DNNL_ARG_ATTR_POST_OP_DW) return "dw_" + arg_name(arg & ~DNNL_ARG_ATTR_POST_OP_DW);
    return cat("arg_", arg);
}

// A blocked layout named as oneDNN's verbose output names it: the dimensions from the outermost
// (largest stride) in, a capital for one that is split into blocks, then the inner blocks ("acdb"
// channels last, "aBcd16b" nChw16c). Of two equal strides, the dimension with more than one outer
// step is the outer one (the other lies within its block or has size 1); further ties keep the
// dimensions' order. A view whose strides are not the dense ones of that order (a slice of a larger
// tensor) adds them in parentheses, so equal names are equal layouts.
std::string layout_name(const dnnl_memory_desc_t& d) {
    if (d.format_kind != dnnl_blocked) return "";
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    std::vector<dnnl_dim_t> blocks(size_t(d.ndims), 1);
    std::string name, inner, strides;
    for (int k = 0; k < b.inner_nblks; ++k) {
        blocks[size_t(b.inner_idxs[k])] *= b.inner_blks[k];
        inner += cat(b.inner_blks[k], char('a' + b.inner_idxs[k]));
    }
    auto outer_steps = [&](int i) { return d.padded_dims[i] / blocks[size_t(i)]; };
    std::vector<int> order(size_t(d.ndims));
    for (int i = 0; i < d.ndims; ++i) order[size_t(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        if (b.strides[x] != b.strides[y]) return b.strides[x] > b.strides[y];
        return outer_steps(x) > 1 && outer_steps(y) == 1;
    });
    dnnl_dim_t dense = 1;
    for (dnnl_dim_t k : blocks) dense *= k;
    bool strided = false;
    for (size_t j = order.size(); j-- > 0;) {
        int i = order[j];
        if (outer_steps(i) != 1 && b.strides[i] != dense) strided = true;
        dense *= outer_steps(i);
    }
    for (int i : order) {
        name += char((blocks[size_t(i)] > 1 ? 'A' : 'a') + i);
        strides += cat(strides.empty() ? "" : ",", b.strides[i]);
    }
    return name + inner + (strided ? "(" + strides + ")" : "");
}

}  // namespace

StepInfo describe_step(const Plan& p, const Step& s) {
    StepInfo info;
    info.node = s.node;
    info.threads = s.threads;
    info.phase = s.phase;
    if (!s.pd) {
        info.primitive = "kernel";
        info.impl = "ridge:" + s.name;  // the prefix is what profile/expected.cpp tells kernels by
    } else {
        info.primitive = dnnl_prim_kind2str(dnnl_primitive_kind_t(s.pd.get_kind()));
        info.impl = s.pd.impl_info_str();
    }
    for (const auto& [arg, m] : s.args) {
        if (s.pd && arg == DNNL_ARG_SCRATCHPAD) continue;
        const dnnl_memory_desc_t& d = p.mems[size_t(m)].md.data;
        const bool named = !s.pd && size_t(arg) < s.arg_names.size();
        StepArg a{s.pd ? arg_name(arg) : named ? s.arg_names[size_t(arg)] : cat("arg_", arg), {}, {}, layout_name(d)};
        for (int i = 0; i < d.ndims; ++i) {
            a.dims.push_back(d.dims[i]);
            a.padded.push_back(d.padded_dims[i]);
        }
        info.args.push_back(std::move(a));
    }
    return info;
}

}  // namespace ridge::onednn
