// Ops that move data. A concatenation of channels whose inputs are all in the layout of the first
// (channels-last, whole blocks of nChw8c / nChw16c, or plain) is kernels/simd's concat_affine
// without the affine, and its gradient concat_backward; any other is oneDNN's concat in its
// inputs' layout. The rest are views where the input's layout has no blocks: another descriptor
// over the same bytes (a flatten or reshape whose strides allow it, a permutation, a slice or
// select that is plain or read only by readers that take strides); else they work on plain
// row-major copies, a permutation (permute, channel shuffle, a strided slice) as a oneDNN reorder
// between a strided descriptor and a dense one; a flatten that leaves blocks whole is a blocked
// view, and a blocked map moving its channels last one reorder into channels-last. Slices that
// partition a channel shuffle's output are buffers the shuffle writes. Gradients go the other way
// through plain descriptors, except a permutation's, a view of a dy without blocks or one reorder
// back into x's blocks, a reshape's of a blocked dy, and a channel shuffle's, one pass from its
// parts' gradients as they lie into plain. Dropout and stochastic depth are identities:
// their output is their input, and so is their gradient.
#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "engine/ops/norm.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

namespace {

Dims row_major(const Shape& s) {
    Dims st(s.size());
    int64_t v = 1;
    for (size_t i = s.size(); i-- > 0;) st[i] = v, v *= s[i];
    return st;
}

Md strided(const Dims& dims, const Dims& strides) { return Md(dims, dnnl::memory::data_type::f32, strides); }

// Forward through a view of x's plain layout: an alias when the view is dense, else a copy.
void forward_view(Plan& p, const Layer& l, const Md& view, const Dims& dense_dims) {
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    int y = p.mem(plain(dims_of(p.shape(l.n.output))));
    p.reorder_into(p.alias(x, view), p.alias(y, plain(dense_dims)));
    p.value[size_t(l.n.output)] = y;
}

// The strides that read `dims` (the same elements, row-major order) over a layout of `from` with
// strides `st`, where there are such: each run of dimensions that lie one inside the other in
// memory (a stride is the next one's times its size) may be split or merged freely; a new
// dimension that straddles two runs has no stride. channels-last (N,C,H,W) flattened from H on is
// (N,C,HW) with strides (HWC,1,C); flattened from C on it is a copy.
std::optional<Dims> restrided(const Dims& from, const Dims& st, const Dims& dims) {
    Dims out(dims.size(), 1);
    size_t j = dims.size();  // dims[j..] have their strides
    int64_t base = 1;        // the innermost stride of the current run
    int64_t run = 1, made = 1;
    for (size_t i = from.size(); i-- > 0;) {
        if (from[i] == 1) continue;
        if (run == 1) base = st[i];
        run *= from[i];
        size_t k = i;  // the next dimension out of size > 1
        while (k-- > 0 && from[k] == 1) {
        }
        if (k != size_t(-1) && st[k] == run * base) continue;  // dimension k extends this run
        while (j > 0 && (made < run || dims[j - 1] == 1)) {
            --j;
            out[j] = made * base;
            made *= dims[j];
        }
        if (made != run) return std::nullopt;
        run = made = 1;
    }
    while (j > 0) out[--j] = 1;  // only size-1 dimensions are left
    return out;
}

// A blocked layout (no channels padding a block out) as `dims` where the reshape leaves its blocks
// whole (oneDNN's memory::desc::reshape): nChw16c flattened from H on is nCw16c. Else none.
std::optional<Md> blocked_view(const Md& m, const Dims& dims) {
    if (unblocked(m) || !std::equal(m.data.dims, m.data.dims + m.data.ndims, m.data.padded_dims)) return std::nullopt;
    const Md kept = m.reshape(dims, true);
    return kept.is_zero() ? std::nullopt : std::optional<Md>(kept);
}

// A permutation's order with each axis in [0, rank): y's axis i is x's axis order[i].
std::vector<int> axes_of(const std::vector<int>& order) {
    std::vector<int> axes(order.size());
    for (size_t i = 0; i < order.size(); ++i) axes[i] = normalize_dim(order[i], order.size());
    return axes;
}

// Whether a permutation moves dimension 1 last and keeps the others in order: NCHW -> NHWC, or
// (N, C, T) -> (N, T, C). Of a blocked layout it is one jit reorder into channels-last.
bool channels_to_last(const std::vector<int>& axes) {
    const size_t r = axes.size();
    for (size_t i = 0; i < r; ++i)
        if (axes[i] != (i == 0 ? 0 : i + 1 == r ? 1 : int(i) + 1)) return false;
    return r >= 3;
}

// A flatten or reshape: a view of x's bytes where its strides allow (one without blocks, or one
// whose blocks it leaves whole), else of a plain copy.
void reshape_forward(Plan& p, const Layer& l) {
    const Dims ydims = dims_of(p.shape(l.n.output));
    int v = p.value[size_t(l.x())];
    const Md xm = p.md(v);
    if (unblocked(xm) && dense(xm))
        if (std::optional<Dims> st = restrided(xm.dims(), strides_of(xm), ydims)) {
            p.value[size_t(l.n.output)] = p.alias(v, Md(ydims, dnnl::memory::data_type::f32, *st));
            return;
        }
    // The pooled map before a classifier, in nChw16c at batch 2 and more (conv2d.cpp): a copy of
    // 0.04 to 0.14 ms at batch 16 before.
    if (rows_in_place(xm)) {
        p.value[size_t(l.n.output)] = p.alias(v, plain(ydims));
        return;
    }
    if (std::holds_alternative<Flatten>(l.n.op) && classifier_reads_map(p, l.x(), xm)) {
        p.value[size_t(l.n.output)] = v;
        return;
    }
    // A blocked layout whose blocks the reshape leaves whole stays a view: ViT's patches, nChw16c
    // flattened from H on, are nCw16c, which the permutation after it reorders once into its
    // token rows. Copied to plain here, that was 1.26 ms of a training step at batch 16, counted
    // as a view.
    if (const std::optional<Md> kept = blocked_view(xm, ydims)) {
        p.value[size_t(l.n.output)] = p.alias(v, *kept);
        return;
    }
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    p.value[size_t(l.n.output)] = p.alias(x, plain(ydims));
}

void reshape_backward(Plan& p, const Layer& l) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    // As in forward: ViT's patch gradient arrives in nCw16c (the permutation after the flatten
    // writes it so) and passes to the patch conv as nChw16c, the layout its backward reads; from a
    // linear that read the map itself (classifier_reads_map) it is the map's already.
    if (const std::optional<Md> kept = blocked_view(p.md(p.dy(l.n.output)), dims_of(p.shape(l.x()))))
        return p.pass(l.x(), p.alias(p.dy(l.n.output), *kept), true);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass(l.x(), p.alias(dy, plain(dims_of(p.shape(l.x())))), true);
}

