// Linear on oneDNN inner_product over the leading dimensions flattened. In inference many rows on
// oneDNN matmul where it runs brgemm (AVX-512), on AVX2 on kernels/simd's linear_gemm, and up to 64
// rows (16 with AVX-512) on kernels/simd's linear_panels; below AVX-512 a GELU after either as
// oneDNN's eltwise in place. In training the forward, the data gradient and the weight gradient of
// many rows on matmul too (AVX-512), the bias gradient then on kernels/simd's column_sums.
// x (M..., C)  w (K,C)  b (K)  y (M..., K); x and y plain row-major, w in the layout the primitive
// picks; in training at one or two rows, and in inference on AVX-512 up to 16, a flattened map
// may stay a map (classifier_reads_map), w (K,C,H,W) with it.
#include <algorithm>
#include <optional>

#include "engine/backend/onednn/ops.h"
#include "kernels/simd/simd.h"

namespace ridge::onednn {

using dnnl::prop_kind;

namespace {

struct LinearShape {
    int64_t M, C, K;
};

LinearShape linear_shape(const Plan& p, const Layer& l, const Linear& op) {
    const Shape& xs = p.shape(l.x());
    return {numel(xs) / xs.back(), xs.back(), op.K};
}

Md bias_md(const InnerProduct& ip) { return Md({ip.y.dims()[1]}, dnnl::memory::data_type::f32, Tag::a); }

// Whether oneDNN runs a primitive on its brgemm kernels (AVX-512): matmul's "brg:", the inner
// product's "brgemm:", "brgemm_bwd_d:" and "brgemm_bwd_w:".
bool runs_brgemm(const dnnl::primitive_desc_base& pd) { return std::string(pd.impl_info_str()).rfind("brg", 0) == 0; }

// In training at one or two rows, plain (K,C) weights, for which oneDNN runs its gemm: for the
// layout it picks itself it runs brgemm, whose data gradient read the weights at half the speed of
// the forward. VGG's fc1 (25088 to 4096) at one row, forward + data + weight gradient, 2 threads on
// the Zen 4: 41 to 44 ms against 52 to 60; at two rows 48 against 62; at four level, at eight
// brgemm ahead (65 against 77 to 80 ms). 4096 to 1000 at one row: 1.3 against 2.2 ms.
constexpr int64_t gemm_rows = 2;

// The layout, per image, of a map an inner product may read as it lies, its weights taking the
// same one: channel blocks the channels fill. Else none.
std::optional<Tag> map_tag(const Md& m) {
    const int64_t block = channel_block(m);
    // channel_block says C for channels-last, which is 8 or 16 for maps that narrow.
    if ((block != 8 && block != 16) || unblocked(m)) return std::nullopt;
    if (m.dims()[1] % block != 0) return std::nullopt;
    return block == 16 ? Tag::nChw16c : Tag::nChw8c;
}

// Whether inference reads a map held so as rows (classifier_reads_map): on AVX-512, on as many
// images as linear_panels takes, in nChw16c.
bool map_rows_forward(const Plan& p, const Md& m) {
    return !p.train && avx512_core_here() && m.dims()[0] <= panel_rows_most() && map_tag(m) == Tag::nChw16c;
}

// Whether every layer that reads t is a linear layer, or an identity (dropout) read only so.
bool only_linears_read(const Graph& g, int t) {
    const std::vector<int> r = readers_of(g, t);
    return !r.empty() && t != g.output() && std::all_of(r.begin(), r.end(), [&](int n) {
        const Node& node = g.nodes()[size_t(n)];
        if (std::holds_alternative<Dropout>(node.op) || std::holds_alternative<StochasticDepth>(node.op))
            return only_linears_read(g, node.output);
        return std::holds_alternative<Linear>(node.op);
    });
}

InnerProduct rows(const Plan& p, const Layer& l, const LinearShape& s, const Linear& op) {
    auto f32 = dnnl::memory::data_type::f32;
    const Md& v = p.md(p.value[size_t(l.x())]);
    // Rows held as a map in channel blocks (classifier_reads_map).
    const bool map = p.shape(l.x()).size() == 2 && v.dims().size() == 4;
    if (std::optional<Tag> tag = map ? map_tag(v) : std::nullopt) {
        const Dims d = v.dims();
        return {v, Md({s.K, d[1], d[2], d[3]}, f32, *tag), plain({s.M, s.K}), op.bias};
    }
    const Tag w = p.train && s.M <= gemm_rows ? Tag::ab : Tag::any;
    return {plain({s.M, s.C}), Md({s.K, s.C}, f32, w), plain({s.M, s.K}), op.bias};
}

// In inference, rows of tokens (vit's 197 per image, convnext's positions) as oneDNN's matmul with
// weights in its own layout, where that runs brgemm (AVX-512): M=197 on the 2-core EPYC, C=768
// to K=768, 2304 and 3072, 0.44, 1.33 and 1.77 ms against inner product's 0.57, 1.71 and 2.29; 3072
// to 768 and every shape at M=3152 level. Few rows stay inner products: a classifier at M=16, 2048
// to 1000, took 0.15 ms as a matmul and 0.13 as an inner product. With AVX2 alone oneDNN's
// matmul runs gemm:jit, as much as 3x slower than the inner product's there, and is not used.
bool matmul_forward(Plan& p, const Layer& l, const Linear& op, const LinearShape& s) {
    if (p.train || s.M < 128) return false;
    auto f32 = dnnl::memory::data_type::f32;
    Md x2 = plain({s.M, s.C}), y2 = plain({s.M, s.K}), b2 = plain({1, s.K});
    dnnl::primitive_attr attr = p.attr();
    if (l.group) attr.set_post_ops(post_ops_of(p.g, *l.group));
    Md w_any({s.C, s.K}, f32, Tag::any);
    auto d = op.bias ? dnnl::matmul::desc(x2, w_any, b2, y2) : dnnl::matmul::desc(x2, w_any, y2);
    dnnl::matmul::primitive_desc pd(d, attr, p.eng);
    if (!runs_brgemm(pd)) return false;

    int x = p.alias(p.value_as(l.x(), plain(dims_of(p.shape(l.x())))), x2);
    int y = group_destination(p, l, plain(dims_of(p.shape(l.y(p.g)))), x);
    // The weights are stored (K,C); matmul reads them as (C,K): the same bytes, axes swapped, so
    // load() reorders the plain (K,C) tensor into them.
    int w = p.param_mem(l.node, 0, pd.weights_desc().permute_axes({1, 0}));
    std::vector<std::pair<int, int>> args = {
        {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, p.alias(w, pd.weights_desc())}, {DNNL_ARG_DST, p.alias(y, y2)}};
    if (op.bias) args.push_back({DNNL_ARG_BIAS, p.alias(p.param_mem(l.node, 1, plain({s.K})), b2)});
    p.primitive(pd, args);
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, args[2].second};
    return true;
}

// A GELU alone after a linear on kernels/simd's products below AVX-512 runs as oneDNN's eltwise
// over y in place, a second step of the same layer: an erf in the kernels' epilogues (Numerical Recipes'
// erfc, an exp and a division) cost 0.8 ns an element on 2 threads of the Zen 3 against about 0.35
// for oneDNN's post-op, and the pass after costs about 0.55 ns an output, less than what the kernels
// gain on oneDNN's gemm:jit inner product with its GELU post-op. On the 2-core Zen 3, alternated
// processes: vit_b_16's fc1 (197 x 768 -> 3072) 0.75 to 0.81 of the inner product's time at batch
// 1, 0.99 at batch 16 (linear_gemm); convnext_tiny's fc1 at batch 1 (2026-12-01), stage 3 (196 x
// 384 -> 1536) 1.84 against 3.3 ms, stage 1 (3136 x 96 -> 384) 2.56 against 2.79, at batch 16
// 2 to 7 % faster in every stage. With AVX-512 (up to 16 rows on linear_panels) it stays the inner
// product's post-op: not measured there.
bool gelu_alone(const Plan& p, const Layer& l) {
    return l.group && l.group->post.size() == 1 && post_ops_all(p, l, Activation::Fn::gelu) && !avx512_core_here();
}

void gelu_after(Plan& p, int y) {
    const Eltwise e = eltwise_of(Activation::Fn::gelu).front();
    const dnnl::eltwise_forward::desc d(prop_kind::forward_inference, e.alg, p.md(y), e.alpha, e.beta);
    p.primitive(dnnl::eltwise_forward::primitive_desc(d, p.attr(), p.eng), {{DNNL_ARG_SRC, y}, {DNNL_ARG_DST, y}});
}

// Up to 64 rows in inference (a classifier up to batch 64; 16 with AVX-512): kernels/simd's
// linear_panels over weights in panels of 16 rows, one contiguous stream a thread, read once for
// all rows. For one row oneDNN's brgemm inner product read them at about four fifths of memory
// speed (alexnet's fc1: 4.2 to 4.7 against 5.6 ms); from the caches it was level or faster too
// (regnet_y_400mf's 440 -> 1000). On more rows, below AVX-512, oneDNN's gemm:jit inner product
// read the weights at half the memory speed or less: on the 2-core Zen 3 at batch 16, alexnet's
// fc1 took 18.8 ms and vgg11's 52.6 against bounds of 6.0 and 16.3. With AVX-512, whose blocks of
// rows take 16-lane columns, up to 16 rows (panel_rows_most): vgg11's classifier on the 2-core
// Zen 5 against oneDNN's brgemm inner product, per layer, alternated runs, fc1 (25088 -> 4096) at
// batch 8 13.6-14.1 -> 9.2-11.3 ms, fc2 2.2-2.7 -> 1.5-1.8, fc3 0.60-0.69 -> 0.38-0.48; at 16
// 15.9-17.6 -> 12.5-14.7; at 32 level or slower (fc2 4.5-4.6 -> 4.8), at 64 slower (fc1 44 ->
// 50-52 ms), where the brgemm's register blocking of several outputs a row pays. That is the Zen 5
// only: on Intel's AVX-512 cores the brgemm was not measured against it. The group may add a
// ReLU, or below AVX-512 a GELU alone (gelu_after); any other post-op keeps the inner product.
bool row_forward(Plan& p, const Layer& l, const Linear& op, const LinearShape& s) {
    if (p.train || s.M > panel_rows_most()) return false;
    const bool gelu = gelu_alone(p, l);
    if (!gelu && !post_ops_all(p, l, Activation::Fn::relu)) return false;
    const bool relu = !gelu && l.group && !l.group->post.empty();
    auto f32 = dnnl::memory::data_type::f32;
    const Md v = p.md(p.value[size_t(l.x())]);
    // Rows held as a map in nChw16c (classifier_reads_map), read as they lie; so are rows apart
    // (spaced_rows).
    const bool map = p.shape(l.x()).size() == 2 && v.dims().size() == 4 && map_rows_forward(p, v);
    const bool spaced = spaced_rows(p, v);
    int x = map || spaced ? p.value[size_t(l.x())] : p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    const int64_t ldx = spaced ? strides_of(v)[0] : s.C;
    int y = p.mem(plain(dims_of(p.shape(l.y(p.g)))));
    const Md w_md = map ? Md({s.K, v.dims()[1], v.dims()[2], v.dims()[3]}, f32, Tag::ABcd16b16a)
                        : Md({s.K, s.C}, f32, Tag::AB16b16a);
    int w = p.param_mem(l.node, 0, w_md);
    const int64_t M = s.M, C = s.C, K = s.K;
    if (op.bias) {
        int b = p.param_mem(l.node, 1, plain({s.K}));
        p.kernel("linear_panels",
                 [=](const std::vector<float*>& a) { simd::linear_panels(a[0], ldx, a[1], a[2], relu, a[3], M, C, K); },
                 {x, w, b, y});
    } else {
        p.kernel("linear_panels",
                 [=](const std::vector<float*>& a) { simd::linear_panels(a[0], ldx, a[1], nullptr, relu, a[2], M, C, K); },
                 {x, w, y});
    }
    if (gelu) gelu_after(p, y);
    p.value[size_t(l.y(p.g))] = y;
    return true;
}

// Many rows in inference on AVX2 hosts without AVX-512 (vit's tokens, convnext's positions):
// kernels/simd's linear_gemm over the same weight panels, with a residual sum and then a ReLU
// fused as the group has them, or a GELU alone after it (gelu_after). On the 2-core Zen 3, alone
// against oneDNN's AVX2 inner product (gemm:jit; its matmul there is gemm:jit too), it ran vit's
// shapes and convnext's later stages 3 to 6 % faster, convnext's first stage at batch 4 (12544 x
// 96 -> 384) 8 % slower, while in the per-layer pass of convnext at batch 16 every stage's linears
// were faster (154 to 188 against 143 to 181 GFLOP/s) and the whole nets were a few per cent
// faster, once linear_gemm's micro-kernel was unrolled (kernels/simd/panel.h). Below AVX2 (never
// measured) these many rows stay the inner product's; row_forward's few rows have no such limit.
bool gemm_forward(Plan& p, const Layer& l, const Linear& op, const LinearShape& s) {
    if (p.train || s.M <= simd::max_panel_rows || avx512_core_here() || !avx2_here()) return false;
    const bool gelu = gelu_alone(p, l);
    const std::optional<SumRelu> chain = gelu ? SumRelu{} : sum_then_relu(p, l);
    if (!chain) return false;
    const simd::Gemm d{s.M, s.C, s.K, chain->sum, chain->relu};
    const int x = p.value_as(l.x(), plain(dims_of(p.shape(l.x()))));
    const int y = group_destination(p, l, plain(dims_of(p.shape(l.y(p.g)))), x);
    const int w = p.param_mem(l.node, 0, Md({s.K, s.C}, dnnl::memory::data_type::f32, Tag::AB16b16a));
    const int threads = p.step_threads();
    const int scratch = p.mem(plain({int64_t(simd::linear_gemm_scratch(threads))}));
    if (op.bias) {
        const int b = p.param_mem(l.node, 1, plain({s.K}));
        p.kernel("linear_gemm",
                 [=](const std::vector<float*>& a) { simd::linear_gemm(a[0], a[1], a[2], a[4], a[3], d, threads); },
                 {x, w, b, scratch, y});
    } else {
        p.kernel("linear_gemm",
                 [=](const std::vector<float*>& a) { simd::linear_gemm(a[0], a[1], nullptr, a[3], a[2], d, threads); },
                 {x, w, scratch, y});
    }
    if (gelu) gelu_after(p, y);
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = {{}, {x}, y};
    return true;
}

}  // namespace

