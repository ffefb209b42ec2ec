#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine/backend/reference/reference.h"
#include "kernels/cpu/kernel.h"

namespace ridge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Real is the element type of every tensor and of the kernels, Acc the type their sums are
// accumulated in (kernels/cpu/kernel.h): float and double for make_reference_executor, double and
// double for make_reference64 (which adds the double accessors of Reference64), float and float
// for make_reference_float_sums.
template <class Real, class Acc = double>
class ReferenceExecutor : public std::conditional_t<std::is_same_v<Real, double>, Reference64, Executor> {
public:
    using Tensor = HostTensorT<Real>;
    using TWeights = std::vector<std::vector<Tensor>>;

    ReferenceExecutor(const Graph& g, const ExecOptions& o) : g_(g), o_(o) {
        int tensors = 1;  // the input, id 0
        for (const Node& n : g.nodes()) {
            for (int id : n.inputs)
                if (id != 0 && g.tensor(id).producer < 0)
                    throw std::invalid_argument(cat(g.model(), ": layer ", n.name,
                                                    " reads a second graph input; the reference executor takes one"));
            tensors = std::max(tensors, n.output + 1);
            specs_.push_back(g.params(n));
        }
        tensors_ = tensors;
        times_.layers.resize(g.nodes().size());
    }

    std::string name() const override {
        return std::is_same_v<Real, double> ? "reference64" : std::is_same_v<Acc, float> ? "reference-float-sums" : "reference";
    }

    // Every tensor's buffer, every parameter; in training a gradient for each tensor that needs
    // one and each learned parameter; and the kernels' transient scratch, which is at most three
    // 8-byte words per element of the largest tensor (double accumulators, broadcast offsets).
    // Tensors take sizeof(Real) bytes per element.
    int64_t planned_bytes() const override {
        int64_t bytes = 0, largest = 0;
        for (int id = 0; id < tensors_; ++id) {
            const TensorInfo& t = g_.tensor(id);
            int64_t e = numel(t.shape);
            largest = std::max(largest, e);
            bytes += int64_t(sizeof(Real)) * e * (training() && t.requires_grad ? 2 : 1);
        }
        for (const auto& specs : specs_)
            for (const ParamSpec& p : specs)
                bytes += int64_t(sizeof(Real)) * numel(p.shape) * (training() && p.learned ? (with_velocity() ? 3 : 2) : 1);
        return bytes + 24 * largest;
    }

    void prepare() override {
        if (prepared_) return;
        act_.resize(size_t(tensors_));
        grad_.resize(size_t(tensors_));
        for (int id = 0; id < tensors_; ++id) {
            const TensorInfo& t = g_.tensor(id);
            act_[id] = Tensor(t.shape);
            if (training() && t.requires_grad) grad_[id] = Tensor(t.shape);
        }
        w_.resize(specs_.size());
        dw_.resize(specs_.size());
        v_.resize(specs_.size());
        for (size_t i = 0; i < specs_.size(); ++i)
            for (const ParamSpec& p : specs_[i]) {
                w_[i].emplace_back(p.shape);
                dw_[i].push_back(training() && p.learned ? Tensor(p.shape) : Tensor());
                v_[i].push_back(training() && p.learned && with_velocity() ? Tensor(p.shape) : Tensor());
            }
        prepared_ = true;
    }

    void load(const Weights& w) override { load_t(convert<Real>(w)); }

    void load_t(TWeights w) {
        prepare();
        if (w.size() != specs_.size())
            throw std::invalid_argument(
                cat(g_.model(), ": weights for ", w.size(), " layers, the graph has ", specs_.size()));
        for (size_t i = 0; i < specs_.size(); ++i) {
            if (w[i].size() != specs_[i].size())
                throw std::invalid_argument(cat(g_.model(), ": layer ", g_.nodes()[i].name, " has ", specs_[i].size(),
                                                " tensors, the weights give ", w[i].size()));
            for (size_t j = 0; j < specs_[i].size(); ++j) {
                if (w[i][j].shape != specs_[i][j].shape)
                    throw std::invalid_argument(cat(g_.model(), ": layer ", g_.nodes()[i].name, " ", specs_[i][j].name,
                                                    " is ", to_string(specs_[i][j].shape), ", the weights give ",
                                                    to_string(w[i][j].shape)));
                w_[i][j] = std::move(w[i][j]);
                std::fill(v_[i][j].v.begin(), v_[i][j].v.end(), Real(0));
            }
        }
    }