// Slice and select read the region [start, start + length) of dimension d; a select drops d.
struct Region {
    int d;
    int64_t start, length;
    bool drop;
    Md sub;        // over x's plain layout, keeping x's rank
    Dims dims;     // the region's extent, x's rank
    bool dense;    // the region is one contiguous run of bytes
    bool whole;    // the region is all of x
    size_t bytes;  // where the region starts
};

Region region(const Plan& p, const Layer& l, int dim, int64_t start, int64_t length, bool drop) {
    const Shape& xs = p.shape(l.x());
    int d = normalize_dim(dim, xs.size());
    Dims dims = dims_of(xs), offsets(xs.size(), 0);
    dims[size_t(d)] = length;
    offsets[size_t(d)] = start;
    int64_t outer = 1;
    for (int i = 0; i < d; ++i) outer *= xs[size_t(i)];
    return {d,      start,        length, drop, plain(dims_of(xs)).submemory_desc(dims, offsets), dims, outer == 1,
            length == xs[size_t(d)], size_t(start * row_major(xs)[size_t(d)]) * sizeof(float)};
}

// Readers that take any strides (matmul's operands, the scale of attention's q, which
// copies as it scales, and in inference a linear on rows that lie apart): a strided region read
// only by them stays a view. ViT's q, k and v are such regions of the permuted in_proj output, its
// class tokens rows of the token sequence. For a matmul or the scale the region must be one
// oneDNN's matmul reads in place, or it would run its reference kernel.
bool read_strided(const Plan& p, int t, const Md& view) {
    if (t == p.g.output()) return false;
    bool any = false;
    for (const Node& n : p.g.nodes())
        for (int in : n.inputs) {
            if (in != t) continue;
            const bool rows = std::holds_alternative<Linear>(n.op) && spaced_rows(p, view);
            const bool any_strides = std::holds_alternative<Matmul>(n.op) || std::holds_alternative<Scale>(n.op);
            if (!rows && !(any_strides && matmul_reads(view))) return false;
            any = true;
        }
    return any;
}

// The region [start, start + length) of dimension d of an unblocked memory md, over md's own
// strides (a select drops d), and the bytes from md's start to the region's.
std::pair<Md, size_t> strided_region(const Md& md, int d, int64_t start, int64_t length, bool drop) {
    Dims dims = md.dims(), st = strides_of(md);
    const size_t bytes = size_t(start * st[size_t(d)]) * sizeof(float);
    dims[size_t(d)] = length;
    if (drop) dims.erase(dims.begin() + d), st.erase(st.begin() + d);
    return {Md(dims, dnnl::memory::data_type::f32, st), bytes};
}

// A region is a view where it is plain or its readers take strides.
bool region_is_view(const Plan& p, int y, const Md& view) {
    return view == plain(dims_of(p.shape(y))) || read_strided(p, y, view);
}

// Per tensor, whether it or a tensor it reaches through the layers is the graph's output: those
// are the tensors a backward pass delivers a gradient to.
std::vector<char> reaching_output(const Graph& g) {
    int last = g.output();
    for (const Node& n : g.nodes()) last = std::max(last, n.output);
    std::vector<char> reaches(size_t(last) + 1, 0);
    reaches[size_t(g.output())] = 1;
    for (size_t i = g.nodes().size(); i-- > 0;) {  // nodes are in topological order
        const Node& n = g.nodes()[i];
        if (reaches[size_t(n.output)])
            for (int in : n.inputs) reaches[size_t(in)] = 1;
    }
    return reaches;
}

// In training, whether the selects that read t are its only readers, take each index of one
// dimension once, are all views of t and all get a gradient, and t's gradient is its own (not
// shared with an identity's input): ViT's q, k and v of the packed (N, 3, heads, T, d) in_proj
// output. Their gradients are then planned as regions of t's gradient, laid out as t is, which
// every region's writer fills: matmul and the scaling of q write them in place. Selecting back
// was a copy of each into a zeroed plain buffer (0.2 to 0.8 ms a select at batch 8, 36 in
// vit_b_16's step), and the gradient's permutation back to the in_proj rows another.
bool selects_partition(const Plan& p, int t, int d) {
    if (!p.train || t == p.g.output() || !p.needs_grad(t) || p.grad_root[size_t(t)] != t) return false;
    const Md tm = p.md(p.value[size_t(t)]);
    if (!unblocked(tm)) return false;
    std::vector<int> seen(size_t(p.shape(t)[size_t(d)]), 0);
    const std::vector<char> reaches = reaching_output(p.g);
    for (int n : readers_of(p.g, t)) {
        const Node& node = p.g.nodes()[size_t(n)];
        const auto* sel = std::get_if<Select>(&node.op);
        if (!sel || node.inputs.size() != 1 || normalize_dim(sel->dim, p.shape(t).size()) != d) return false;
        if (!p.needs_grad(node.output) || node.output == p.g.output() || !reaches[size_t(node.output)])
            return false;
        const int64_t i = sel->index < 0 ? sel->index + int64_t(seen.size()) : sel->index;
        if (i < 0 || i >= int64_t(seen.size()) || ++seen[size_t(i)] != 1) return false;
        if (!region_is_view(p, node.output, strided_region(tm, d, i, 1, true).first)) return false;
    }
    return std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; });
}