// A classifier's flatten in training at one or two images, from a map in channel blocks (after
// dropouts, if any): the inner products read the map itself, their weights (K,C,H,W) in its
// layout, so neither the flatten nor an identity pool before it copies (a 100 KB transpose of
// VGG's 512x7x7 took 0.02 to 0.03 ms each way, most of it writing memory that the classifier's
// weights had pushed out of the caches), and oneDNN runs its gemm as on plain rows (gemm_rows).
// In inference likewise on as many images as linear_panels takes (row_forward), from nChw16c: an
// image's map is one row whose columns run (C/16, H, W, 16), the order of the weights' columns in
// ABcd16b16a. The VGGs at batch 16 had copied their 512x7x7 maps into plain rows in the identity
// pool, 0.09 to 0.3 ms (bound 0.056). Both plans in one process, alternated (the geometric mean of
// the two orders of making them, 2-core Zen 5): vgg16 at batch 1 0.96x, at 16 level, vgg11 at 16
// 0.99x.
bool classifier_reads_map(const Plan& p, int t, const Md& m) {
    if (m.dims().size() != 4 || !map_tag(m)) return false;
    if (!(p.train && m.dims()[0] <= gemm_rows) && !map_rows_forward(p, m)) return false;
    const std::vector<int> r = readers_of(p.g, t);
    if (r.size() != 1 || !std::holds_alternative<Flatten>(p.g.nodes()[size_t(r[0])].op)) return false;
    const int rows = p.g.nodes()[size_t(r[0])].output;
    const Dims d = m.dims();  // one row an image: flattened from C to the end
    return p.shape(rows) == Shape{d[0], d[1] * d[2] * d[3]} && only_linears_read(p.g, rows);
}

