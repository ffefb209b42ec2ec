#include "engine/backend/onednn/fusion.h"

#include <algorithm>
#include <climits>

#include "engine/backend/fold.h"
#include "engine/ops/norm.h"

namespace ridge::onednn {

namespace {

bool is_identity(const Op& op) {
    return std::holds_alternative<Dropout>(op) || std::holds_alternative<StochasticDepth>(op);
}

bool is_relu(const Op& op) {
    const auto* a = std::get_if<Activation>(&op);
    return a && a->fn == Activation::Fn::relu;
}

// SiLU over a map runs after the conv, in place, as kernels/simd's silu_forward (activation.cpp),
// not as oneDNN's swish post-op: that post-op evaluates about 39 cycles a 16-lane vector on Zen 4
// inside the conv's loop, and the separate pass over the conv's output, still in cache at batch 1,
// costs less than the difference. Measured on a 2-core Zen 4, rounds alternated: efficientnet_b0
// batch 1 7.0 -> 6.3 ms split off (five rounds), 6.7 -> 5.8 ms with the pass in place (three);
// batch 16 104 -> 89 ms and efficientnet_b7 batch 1 463 -> 418 ms (three, split off). On a
// squeeze-excitation's pooled vector (one value a channel) it stays in the conv's group: oneDNN's
// inner product takes it as a post-op, kernels/simd's linear_rows (on up to 32 rows, conv2d.cpp)
// in the same step, after.
bool silu_over_map(const Graph& g, const Node& n) {
    const auto* a = std::get_if<Activation>(&n.op);
    const Shape& s = g.tensor(n.output).shape;
    return a && a->fn == Activation::Fn::silu && s.size() == 4 && s[2] * s[3] > 1;
}

struct Chains {
    const Graph& g;
    std::vector<std::vector<int>> consumers;  // per tensor
    std::vector<int>& group_of;

    // The one layer that reads t, or -1 when several do, it is the graph's output or taken already.
    int sole(int t) const {
        if (t == g.output() || consumers[size_t(t)].size() != 1) return -1;
        int c = consumers[size_t(t)][0];
        return group_of[size_t(c)] < 0 ? c : -1;
    }

    int out(int node) const { return g.nodes()[size_t(node)].output; }

    // Activations, identities and (once, when allowed) a residual add after the group's output.
    void extend(Group& gr, bool allow_sum) {
        bool summed = false;
        for (int c = sole(out(gr.nodes.back())); c >= 0; c = sole(out(c))) {
            const Node& n = g.nodes()[size_t(c)];
            int t = out(gr.nodes.back());
            if (is_identity(n.op)) {
            } else if (std::holds_alternative<Activation>(n.op)) {
                if (silu_over_map(g, n)) break;
                gr.post.push_back({c, PostOp::Kind::eltwise});
            } else if (std::holds_alternative<Add>(n.op) && allow_sum && !summed) {
                int other = n.inputs[0] == t ? n.inputs[1] : n.inputs[0];
                if (other == t || g.tensor(other).shape != g.tensor(t).shape) break;
                gr.post.push_back({c, PostOp::Kind::sum, other});
                summed = true;
            } else {
                break;
            }
            gr.nodes.push_back(c);
        }
    }