void region_forward(Plan& p, const Layer& l, const Region& r) {
    // The region of x's own strides, where x has no blocks: a view when it is plain or its
    // readers take strides (no copy), else a copy out of a plain x.
    int v = p.value[size_t(l.x())];
    const Md xm = p.md(v);
    if (unblocked(xm)) {
        const auto [view, bytes] = strided_region(xm, r.d, r.start, r.length, r.drop);
        if (region_is_view(p, l.n.output, view)) {
            p.value[size_t(l.n.output)] = p.alias(v, view, bytes);
            // The first of the selects decides for all of them.
            int& whole = p.placed[size_t(l.x())];
            if (r.drop && whole < 0 && selects_partition(p, l.x(), r.d)) whole = p.mem(xm);
            if (r.drop && whole >= 0) p.placed[size_t(l.n.output)] = p.alias(whole, view, bytes);
            return;
        }
    }
    if (!r.dense) return forward_view(p, l, r.sub, r.dims);
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    p.value[size_t(l.n.output)] = p.alias(x, plain(dims_of(p.shape(l.n.output))), r.bytes);
}

void region_backward(Plan& p, const Layer& l, const Region& r) {
    if (!p.needs_grad(l.x())) return;
    if (const int region = p.placed[size_t(l.n.output)]; region >= 0) {
        // Written in place by the readers' backward, unless one wrote elsewhere (selects_partition
        // made sure every region gets a gradient).
        if (p.dy(l.n.output) != region) {
            p.at(&p.bwd, l.node, Phase::dgrad);
            p.reorder_into(p.dy(l.n.output), region);
        }
        int& gx = p.grad[size_t(p.grad_root[size_t(l.x())])];
        if (gx < 0) gx = p.placed[size_t(l.x())];
        return;
    }
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass_view(l.x(), r.sub, p.alias(dy, plain(r.dims)), r.whole);
}

// y = x.permute(order): y's dimension i is x's dimension order[i].
Md permuted(const Plan& p, const Layer& l, const std::vector<int>& order) {
    const Shape& xs = p.shape(l.x());
    Dims st = row_major(xs), pst;
    for (int o : order) pst.push_back(st[size_t(normalize_dim(o, xs.size()))]);
    return strided(dims_of(p.shape(l.n.output)), pst);
}

// (N,C,H,W) read as (N, C/G, G, HW): the shuffled channel j*G + g is channel g*(C/G) + j. With H
// and W as one dimension oneDNN's reorder copies whole rows of a channel: shufflenet_v2's stage-2
// shuffle at batch 8 took 0.06 ms instead of 0.1 ms (5-D, H and W apart).
Md shuffled(const Plan& p, const Layer& l, const ChannelShuffle& op) {
    const Shape& xs = p.shape(l.x());
    int64_t C = xs[1], HW = xs[2] * xs[3];
    return strided({xs[0], C / op.G, op.G, HW}, {C * HW, HW, C / op.G * HW, 1});
}

// The slice layers that read t, in the order of their regions, when they are its only readers and
// cut dimension 1 into consecutive runs that start and end on multiples of `align`; else none.
// ShuffleNet's halves of the shuffled channels are such, at any batch; as views of one tensor they
// are not contiguous (unless N = 1), and copying them out and their gradients back in cost 0.1 to
// 0.6 ms each at batch 8, about a tenth of the training step.
std::vector<int> partition(const Plan& p, int t, int64_t align) {
    if (t == p.g.output()) return {};
    std::vector<std::pair<int64_t, int>> runs;
    for (size_t i = 0; i < p.g.nodes().size(); ++i) {
        const Node& n = p.g.nodes()[i];
        if (std::find(n.inputs.begin(), n.inputs.end(), t) == n.inputs.end()) continue;
        const auto* s = std::get_if<Slice>(&n.op);
        if (!s || normalize_dim(s->dim, p.shape(t).size()) != 1) return {};
        if (s->start % align != 0 || s->length % align != 0) return {};
        runs.push_back({s->start, int(i)});
    }
    std::sort(runs.begin(), runs.end());
    int64_t end = 0;
    std::vector<int> readers;
    for (const auto& [start, node] : runs) {
        if (start != end) return {};
        end += std::get<Slice>(p.g.nodes()[size_t(node)].op).length;
        readers.push_back(node);
    }
    if (end != p.shape(t)[1]) return {};
    return readers;
}

// x's channel at each shuffled position j*G + g of a shuffle of C channels into G groups: g*(C/G) + j.
std::vector<int64_t> shuffle_order(int64_t C, int64_t G) {
    std::vector<int64_t> from(static_cast<size_t>(C));
    for (int64_t c = 0; c < C; ++c) from[size_t(c)] = c % G * (C / G) + c / G;
    return from;
}

// The shuffled view's region that a slice of the shuffled channels reads: whole groups of G.
Md shuffled_part(const Md& view, const Slice& s, int64_t G) {
    Dims dims = view.dims(), offsets(dims.size(), 0);
    dims[1] = s.length / G;
    offsets[1] = s.start / G;
    return view.submemory_desc(dims, offsets);
}

void permute_backward(Plan& p, const Layer& l, const Md& view) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output))));
    p.pass_view(l.x(), view, p.alias(dy, plain(view.dims())), true);
}

// The layout kernels/simd's concat_affine writes a concatenation of channels in: the first
// input's, channels-last (DenseNet at batch 16 on AVX-512, where oneDNN's brgemm convolutions
// choose it), or nChw8c / nChw16c where every input fills whole blocks (DenseNet's 32-channel
// pieces), else plain nchw.
struct ChannelConcat {
    Tag tag;
    simd::ChannelLayout y;
    std::vector<int64_t> channels;  // each input's
};

ChannelConcat channel_concat(const Plan& p, const Layer& l) {
    const Shape& ys = p.shape(l.n.output);
    auto f32 = dnnl::memory::data_type::f32;
    const Md& first = p.md(p.value[size_t(l.x(0))]);
    const bool nhwc = first == Md(first.dims(), f32, Tag::nhwc);
    int64_t block = channel_block(first);
    std::vector<int64_t> channels;
    for (int t : l.n.inputs) {
        channels.push_back(p.shape(t)[1]);
        if (!nhwc && ((block != 8 && block != 16) || channels.back() % block != 0)) block = 1;
    }
    if (nhwc) block = ys[1];
    return {tag_of_block(block, nhwc), {ys[0], ys[1], ys[2] * ys[3], block}, channels};
}