// Rows of a strided 2-D view, each contiguous (ViT's class token of every image, a select of the
// token sequence): row_forward's kernel reads them where they lie. In training, and on more rows
// than it takes, the linear reads a plain copy. Copying them out had taken 37 to 82 us at batch 16
// on the 2-core Zen 5 (the select's reorder), a layer whose bound is nothing.
bool spaced_rows(const Plan& p, const Md& md) {
    if (p.train || !unblocked(md) || md.dims().size() != 2 || md.dims()[0] > panel_rows_most()) return false;
    const Dims st = strides_of(md);
    return st[1] == 1 && st[0] >= md.dims()[1];
}

// Squeeze-excitation's pooled vector is read in place, not reordered (5 us a layer).
bool rows_in_place(const Md& md) {
    const Dims d = md.dims();
    if (d.size() != 4 || d[2] != 1 || d[3] != 1) return false;
    const int64_t block = channel_block(md);
    return block > 0 && d[1] % block == 0;
}

namespace {

// Training on 3 to 64 plain rows below AVX-512 with the weights (K,C) stored C-major (oneDNN's
// `ba`), as oneDNN's gemm inner product keeps them for some shapes (at 1 and 2 rows, rows() asks
// for K-major ones; with AVX-512 oneDNN runs brgemm): kernels/simd's few-row kernels read them as
// they lie.
bool c_major_rows(const Plan& p, const InnerProduct& ip, const Md& w) {
    const Dims x = ip.x.dims();
    if (!p.train || avx512_core_here() || x.size() != 2 || x[0] <= gemm_rows || x[0] > simd::max_panel_rows)
        return false;
    return w == canonical(Md(w.dims(), dnnl::memory::data_type::f32, Tag::ba));
}

// The forward on C-major weights on few rows (c_major_rows), no post-op: kernels/simd's
// linear_rows, each row of y a sum of the weights' rows, streamed (linear.cpp), on the weights in
// the layout oneDNN's primitive chose, so that its backward takes them as they are. On the 2-core
// Zen 3, train b8, two alternated runs each (oneDNN's gemm:jit against this): alexnet's fc1 (9216
// -> 4096) 21.3-23.7 against 17.0-19.0 ms, fc2 8.9-10.6 against 7.5-8.2, fc3 2.39 against
// 1.88-1.98; VGG16's fc2 9.9-11.9 against 8.0-8.6, fc3 2.2-2.5 against 1.9-2.1 (bounds at 25 GB/s:
// 6.06, 2.70, 0.66 ms). K-major weights (VGG's fc1) stay oneDNN's. false, planning nothing,
// elsewhere.
bool rows_forward(Plan& p, const Layer& l, const InnerProduct& ip, const Md& w_md, int x, int y) {
    if (!c_major_rows(p, ip, w_md) || (l.group && !l.group->post.empty())) return false;
    const int64_t M = ip.x.dims()[0], C = ip.x.dims()[1], K = ip.y.dims()[1];
    const int threads = p.step_threads();
    const int w = p.param_mem(l.node, 0, w_md);
    if (ip.bias) {
        const int b = p.param_mem(l.node, 1, bias_md(ip));
        p.kernel(
            "linear_rows",
            [=](const std::vector<float*>& a) { simd::linear_rows(a[0], a[1], a[2], a[3], M, C, K, true, threads); },
            {x, w, b, y});
    } else {
        p.kernel(
            "linear_rows",
            [=](const std::vector<float*>& a) { simd::linear_rows(a[0], a[1], nullptr, a[2], M, C, K, true, threads); },
            {x, w, y});
    }
    return true;
}

// In training, the forward on 1024 rows or more as oneDNN's matmul where the inner product runs
// brgemm (AVX-512), the weights kept in the inner product's layout (its backward's and the
// update's) and reordered into the matmul's each step where they differ (0.07 to 0.27 ms; a
// training plan fuses nothing into a linear, so attr holds no post-op there). On the
// 2-core Zen 5, alone, medians of 9 twice, the matmul's time with its reorder against the inner
// product's: vit's 1576 rows 0.77 to 0.92 (3072 -> 768 21.1 against 27.5 ms), convnext's 25088,
// 6272 and 1568 positions 0.93 to 1.05; on fewer rows it lost as often as not (392 rows 0.88 and
// 1.13, 384 1.21, 256 1.13, 128 1.28). vit_b_16's training step at batch 8 (`ridge bench`, two
// alternated pairs): 2.84 and 2.69 s -> 2.57 and 2.62, its forward 1.00 and 0.93 -> 0.79 and 0.81.
constexpr int64_t matmul_forward_rows = 1024;

bool matmul_training_forward(Plan& p, const Layer& l, const InnerProduct& ip,
                             const dnnl::inner_product_forward::primitive_desc& ipd, const dnnl::primitive_attr& attr,
                             int x, int y) {
    const Dims xd = ip.x.dims();
    if (!p.train || xd.size() != 2 || xd[0] < matmul_forward_rows) return false;
    if (!runs_brgemm(ipd)) return false;
    const int64_t M = xd[0], C = xd[1], K = ip.y.dims()[1];
    const Md x2 = plain({M, C}), y2 = plain({M, K}), b2 = plain({1, K});
    const Md w_any({C, K}, dnnl::memory::data_type::f32, Tag::any);
    auto d = ip.bias ? dnnl::matmul::desc(x2, w_any, b2, y2) : dnnl::matmul::desc(x2, w_any, y2);
    const dnnl::matmul::primitive_desc pd(d, attr, p.eng);
    if (!runs_brgemm(pd)) return false;
    const int w = p.as(p.param_mem(l.node, 0, ipd.weights_desc()), pd.weights_desc().permute_axes({1, 0}));
    std::vector<std::pair<int, int>> args = {
        {DNNL_ARG_SRC, p.alias(x, x2)}, {DNNL_ARG_WEIGHTS, p.alias(w, pd.weights_desc())}, {DNNL_ARG_DST, p.alias(y, y2)}};
    if (ip.bias) args.push_back({DNNL_ARG_BIAS, p.alias(p.param_mem(l.node, 1, bias_md(ip)), b2)});
    p.primitive(pd, args);
    return true;
}

}  // namespace

