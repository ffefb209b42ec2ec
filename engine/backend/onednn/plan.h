#pragma once
// The plan of a oneDNN run: buffers, the memories that view them, and the steps of each pass
// (forward, backward with the loss, update), each a oneDNN primitive or a hand-written kernel.
// Planning creates primitive descriptors only, which is what fixes every layout and size; nothing
// is allocated and no primitive is compiled until the executor's prepare().
//
// A graph tensor's value lives in one memory, in the layout its producer chose (a conv's blocked
// nChw8c, say); a consumer that needs another layout asks value_as(), which reorders once and
// remembers the copy. A tensor's gradient is collected the same way: the first contribution
// becomes the gradient (or hands over a buffer that is no longer needed), later ones are added.
#include <functional>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <vector>

#include "engine/backend/executor.h"
#include "engine/backend/fold.h"
#include "engine/backend/onednn/fusion.h"
#include "engine/graph.h"

namespace ridge::onednn {

using Md = dnnl::memory::desc;
using Dims = dnnl::memory::dims;
using Tag = dnnl::memory::format_tag;

using Phase = StepPhase;  // executor.h: the phase a step's time is charged to

// A piece of the arena. Its place in the arena is chosen in prepare() from the steps that use it,
// so buffers whose uses do not overlap in time share bytes.
struct Buffer {
    size_t bytes = 0;
    bool pinned = false;  // read or written outside the steps (weights, input, output, gradients)
    bool shared = false;  // a gradient several roots may hold at once (Plan::share)
};

// A oneDNN memory over (part of) a buffer: what step arguments name.
struct Mem {
    int buffer;
    size_t offset;  // bytes into the buffer
    Md md;
};

// A hand-written kernel receives the addresses of its arguments, in the order of Step::args.
using Kernel = std::function<void(const std::vector<float*>&)>;

struct Step {
    int node;  // the layer its time is charged to
    Phase phase;
    dnnl::primitive_desc_base pd;  // empty for a kernel
    Kernel kernel;
    std::vector<std::pair<int, int>> args;  // (DNNL_ARG_*, mem) for a primitive; (index, mem) for a kernel
    int threads;                            // OpenMP threads it was planned for and runs with
    std::string name;                       // a kernel's, for the profile: "winograd3x3", "max_pool", ...
    std::vector<std::string> arg_names;     // a kernel's, where it names them: oneDNN's names (diff_src, ...)
};

// A plain row-major fp32 descriptor of a shape.
Md plain(const Dims& dims);
// The one descriptor ridge uses for all layouts oneDNN calls equal: size-1 dimensions' strides
// set to the tensor's extent (plan.cpp says why). Every memory the plan holds is canonical.
Md canonical(Md md);
Dims dims_of(const Shape& s);
// The layers that read tensor t, in graph order.
std::vector<int> readers_of(const Graph& g, int t);
// Channels per block of a 4-D fp32 descriptor in a layout the kernels of kernels/simd read: 1 for
// nchw, C for nhwc, 8 or 16 for nChw8c / nChw16c; 0 for any other.
int64_t channel_block(const Md& md);
// The layout a map of channel_block `block` is in, as a kernel writing its like takes it:
// channels-last where nhwc (channel_block says C there, which is 8 or 16 for a map that narrow,
// whose readers still expect channels-last), else nchw, nChw8c or nChw16c for 1, 8 or 16.
Tag tag_of_block(int64_t block, bool nhwc);
// Whether a descriptor is strides alone, without blocks: plain, channels-last, a permutation or a
// strided region of one; views of such a layout are new strides over the same bytes.
bool unblocked(const Md& md);
// Its strides (unblocked only), and whether they cover every element once with no gaps.
Dims strides_of(const Md& md);
bool dense(const Md& md);
// Whether oneDNN's matmul reads md in place with a vector kernel: no blocks, and a row or a column
// of its matrices (the last two dimensions) contiguous; for others it has only its reference.
bool matmul_reads(const Md& md);
// Whether oneDNN chose its naive reference implementation ("ref:any", "bnorm_ref:any", ...) for a
// descriptor: orders of magnitude slower than its jit kernels, so the planners try other layouts.
bool reference_impl(const dnnl::primitive_desc_base& pd);
// oneDNN's portable C++ kernels (impl "nspc_bnorm:any", "ncsp_bnorm:any", ...) or its reference one:
// no vector code for this descriptor.
bool generic_impl(const dnnl::primitive_desc_base& pd);
// The instruction set of the kernel oneDNN chose: "avx512_core" of "brgconv_1x1:avx512_core".
std::string impl_isa(const dnnl::primitive_desc_base& pd);
// Whether an ISA includes AVX-512 (Skylake-SP's set and later). oneDNN's cpu_isa values are sets of
// bits, not an order: avx2_vnni (0x407, the AVX2 of Alder Lake and its kin) is above avx512_core
// (0x27) as a number, so comparing with >= took those AVX2 hosts for AVX-512 ones.
bool has_avx512_core(dnnl::cpu_isa isa);
// The same of the ISA oneDNN runs here (ONEDNN_MAX_CPU_ISA caps it): the planners' test for the
// AVX-512 paths.
bool avx512_core_here();
// Whether the ISA oneDNN runs here includes AVX2 with FMA (oneDNN's avx2 bits): the paths for
// AVX2 hosts, whose kernels were measured there only.
bool avx2_here();
// The most rows on which a linear layer's product (a classifier, a squeeze-excitation's 1x1 conv on
// the pooled map) runs kernels/simd's linear_panels in inference: simd::max_panel_rows below
// AVX-512, 16 with it (linear.cpp's row_forward has the figures).
int64_t panel_rows_most();

class Plan {
public:
    Plan(const Graph& g, const ExecOptions& o);

