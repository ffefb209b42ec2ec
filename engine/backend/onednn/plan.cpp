#include "engine/backend/onednn/plan.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include <omp.h>

#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::memory;

Dims dims_of(const Shape& s) { return Dims(s.begin(), s.end()); }

Md plain(const Dims& dims) {
    static const Tag by_rank[] = {Tag::a, Tag::a, Tag::ab, Tag::abc, Tag::abcd, Tag::abcde, Tag::abcdef};
    if (dims.empty() || dims.size() > 6)
        throw std::invalid_argument(cat("onednn: no plain layout for rank ", dims.size()));
    return Md(dims, memory::data_type::f32, by_rank[dims.size()]);
}

std::vector<int> readers_of(const Graph& g, int t) {
    std::vector<int> r;
    for (size_t i = 0; i < g.nodes().size(); ++i) {
        const std::vector<int>& in = g.nodes()[i].inputs;
        if (std::find(in.begin(), in.end(), t) != in.end()) r.push_back(int(i));
    }
    return r;
}

int64_t channel_block(const Md& md) {
    Dims d = md.dims();
    if (d.size() != 4 || md.data_type() != memory::data_type::f32) return 0;
    for (auto [tag, block] : {std::pair{Tag::nchw, int64_t(1)}, {Tag::nChw16c, 16}, {Tag::nChw8c, 8}, {Tag::nhwc, d[1]}})
        if (md == Md(d, memory::data_type::f32, tag)) return block;
    return 0;
}

Tag tag_of_block(int64_t block, bool nhwc) {
    if (nhwc) return Tag::nhwc;
    if (block == 1) return Tag::nchw;
    if (block == 8) return Tag::nChw8c;
    if (block == 16) return Tag::nChw16c;
    throw std::logic_error("onednn: no map layout has channel blocks of " + std::to_string(block));
}

bool unblocked(const Md& md) {
    return md.data.format_kind == dnnl_blocked && md.data.format_desc.blocking.inner_nblks == 0;
}

Dims strides_of(const Md& md) {
    const dnnl_dim_t* st = md.data.format_desc.blocking.strides;
    return Dims(st, st + md.data.ndims);
}

bool dense(const Md& md) {
    int64_t elements = 1;
    for (int64_t d : md.dims()) elements *= d;
    return md.get_size() == size_t(elements) * sizeof(float);
}

bool generic_impl(const dnnl::primitive_desc_base& pd) { return reference_impl(pd) || impl_isa(pd) == "any"; }

std::string impl_isa(const dnnl::primitive_desc_base& pd) {
    const std::string impl = pd.impl_info_str();
    return impl.substr(impl.find(':') + 1);
}

namespace {

// Whether isa's bits hold every bit of subset's.
bool includes(dnnl::cpu_isa isa, dnnl::cpu_isa subset) {
    const auto bits = static_cast<unsigned>(isa), sub = static_cast<unsigned>(subset);
    return (bits & sub) == sub;
}

}  // namespace

bool has_avx512_core(dnnl::cpu_isa isa) { return includes(isa, dnnl::cpu_isa::avx512_core); }

bool avx512_core_here() { return has_avx512_core(dnnl::get_effective_cpu_isa()); }

bool avx2_here() { return includes(dnnl::get_effective_cpu_isa(), dnnl::cpu_isa::avx2); }

int64_t panel_rows_most() { return avx512_core_here() ? 16 : simd::max_panel_rows; }

bool matmul_reads(const Md& md) {
    if (!unblocked(md) || md.data.ndims < 2) return false;
    const Dims st = strides_of(md);
    return st.back() == 1 || st[st.size() - 2] == 1;
}

// Bytes from a view's first element to just past its last. oneDNN's get_size() of a strided region
// is the extent of its outermost stride, which runs past the parent's end for a region that does
// not start at 0 (ViT's k, a third of the way into each row of the packed q, k, v).
size_t reach(const Md& md) {
    if (!unblocked(md)) return size_t(md.data.offset0) * sizeof(float) + md.get_size();
    Dims dims = md.dims(), st = strides_of(md);
    int64_t last = md.data.offset0;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 0) return 0;
        last += (dims[i] - 1) * st[i];
    }
    return size_t(last + 1) * sizeof(float);
}