// A concatenation of channels fused with the batchnorm (and ReLU) that alone reads it, in
// inference, as one pass of concat_affine over the inputs; inputs in another layout than
// channel_concat's are reordered to it.
void concat_batchnorm(Plan& p, const Layer& l) {
    const Shape& ys = p.shape(l.n.output);
    const int64_t C = ys[1];
    auto f32 = dnnl::memory::data_type::f32;
    const auto [tag, yl, channels] = channel_concat(p, l);
    const Md vec = plain({C});
    const int bn = l.group->bn;
    std::vector<int> args = {p.param_mem(bn, 0, vec), p.param_mem(bn, 1, vec), p.param_mem(bn, 2, vec),
                             p.param_mem(bn, 3, vec), p.mem(plain({2 * C})), p.mem(Md(dims_of(ys), f32, tag))};
    for (int t : l.n.inputs) args.push_back(p.value_as(t, Md(dims_of(p.shape(t)), f32, tag)));
    p.kernel(
        "concat_batchnorm",
        [channels, yl, relu = !l.group->post.empty()](const std::vector<float*>& a) {
            batchnorm_affine(a[0], a[1], a[2], a[3], a[4], a[4] + yl.C, yl.C);
            simd::concat_affine(a.data() + 6, channels.data(), int64_t(channels.size()), a[4], a[4] + yl.C, relu, a[5],
                                yl);
        },
        args);
    p.value[size_t(l.y(p.g))] = args[5];
}

// Whether oneDNN concatenates these inputs only in its reference implementation: where their
// layouts differ (DenseNet's block input channels-last, its growth convs' outputs nChw16c where
// they run as Winograd: at batch 1 on 56x56 maps, and before conv2d.cpp's winograd_pays kept small
// maps direct also denseblock4's, whose concatenations took 17 to 25 us, 3 to 9x what memory allows).
bool reference_concat(const Plan& p, const std::vector<Md>& mds, int dim) {
    try {
        return reference_impl(dnnl::concat::primitive_desc(dim, mds, p.eng, p.attr()));
    } catch (const dnnl::error&) {
        return false;  // forward() concatenates plain copies
    }
}

// Whether tensor t's memory may move into a region of another buffer: it is the only memory over
// its buffer, the buffer is not pinned, no other tensor's value is it (an identity's output), and
// the layer `reader` alone reads t. Then nothing but t's producer writes those bytes.
bool movable(const Plan& p, int t, int reader) {
    const int m = p.value[size_t(t)];
    const int b = p.mems[size_t(m)].buffer;
    if (t == p.g.output() || p.buffers[size_t(b)].pinned || readers_of(p.g, t) != std::vector<int>{reader})
        return false;
    for (size_t i = 0; i < p.mems.size(); ++i)
        if (p.mems[i].buffer == b && int(i) != m) return false;
    for (size_t u = 0; u < p.value.size(); ++u)
        if (p.value[u] == m && int(u) != t) return false;
    return true;
}

// A concatenation of one image's channels in nChw16c or nChw8c, in inference, each input filling
// whole blocks: there each input's layout is a dense run of the output's bytes (blocks are outermost
// but for N), so the producers write their outputs in place and there is nothing left to copy. The
// inputs' memories move into the output's buffer, which lives from the first producer's step on.
// squeezenet1_1 at batch 1 on the 2-core Zen 5, in nChw16c: concat_affine had taken 0.19 to 0.20
// ms of a 2.8 to 2.95 ms step. Not in unfused inference, where a ReLU after the conv runs in place
// through a second memory over its buffer, nor for a concatenation of concatenations.
// False, planning nothing, where any input's memory is shared, read elsewhere or in another layout.
bool concat_in_place(Plan& p, const Layer& l, Tag tag, const std::vector<int64_t>& channels) {
    const Shape& ys = p.shape(l.n.output);
    if (p.train || ys[0] != 1 || (tag != Tag::nChw16c && tag != Tag::nChw8c)) return false;
    for (int t : l.n.inputs)
        if (!movable(p, t, l.node)) return false;
    std::vector<int> in(l.n.inputs.begin(), l.n.inputs.end());
    std::sort(in.begin(), in.end());
    if (std::adjacent_find(in.begin(), in.end()) != in.end()) return false;  // a tensor twice
    const int y = p.mem(Md(dims_of(ys), dnnl::memory::data_type::f32, tag));
    size_t offset = 0;
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        Mem& m = p.mems[size_t(p.value[size_t(l.x(i))])];
        m.buffer = p.mems[size_t(y)].buffer;
        m.offset = offset;
        offset += size_t(channels[i] * ys[2] * ys[3]) * sizeof(float);
    }
    p.value[size_t(l.n.output)] = y;
    return true;
}