    void set_input(const HostTensor& x, const std::vector<int32_t>& labels) override {
        set_input_t(convert<Real>(x), labels);
    }

    void set_input_t(const Tensor& x, const std::vector<int32_t>& labels) {
        prepare();
        if (x.shape != g_.input_shape())
            throw std::invalid_argument(
                cat(g_.model(), ": input ", to_string(x.shape), ", the graph takes ", to_string(g_.input_shape())));
        if (int64_t(labels.size()) != x.shape[0] && (training() || !labels.empty()))
            throw std::invalid_argument(cat(g_.model(), ": ", labels.size(), " labels for a batch of ", x.shape[0]));
        act_[0] = x;
        labels_ = labels;
        has_input_ = true;
    }

    void forward() override {
        if (!has_input_) throw std::logic_error(cat(g_.model(), ": forward() before set_input()"));
        const auto& nodes = g_.nodes();
        for (size_t i = 0; i < nodes.size(); ++i) {
            const Node& n = nodes[i];
            ref::FwdT<Real, Acc> f;
            for (int id : n.inputs) f.in.push_back({act_[id].data(), act_[id].shape});
            for (const Tensor& p : w_[i]) f.params.push_back(p.data());
            f.y = {act_[n.output].data(), act_[n.output].shape};
            f.training = training();
            const auto t0 = Clock::now();
            ref::forward(n.op, f);
            if (timing_) times_.layers[i].fwd = seconds_since(t0);
        }
        forwarded_ = true;
    }

    float backward() override { return float(backward_t()); }

    Real backward_t() {
        if (!training())
            throw std::logic_error(cat(g_.model(), ": backward() needs an executor made with Mode::train"));
        if (!forwarded_) throw std::logic_error(cat(g_.model(), ": backward() before forward()"));
        for (Tensor& t : grad_) std::fill(t.v.begin(), t.v.end(), Real(0));
        for (auto& layer : dw_)
            for (Tensor& t : layer) std::fill(t.v.begin(), t.v.end(), Real(0));

        // The loss and its gradient, which seeds the output's; a graph with nothing to train still
        // reports its loss.
        const int out = g_.output();
        const Shape logits = {act_[out].shape[0], act_[out].size() / act_[out].shape[0]};
        Tensor scratch;
        Real* dout = grad_[out].data();
        if (grad_[out].v.empty()) {
            scratch = Tensor(logits);
            dout = scratch.data();
        }
        auto t0 = Clock::now();
        const Real loss = ref::softmax_cross_entropy({act_[out].data(), logits}, labels_, {dout, logits});
        if (timing_) times_.loss = seconds_since(t0);

        const auto& nodes = g_.nodes();
        for (size_t i = nodes.size(); i-- > 0;) {
            const Node& n = nodes[i];
            if (grad_[n.output].v.empty()) continue;  // nothing before it, nor it, learns
            ref::BwdT<Real, Acc> b;
            for (int id : n.inputs) b.in.push_back({act_[id].data(), act_[id].shape});
            b.y = {act_[n.output].data(), act_[n.output].shape};
            b.dy = {grad_[n.output].data(), grad_[n.output].shape};
            for (const Tensor& p : w_[i]) b.params.push_back(p.data());
            bool any_dx = false, any_dw = false;
            for (int id : n.inputs) {
                Tensor& d = grad_[id];
                b.dx.push_back({d.v.empty() ? nullptr : d.data(), d.shape});
                any_dx = any_dx || !d.v.empty();
            }
            for (Tensor& d : dw_[i]) {
                b.dparams.push_back(d.v.empty() ? nullptr : d.data());
                any_dw = any_dw || !d.v.empty();
            }
            if (!timing_) {
                ref::backward(n.op, b);
                continue;
            }
            // Timed: the input gradients alone, then the weight gradients alone.
            times_.layers[i].dgrad = times_.layers[i].wgrad = 0;
            if (any_dx) {
                ref::BwdT<Real, Acc> d = b;
                d.dparams.clear();
                t0 = Clock::now();
                ref::backward(n.op, d);
                times_.layers[i].dgrad = seconds_since(t0);
            }
            if (any_dw) {
                ref::BwdT<Real, Acc> w = b;
                for (auto& v : w.dx) v.p = nullptr;
                t0 = Clock::now();
                ref::backward(n.op, w);
                times_.layers[i].wgrad = seconds_since(t0);
            }
        }
        return loss;
    }

