#include "engine/ops/layout.h"

#include <algorithm>

#include "engine/ops/norm.h"

namespace ridge {

Shape shape(const Concat& op, const std::vector<Shape>& in) {
    if (in.empty()) throw ShapeError("concat needs at least one input");
    int d = normalize_dim(op.dim, in[0].size());
    Shape y = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
        if (in[i].size() != y.size()) throw ShapeError(cat("input ", i, " has rank ", in[i].size(), ", input 0 has ", y.size()));
        for (size_t k = 0; k < y.size(); ++k)
            if (int(k) != d && in[i][k] != y[k])
                throw ShapeError(cat("input ", i, " ", to_string(in[i]), " differs from input 0 ", to_string(in[0]),
                                     " outside the concat dimension ", d));
        y[d] += in[i][d];
    }
    return y;
}

Shape shape(const ChannelShuffle& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (x.size() != 4) throw ShapeError("channel shuffle needs a 4-d input (N,C,H,W)");
    if (op.G < 1 || x[1] % op.G != 0) throw ShapeError(cat("groups ", op.G, " do not divide the ", x[1], " channels"));
    return x;
}

Shape shape(const Flatten& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    int s = normalize_dim(op.start, x.size()), e = normalize_dim(op.end, x.size());
    if (s > e) throw ShapeError("flatten start dimension is after its end dimension");
    Shape y(x.begin(), x.begin() + s);
    int64_t m = 1;
    for (int i = s; i <= e; ++i) m *= x[i];
    y.push_back(m);
    y.insert(y.end(), x.begin() + e + 1, x.end());
    return y;
}

Shape shape(const Reshape& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    Shape y = op.dims;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < y.size(); ++i) {
        if (y[i] == 0) {
            if (i >= x.size()) throw ShapeError(cat("reshape keeps dimension ", i, " that the input does not have"));
            y[i] = x[i];
        }
        if (y[i] == -1) {
            if (infer >= 0) throw ShapeError("reshape can infer only one dimension");
            infer = int(i);
        } else if (y[i] < 1) {
            throw ShapeError(cat("reshape size ", y[i], " is not positive"));
        } else {
            known *= y[i];
        }
    }
    if (infer >= 0) {
        if (numel(x) % known != 0)
            throw ShapeError(cat("cannot reshape ", numel(x), " elements into ", to_string(op.dims)));
        y[infer] = numel(x) / known;
    }
    if (numel(y) != numel(x))
        throw ShapeError(cat("element count mismatch: ", to_string(x), " has ", numel(x), ", ", to_string(y), " has ",
                             numel(y)));
    return y;
}

Shape shape(const Permute& op, const std::vector<Shape>& in) {
    const Shape& x = in.at(0);
    if (op.order.size() != x.size()) throw ShapeError(cat("permute order has ", op.order.size(), " entries for rank ", x.size()));
    std::vector<int> seen(x.size(), 0);
    Shape y;
    for (int d : op.order) {
        int k = normalize_dim(d, x.size());
        if (seen[k]++) throw ShapeError(cat("permute repeats dimension ", k));
        y.push_back(x[k]);
    }
    return y;
}

Shape shape(const Slice& op, const std::vector<Shape>& in) {
    Shape y = in.at(0);
    int d = normalize_dim(op.dim, y.size());
    if (op.start < 0 || op.length < 1 || op.start + op.length > y[d])
        throw ShapeError(cat("slice [", op.start, ", ", op.start + op.length, ") is outside dimension ", d, " of size ", y[d]));
    y[d] = op.length;
    return y;
}

Shape shape(const Select& op, const std::vector<Shape>& in) {
    Shape y = in.at(0);
    int d = normalize_dim(op.dim, y.size());
    if (op.index < 0 || op.index >= y[d]) throw ShapeError(cat("index ", op.index, " is outside dimension ", d, " of size ", y[d]));
    y.erase(y.begin() + d);
    return y;
}

std::string kind(const Concat&) { return "concat"; }
std::string kind(const ChannelShuffle&) { return "channel_shuffle"; }
std::string kind(const Flatten&) { return "flatten"; }
std::string kind(const Reshape&) { return "reshape"; }
std::string kind(const Permute&) { return "permute"; }
std::string kind(const Slice&) { return "slice"; }
std::string kind(const Select&) { return "select"; }

}  // namespace ridge
