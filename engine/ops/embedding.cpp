#include "engine/ops/embedding.h"

namespace ridge {

Shape shape(const ClassToken&, const std::vector<Shape>& in) {
    Shape y = in.at(0);
    if (y.size() != 3) throw ShapeError("class token needs a token sequence (N,T,D)");
    y[1] += 1;
    return y;
}

Work work(const ClassToken&, const Ctx& c) {
    Ex N = var("N", c.in[0][0]), D = var("D", c.in[0][2]);
    Work w;
    w.params = w.note("params", D);
    w.wgrad_flops = w.note("wgrad FLOPs", N * D);  // the token's gradient summed over the batch
    return w;
}

Shape shape(const PosEmbedding&, const std::vector<Shape>& in) {
    if (in.at(0).size() != 3) throw ShapeError("position embedding needs a token sequence (N,T,D)");
    return in[0];
}

Work work(const PosEmbedding&, const Ctx& c) {
    Ex N = var("N", c.in[0][0]), T = var("T", c.in[0][1]), D = var("D", c.in[0][2]);
    Work w;
    w.params = w.note("params", T * D);
    w.fwd_flops = w.note("fwd FLOPs", N * T * D);
    w.wgrad_flops = w.note("wgrad FLOPs", N * T * D);  // summed over the batch
    return w;
}

std::string kind(const ClassToken&) { return "class_token"; }
std::string kind(const PosEmbedding&) { return "pos_embedding"; }
Category category(const ClassToken&, const Shape&) { return Category::embedding; }
Category category(const PosEmbedding&, const Shape&) { return Category::embedding; }

// x (N,T,D): the token (D); the embedding (T,D).
std::vector<ParamSpec> params(const ClassToken&, const std::vector<Shape>& in) { return {{"token", {in.at(0)[2]}}}; }
std::vector<ParamSpec> params(const PosEmbedding&, const std::vector<Shape>& in) {
    return {{"embedding", {in.at(0)[1], in.at(0)[2]}}};
}

}  // namespace ridge
