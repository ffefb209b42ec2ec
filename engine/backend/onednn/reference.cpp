// Layers oneDNN 2.6 has no primitive for (adaptive pooling with unequal windows, ceil-mode average
// pooling) run the reference kernels of kernels/cpu on plain copies of their inputs. None of them
// is on a hot path of the zoo.
#include "engine/backend/onednn/ops.h"
#include "kernels/cpu/kernel.h"

namespace ridge::onednn {

namespace {
std::vector<Shape> input_shapes(const Plan& p, const Layer& l) {
    std::vector<Shape> s;
    for (int t : l.n.inputs) s.push_back(p.shape(t));
    return s;
}
}  // namespace

void forward_reference(Plan& p, const Layer& l) {
    std::vector<Shape> in = input_shapes(p, l);
    std::vector<ParamSpec> specs = op_params(l.n.op, in);
    std::vector<int> args;
    for (int t : l.n.inputs) args.push_back(p.value_as(t, plain(dims_of(p.shape(t)))));
    for (size_t j = 0; j < specs.size(); ++j)
        args.push_back(p.param_mem(l.node, int(j), plain(dims_of(specs[j].shape))));
    int y = p.mem(plain(dims_of(p.shape(l.n.output))));
    args.push_back(y);
    p.saved[size_t(l.node)] = {{}, std::vector<int>(args.begin(), args.begin() + long(in.size())), y};

    p.kernel(
        cat("reference ", op_kind(l.n.op)),
        [op = l.n.op, in, ys = p.shape(l.n.output), params = specs.size(),
         training = p.train](const std::vector<float*>& a) {
            ref::Fwd f;
            for (size_t i = 0; i < in.size(); ++i) f.in.push_back({a[i], in[i]});
            for (size_t j = 0; j < params; ++j) f.params.push_back(a[in.size() + j]);
            f.y = {a.back(), ys};
            f.training = training;
            ref::forward(op, f);
        },
        args);
    p.value[size_t(l.n.output)] = y;
}

// The reference backward adds into the gradients it is given: each input gets its plain gradient
// (or a zeroed temporary added in afterwards), each learned tensor a zeroed gradient.
void backward_reference(Plan& p, const Layer& l) {
    std::vector<Shape> in = input_shapes(p, l);
    std::vector<ParamSpec> specs = op_params(l.n.op, in);
    const Plan::Saved& s = p.saved[size_t(l.node)];
    bool any_dx = false;
    for (int t : l.n.inputs) any_dx = any_dx || p.needs_grad(t);
    p.at(&p.bwd, l.node, any_dx ? Phase::dgrad : Phase::wgrad);

    std::vector<int> args = s.in;
    args.push_back(s.out);
    args.push_back(p.as(p.dy(l.n.output), plain(dims_of(p.shape(l.n.output)))));
    for (size_t j = 0; j < specs.size(); ++j) args.push_back(p.param[size_t(l.node)][j]);
    std::vector<int> dx(in.size(), -1);
    std::vector<bool> wanted_dx(in.size()), wanted_dp(specs.size());
    for (size_t i = 0; i < in.size(); ++i)
        if ((wanted_dx[i] = p.needs_grad(l.x(i)))) args.push_back(dx[i] = p.accumulator(l.x(i)));
    for (size_t j = 0; j < specs.size(); ++j)
        if ((wanted_dp[j] = specs[j].learned)) {
            int dp = p.dparam_mem(l.node, int(j), plain(dims_of(specs[j].shape)));
            p.zero(dp);
            args.push_back(dp);
        }

    p.kernel(
        cat("reference ", op_kind(l.n.op)),
        [op = l.n.op, in, ys = p.shape(l.n.output), wanted_dx, wanted_dp](const std::vector<float*>& a) {
            size_t k = 0;
            ref::Bwd b;
            for (const Shape& s : in) b.in.push_back({a[k++], s});
            b.y = {a[k++], ys};
            b.dy = {a[k++], ys};
            for (size_t j = 0; j < wanted_dp.size(); ++j) b.params.push_back(a[k++]);
            for (size_t i = 0; i < in.size(); ++i) b.dx.push_back({wanted_dx[i] ? a[k++] : nullptr, in[i]});
            for (size_t j = 0; j < wanted_dp.size(); ++j) b.dparams.push_back(wanted_dp[j] ? a[k++] : nullptr);
            ref::backward(op, b);
        },
        args);
    for (size_t i = 0; i < in.size(); ++i)
        if (dx[i] >= 0) p.contributed(l.x(i), dx[i]);
}

}  // namespace ridge::onednn