bool reference_impl(const dnnl::primitive_desc_base& pd) {
    const std::string impl = pd.impl_info_str();
    return impl.rfind("ref", 0) == 0 || impl.rfind("bnorm_ref", 0) == 0;
}

// oneDNN 2.6.3 compares memory descriptors without the strides of size-1 dimensions, and so does its
// primitive cache key, but some implementations decide from those strides: simple_concat requires
// the inputs' raw strides to match the output's. On AVX-512 hosts, where a 1x1 conv writes
// (1,232,1,1) channels-last as strides (232,1,232,232) and a plain copy has (232,1,1,1),
// shufflenet_v2's stage-4 concats got two implementations for descriptors the cache calls equal:
// the first simple:any (752-byte scratchpad), a later one ref:any (none). Creating the later
// primitive hit the cache and returned the simple:any one, which then ran with no scratchpad and
// crashed (evidence: the pd's impl_info_str and scratchpad size against ONEDNN_VERBOSE's create
// line; ONEDNN_PRIMITIVE_CACHE_CAPACITY=0 makes it run). One stride for every size-1 dimension,
// the tensor's whole extent (so get_size() is unchanged), makes such layouts identical, and the
// implementation chosen is then the one the cache holds.
Md canonical(Md md) {
    dnnl_memory_desc_t& d = md.data;
    if (d.format_kind != dnnl_blocked) return md;
    dnnl_dims_t blocks;
    std::fill(blocks, blocks + d.ndims, dnnl_dim_t(1));
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    for (int i = 0; i < b.inner_nblks; ++i) blocks[b.inner_idxs[i]] *= b.inner_blks[i];
    auto unit = [&](int i) { return d.dims[i] == 1 && d.padded_dims[i] == 1; };
    dnnl_dim_t extent = 1;
    for (int i = 0; i < d.ndims; ++i)
        if (!unit(i)) extent = std::max(extent, b.strides[i] * (d.padded_dims[i] / blocks[i]));
    for (int i = 0; i < d.ndims; ++i)
        if (unit(i)) d.format_desc.blocking.strides[i] = extent;
    return md;
}

Plan::Plan(const Graph& graph, const ExecOptions& o)
    : g(graph),
      train(o.mode == Mode::train),
      fused(o.fused),
      winograd(o.winograd),
      threads(o.threads > 0 ? o.threads : omp_get_num_procs()),
      step_threads_(threads) {
    size_t T = 0;
    for (const Node& n : g.nodes()) T = std::max(T, size_t(n.output) + 1);
    T = std::max<size_t>(T, 1);
    value.assign(T, -1);
    grad_root.resize(T);
    for (size_t t = 0; t < T; ++t) grad_root[t] = int(t);
    grad.assign(T, -1);
    finished_.assign(T, false);
    placed.assign(T, -1);
    param.resize(g.nodes().size());
    dparam.resize(g.nodes().size());
    saved.resize(g.nodes().size());
    part.resize(g.nodes().size());
    buffers.push_back({0, true});
    scratch_ = 0;
}

dnnl::primitive_attr Plan::attr() const {
    dnnl::primitive_attr a;
    a.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
}

void Plan::use_threads(int t) {
    step_threads_ = t;
    omp_set_num_threads(t);
}

int Plan::mem(const Md& md, bool pinned) {
    buffers.push_back({md.get_size(), pinned});
    mems.push_back({int(buffers.size()) - 1, 0, canonical(md)});
    converted_.emplace_back();
    return int(mems.size()) - 1;
}

int Plan::alias(int m, const Md& md, size_t extra_bytes) {
    Mem a = mems[size_t(m)];
    a.offset += extra_bytes;
    a.md = canonical(md);
    if (a.offset + reach(md) > buffers[size_t(a.buffer)].bytes)
        throw std::logic_error("onednn: a view reaches past its buffer");
    mems.push_back(a);
    converted_.emplace_back();
    return int(mems.size()) - 1;
}