    void update(float lr) override {
        if (!training()) throw std::logic_error(cat(g_.model(), ": update() needs an executor made with Mode::train"));
        const Real m = Real(o_.momentum), wd = Real(o_.weight_decay), rate = Real(lr);
        for (size_t i = 0; i < w_.size(); ++i)
            for (size_t j = 0; j < w_[i].size(); ++j) {
                std::vector<Real>& w = w_[i][j].v;
                const std::vector<Real>& dw = dw_[i][j].v;
                std::vector<Real>& v = v_[i][j].v;
                for (size_t k = 0; k < dw.size(); ++k) {
                    const Real g = dw[k] + wd * w[k];
                    if (v.empty()) {
                        w[k] -= rate * g;
                    } else {
                        v[k] = m * v[k] + g;
                        w[k] -= rate * v[k];
                    }
                }
            }
    }

    HostTensor output() const override { return convert<float>(output_t()); }
    Weights weights() const override { return convert<float>(w_); }
    Weights gradients() const override { return convert<float>(dw_); }
    HostTensor input_gradient() const override { return convert<float>(input_gradient_t()); }

    const Tensor& output_t() const { return act_.empty() ? none_ : act_[size_t(g_.output())]; }
    const TWeights& weights_t() const { return w_; }
    const TWeights& gradients_t() const { return dw_; }
    const Tensor& input_gradient_t() const { return grad_.empty() ? none_ : grad_[0]; }

    void time_layers(bool on) override { timing_ = on; }
    const StepTimes& step_times() const override { return times_; }

private:
    bool training() const { return o_.mode == Mode::train; }
    bool with_velocity() const { return o_.momentum != 0; }

    const Graph& g_;
    ExecOptions o_;
    int tensors_ = 0;
    std::vector<std::vector<ParamSpec>> specs_;  // per layer, op_params() order
    bool prepared_ = false, has_input_ = false, forwarded_ = false, timing_ = false;
    std::vector<Tensor> act_;   // by tensor id
    std::vector<Tensor> grad_;  // by tensor id; empty unless training and the tensor requires a gradient
    TWeights w_, dw_;           // dw_ empty for running statistics and in inference
    TWeights v_;                // SGD velocity; empty unless training with momentum
    Tensor none_;
    std::vector<int32_t> labels_;
    StepTimes times_;
};

class Reference64Executor final : public ReferenceExecutor<double> {
public:
    using ReferenceExecutor<double>::ReferenceExecutor;
    void load64(Weights64 w) override { load_t(std::move(w)); }
    void set_input64(const HostTensor64& x, const std::vector<int32_t>& labels) override { set_input_t(x, labels); }
    double backward64() override { return backward_t(); }
    const HostTensor64& output64() const override { return output_t(); }
    const Weights64& weights64() const override { return weights_t(); }
    const Weights64& gradients64() const override { return gradients_t(); }
    const HostTensor64& input_gradient64() const override { return input_gradient_t(); }
};

}  // namespace

std::unique_ptr<Executor> make_reference_executor(const Graph& g, const ExecOptions& o) {
    return std::make_unique<ReferenceExecutor<float>>(g, o);
}

std::unique_ptr<Reference64> make_reference64(const Graph& g, Mode mode) {
    return std::make_unique<Reference64Executor>(g, ExecOptions{.mode = mode});
}

std::unique_ptr<Executor> make_reference_float_sums(const Graph& g, Mode mode) {
    return std::make_unique<ReferenceExecutor<float, float>>(g, ExecOptions{.mode = mode});
}

}  // namespace ridge