void inner_product_forward(Plan& p, const Layer& l, const InnerProduct& ip) {
    const Md b = bias_md(ip);
    prop_kind prop = p.train ? prop_kind::forward_training : prop_kind::forward_inference;
    auto d = ip.bias ? dnnl::inner_product_forward::desc(prop, ip.x, ip.w, b, ip.y)
                     : dnnl::inner_product_forward::desc(prop, ip.x, ip.w, ip.y);
    dnnl::primitive_attr attr = p.attr();
    if (l.group) attr.set_post_ops(post_ops_of(p.g, *l.group));
    dnnl::inner_product_forward::primitive_desc pd(d, attr, p.eng);

    int v = p.value[size_t(l.x())];
    const bool in_place = p.md(v) == ip.x || rows_in_place(p.md(v));
    int x = p.alias(in_place ? v : p.value_as(l.x(), plain(dims_of(p.shape(l.x())))), ip.x);
    int y = group_destination(p, l, plain(dims_of(p.shape(l.y(p.g)))), x);
    // The backward's primitives take this one's descriptor as their hint, kernel or not.
    Plan::Saved sv{pd, {x}, p.alias(y, ip.y)};
    if (!rows_forward(p, l, ip, pd.weights_desc(), x, sv.out) &&
        !matmul_training_forward(p, l, ip, pd, attr, x, sv.out)) {
        std::vector<std::pair<int, int>> args = {
            {DNNL_ARG_SRC, x}, {DNNL_ARG_WEIGHTS, p.param_mem(l.node, 0, pd.weights_desc())}, {DNNL_ARG_DST, sv.out}};
        if (ip.bias) args.push_back({DNNL_ARG_BIAS, p.param_mem(l.node, 1, b)});
        p.primitive(pd, args);
    }
    p.value[size_t(l.y(p.g))] = y;
    p.saved[size_t(l.node)] = sv;
}

