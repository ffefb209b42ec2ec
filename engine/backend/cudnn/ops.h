#pragma once
// Each op family's LayerRun, one file per op family of engine/ops/ (conv2d.cpp, linear.cpp,
// matmul.cpp, norm.cpp, activation.cpp, pool.cpp, softmax.cpp, elementwise.cpp, embedding.cpp,
// layout.cpp). make_layer() (executor.cpp) visits a node's op onto these.
#include "engine/backend/cudnn/plan.h"

namespace ridge::cudnn {

// What every layer knows of itself.
struct LayerBase : LayerRun {
    LayerBase(Plan& p, int node) : p(p), node(node), n(p.g.nodes()[size_t(node)]) {}
    Plan& p;
    const int node;
    const Node& n;
    int x(size_t i = 0) const { return n.inputs[i]; }
    int y() const { return n.output; }
    void* xv(const Dev& d, size_t i = 0) const { return d.at(p.value(x(i))); }
    void* yv(const Dev& d) const { return d.at(p.value(y())); }
    void* dx(const Dev& d, size_t i = 0) const { return d.at(p.grad(x(i))); }
    void* dy(const Dev& d) const { return d.at(p.grad(y())); }
    bool wants_dx(size_t i = 0) const { return p.needs_grad(x(i)); }
    bool any_wants_dx() const {
        for (size_t i = 0; i < n.inputs.size(); ++i)
            if (wants_dx(i)) return true;
        return false;
    }
    bool learns() const {
        for (const Param& q : p.params[size_t(node)])
            if (q.grad >= 0) return true;
        return false;
    }
};

std::unique_ptr<LayerRun> conv2d_layer(Plan& p, int node, const Conv2d& op);
std::unique_ptr<LayerRun> linear_layer(Plan& p, int node, const Linear& op);
std::unique_ptr<LayerRun> matmul_layer(Plan& p, int node, const Matmul& op);
std::unique_ptr<LayerRun> batchnorm_layer(Plan& p, int node, const BatchNorm& op);
std::unique_ptr<LayerRun> layernorm_layer(Plan& p, int node, const LayerNorm& op);
std::unique_ptr<LayerRun> activation_layer(Plan& p, int node, const Activation& op);
std::unique_ptr<LayerRun> pool_layer(Plan& p, int node, const Pool2d& op);
std::unique_ptr<LayerRun> pool_layer(Plan& p, int node, const AdaptiveAvgPool2d& op);
std::unique_ptr<LayerRun> softmax_layer(Plan& p, int node, const Softmax& op);
// Hand-written kernels (kernels/cuda): add, mul, scale, layer scale.
std::unique_ptr<LayerRun> elementwise_layer(Plan& p, int node);
std::unique_ptr<LayerRun> embedding_layer(Plan& p, int node, const ClassToken& op);
std::unique_ptr<LayerRun> embedding_layer(Plan& p, int node, const PosEmbedding& op);
// Concat, channel shuffle, permute, slice, select; views and identities run nothing.
std::unique_ptr<LayerRun> layout_layer(Plan& p, int node);  // concat, shuffle, permute, slice, select
std::unique_ptr<LayerRun> alias_layer(Plan& p, int node);   // flatten, reshape, dropout, stochastic depth

}  // namespace ridge::cudnn
