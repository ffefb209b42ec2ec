#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "engine/backend/reference/reference.h"
#include "kernels/cpu/kernel.h"

namespace ridge {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

class ReferenceExecutor final : public Executor {
public:
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

    std::string name() const override { return "reference"; }

    // Every tensor's buffer, every parameter; in training a gradient for each tensor that needs
    // one and each learned parameter; and the kernels' transient scratch, which is at most three
    // 8-byte words per element of the largest tensor (double accumulators, broadcast offsets).
    int64_t planned_bytes() const override {
        int64_t bytes = 0, largest = 0;
        for (int id = 0; id < tensors_; ++id) {
            const TensorInfo& t = g_.tensor(id);
            int64_t e = numel(t.shape);
            largest = std::max(largest, e);
            bytes += 4 * e * (training() && t.requires_grad ? 2 : 1);
        }
        for (const auto& specs : specs_)
            for (const ParamSpec& p : specs)
                bytes += 4 * numel(p.shape) * (training() && p.learned ? (with_velocity() ? 3 : 2) : 1);
        return bytes + 24 * largest;
    }

    void prepare() override {
        if (prepared_) return;
        act_.resize(size_t(tensors_));
        grad_.resize(size_t(tensors_));
        for (int id = 0; id < tensors_; ++id) {
            const TensorInfo& t = g_.tensor(id);
            act_[id] = HostTensor(t.shape);
            if (training() && t.requires_grad) grad_[id] = HostTensor(t.shape);
        }
        w_.resize(specs_.size());
        dw_.resize(specs_.size());
        v_.resize(specs_.size());
        for (size_t i = 0; i < specs_.size(); ++i)
            for (const ParamSpec& p : specs_[i]) {
                w_[i].emplace_back(p.shape);
                dw_[i].push_back(training() && p.learned ? HostTensor(p.shape) : HostTensor());
                v_[i].push_back(training() && p.learned && with_velocity() ? HostTensor(p.shape) : HostTensor());
            }
        prepared_ = true;
    }

    void load(const Weights& w) override {
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
                w_[i][j] = w[i][j];
                std::fill(v_[i][j].v.begin(), v_[i][j].v.end(), 0.0f);
            }
        }
    }

    void set_input(const HostTensor& x, const std::vector<int32_t>& labels) override {
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
            ref::Fwd f;
            for (int id : n.inputs) f.in.push_back({act_[id].data(), act_[id].shape});
            for (const HostTensor& p : w_[i]) f.params.push_back(p.data());
            f.y = {act_[n.output].data(), act_[n.output].shape};
            f.training = training();
            const auto t0 = Clock::now();
            ref::forward(n.op, f);
            if (timing_) times_.layers[i].fwd = seconds_since(t0);
        }
        forwarded_ = true;
    }

    float backward() override {
        if (!training())
            throw std::logic_error(cat(g_.model(), ": backward() needs an executor made with Mode::train"));
        if (!forwarded_) throw std::logic_error(cat(g_.model(), ": backward() before forward()"));
        for (HostTensor& t : grad_) std::fill(t.v.begin(), t.v.end(), 0.0f);
        for (auto& layer : dw_)
            for (HostTensor& t : layer) std::fill(t.v.begin(), t.v.end(), 0.0f);

        // The loss and its gradient, which seeds the output's; a graph with nothing to train still
        // reports its loss.
        const int out = g_.output();
        const Shape logits = {act_[out].shape[0], act_[out].size() / act_[out].shape[0]};
        HostTensor scratch;
        float* dout = grad_[out].data();
        if (grad_[out].v.empty()) {
            scratch = HostTensor(logits);
            dout = scratch.data();
        }
        auto t0 = Clock::now();
        const float loss = ref::softmax_cross_entropy({act_[out].data(), logits}, labels_, {dout, logits});
        if (timing_) times_.loss = seconds_since(t0);

        const auto& nodes = g_.nodes();
        for (size_t i = nodes.size(); i-- > 0;) {
            const Node& n = nodes[i];
            if (grad_[n.output].v.empty()) continue;  // nothing before it, nor it, learns
            ref::Bwd b;
            for (int id : n.inputs) b.in.push_back({act_[id].data(), act_[id].shape});
            b.y = {act_[n.output].data(), act_[n.output].shape};
            b.dy = {grad_[n.output].data(), grad_[n.output].shape};
            for (const HostTensor& p : w_[i]) b.params.push_back(p.data());
            bool any_dx = false, any_dw = false;
            for (int id : n.inputs) {
                HostTensor& d = grad_[id];
                b.dx.push_back({d.v.empty() ? nullptr : d.data(), d.shape});
                any_dx = any_dx || !d.v.empty();
            }
            for (HostTensor& d : dw_[i]) {
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
                ref::Bwd d = b;
                d.dparams.clear();
                t0 = Clock::now();
                ref::backward(n.op, d);
                times_.layers[i].dgrad = seconds_since(t0);
            }
            if (any_dw) {
                ref::Bwd w = b;
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
        const float m = o_.momentum, wd = o_.weight_decay;
        for (size_t i = 0; i < w_.size(); ++i)
            for (size_t j = 0; j < w_[i].size(); ++j) {
                std::vector<float>& w = w_[i][j].v;
                const std::vector<float>& dw = dw_[i][j].v;
                std::vector<float>& v = v_[i][j].v;
                for (size_t k = 0; k < dw.size(); ++k) {
                    const float g = dw[k] + wd * w[k];
                    if (v.empty()) {
                        w[k] -= lr * g;
                    } else {
                        v[k] = m * v[k] + g;
                        w[k] -= lr * v[k];
                    }
                }
            }
    }

    HostTensor output() const override { return act_.empty() ? HostTensor() : act_[g_.output()]; }
    Weights weights() const override { return w_; }
    Weights gradients() const override { return dw_; }
    HostTensor input_gradient() const override { return grad_.empty() ? HostTensor() : grad_[0]; }

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
    std::vector<HostTensor> act_;   // by tensor id
    std::vector<HostTensor> grad_;  // by tensor id; empty unless training and the tensor requires a gradient
    Weights w_, dw_;                // dw_ empty for running statistics and in inference
    Weights v_;                     // SGD velocity; empty unless training with momentum
    std::vector<int32_t> labels_;
    StepTimes times_;
};

}  // namespace

std::unique_ptr<Executor> make_reference_executor(const Graph& g, const ExecOptions& o) {
    return std::make_unique<ReferenceExecutor>(g, o);
}

}  // namespace ridge
