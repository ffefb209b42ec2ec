#pragma once
// A network as a DAG of named layers over tensor handles. Building one only records ops and
// infers shapes: no tensor is allocated and no device is touched, so the whole zoo builds in
// milliseconds anywhere.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/op.h"

namespace ridge {

class Graph;

// A handle to a tensor of a graph: the graph owns shapes; blocks pass handles around.
class Tensor {
public:
    Tensor(Graph* g, int id) : g_(g), id_(id) {}
    const Shape& shape() const;
    int64_t dim(int i) const;  // negative counts from the end
    Graph& graph() const { return *g_; }
    int id() const { return id_; }

private:
    Graph* g_;
    int id_;
};

struct TensorInfo {
    Shape shape;
    int producer = -1;   // node index; -1 for the graph input
    int storage = -1;    // id of the tensor whose memory this one lives in (views share it)
    bool requires_grad = false;
};

struct Node {
    std::string name;  // "layer3.0.conv2"
    Op op;
    std::vector<int> inputs;
    int output;
};

class Graph {
public:
    explicit Graph(std::string model) : model_(std::move(model)) {}
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    Graph(Graph&&) = default;
    Graph& operator=(Graph&&) = default;

    // A network's input needs no gradient; a fragment's input may (to study a block's dgrad).
    Tensor input(Shape s, bool requires_grad = false);
    // Adds a layer. Without a name, the layer is called <scope>.<kind><k>, k counting that kind
    // in the scope. A shape rule that fails throws BuildError naming the layer and its inputs.
    Tensor apply(const Op& op, const std::vector<Tensor>& in, std::string name = {});

    const std::string& model() const { return model_; }
    const std::vector<Node>& nodes() const { return nodes_; }
    const TensorInfo& tensor(int id) const { return tensors_.at(id); }
    const Shape& input_shape() const { return tensors_.at(0).shape; }
    int output() const { return nodes_.empty() ? 0 : nodes_.back().output; }
    const Node* find(const std::string& name) const;
    std::vector<Shape> input_shapes(const Node& n) const;
    std::vector<ParamSpec> params(const Node& n) const;  // op_params() of the layer's op on its inputs

    void push_scope(const std::string& s);
    void pop_scope();

private:
    std::string model_;
    std::vector<TensorInfo> tensors_;
    std::vector<Node> nodes_;
    std::vector<std::string> scopes_;
    std::map<std::string, int> counters_;  // "<scope>|<kind>" -> layers so far
    std::map<std::string, int> by_name_;
};

// Names the layers built while it lives: Scope s(x, "layer1.0") makes "layer1.0.conv1".
class Scope {
public:
    Scope(Tensor x, const std::string& name) : g_(&x.graph()) { g_->push_scope(name); }
    ~Scope() { g_->pop_scope(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

private:
    Graph* g_;
};

}  // namespace ridge