// A plain concatenation (tag nchw: the pieces fill no whole blocks) of pieces each plain, nChw8c,
// nChw16c or channels-last, in inference, as one pass of concat_plain, in place of a reorder of
// each other piece to plain and a copy. shufflenet_v2's at batch 16 on the 2-core Zen 4 (`ridge
// profile`, 2 alternated runs, the host then about twice as slow as an hour before): stage2.0 (two
// nChw16c pieces of 58 channels at 28x28) 2.53-2.54 -> 0.82-0.92 ms (bound 0.25), stage2.1 (a
// plain half of the shuffle and the branch's output) 1.48-1.52 -> 0.51-0.75, its 16 concatenations
// 13.8-14.6 -> 6.1-7.7 ms; the whole net's fused steps level within the noise (3 alternated runs:
// 32.8-39.6 against 33.8-37.8 ms at batch 16). Where every piece is nChw16c or channels-last (an
// AVX-512 plan's layouts) the concatenation is channels-last instead, each block of a piece copied
// into its positions' rows, its padding left out (concat_channels_last): shufflenet_v2's stage 2 at batch 8 and 16
// then stays channels-last, as its convs work, where the plain map went through a plain shuffle
// and a reorder into channels-last for each 1x1 conv after it. With shuffle_nhwc's kernel, on the
// 2-core Zen 4, 3 alternated pairs each: batch 16 29.5-30.2 -> 28.6-28.9 ms, batch 8 14.7-15.0 ->
// 14.1-14.2 (one run of 18.6 left out), batch 1 level. False, planning nothing, for any other.
bool concat_plain(Plan& p, const Layer& l, Tag tag, const std::vector<int64_t>& channels) {
    const Shape& ys = p.shape(l.n.output);
    if (p.train || tag != Tag::nchw) return false;
    std::vector<int64_t> blocks;
    std::vector<int> args = {-1};
    bool rows = true;  // every piece nChw16c or channels-last
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        args.push_back(p.value[size_t(l.x(i))]);
        // Channels-last is a block of all the channels (or, of 8 and 16, the same bytes as one).
        const int64_t B = channel_block(p.md(args.back()));
        if (B == 0) return false;
        blocks.push_back(B);
        rows = rows && (B == 16 || B == channels[i]);
    }
    const auto f32 = dnnl::memory::data_type::f32;
    // Only once every piece is taken: a refusal plans nothing.
    args[0] = p.mem(rows ? canonical(Md(dims_of(ys), f32, Tag::nhwc)) : plain(dims_of(ys)));
    p.kernel(
        rows ? "concat_channels_last" : "concat_plain",
        [channels, blocks, rows, N = ys[0], HW = ys[2] * ys[3]](const std::vector<float*>& a) {
            const int64_t pieces = int64_t(channels.size());
            if (rows)
                simd::concat_channels_last(a.data() + 1, channels.data(), blocks.data(), pieces, a[0], N, HW);
            else
                simd::concat_plain(a.data() + 1, channels.data(), blocks.data(), pieces, a[0], N, HW, nullptr);
        },
        args);
    p.value[size_t(l.n.output)] = args[0];
    return true;
}

// A concatenation of channels whose inputs are all in channel_concat's layout, in place where
// concat_in_place allows, else as concat_affine without the affine; in inference also where the
// inputs' layouts differ and oneDNN would run its reference, the others reordered (once each,
// remembered for later concatenations of the same pieces). False, planning nothing, for any other.
bool concat_copy(Plan& p, const Layer& l, int dim) {
    const Shape& ys = p.shape(l.n.output);
    if (ys.size() != 4 || dim != 1) return false;
    const auto [tag, yl, channels] = channel_concat(p, l);
    auto f32 = dnnl::memory::data_type::f32;
    std::vector<int> args = {-1};
    std::vector<Md> mds;
    bool same = true;
    for (int t : l.n.inputs) {
        args.push_back(p.value[size_t(t)]);
        mds.push_back(p.md(args.back()));
        same = same && mds.back() == Md(dims_of(p.shape(t)), f32, tag);
    }
    if (same && concat_in_place(p, l, tag, channels)) return true;
    if (!same && concat_plain(p, l, tag, channels)) return true;
    if (!same) {
        if (p.train || !reference_concat(p, mds, dim)) return false;
        for (size_t i = 0; i < l.n.inputs.size(); ++i)
            args[i + 1] = p.value_as(l.x(i), Md(dims_of(p.shape(l.x(i))), f32, tag));
    }
    args[0] = p.mem(Md(dims_of(ys), f32, tag));
    p.kernel(
        "concat_affine",
        [channels, yl](const std::vector<float*>& a) {
            simd::concat_affine(a.data() + 1, channels.data(), int64_t(channels.size()), nullptr, nullptr, false,
                                a[0], yl);
        },
        args);
    p.value[size_t(l.n.output)] = args[0];
    p.saved[size_t(l.node)] = {{}, std::vector<int>(args.begin() + 1, args.end()), args[0]};
    return true;
}

// The backward of concat_copy's concatenation, as one pass of concat_backward: each input's
// gradient written, or added into where one arrived already in the input's layout (DenseNet's
// features, read by every later concatenation of their block). False, planning nothing, where dy
// is in another layout than y, a gradient is in another than its input, or two inputs share a
// gradient (the kernel's threads would write it at once).
bool concat_copy_backward(Plan& p, const Layer& l) {
    const Plan::Saved& sv = p.saved[size_t(l.node)];
    if (sv.pd || sv.out < 0) return false;
    const Md ym = p.md(sv.out);
    const int dy = p.dy(l.n.output);
    if (p.md(dy) != ym) return false;
    std::vector<int> roots;
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        int t = l.x(i);
        if (!p.needs_grad(t)) continue;
        if (!p.fresh(t) && p.md(p.dy(t)) != p.md(sv.in[i])) return false;
        if (std::find(roots.begin(), roots.end(), p.grad_root[size_t(t)]) != roots.end()) return false;
        roots.push_back(p.grad_root[size_t(t)]);
    }
    const Shape& ys = p.shape(l.n.output);
    const simd::ChannelLayout yl{ys[0], ys[1], ys[2] * ys[3], channel_block(ym)};
    std::vector<int64_t> channels;
    std::vector<uint8_t> mode;
    std::vector<int> args = {dy};
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        int t = l.x(i);
        channels.push_back(p.shape(t)[1]);
        mode.push_back(!p.needs_grad(t) ? 0 : p.fresh(t) ? 1 : 2);
        int& gr = p.grad[size_t(p.grad_root[size_t(t)])];
        if (mode.back() == 1) gr = p.mem(p.md(sv.in[i]));
        args.push_back(mode.back() == 2 ? p.own(t) : mode.back() ? gr : dy);
    }
    p.kernel(
        "concat_backward",
        [channels, mode, yl](const std::vector<float*>& a) {
            simd::concat_backward(a[0], channels.data(), int64_t(channels.size()), mode.data(), a.data() + 1, yl);
        },
        args);
    return true;
}

}  // namespace

