#pragma once
// Which layers run as one oneDNN primitive.
//
// Inference, fused: a conv absorbs the batchnorm after it (folded into its weights at load), then
// a chain of activations (eltwise post-ops; not a SiLU over a map, fusion.cpp says why) and at
// most one residual add (a sum post-op, its destination first holding the other addend); a linear
// absorbs activations and a residual add;
// a batchnorm that follows no conv absorbs a ReLU; a concatenation of channels absorbs the
// batchnorm that alone reads it and a ReLU after that. A 1x1 conv's chain without a residual sum
// may go on into the depthwise 3x3 conv that alone reads it (MobileNet's expansion), with that
// conv's batchnorm and activations: oneDNN runs the depthwise conv as a post-op over rows of the
// 1x1 conv's output still in cache, so the expanded tensor is never written (fusion.cpp says where
// that pays). Training, fused: a batchnorm absorbs a ReLU (fuse_norm_relu). Dropout and stochastic
// depth are identities and ride along in any chain.
// A layer joins a chain only when the chain's output feeds it alone.
#include <vector>

#include "engine/backend/executor.h"
#include "engine/backend/fold.h"
#include "engine/graph.h"

namespace ridge::onednn {

struct PostOp {
    int node;
    enum class Kind { eltwise, sum, depthwise } kind;
    int addend = -1;  // sum: the tensor added in
    int bn = -1;      // depthwise: the batchnorm folded into it
};

struct Group {
    int lead = -1;             // conv, linear, batchnorm or concat
    int bn = -1;               // batchnorm folded into the conv, or applied by the concat (inference)
    std::vector<PostOp> post;  // activations, the residual sum and a depthwise conv, in order
    int last = -1;             // the layer whose output the group writes; the group runs in its place
    std::vector<int> nodes;    // every member, lead first
};

// A constant scale whose output one matmul alone reads, as one operand (attention's q in training,
// where it cannot fold into in_proj's weights): the matmul multiplies its product by s (oneDNN's
// output scale) and both its gradients too, since d(s a b^T)/da = s dy b and /db = s dy^T a. The
// scale runs no step, forward or backward; its output is a view of its input, whose gradient the
// matmul writes.
struct MatmulScale {
    int scale, matmul;  // nodes
    double s;
};

// One entry per node: the index of its group in `groups`, or -1 when it runs alone. Fused
// inference also folds constant scales into the linear layers they read (fold.h), and fused
// inference and training the others into the matmul that reads them: such a scale runs no step,
// its output a view of its input.
struct Fusion {
    std::vector<Group> groups;
    std::vector<int> group_of;
    std::vector<ScaleFold> scales;
    std::vector<MatmulScale> matmul_scales;
};

Fusion find_groups(const Graph& g, const ExecOptions& o);

// Whether layer op, writing tensor out, concatenates 4-D tensors along their channels.
bool concat_of_channels(const Graph& g, const Op& op, int out);

// The last layer that reads tensor t, any view of its storage, a permutation of it (which the
// plan may make a view) or a folded scale of it; the graph's output is read
// after every layer. A group's members read their inputs where the group runs, at its last
// member: an in-place layer between a group's lead and its last (a gate, a residual sum) must not
// overwrite what the group has yet to read.
std::vector<int> last_reader(const Graph& g, const Fusion& f);  // indexed by storage id

}  // namespace ridge::onednn
