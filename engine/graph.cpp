#include "engine/graph.h"

#include <cctype>

namespace ridge {

const Shape& Tensor::shape() const { return g_->tensor(id_).shape; }

int64_t Tensor::dim(int i) const {
    const Shape& s = shape();
    return s.at(i < 0 ? s.size() + i : i);
}

Tensor Graph::input(Shape s, bool requires_grad) {
    for (int64_t d : s)
        if (d < 1) throw BuildError(cat(model_, ": input shape ", to_string(s), " has a non-positive size"));
    tensors_.push_back({std::move(s), -1, int(tensors_.size()), requires_grad});
    return {this, int(tensors_.size()) - 1};
}

void Graph::push_scope(const std::string& s) { scopes_.push_back(s); }
void Graph::pop_scope() { scopes_.pop_back(); }

const Node* Graph::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &nodes_[it->second];
}

Tensor Graph::apply(const Op& op, const std::vector<Tensor>& in, std::string name) {
    std::string prefix;
    for (const auto& s : scopes_) prefix += s + ".";
    std::string kind = op_kind(op);
    if (name.empty()) {
        std::string label = op_label(op);
        // "relu6_1", not "relu61": a label ending in a digit keeps it apart from the count.
        bool digit = std::isdigit(static_cast<unsigned char>(label.back()));
        name = label + (digit ? "_" : "") + std::to_string(++counters_[prefix + "|" + label]);
    }
    name = prefix + name;

    std::vector<Shape> shapes;
    bool grad = op_has_params(op);
    for (const Tensor& t : in) {
        if (&t.graph() != this) throw BuildError(cat(model_, ": layer ", name, " takes a tensor of another graph"));
        shapes.push_back(t.shape());
        grad = grad || tensor(t.id()).requires_grad;
    }
    auto fail = [&](const std::string& rule) {
        std::string ins;
        for (const auto& s : shapes) ins += (ins.empty() ? "" : ", ") + to_string(s);
        return BuildError(cat(model_, ": layer ", name, " (", kind, "): input", shapes.size() > 1 ? "s " : " ", ins,
                              ": ", rule));
    };
    int arity = op_arity(op);
    if ((arity && int(in.size()) != arity) || in.empty())
        throw fail(cat("takes ", arity ? std::to_string(arity) : "at least 1", " input(s), got ", in.size()));
    Shape out;
    try {
        out = op_shape(op, shapes);
    } catch (const ShapeError& e) {
        throw fail(e.what());
    }
    for (int64_t d : out)
        if (d < 1) throw fail(cat("output ", to_string(out), " has a non-positive size"));
    if (by_name_.count(name)) throw fail("a layer of this name already exists");

    int id = int(tensors_.size());
    int storage = op_is_alias(op) ? tensor(in[0].id()).storage : id;
    tensors_.push_back({std::move(out), int(nodes_.size()), storage, grad});
    std::vector<int> ids;
    for (const Tensor& t : in) ids.push_back(t.id());
    by_name_[name] = int(nodes_.size());
    nodes_.push_back({std::move(name), op, std::move(ids), id});
    return {this, id};
}

std::vector<Shape> Graph::input_shapes(const Node& n) const {
    std::vector<Shape> in;
    for (int id : n.inputs) in.push_back(tensor(id).shape);
    return in;
}

std::vector<ParamSpec> Graph::params(const Node& n) const { return op_params(n.op, input_shapes(n)); }

}  // namespace ridge