namespace {

// The data gradient on C-major weights on few rows (c_major_rows): oneDNN's backward data wants
// them K-major and reordered all of them every step. kernels/simd's linear_rows_dgrad reads them
// as they lie, each output a dot product along K. On the 2-core Zen 3, VGG16 train b8:
// classifier.fc2 (4096 -> 4096) 28.8 -> 7.0 ms, fc3 (4096 -> 1000) 10.7 -> 1.85 ms, against bounds
// of 7.8 and 1.9 ms. The K-major weights VGG's fc1 gets (25088 -> 4096) stay oneDNN's, which read
// them at 10 GB/s; linear_rows_dgrad would sum their rows, streamed, at 7.5 to 10. false, planning
// nothing, elsewhere.
bool rows_dgrad(Plan& p, const Layer& l, const InnerProduct& ip, int dy) {
    const int w = p.param[size_t(l.node)][0];  // as the forward's primitive took them
    if (!c_major_rows(p, ip, p.md(w))) return false;
    const int64_t M = ip.x.dims()[0], C = ip.x.dims()[1], K = ip.y.dims()[1];
    const int threads = p.step_threads();
    const int dx = p.contribution(l.x(), plain(dims_of(p.shape(l.x()))));
    p.kernel("linear_rows_dgrad",
             [=](const std::vector<float*>& a) { simd::linear_rows_dgrad(a[0], a[1], a[2], M, C, K, true, threads); },
             {dy, w, dx});
    p.contributed(l.x(), dx);
    return true;
}

// The data gradient on many rows with AVX-512 as oneDNN's matmul, dx (M,C) = dy (M,K) times the
// weights (K,C) reordered into its layout each step: oneDNN 2.6's brgemm backward-data inner
// product ran some row counts at less than half the forward's speed. On the 2-core Zen 5, each
// alone, median of 9 twice (matmul's time with its reorder, 0.07 to 0.27 ms): vit's 1576 rows (8
// images of 197 tokens) 768 -> 2304, 768, 3072 and 3072 -> 768 34.4, 11.9, 45.6 and 47.7 ms against
// 14.8, 4.8, 19.7 and 20.3 (156 to 163 against 366 to 385 GFLOP/s), 1182 or 3152 rows likewise;
// where the inner product kept pace (1568 or 392 rows, convnext's 25088, 6272 and 1568 positions)
// the matmul was 0.78 to 0.96 of it. Below a few hundred rows it mostly lost: 0.86 to 1.25x at
// 128 to 256 rows (slower in 7 of 9 shapes), twice the time at a classifier's 8. With AVX2 alone
// both run gemm:jit, level.
constexpr int64_t matmul_dgrad_rows = 384;

bool matmul_dgrad(Plan& p, const Layer& l, const InnerProduct& ip,
                  const dnnl::inner_product_backward_data::primitive_desc& ipd, int dy) {
    const Dims xd = ip.x.dims();
    if (xd.size() != 2 || xd[0] < matmul_dgrad_rows || !runs_brgemm(ipd)) return false;
    const int64_t M = xd[0], C = xd[1], K = ip.y.dims()[1];
    const dnnl::matmul::desc d(plain({M, K}), Md({K, C}, dnnl::memory::data_type::f32, Tag::any), plain({M, C}));
    const dnnl::matmul::primitive_desc pd(d, p.attr(), p.eng);
    if (!runs_brgemm(pd)) return false;
    const int w = p.as(p.param[size_t(l.node)][0], pd.weights_desc());
    const int dx = p.contribution(l.x(), plain(dims_of(p.shape(l.x()))));
    p.primitive(pd, {{DNNL_ARG_SRC, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DST, p.alias(dx, plain({M, C}))}});
    p.contributed(l.x(), dx);
    return true;
}

// The weight gradient on many rows with AVX-512 as oneDNN's matmul into a plain buffer, reordered
// into the weights' layout (the inner product's, which the update reads), and the bias gradient as
// kernels/simd's column sums of dy: oneDNN 2.6's brgemm backward-weights inner product ran vit's
// linears at 260 to 330 GFLOP/s where the matmul ran 340 to 390. The product is the one whose
// output has min(C, K) columns: dw (K,C) = dy^T x where C <= K, else dw^T (C,K) = x^T dy (oneDNN
// transposes the left operand). On the 2-core Zen 5, alone, medians of 7 three times, the inner
// product's time against the matmul's with its reorder: 1576 rows (8 images of 197 tokens)
// 3072 -> 768 27.3-28.7 against 20.1-20.4 ms, 768 -> 3072 23.8-24.2 against 20.1-20.3, 768 -> 2304
// 16.8-18.8 against 16.3-16.7, 768 -> 768 5.8-5.9 against 5.0-5.2; 6272 rows (convnext's stage 2)
// 192 -> 768 and 768 -> 192 5.4-5.8 against 5.3-5.6; 1568 rows level to 0.9x. Where the output is
// 96 wide (convnext's 25088 positions of 96 -> 384) the matmul lost (6.1-6.2 against 6.6-8.2),
// and on 392 rows the reorder ate the gain: hence both lines.
constexpr int64_t matmul_wgrad_rows = 1024;
constexpr int64_t matmul_wgrad_width = 192;

bool matmul_wgrad(Plan& p, const Layer& l, const InnerProduct& ip,
                  const dnnl::inner_product_backward_weights::primitive_desc& ipd, int x, int dy) {
    const Dims xd = ip.x.dims();
    if (xd.size() != 2 || xd[0] < matmul_wgrad_rows || !runs_brgemm(ipd)) return false;
    const int64_t M = xd[0], C = xd[1], K = ip.y.dims()[1];
    if (std::min(C, K) < matmul_wgrad_width || p.md(x) != plain({M, C}) || p.md(dy) != plain({M, K})) return false;
    const bool transposed = C > K;  // the product is dw^T (C,K)
    const int64_t m = transposed ? C : K, n = transposed ? K : C;
    const Md a({m, M}, dnnl::memory::data_type::f32, {1, m}), b = plain({M, n}), out = plain({m, n});
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b, out), p.attr(), p.eng);
    if (!runs_brgemm(pd)) return false;
    const int product = p.mem(out);
    p.primitive(pd, {{DNNL_ARG_SRC, p.alias(transposed ? x : dy, a)},
                     {DNNL_ARG_WEIGHTS, p.alias(transposed ? dy : x, b)},
                     {DNNL_ARG_DST, product}});
    const Md dw = transposed ? Md({K, C}, dnnl::memory::data_type::f32, {1, K}) : plain({K, C});
    p.reorder_into(p.alias(product, dw), p.dparam_mem(l.node, 0, ipd.diff_weights_desc()));
    if (ip.bias) {
        const int threads = p.step_threads();
        p.kernel("column_sums", [=](const std::vector<float*>& v) { simd::column_sums(v[0], M, K, v[1], threads); },
                 {dy, p.dparam_mem(l.node, 1, bias_md(ip))}, {"diff_dst", "diff_bias"});
    }
    return true;
}

}  // namespace