void Plan::primitive(const dnnl::primitive_desc_base& pd, std::vector<std::pair<int, int>> args) {
    // A memory whose layout differs from the one the primitive was made for fails only at execution,
    // and without saying which argument: catch it here.
    for (const auto& [arg, m] : args) {
        Md want = pd.query_md(dnnl::query::exec_arg_md, arg);
        if (want.is_zero() || want != md(m))
            throw std::logic_error(cat("onednn: argument ", arg, " of a ", pd.impl_info_str(), " primitive ",
                                       want.is_zero() ? "is not one it takes" : "has another layout than it expects"));
    }
    Md sp = pd.scratchpad_desc();
    if (sp.get_size() > 0) {
        Buffer& b = buffers[size_t(scratch_)];
        b.bytes = std::max(b.bytes, sp.get_size());
        mems.push_back({scratch_, 0, sp});
        converted_.emplace_back();
        args.push_back({DNNL_ARG_SCRATCHPAD, int(mems.size()) - 1});
    }
    pass_->push_back({node_, phase_, pd, {}, std::move(args), step_threads_, {}, {}});
}

void Plan::kernel(std::string name, Kernel k, std::vector<int> args, std::vector<std::string> arg_names) {
    std::vector<std::pair<int, int>> a;
    for (size_t i = 0; i < args.size(); ++i) a.push_back({int(i), args[i]});
    pass_->push_back(
        {node_, phase_, {}, std::move(k), std::move(a), step_threads_, std::move(name), std::move(arg_names)});
}

// Between plain and nChw8c / nChw16c, kernels/simd's plain_to_blocked and concat_plain (of one
// piece) move the map, except into or out of whole 16-channel blocks, where oneDNN's reorder has
// its fast path. Elsewhere, on the 2-core Zen 4 (medians of 200, 2 threads), into blocks:
// 1x116x28x28 7-8 against 29-48 us, 1x232x14x14 4 against 22, 8x116x28x28 56-62 against 63-91,
// 16x64x56x56 into nChw8c 200-290 against 345-395, 16x24x56x56 level; out of blocks 1x116x28x28
// 6 against 32, 8x116x28x28 59-66 against 240-267, 16x24x56x56 93-97 against 500-547; 16x64x56x56
// in whole 16-channel blocks 0.8-0.95x oneDNN's speed both ways. shufflenet_v2 in training at
// batch 1 takes the gradients of its stride-2 units' inputs back from nChw16c to plain this way.
void Plan::reorder_into(int src, int dst, bool accumulate) {
    const Md from = md(src), to = md(dst);
    const int64_t into = channel_block(to), out_of = channel_block(from);
    const Dims d = to.dims();
    auto moved = [&](int64_t block) { return block == 8 || (block == 16 && d[1] % 16 != 0); };
    if (!accumulate && from.dims() == d && out_of == 1 && moved(into)) {
        const simd::ChannelLayout yl{d[0], d[1], d[2] * d[3], into};
        kernel(
            "plain_to_blocked",
            [yl](const std::vector<float*>& a) { simd::plain_to_blocked(a[0], a[1], yl, nullptr); }, {src, dst});
        return;
    }
    if (!accumulate && from.dims() == d && into == 1 && moved(out_of)) {
        kernel(
            "blocked_to_plain",
            [N = d[0], C = d[1], HW = d[2] * d[3], out_of](const std::vector<float*>& a) {
                const float* x[] = {a[0]};
                simd::concat_plain(x, &C, &out_of, 1, a[1], N, HW, nullptr);
            },
            {src, dst});
        return;
    }
    // A copy into the same layout (a gradient passed on to a second reader: a residual add's
    // operand that does not take dy's buffer). oneDNN's reorder copied 5-8 GB/s: efficientnet_b0's
    // features.2.1.add1 at batch 8, 3.2 MB, 0.40-0.66 ms in alternated runs.
    if (!accumulate && from == to && from.data_type() == dnnl::memory::data_type::f32) {
        kernel(
            "copy",
            [n = int64_t(from.get_size() / sizeof(float)), threads = step_threads()](const std::vector<float*>& a) {
                simd::copy_floats(a[0], a[1], n, threads);
            },
            {src, dst});
        return;
    }
    dnnl::primitive_attr a = attr();
    if (accumulate) {
        dnnl::post_ops po;
        po.append_sum(1.0f);
        a.set_post_ops(po);
    }
    dnnl::reorder::primitive_desc pd(eng, from, eng, to, a);
    primitive(pd, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
}

int Plan::as(int m, const Md& want) {
    if (md(m) == want) return m;
    int c = mem(want);
    reorder_into(m, c);
    return c;
}

void Plan::zero(int m) {
    const size_t bytes = md(m).get_size();
    if (bytes % sizeof(float) != 0) {
        kernel("zero", [bytes](const std::vector<float*>& p) { std::memset(p[0], 0, bytes); }, {m});
        return;
    }
    kernel("zero",
           [n = int64_t(bytes / sizeof(float)), threads = step_threads()](const std::vector<float*>& p) {
               simd::zero_floats(p[0], n, threads);
           },
           {m});
}

void Plan::accumulate(int dst, int src) {
    if (md(dst) == md(src)) {
        dnnl::binary::desc d(dnnl::algorithm::binary_add, md(dst), md(src), md(dst));
        dnnl::binary::primitive_desc pd(d, attr(), eng);
        primitive(pd, {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, src}, {DNNL_ARG_DST, dst}});
    } else {
        reorder_into(src, dst, true);
    }
}