void forward(Plan& p, const Layer& l, const Concat& op) {
    if (l.group) return concat_batchnorm(p, l);
    int d = normalize_dim(op.dim, p.shape(l.n.output).size());
    if (concat_copy(p, l, d)) return;
    std::vector<int> in;
    std::vector<Md> mds;
    for (int t : l.n.inputs) in.push_back(p.value[size_t(t)]), mds.push_back(p.md(in.back()));
    dnnl::concat::primitive_desc pd;
    try {
        pd = dnnl::concat::primitive_desc(d, mds, p.eng, p.attr());
    } catch (const dnnl::error&) {
        // Blocked inputs whose channel counts do not fill whole blocks: concatenate plain copies.
        for (size_t i = 0; i < in.size(); ++i) {
            in[i] = p.value_as(l.x(i), plain(dims_of(p.shape(l.x(i)))));
            mds[i] = p.md(in[i]);
        }
        pd = dnnl::concat::primitive_desc(d, mds, p.eng, p.attr());
    }
    int y = p.mem(pd.dst_desc());
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_DST, y}};
    for (size_t i = 0; i < in.size(); ++i) args.push_back({DNNL_ARG_MULTIPLE_SRC + int(i), in[i]});
    p.primitive(pd, args);
    p.value[size_t(l.n.output)] = y;
    p.saved[size_t(l.node)] = {pd, in, y};
}

// Each input's gradient is its region of dy, read through a sub-memory descriptor; a blocked dy
// whose regions do not start on a block boundary is read from a plain copy.
void backward(Plan& p, const Layer& l, const Concat& op) {
    p.at(&p.bwd, l.node, Phase::dgrad);
    if (concat_copy_backward(p, l)) return;
    const Shape& ys = p.shape(l.n.output);
    int d = normalize_dim(op.dim, ys.size());
    int dy = p.dy(l.n.output), dy_plain = -1;
    Dims offsets(ys.size(), 0);
    for (size_t i = 0; i < l.n.inputs.size(); ++i) {
        int t = l.x(i);
        Dims dims = dims_of(p.shape(t));
        if (p.needs_grad(t)) {
            Md sub = p.md(dy).submemory_desc(dims, offsets, true);
            int src = dy;
            if (sub.is_zero()) {
                if (dy_plain < 0) dy_plain = p.as(dy, plain(dims_of(ys)));
                src = dy_plain;
                sub = p.md(src).submemory_desc(dims, offsets);
            }
            p.pass_reordered(t, p.alias(src, sub), p.md(p.value[size_t(t)]));
        }
        offsets[size_t(d)] += dims[size_t(d)];
    }
}

// (N,C,H,W) channels-last read as (N, C/G, G, HW), the shuffled order, where `C` channels lie at
// each position: over x, channel g*(C/G) + j; over y (C its own channels), channel j*G + g.
Md shuffled_nhwc(const Shape& xs, int64_t G, bool written) {
    const int64_t C = xs[1], HW = xs[2] * xs[3];
    return written ? strided({xs[0], C / G, G, HW}, {C * HW, G, 1, C})
                   : strided({xs[0], C / G, G, HW}, {C * HW, 1, C / G, C});
}

// A channels-last x is shuffled into channels-last (ShuffleNet with AVX-512, where oneDNN's convs
// around it work channels-last): each position's channels permuted, two groups by kernels/simd's
// shuffle2_channels_last, others by a oneDNN reorder per part from the shuffled view. The plain
// parts it wrote before were turned back into channels-last by the 1x1 conv after them, and the
// conv's output into plain by the concatenation: at batch 1 on the 2-core Zen 4, shufflenet_v2_x1_0
// 2.47-2.82 -> 2.22-2.39 ms (4 alternated pairs); stage3.0's stride-2 depthwise conv with its
// reorder 36-54 us, against a bound of 10, now without it. oneDNN's reorder (jit:uni) took 0.20 to
// 0.23 ms for each of stage 2's at batch 16 (16x116x28x28), 0.10 for stage 3's; the kernel 0.09 to
// 0.18 and 0.05 (the stage's first reads a map just written, out of cache). Training at batch 1,
// whose backward takes the parts' gradients back to plain (backward below), was level: 10.7-12.6
// against 10.7-12.9 ms a step, 3 alternated pairs.
bool shuffle_nhwc(Plan& p, const Layer& l, const ChannelShuffle& op, const std::vector<int>& readers) {
    const int x = p.value[size_t(l.x())];
    const Shape& xs = p.shape(l.x());
    const auto f32 = dnnl::memory::data_type::f32;
    if (p.md(x) != canonical(Md(dims_of(xs), f32, Tag::nhwc))) return false;
    const Md view = shuffled_nhwc(xs, op.G, false);
    // The shuffled channels from `start` to start + L into y.
    auto part = [&](int y, int64_t start, int64_t L) {
        if (op.G == 2) {
            p.kernel(
                "shuffle2_channels_last",
                [C = xs[1], positions = xs[0] * xs[2] * xs[3], start, L](const std::vector<float*>& a) {
                    simd::shuffle2_channels_last(a[0], C, positions, start, L, a[1]);
                },
                {x, y});
            return;
        }
        const Shape ys = {xs[0], L, xs[2], xs[3]};
        const Slice s{.dim = 1, .start = start, .length = L};
        p.reorder_into(p.alias(x, shuffled_part(view, s, op.G)), p.alias(y, shuffled_nhwc(ys, op.G, true)));
    };
    if (readers.empty()) {
        const int y = p.mem(canonical(Md(dims_of(xs), f32, Tag::nhwc)));
        part(y, 0, xs[1]);
        p.value[size_t(l.n.output)] = y;
        return true;
    }
    for (int r : readers) {
        const Shape& ys = p.shape(p.g.nodes()[size_t(r)].output);
        const auto& s = std::get<Slice>(p.g.nodes()[size_t(r)].op);
        const int y = p.mem(canonical(Md(dims_of(ys), f32, Tag::nhwc)));
        part(y, s.start, s.length);
        p.part[size_t(r)].value = y;
    }
    return true;
}