void inner_product_backward(Plan& p, const Layer& l, const InnerProduct& ip) {
    const Plan::Saved& sv = p.saved[size_t(l.node)];
    auto fwd = hint<dnnl::inner_product_forward::primitive_desc>(sv.pd);
    const Md b = bias_md(ip);
    p.at(&p.bwd, l.node, Phase::dgrad);
    int dy = p.alias(p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output)))), ip.y);

    if (p.needs_grad(l.x()) && !rows_dgrad(p, l, ip, dy)) {
        dnnl::inner_product_backward_data::desc d(ip.x, ip.w, ip.y);
        dnnl::inner_product_backward_data::primitive_desc pd(d, p.attr(), p.eng, fwd);
        if (!matmul_dgrad(p, l, ip, pd, dy)) {
            int w = p.as(p.param[size_t(l.node)][0], pd.weights_desc());
            const Md want = p.md(p.value[size_t(l.x())]) == ip.x ? ip.x : plain(dims_of(p.shape(l.x())));
            int dx = p.contribution(l.x(), want);
            p.primitive(pd, {{DNNL_ARG_DIFF_DST, dy}, {DNNL_ARG_WEIGHTS, w}, {DNNL_ARG_DIFF_SRC, p.alias(dx, ip.x)}});
            p.contributed(l.x(), dx);
        }
    }

    p.at(&p.bwd, l.node, Phase::wgrad);
    auto d = ip.bias ? dnnl::inner_product_backward_weights::desc(ip.x, ip.w, b, ip.y)
                     : dnnl::inner_product_backward_weights::desc(ip.x, ip.w, ip.y);
    dnnl::inner_product_backward_weights::primitive_desc pd(d, p.attr(), p.eng, fwd);
    if (matmul_wgrad(p, l, ip, pd, sv.in[0], dy)) return;
    std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC, sv.in[0]},
                                             {DNNL_ARG_DIFF_DST, dy},
                                             {DNNL_ARG_DIFF_WEIGHTS, p.dparam_mem(l.node, 0, pd.diff_weights_desc())}};
    if (ip.bias) args.push_back({DNNL_ARG_DIFF_BIAS, p.dparam_mem(l.node, 1, b)});
    p.primitive(pd, args);
}

void forward(Plan& p, const Layer& l, const Linear& op) {
    LinearShape s = linear_shape(p, l, op);
    if (matmul_forward(p, l, op, s) || row_forward(p, l, op, s) || gemm_forward(p, l, op, s)) return;
    inner_product_forward(p, l, rows(p, l, s, op));
}

void backward(Plan& p, const Layer& l, const Linear& op) {
    inner_product_backward(p, l, rows(p, l, linear_shape(p, l, op), op));
}

}  // namespace ridge::onednn