int Plan::value_as(int t, const Md& want) {
    int v = value[size_t(t)];
    if (v < 0) throw std::logic_error(cat("onednn: tensor ", t, " is read before it is computed"));
    if (md(v) == want) return v;
    for (const auto& [m, c] : converted_[size_t(v)])
        if (m == want) return c;
    int c = as(v, want);
    converted_[size_t(v)].push_back({want, c});
    return c;
}

int Plan::contribution(int t, const Md& want) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr < 0) return gr = mem(want);
    return mem(want);
}

int Plan::contribution_over(int t, int src) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr < 0 && md(src) == md(value[size_t(t)]) && !shared(src)) return gr = src;
    return contribution(t, md(src));
}

int Plan::placed_contribution(int t) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr >= 0 || placed[size_t(t)] < 0) return -1;
    return gr = placed[size_t(t)];
}

void Plan::contributed(int t, int m) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (m == gr) return;
    // A contribution that is a temporary of gr's layout takes in a gradient another root still
    // holds: one pass, where own() would copy it first.
    if (shared(gr) && md(m) == md(gr) && holders(mems[size_t(m)].buffer) == 0) {
        accumulate(m, gr);
        gr = m;
        return;
    }
    accumulate(own(t), m);
}

int Plan::arrived_as(int t, const Md& want) const {
    const int gr = dy(t);
    return gr >= 0 && md(gr) == canonical(want) && !shared(gr) ? gr : -1;
}

int Plan::accumulator(int t) {
    Md want = plain(dims_of(shape(t)));
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr < 0) {
        gr = mem(want);
        zero(gr);
        return gr;
    }
    if (md(gr) == want) return own(t);
    int tmp = mem(want);
    zero(tmp);
    return tmp;
}

void Plan::pass(int t, int src, bool take) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr < 0) {
        if (take) {
            gr = src;
        } else {
            gr = mem(md(src));
            reorder_into(src, gr);
        }
    } else {
        accumulate(own(t), src);
    }
}

void Plan::pass_reordered(int t, int src, const Md& want) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr >= 0) return reorder_into(src, own(t), true);
    gr = mem(want);
    reorder_into(src, gr);
}