// A plain x read whole by convs only is shuffled straight into the channel blocks of the vector
// width, which oneDNN's convs took there (ShuffleNet's stride-2 units: jit_dw and jit_1x1 read
// nChw16c in training with AVX-512, nChw8c with AVX2 in training and inference, where the
// concatenation before the shuffle is plain because its 58-channel pieces fill no block). A plain
// shuffled copy and a reorder of it into blocks cost two passes: stage4.0.branch1.conv1's forward
// at batch 1 took 26-30 us against a bound of 5 on the 2-core Zen 4 (jit_dw alone 8).
bool shuffle_blocked(Plan& p, const Layer& l, const ChannelShuffle& op) {
    const int x = p.value[size_t(l.x())];
    const Shape& xs = p.shape(l.x());
    const bool avx512 = avx512_core_here();
    if (xs.size() != 4 || p.md(x) != canonical(plain(dims_of(xs))) || (!p.train && avx512)) return false;
    const std::vector<int> readers = readers_of(p.g, l.n.output);
    if (l.n.output == p.g.output() || readers.empty()) return false;
    for (int r : readers)
        if (!std::holds_alternative<Conv2d>(p.g.nodes()[size_t(r)].op)) return false;
    const int64_t C = xs[1], block = avx512 ? 16 : 8;
    const std::vector<int64_t> from = shuffle_order(C, op.G);
    const int y = p.mem(canonical(Md(dims_of(xs), dnnl::memory::data_type::f32, avx512 ? Tag::nChw16c : Tag::nChw8c)));
    const simd::ChannelLayout yl{xs[0], C, xs[2] * xs[3], block};
    p.kernel(
        "shuffle_to_blocked",
        [yl, from](const std::vector<float*>& a) { simd::plain_to_blocked(a[0], a[1], yl, from.data()); }, {x, y});
    p.value[size_t(l.n.output)] = y;
    return true;
}

// A shuffle read only by slices that partition its channels writes each slice's region into a
// buffer of its own, which the slice then is (partition() says why).
void forward(Plan& p, const Layer& l, const ChannelShuffle& op) {
    Md view = shuffled(p, l, op);
    const std::vector<int> readers = partition(p, l.n.output, op.G);
    if (shuffle_nhwc(p, l, op, readers)) return;
    if (readers.empty() && shuffle_blocked(p, l, op)) return;
    if (readers.empty()) return forward_view(p, l, view, view.dims());
    int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    for (int r : readers) {
        Md sub = shuffled_part(view, std::get<Slice>(p.g.nodes()[size_t(r)].op), op.G);
        int y = p.mem(plain(dims_of(p.shape(p.g.nodes()[size_t(r)].output))));
        p.reorder_into(p.alias(x, sub), p.alias(y, plain(sub.dims())));
        p.part[size_t(r)].value = y;
    }
}

// x's gradient from the shuffled gradient's pieces in order (the parts', or the whole dy where x
// is read whole), each plain, channel-blocked or channels-last, in one pass of concat_plain into
// plain, their shuffled channels mapped back to x's. shufflenet_v2's stride-1 units have two parts,
// one plain (the half the next concatenation reads) and one nChw16c or nChw8c (the branch's 1x1
// conv); the shuffle before a stride-2 unit gets one blocked gradient from the two convs reading
// it. Each blocked one went through a plain copy and then oneDNN's reorder into the shuffled view:
// in training at batch 8 on the 2-core Zen 5 (`ridge profile`, 2 alternated pairs) stage 2's halves
// 182-376 -> 127-131 us (bound 59), stage 3's 116-134 -> 78-94 (29), stage 4's 86-113 -> 56-57
// (15), the whole maps before stage 3, stage 4 and conv5 271-290 -> 174-176, 70-71 -> 31 and
// 146-150 -> 95-108; the net's 16 shuffle gradients 2.36-2.45 -> 1.43-1.44 ms. The new
// gradient, or -1, planning nothing, where a piece has none or one in another layout.
int unshuffle(Plan& p, const Layer& l, const ChannelShuffle& op,
              const std::vector<std::pair<int, int64_t>>& pieces) {
    std::vector<int64_t> channels, blocks;
    std::vector<int> args = {-1};
    for (auto [dy, C] : pieces) {
        const int64_t B = dy < 0 ? 0 : channel_block(p.md(dy));
        if (B == 0) return -1;
        channels.push_back(C);
        blocks.push_back(B);
        args.push_back(dy);
    }
    const Shape& xs = p.shape(l.x());
    const std::vector<int64_t> to = shuffle_order(xs[1], op.G);
    args[0] = p.mem(plain(dims_of(xs)));
    p.kernel(
        "unshuffle",
        [channels, blocks, to, N = xs[0], HW = xs[2] * xs[3]](const std::vector<float*>& a) {
            simd::concat_plain(a.data() + 1, channels.data(), blocks.data(), int64_t(channels.size()), a[0], N, HW,
                               to.data());
        },
        args);
    return args[0];
}

// A fresh gradient of x is unshuffle's where it can. Otherwise each part's gradient goes into its
// region of x's gradient, which the parts cover (zeroed first only where some part has none), and
// a whole dy through the permutation's backward.
void backward(Plan& p, const Layer& l, const ChannelShuffle& op) {
    if (!p.needs_grad(l.x())) return;
    p.at(&p.bwd, l.node, Phase::dgrad);
    Md view = shuffled(p, l, op);
    const std::vector<int> readers = partition(p, l.n.output, op.G);
    int& gr = p.grad[size_t(p.grad_root[size_t(l.x())])];
    if (gr < 0) {
        std::vector<std::pair<int, int64_t>> pieces;
        for (int r : readers) pieces.push_back({p.part[size_t(r)].grad, p.shape(p.g.nodes()[size_t(r)].output)[1]});
        if (readers.empty()) pieces.push_back({p.dy(l.n.output), p.shape(l.x())[1]});
        gr = unshuffle(p, l, op, pieces);
        if (gr >= 0) return;
    }
    if (readers.empty()) return permute_backward(p, l, view);
    const Md want = plain(dims_of(p.shape(l.x())));
    p.own(l.x());
    const bool add = gr >= 0 && p.md(gr) == want;
    const int dst = add ? gr : p.mem(want);
    bool every = true;
    for (int r : readers) every = every && p.part[size_t(r)].grad >= 0;
    if (!add && !every) p.zero(dst);
    for (int r : readers) {
        const Node& n = p.g.nodes()[size_t(r)];
        if (p.part[size_t(r)].grad < 0) continue;
        Md sub = shuffled_part(view, std::get<Slice>(n.op), op.G);
        int dy = p.as(p.part[size_t(r)].grad, plain(dims_of(p.shape(n.output))));
        p.reorder_into(p.alias(dy, plain(sub.dims())), p.alias(dst, sub), add);
    }
    if (gr < 0)
        gr = dst;
    else if (dst != gr)
        p.accumulate(gr, dst);
}

