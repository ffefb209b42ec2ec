#pragma once
// The closed set of ops a network is built from, and what the graph asks of each: every op
// answers from its own header (engine/ops/traits.h lists what), and each visit below is
// exhaustive, so an op added to the variant without its facts does not compile.
#include <string>
#include <variant>

#include "engine/ops/activation.h"
#include "engine/ops/conv2d.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/embedding.h"
#include "engine/ops/identity.h"
#include "engine/ops/layout.h"
#include "engine/ops/linear.h"
#include "engine/ops/matmul.h"
#include "engine/ops/norm.h"
#include "engine/ops/pool.h"
#include "engine/ops/softmax.h"

namespace ridge {

using Op = std::variant<Conv2d, Linear, Matmul, BatchNorm, LayerNorm, Activation, Pool2d, AdaptiveAvgPool2d, Add,
                        Mul, Scale, LayerScale, Softmax, Concat, ChannelShuffle, Flatten, Reshape, Permute, Slice,
                        Select, Dropout, StochasticDepth, ClassToken, PosEmbedding>;

Shape op_shape(const Op& op, const std::vector<Shape>& in);
Work op_work(const Op& op, const Ctx& c);
int op_arity(const Op& op);          // inputs it takes; 0 means one or more
std::string op_kind(const Op& op);   // "conv2d", "relu", "maxpool", ... (the layer's type column)
std::string op_label(const Op& op);  // base of default layer names: "conv", "bn", "fc", else the kind
bool op_has_params(const Op& op);
bool op_is_alias(const Op& op);      // the output is a view of input 0: no bytes, no forward traffic

// In a fixed order per op: conv/linear weight then bias; norm gamma, beta (then batchnorm's
// running mean and variance); layer scale gamma; class token (D); position embedding (T,D).
std::vector<ParamSpec> op_params(const Op& op, const std::vector<Shape>& in);

Category op_category(const Op& op, const Shape& x0);

}  // namespace ridge