    // The depthwise conv that alone reads a pointwise conv's chain, with its folded batchnorm and
    // activations, as one more post-op (fusion.h). oneDNN 2.6 fuses only kernel 3, padding 1 on
    // every side and stride 1 or 2 (dnnl_post_ops_append_dw), whose output is ceil(H / stride).
    void depthwise(Group& gr, const std::vector<int>& folded_bn) {
        const Node& lead = g.nodes()[size_t(gr.lead)];
        const auto* pw = std::get_if<Conv2d>(&lead.op);
        const Shape& xs = g.tensor(lead.inputs[0]).shape;
        if (!pw || pw->kernel.h != 1 || pw->kernel.w != 1 || pw->stride.h != 1 || pw->stride.w != 1) return;
        if (pw->G != 1 || pw->pad.top || pw->pad.bottom || pw->pad.left || pw->pad.right) return;
        if (xs[2] * xs[3] == 1) return;  // an inner product (conv2d.cpp)
        // What fusing saves is writing and reading back the expanded tensor, which pays where that
        // tensor spills from the caches. mobilenet_v2 at batch 16 on a 2-core Zen 4 (1 MiB L2 per
        // core, 32 MiB L3), pair by pair, split -> fused: 77 MB (16 -> 96 at 112x112, stride 2)
        // 13.3 -> 5.2 ms, 29 MB 5.2 -> 3.5, 9.6 MB 1.7 -> 1.3; 7.2 MB 1.8 -> 1.8; 4.8 MB 0.87 ->
        // 0.95; 3 MB (7x7, where oneDNN fuses only in its reference, which runs the two in turn)
        // 1.15 -> 1.34.
        if (numel(g.tensor(lead.output).shape) * int64_t(sizeof(float)) < (int64_t(8) << 20)) return;
        for (const PostOp& p : gr.post)
            if (p.kind == PostOp::Kind::sum) return;
        const int c = sole(out(gr.nodes.back()));
        const auto* dw = c >= 0 ? std::get_if<Conv2d>(&g.nodes()[size_t(c)].op) : nullptr;
        if (!dw || dw->G != pw->K || dw->K != pw->K || dw->kernel.h != 3 || dw->kernel.w != 3) return;
        if (dw->stride.h != dw->stride.w || dw->stride.h > 2 || dw->dilation.h != 1 || dw->dilation.w != 1) return;
        if (dw->pad.top != 1 || dw->pad.bottom != 1 || dw->pad.left != 1 || dw->pad.right != 1) return;
        // oneDNN 2.6's jit_1x1 kernels hand the depthwise kernel its bias only when the 1x1 conv has
        // one of its own: a biased depthwise conv after an unbiased 1x1 conv read an unset pointer
        // and crashed.
        const bool dw_bias = dw->bias || folded_bn[size_t(c)] >= 0;
        if (dw_bias && !pw->bias && gr.bn < 0) return;
        PostOp post{c, PostOp::Kind::depthwise};
        gr.nodes.push_back(c);
        if (int bn = folded_bn[size_t(c)]; bn >= 0) {
            post.bn = bn;
            gr.nodes.push_back(bn);
        }
        gr.post.push_back(post);
        extend(gr, false);
    }
};

// The scales that fold into the matmul reading them (MatmulScale), other than those folded into a
// linear; consumers: per tensor, the layers that read it.
std::vector<MatmulScale> matmul_scales(const Graph& g, const std::vector<ScaleFold>& folded,
                                       const std::vector<std::vector<int>>& consumers) {
    std::vector<MatmulScale> found;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const Node& n = g.nodes()[i];
        const auto* scale = std::get_if<Scale>(&n.op);
        if (!scale || !foldable_scale(scale->s)) continue;
        if (std::any_of(folded.begin(), folded.end(), [&](const ScaleFold& f) { return f.scale == int(i); })) continue;
        const std::vector<int>& r = consumers[size_t(n.output)];
        if (n.output == g.output() || r.size() != 1 || !std::holds_alternative<Matmul>(g.nodes()[size_t(r[0])].op))
            continue;
        found.push_back({int(i), r[0], scale->s});
    }
    return found;
}

}  // namespace

bool concat_of_channels(const Graph& g, const Op& op, int out) {
    const auto* c = std::get_if<Concat>(&op);
    const Shape& ys = g.tensor(out).shape;
    return c && ys.size() == 4 && normalize_dim(c->dim, ys.size()) == 1;
}