// A permutation is x's bytes read with its dimensions' order changed (oneDNN's permute_axes). Where
// x's layout has no blocks, the output is that view: ConvNeXt's NCHW -> NHWC of a channels-last map
// is plain NHWC, and its NHWC -> NCHW back is channels-last, which its next depthwise conv reads as
// it is (inference at batch 16: the permutations took 29 ms of 450). A blocked x moving its
// channels last (ConvNeXt's first block of a stage, ViT's patches) is reordered once into
// channels-last, under which the permuted view is plain: through plain NCHW and a strided copy
// convnext_tiny's features.3.0 took 0.58-0.64 ms at batch 8 in training, against 0.22-0.23. Any
// other blocked x is reordered to plain and then copied in the new order: oneDNN's one reorder
// from the permuted blocked view was slower than the two (convnext_tiny's step at batch 8: 1.02x).
void forward(Plan& p, const Layer& l, const Permute& op) {
    const std::vector<int> axes = axes_of(op.order);
    const Dims yd = dims_of(p.shape(l.n.output));
    const Md xm = p.md(p.value[size_t(l.x())]);
    if (unblocked(xm)) {
        std::vector<int> to(axes.size());  // permute_axes wants each axis's new position
        for (size_t i = 0; i < axes.size(); ++i) to[size_t(axes[i])] = int(i);
        p.value[size_t(l.n.output)] = p.alias(p.value[size_t(l.x())], xm.permute_axes(to));
        return;
    }
    if (!channels_to_last(axes)) return forward_view(p, l, permuted(p, l, op.order), yd);
    // x laid out so that its permuted view is plain y: y's plain layout with the order undone.
    int x = p.value_as(l.x(), plain(yd).permute_axes(axes));
    p.value[size_t(l.n.output)] = p.alias(x, plain(yd));
}

// The gradient of a permutation is dy read with the dimensions' order changed back: where dy has no
// blocks and that view is plain or channels-last, it becomes x's gradient with no copy. ConvNeXt's
// NHWC -> NCHW after its MLP receives a channels-last dy, so its MLP gets plain rows; through plain
// copies this was two reorders, 1.4 to 2.5 ms of 5 to 6 times the bound at batch 8. Where the
// forward reordered a blocked x into channels-last, the gradient is reordered once back into x's
// blocks. Any other view (ViT's q, k, v gradients permuted back to (N, T, 3, H, d)) is copied here
// into plain rows, where the cost model counts the copy, not by the reshape after it, whose every
// reader wants plain rows.
void backward(Plan& p, const Layer& l, const Permute& op) {
    const Md dm = p.md(p.dy(l.n.output));
    const std::vector<int> back = axes_of(op.order);
    const Dims xd = dims_of(p.shape(l.x()));
    const bool natural = unblocked(dm) && (dm.permute_axes(back) == plain(xd) ||
                                           (xd.size() == 4 && dm.permute_axes(back) == Md(xd, dm.data_type(), Tag::nhwc)));
    if (!p.needs_grad(l.x())) return;
    if (natural) {
        p.at(&p.bwd, l.node, Phase::dgrad);
        return p.pass(l.x(), p.alias(p.dy(l.n.output), dm.permute_axes(back)), true);
    }
    // ViT's patches, nCw16c: the flatten before passes the reordered gradient on as a view. Through
    // plain rows it was two copies, the permutation's 0.14 ms against a bound of 0.03 at batch 1 in
    // training, then 0.02 ms.
    const Md xm = p.md(p.value[size_t(l.x())]);
    if (unblocked(dm) && !unblocked(xm) && channels_to_last(back)) {
        p.at(&p.bwd, l.node, Phase::dgrad);
        return p.pass_reordered(l.x(), p.alias(p.dy(l.n.output), dm.permute_axes(back)), xm);
    }
    permute_backward(p, l, permuted(p, l, op.order));
}

void forward(Plan& p, const Layer& l, const Flatten&) { reshape_forward(p, l); }
void backward(Plan& p, const Layer& l, const Flatten&) { reshape_backward(p, l); }
void forward(Plan& p, const Layer& l, const Reshape&) { reshape_forward(p, l); }
void backward(Plan& p, const Layer& l, const Reshape&) { reshape_backward(p, l); }

void forward(Plan& p, const Layer& l, const Slice& op) {
    if (int part = p.part[size_t(l.node)].value; part >= 0) {
        p.value[size_t(l.n.output)] = part;
        return;
    }
    region_forward(p, l, region(p, l, op.dim, op.start, op.length, false));
}
void backward(Plan& p, const Layer& l, const Slice& op) {
    if (p.part[size_t(l.node)].value >= 0) {
        // Left for the producer's backward, which reads it in place.
        if (!p.needs_grad(l.x())) return;
        p.part[size_t(l.node)].grad = p.own(l.n.output);  // its own: read after this layer's backward
        int& gr = p.grad[size_t(p.grad_root[size_t(l.x())])];
        if (gr < 0) gr = p.part[size_t(l.node)].grad;
        return;
    }
    region_backward(p, l, region(p, l, op.dim, op.start, op.length, false));
}
void forward(Plan& p, const Layer& l, const Select& op) {
    region_forward(p, l, region(p, l, op.dim, op.index, 1, true));
}
void backward(Plan& p, const Layer& l, const Select& op) {
    region_backward(p, l, region(p, l, op.dim, op.index, 1, true));
}

namespace {
void identity_forward(Plan& p, const Layer& l) {
    p.value[size_t(l.n.output)] = p.value[size_t(l.x())];
    p.grad_root[size_t(l.n.output)] = p.grad_root[size_t(l.x())];
}
}  // namespace

void forward(Plan& p, const Layer& l, const Dropout&) { identity_forward(p, l); }
void backward(Plan&, const Layer&, const Dropout&) {}
void forward(Plan& p, const Layer& l, const StochasticDepth&) { identity_forward(p, l); }
void backward(Plan&, const Layer&, const StochasticDepth&) {}

}  // namespace ridge::onednn