void Plan::pass_view(int t, const Md& view, int src, bool covers_all) {
    Md want = plain(dims_of(shape(t)));
    int gr = grad[size_t(grad_root[size_t(t)])];
    if (gr >= 0 && md(gr) == want) return reorder_into(src, alias(own(t), view), true);
    int dst = mem(want);
    if (!covers_all) zero(dst);
    reorder_into(src, alias(dst, view), !covers_all);
    if (gr < 0)
        grad[size_t(grad_root[size_t(t)])] = dst;
    else
        accumulate(own(t), dst);
}

void Plan::finished(int t) {
    if (grad_root[size_t(t)] == t) finished_[size_t(t)] = true;
}

int Plan::holders(int buffer) const {
    int n = 0;
    for (size_t r = 0; r < grad.size(); ++r)
        n += grad[r] >= 0 && !finished_[r] && mems[size_t(grad[r])].buffer == buffer;
    return n;
}

bool Plan::shared(int m) const {
    const int b = mems[size_t(m)].buffer;
    return buffers[size_t(b)].shared && holders(b) > 1;
}

int Plan::own(int t) {
    int& gr = grad[size_t(grad_root[size_t(t)])];
    if (gr >= 0 && shared(gr)) {
        const int copy = mem(md(gr));
        reorder_into(gr, copy);
        gr = copy;
    }
    return gr;
}

int Plan::param_mem(int node, int j, const Md& md_) {
    auto& p = param[size_t(node)];
    if (p.size() <= size_t(j)) p.resize(size_t(j) + 1, -1);
    return p[size_t(j)] = mem(md_, true);
}

int Plan::dparam_mem(int node, int j, const Md& md_) {
    auto& p = dparam[size_t(node)];
    if (p.size() <= size_t(j)) p.resize(size_t(j) + 1, -1);
    return p[size_t(j)] = mem(md_, true);
}

size_t Plan::place(std::vector<size_t>& offsets) const {
    constexpr size_t align = 64;
    const size_t n = buffers.size();
    std::vector<int> first(n, INT_MAX), last(n, -1);
    int step = 0;
    for (const auto* pass : {&fwd, &bwd, &upd})
        for (const Step& s : *pass) {
            for (const auto& [arg, m] : s.args) {
                int b = mems[size_t(m)].buffer;
                first[size_t(b)] = std::min(first[size_t(b)], step);
                last[size_t(b)] = std::max(last[size_t(b)], step);
            }
            ++step;
        }
    for (size_t b = 0; b < n; ++b)
        if (buffers[b].pinned) first[b] = 0, last[b] = INT_MAX;
    // Prep steps run at load(), outside the passes' order: what they touch must live throughout.
    for (const Step& s : prep)
        for (const auto& [arg, m] : s.args)
            if (!buffers[size_t(mems[size_t(m)].buffer)].pinned)
                throw std::logic_error("onednn: a prep step reads or writes a buffer that is not pinned");

    // Largest first, each at the lowest offset free of every placed buffer alive at the same time.
    std::vector<size_t> order;
    for (size_t b = 0; b < n; ++b)
        if (last[b] >= 0 && buffers[b].bytes > 0) order.push_back(b);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
    offsets.assign(n, 0);
    std::vector<size_t> placed;
    size_t total = 0;
    for (size_t b : order) {
        size_t bytes = (buffers[b].bytes + align - 1) / align * align;
        std::vector<std::pair<size_t, size_t>> busy;  // [begin, end) of overlapping lifetimes
        for (size_t o : placed)
            if (first[o] <= last[b] && first[b] <= last[o])
                busy.push_back({offsets[o], offsets[o] + (buffers[o].bytes + align - 1) / align * align});
        std::sort(busy.begin(), busy.end());
        size_t at = 0;
        for (const auto& [lo, hi] : busy) {
            if (at + bytes <= lo) break;
            at = std::max(at, hi);
        }
        offsets[b] = at;
        placed.push_back(b);
        total = std::max(total, at + bytes);
    }
    return total;
}

}  // namespace ridge::onednn