Fusion find_groups(const Graph& g, const ExecOptions& o) {
    Fusion f;
    f.group_of.assign(g.nodes().size(), -1);
    if (!o.fused) return f;
    if (o.mode == Mode::infer) f.scales = scale_folds(g);
    Chains ch{g, std::vector<std::vector<int>>(size_t(g.output()) + 1), f.group_of};
    for (size_t i = 0; i < g.nodes().size(); ++i)
        for (int t : g.nodes()[i].inputs) ch.consumers[size_t(t)].push_back(int(i));
    f.matmul_scales = matmul_scales(g, f.scales, ch.consumers);

    bool infer = o.mode == Mode::infer;
    std::vector<int> folded_bn(g.nodes().size(), -1);  // per conv
    const std::vector<int> folds = batchnorm_folds(g);
    for (size_t i = 0; i < folds.size(); ++i)
        if (folds[i] >= 0) folded_bn[size_t(folds[i])] = int(i);
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        if (f.group_of[i] >= 0) continue;
        const Op& op = g.nodes()[i].op;
        Group gr{int(i), -1, {}, -1, {int(i)}};
        if (infer && (std::holds_alternative<Conv2d>(op) || std::holds_alternative<Linear>(op))) {
            if (int bn = folded_bn[i]; bn >= 0) {
                gr.bn = bn;
                gr.nodes.push_back(bn);
            }
            ch.extend(gr, true);
            ch.depthwise(gr, folded_bn);
        } else if (infer && concat_of_channels(g, op, ch.out(int(i)))) {
            // A concatenation read only by a batchnorm (DenseNet's every layer) is written by it.
            int bn = ch.sole(ch.out(int(i)));
            if (bn >= 0 && std::holds_alternative<BatchNorm>(g.nodes()[size_t(bn)].op)) {
                gr.bn = bn;
                gr.nodes.push_back(bn);
                int c = ch.sole(ch.out(bn));
                if (c >= 0 && is_relu(g.nodes()[size_t(c)].op)) {
                    gr.post.push_back({c, PostOp::Kind::eltwise});
                    gr.nodes.push_back(c);
                }
            }
        } else if (std::holds_alternative<BatchNorm>(op)) {
            // oneDNN fuses only a plain ReLU into batchnorm, in either direction of training.
            int c = ch.sole(ch.out(int(i)));
            if (c >= 0 && is_relu(g.nodes()[size_t(c)].op)) {
                gr.post.push_back({c, PostOp::Kind::eltwise});
                gr.nodes.push_back(c);
            }
        }
        if (gr.nodes.size() < 2) continue;
        gr.last = gr.nodes.back();
        for (int n : gr.nodes) f.group_of[size_t(n)] = int(f.groups.size());
        f.groups.push_back(std::move(gr));
    }
    return f;
}

std::vector<int> last_reader(const Graph& g, const Fusion& f) {
    // The memory a tensor may live in: its storage, or, for a permutation, its input's (the plan
    // makes a permutation a view where the input's layout allows, layout.cpp), as for a folded
    // scale (always a view).
    const size_t T = size_t(g.output()) + 1;
    std::vector<bool> viewed(g.nodes().size(), false);  // layers whose output the plan makes a view
    for (size_t i = 0; i < g.nodes().size(); ++i) viewed[i] = std::holds_alternative<Permute>(g.nodes()[i].op);
    for (const ScaleFold& s : f.scales) viewed[size_t(s.scale)] = true;
    for (const MatmulScale& s : f.matmul_scales) viewed[size_t(s.scale)] = true;
    std::vector<int> root(T);
    for (size_t t = 0; t < T; ++t) {
        const TensorInfo& ti = g.tensor(int(t));
        if (ti.producer >= 0 && viewed[size_t(ti.producer)]) root[t] = root[size_t(g.nodes()[size_t(ti.producer)].inputs[0])];
        else root[t] = size_t(ti.storage) == t ? int(t) : root[size_t(ti.storage)];
    }
    std::vector<int> last(T, -1);
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const int gi = f.group_of.empty() ? -1 : f.group_of[i];
        const int at = gi >= 0 ? f.groups[size_t(gi)].last : int(i);
        for (int t : g.nodes()[i].inputs) {
            int r = root[size_t(t)];
            last[size_t(r)] = std::max(last[size_t(r)], at);
        }
    }
    last[size_t(root[size_t(g.output())])] = INT_MAX;
    last[size_t(root[0])] = INT_MAX;
    for (size_t t = 0; t < T; ++t) last[size_t(g.tensor(int(t)).storage)] = last[size_t(root[t])];
    return last;
}

}  // namespace ridge::onednn