    const Graph& g;
    const bool train, fused;
    const bool winograd;  // ExecOptions::winograd
    const int threads;  // the most a step runs with (ExecOptions::threads, or every core)
    // Whether the executor keeps the team awake through runs of one-thread steps (executor.cpp's
    // run()), so a many-thread step never waits for a sleeping thread to be woken.
    bool teams_held = false;
    dnnl::engine eng{dnnl::engine::kind::cpu, 0};

    std::vector<Buffer> buffers;
    std::vector<Mem> mems;
    std::vector<Step> fwd, bwd, upd;
    // Kernels load() runs once, after the weights (and the batchnorms folded into them) are in:
    // weights transformed for a kernel that reads them so (winograd3x3's). What they write is pinned.
    std::vector<Step> prep;

    // Where emitted steps go and whom they are charged to.
    void at(std::vector<Step>* pass, int node, Phase phase) { pass_ = pass, node_ = node, phase_ = phase; }
    // Threads of the steps planned from now on. OpenMP's count is set to it too, because oneDNN
    // fixes a primitive's split of the work when its descriptor is created.
    void use_threads(int t);
    int step_threads() const { return step_threads_; }

    // Every primitive uses the user scratchpad: one shared buffer sized for the largest.
    dnnl::primitive_attr attr() const;

    int mem(const Md& md, bool pinned = false);              // a fresh buffer
    int alias(int m, const Md& md, size_t extra_bytes = 0);  // another view of m's buffer
    Md md(int m) const { return mems[size_t(m)].md; }        // a copy: mems grows while callers hold it
    void pin(int m) { buffers[size_t(mems[size_t(m)].buffer)].pinned = true; }

    void primitive(const dnnl::primitive_desc_base& pd, std::vector<std::pair<int, int>> args);
    // A kernel may name its arguments as oneDNN names a primitive's, for the profile: a backward
    // with both "diff_src" and "diff_scale" (or diff_weights) computes both gradients in one step.
    void kernel(std::string name, Kernel k, std::vector<int> args, std::vector<std::string> arg_names = {});
    void reorder_into(int src, int dst, bool accumulate = false);
    int as(int m, const Md& md);  // m itself when it has that layout, else a reordered copy
    void zero(int m);
    void accumulate(int dst, int src);  // dst += src, in dst's layout

    // Forward values. value[t] is the memory of tensor t as its producer wrote it.
    std::vector<int> value;
    int value_as(int t, const Md& md);  // reordered once per layout and remembered
    const Shape& shape(int t) const { return g.tensor(t).shape; }
    std::vector<int> last_read;  // per storage: the last layer that reads it (fusion.h)

    // Gradients, per root: identities (dropout) share their input's gradient.
    std::vector<int> grad_root;
    std::vector<int> grad;  // per root: the gradient's memory, -1 while nothing arrived
    int dy(int t) const { return grad[size_t(grad_root[size_t(t)])]; }
    bool fresh(int t) const { return dy(t) < 0; }
    bool needs_grad(int t) const { return g.tensor(t).requires_grad; }
    // Where a backward primitive writes its share of t's gradient in layout md: the gradient itself
    // when none arrived yet, else a temporary that contributed() adds in.
    int contribution(int t, const Md& md);
    // Like contribution(), but in place over src (the layer's dy, not needed afterwards) when
    // nothing arrived yet and the layouts agree: eltwise backward may overwrite its diff_dst.
    int contribution_over(int t, int src);
    void contributed(int t, int m);
    // t's gradient where some arrived already in layout `want`: a kernel may add its share into it
    // in the same pass, instead of writing a contribution that contributed() adds. Else -1.
    int arrived_as(int t, const Md& want) const;
    // Selects that partition a tensor (ViT's q, k and v of the packed in_proj output) have their
    // gradients planned as regions of one buffer, the tensor's gradient (layout.cpp): per tensor,
    // that region (-1: none). placed_contribution(t) is it while nothing arrived yet, taken as t's
    // gradient, for a writer that takes any strides (matmul, a scaling reorder); else -1.
    std::vector<int> placed;
    int placed_contribution(int t);
    // For kernels that add into what they are given: a zeroed or already collected plain gradient.
    int accumulator(int t);
    // Passes src on as a share of t's gradient; take: src is not needed afterwards and may
    // become the gradient itself.
    void pass(int t, int src, bool take);
    // A residual add hands its dy to both operands as their gradient, with no copy: share(dy) marks
    // the buffer, which then has a writer only while one live root holds it. own(t) copies t's
    // gradient first where another does (what the add used to do up front), arrived_as() and
    // contribution_over() decline it. A root is live until the backward of the layer that produced
    // it is planned (finished()); in a residual block the branch's last layer is, before the skip
    // path's other reader (a block's first conv) adds its share, so the copy is seldom made.
    void share(int m) { buffers[size_t(mems[size_t(m)].buffer)].shared = true; }
    void finished(int t);
    bool shared(int m) const;
    int own(int t);
    // Reorders src into t's gradient, adding when some arrived already; `want` is the layout of a
    // gradient that starts here.
    void pass_reordered(int t, int src, const Md& want);
    // Adds src into t's gradient through `view`, a descriptor over the plain layout of t's shape
    // (a region of it, or its elements permuted); covers_all: the view reaches every element.
    void pass_view(int t, const Md& view, int src, bool covers_all);

    // A tensor read only by slices that partition it, which its producer writes as one dense
    // buffer per slice (layout.cpp: ShuffleNet's shuffled channels, read as two halves): per slice
    // layer, its part's memory and, once its backward ran, the part's gradient, which the
    // producer's backward reads. The tensor itself has no memory; while any part's gradient has
    // arrived, its dy() is one of them, only to say that the producer's backward has work.
    struct Part {
        int value = -1, grad = -1;
    };
    std::vector<Part> part;  // per node

    // Per layer: its tensors in op_params order (memory, or -1 where unused) and their gradients.
    std::vector<std::vector<int>> param, dparam;
    int param_mem(int node, int j, const Md& md);   // pinned; load() reorders the plain tensor in
    int dparam_mem(int node, int j, const Md& md);  // pinned
    // A conv with the batchnorm that follows it folded in (inference): its weights and bias are
    // computed at load() from both layers' tensors.
    struct Fold {
        int conv, bn;
    };
    std::vector<Fold> folds;
    // Constant scales folded into the linear layers they read (fusion.h): load() scales those
    // layers' weight rows, and the scale is a view of its input.
    std::vector<ScaleFold> scale_folds;
    // Constant scales the matmul reading them applies (fusion.h): the scale is a view of its input.
    std::vector<MatmulScale> matmul_scales;

    // What a layer's forward keeps for its backward.
    struct Saved {
        dnnl::primitive_desc_base pd;
        std::vector<int> in;  // inputs as the primitive read them
        int out = -1;         // output as written
        int ws = -1, mean = -1, var = -1;
    };
    std::vector<Saved> saved;

    // Places every buffer in one arena: buffers whose steps do not overlap in time (the passes run
    // in the order fwd, bwd, upd) may share bytes; pinned ones live throughout. Returns the arena's
    // size and each buffer's offset.
    size_t place(std::vector<size_t>& offsets) const;

private:
    std::vector<Step>* pass_ = nullptr;
    int node_ = -1;
    Phase phase_ = Phase::fwd;
    int step_threads_;
    int scratch_;
    std::vector<std::vector<std::pair<Md, int>>> converted_;  // per memory: its reordered copies
    std::vector<bool> finished_;                               // per root: finished()
    int holders(int buffer) const;  // live roots whose gradient is in the buffer
};

}  // namespace ridge::onednn
