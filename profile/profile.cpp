#include "profile/profile.h"

#include "profile/expected.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>

namespace ridge::profile {

namespace {

bool is_weight_gradient(const std::string& arg) {
    return arg == "diff_weights" || arg == "diff_bias" || arg == "diff_scale" || arg == "diff_shift";
}

// The letter of dimension i of an argument, in the vocabulary of engine/README.md.
std::string dim_name(const StepArg& a, size_t i) {
    size_t r = a.dims.size();
    bool weights = a.name == "weights" || a.name == "diff_weights";
    if (weights) {
        static const char* conv[] = {"K", "C", "R", "S"};
        static const char* grouped[] = {"G", "K", "C", "R", "S"};
        static const char* ip[] = {"K", "C"};
        if (r == 4) return conv[i];
        if (r == 5) return grouped[i];
        if (r == 2) return ip[i];
    } else {
        static const char* act4[] = {"N", "C", "H", "W"};
        static const char* act2[] = {"N", "C"};
        if (r == 4) return act4[i];
        if (r == 2) return act2[i];
    }
    return cat("dim ", i);
}

std::string percent(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f%%", 100 * f);
    return b;
}

std::string two(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f", f);
    return b;
}

void add_counts(Measured& m, const std::vector<int64_t>& counts) {
    if (m.counts.empty()) m.counts.assign(counts.size(), 0);
    for (size_t i = 0; i < counts.size(); ++i) m.counts[i] += counts[i];
}

void add_measured(std::optional<Measured>& into, const Measured& m) {
    if (!into) {
        into = m;
        return;
    }
    add_counts(*into, m.counts);
    into->flops += m.flops;
    auto sum = [](int64_t& a, int64_t b) {
        if (b >= 0) a = a < 0 ? b : a + b;
    };
    sum(into->dram_read, m.dram_read);
    sum(into->dram_write, m.dram_write);
    sum(into->l2_bytes, m.l2_bytes);
}

Measured weigh(const std::vector<Counter>& counters, const std::vector<int64_t>& counts) {
    Measured m;
    m.counts = counts;
    for (size_t i = 0; i < counters.size(); ++i) {
        int64_t v = weighted(counters[i], counts[i]);
        switch (counters[i].measure) {
            case Measure::flops: m.flops += v; break;
            case Measure::dram_read: m.dram_read = std::max<int64_t>(m.dram_read, 0) + v; break;
            case Measure::dram_write: m.dram_write = std::max<int64_t>(m.dram_write, 0) + v; break;
            case Measure::l2_bytes: m.l2_bytes = std::max<int64_t>(m.l2_bytes, 0) + v; break;
            case Measure::breakdown: break;
        }
    }
    return m;
}

// FLOPs of the counters whose label starts with `prefix` and contains `part` (breakdowns included).
int64_t flops_labelled(const std::vector<Counter>& counters, const Measured& m, std::string_view prefix,
                       std::string_view part) {
    int64_t s = 0;
    for (size_t i = 0; i < counters.size(); ++i) {
        const Counter& c = counters[i];
        if (c.measure != Measure::flops && c.measure != Measure::breakdown) continue;
        if (c.label.rfind(prefix, 0) == 0 && c.label.find(part) != std::string::npos) s += weighted(c, m.counts[i]);
    }
    return s;
}

// The facts about what ran: implementations, reorders, padding, shared steps, and the threads of
// the main step where the executor gave it fewer than the most any step of the run took (`most`):
// a small layer's time is then one core's, and a held step keeps the other threads spinning
// through it, awake for the step after.
void step_facts(Row& r, const std::vector<const StepInfo*>& steps, const StepInfo* main, int most) {
    std::vector<std::string> impls;
    int kernels = 0;
    bool reference = false;
    for (const StepInfo* s : steps) {
        if (layout_move(*s)) continue;
        if (s->primitive == "kernel") ++kernels;
        if (s->impl.rfind("ref", 0) == 0) reference = true;
        if (std::find(impls.begin(), impls.end(), s->impl) == impls.end()) impls.push_back(s->impl);
    }
    if (impls.empty() && !steps.empty()) impls.push_back(steps.front()->impl);
    for (const std::string& i : impls) r.impl += (r.impl.empty() ? "" : ",") + i;

    if (steps.empty() && r.analytic_flops > 0) r.why.push_back("no step ran for it");
    if (kernels > 0) r.why.push_back("ridge's own kernel, not a library's");
    if (reference) r.why.push_back("oneDNN's reference implementation: no optimized one took this shape and layout");
    if (r.with_wgrad) r.why.push_back("one step computes the data and the weight gradients");
    std::vector<std::string> seen;
    for (const StepInfo* s : steps) {
        if (layout_move(*s)) continue;
        for (const StepArg& a : s->args)
            for (size_t i = 0; i < a.dims.size() && i < a.padded.size(); ++i)
                if (a.padded[i] != a.dims[i]) {
                    std::string f = cat(a.name, " ", dim_name(a, i), " padded ", a.dims[i], "->", a.padded[i]);
                    if (std::find(seen.begin(), seen.end(), f) == seen.end()) seen.push_back(f);
                }
    }
    for (const std::string& f : seen) r.why.push_back(f);
    if (main && main->threads > 0 && main->threads < most)
        r.why.push_back(cat("on ", main->threads, " of ", most, " threads: too little work to pay for waking more",
                            main->held ? "; held: the others spin through it, awake for the step after" : ""));
}

bool gap(int64_t measured, int64_t reference) {
    return reference > 0 && std::abs(ratio(measured, reference) - 1.0) > notable_gap;
}

// The counted FLOPs by the source's kinds of operation, per output element: "add/sub 1.00, fma 2.00".
std::string per_element(const std::vector<Counter>& counters, const Measured& m, int64_t elements) {
    std::string s;
    for (size_t i = 0; i < counters.size(); ++i) {
        if (counters[i].measure != Measure::flops || m.counts[i] == 0) continue;
        double v = double(weighted(counters[i], m.counts[i])) / double(elements);
        if (v >= 0.005) s += cat(s.empty() ? "" : ", ", counters[i].label, " ", two(v));
    }
    return s;
}

void measured_facts(Row& r, const std::vector<Counter>& counters, int64_t out_elements, int64_t main_flops) {
    const Measured& m = *r.measured;
    // Below range_noise per step, or below 1% of what the row is about, counts say nothing about
    // its arithmetic.
    int64_t floor = std::max({m.flops / 100, r.analytic_flops / 100, range_noise * r.steps});
    if (r.analytic_flops == 0 && m.flops > floor) r.why.push_back("the model counts no FLOPs here");
    if (r.analytic_flops > 0 && m.flops <= floor && r.steps > 0) {
        r.why.push_back(cat("the counters saw ", m.flops, " FLOPs: its operations are not of the kinds they count"));
        return;
    }
    if (r.expected_flops != r.analytic_flops && m.flops > floor)
        r.why.push_back(cat(main_flops != m.flops ? "its main step counted/expected " : "counted/expected ",
                            two(ratio(main_flops, r.expected_flops))));
    // Where an elementwise-like layer's arithmetic differs from the model's, per element says how.
    bool matmul = r.kind == "conv2d" || r.kind == "linear" || r.kind == "matmul";
    if (!matmul && out_elements > 0 && gap(m.flops, r.analytic_flops))
        r.why.push_back(cat("per output element the model counts ", two(double(r.analytic_flops) / double(out_elements)),
                            " FLOPs, the counters ", two(double(m.flops) / double(out_elements)), " (",
                            per_element(counters, m, out_elements), ")"));
    // Shares of a breakdown are taken of the breakdown's own sum: it was counted in other passes
    // than the total, and a kernel calling libm need not retire the same FLOPs each time.
    int64_t all = 0;
    for (size_t i = 0; i < counters.size(); ++i)
        if (counters[i].measure == Measure::breakdown) all += weighted(counters[i], m.counts[i]);
    if (all == 0) all = m.flops;
    int64_t f64 = flops_labelled(counters, m, "fp64", "");
    int64_t scalar32 = flops_labelled(counters, m, "fp32", "scalar");
    if (f64 > floor && all > 0) r.why.push_back(cat(percent(double(f64) / double(all)), " of counted FLOPs in fp64"));
    if (scalar32 * 10 >= all && scalar32 > floor && all > 0)
        r.why.push_back(cat(percent(double(scalar32) / double(all)), " of counted FLOPs scalar fp32"));
}

int64_t elements(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

// A convolution or matrix product that counted more than expected: the excess as a whole number
// of FLOPs per element of what the step produces (output, input gradient or weight gradient),
// where it is one. Partial sums added at the end show up this way (per channel block, per image).
void excess_fact(Row& r, const Graph& g, const StepInfo& main, int64_t main_flops) {
    bool matmul = r.kind == "conv2d" || r.kind == "linear" || r.kind == "matmul";
    if (!matmul || !gap(main_flops, r.expected_flops) || main_flops < r.expected_flops) return;
    const Node& n = g.nodes()[size_t(r.layer)];
    int64_t produced = 0;
    std::string what;
    if (r.phase == StepPhase::fwd) {
        produced = numel(g.tensor(n.output).shape);
        what = "output";
    } else if (r.phase == StepPhase::dgrad) {
        produced = numel(g.tensor(n.inputs[0]).shape);
        what = "input-gradient";
    } else {
        for (const StepArg& a : main.args)
            if (a.name == "diff_weights") produced = elements(a.dims);
        what = "weight-gradient";
    }
    int64_t excess = main_flops - r.expected_flops;
    std::string s = cat("excess over expected ", excess, " FLOPs");
    if (produced > 0) {
        int64_t k = (excess + produced / 2) / produced;
        if (k > 0 && std::abs(excess - k * produced) <= range_noise) s += cat(" = ", k, " per ", what, " element");
    }
    r.why.push_back(s);
}

}  // namespace

double ratio(int64_t measured, int64_t reference) { return reference == 0 ? 0.0 : double(measured) / double(reference); }

void attribute(Profile& p, const Graph& g, const Analysis& a, const std::vector<StepInfo>& steps,
               const std::vector<Counter>& counters, const std::vector<std::vector<int64_t>>& counts,
               const PhaseTimes& times) {
    p.measured = !counts.empty();
    if (p.measured && counts.size() != steps.size())
        throw std::logic_error(cat("profile: ", counts.size(), " counted ranges for ", steps.size(), " steps"));
    p.counters = counters;
    const size_t L = a.layers.size();
    // Steps (and their ranges) per layer and phase, in run order.
    std::map<std::pair<int, StepPhase>, std::vector<size_t>> by;
    for (size_t i = 0; i < steps.size(); ++i) {
        if (steps[i].node >= int(L)) throw std::logic_error(cat("profile: a step of layer ", steps[i].node, " of ", L));
        by[{steps[i].node, steps[i].phase}].push_back(i);
    }
    auto steps_of = [&](int node, StepPhase ph) {
        auto it = by.find({node, ph});
        return it == by.end() ? std::vector<size_t>{} : it->second;
    };
    int most = 0;
    for (const StepInfo& s : steps) most = std::max(most, s.threads);
    auto make_row = [&](Row r, const std::vector<size_t>& idx) {
        std::vector<const StepInfo*> ss;
        for (size_t i : idx) ss.push_back(&steps[i]);
        r.steps = int(idx.size());
        // The main step: the first that is not a layout move, else the first.
        const StepInfo* main = nullptr;
        for (const StepInfo* s : ss)
            if (!layout_move(*s) && !main) main = s;
        if (!main && !ss.empty()) main = ss.front();
        step_facts(r, ss, main, most);
        r.expected_flops = r.analytic_flops;
        if (main && !r.with_wgrad)
            if (auto e = expected_flops(g, r.layer, r.phase, main->impl, r.analytic_flops)) {
                r.expected_flops = e->flops;
                r.why.push_back(e->why);
            }
        // Steps beyond the main one (the first that is not a reorder): reorders into another
        // layout, gradients added into one that already arrived.
        std::string also;
        int64_t main_flops = 0;
        std::vector<int64_t> sum(counters.size(), 0);
        for (size_t k = 0; k < idx.size(); ++k) {
            const StepInfo& s = steps[idx[k]];
            int64_t f = 0;
            if (p.measured) {
                for (size_t c = 0; c < counters.size(); ++c) sum[c] += counts[idx[k]][c];
                f = weigh(counters, counts[idx[k]]).flops;
            }
            if (&s == main) {
                main_flops = f;
                continue;
            }
            also += cat(also.empty() ? "" : ", ", s.primitive, " ", s.impl,
                        p.measured ? cat(" (", f > range_noise ? cat(f, " FLOPs") : "no FLOPs", ")") : "");
        }
        if (!also.empty()) r.why.push_back("also ran: " + also);
        if (p.measured) {
            r.measured = weigh(counters, sum);
            measured_facts(r, counters, r.layer >= 0 ? numel(a.layers[size_t(r.layer)].out) : 0, main_flops);
            if (main && r.layer >= 0 && r.analytic_flops > 0) excess_fact(r, g, *main, main_flops);
        }
        p.rows.push_back(std::move(r));
    };

    bool train = p.mode == Mode::train;
    for (size_t l = 0; l < L; ++l) {
        const LayerCost& c = a.layers[l];
        const LayerTime lt = l < times.layers.size() ? times.layers[l] : LayerTime{};
        Row base;
        base.layer = int(l);
        base.name = c.name;
        base.kind = c.kind;

        Row f = base;
        f.analytic_flops = c.c.fwd_flops;
        f.analytic_bytes = c.c.fwd_traffic_bytes;
        f.seconds = lt.fwd;
        make_row(f, steps_of(int(l), StepPhase::fwd));
        if (!train) continue;

        std::vector<size_t> d = steps_of(int(l), StepPhase::dgrad), w = steps_of(int(l), StepPhase::wgrad);
        bool both = false;
        for (size_t i : d) {
            bool dx = false, dw = false;
            for (const StepArg& arg : steps[i].args) {
                dx = dx || arg.name == "diff_src";
                dw = dw || is_weight_gradient(arg.name);
            }
            both = both || (dx && dw);
        }
        bool has_dgrad = !d.empty() || c.c.dgrad_flops > 0;
        if (has_dgrad) {
            Row r = base;
            r.phase = StepPhase::dgrad;
            r.with_wgrad = both && w.empty();
            r.analytic_flops = c.c.dgrad_flops + (r.with_wgrad ? c.c.wgrad_flops : 0);
            r.analytic_bytes = c.c.bwd_traffic_bytes;
            r.seconds = lt.dgrad + (r.with_wgrad ? lt.wgrad : 0);
            make_row(r, d);
            if (r.with_wgrad) continue;
        }
        if (!w.empty() || c.c.wgrad_flops > 0) {
            Row r = base;
            r.phase = StepPhase::wgrad;
            r.analytic_flops = c.c.wgrad_flops;
            r.analytic_bytes = has_dgrad ? -1 : c.c.bwd_traffic_bytes;
            r.seconds = lt.wgrad;
            make_row(r, w);
        }
    }
    std::vector<size_t> loss = steps_of(-1, StepPhase::loss);
    if (!loss.empty()) {
        Row r;
        r.name = "loss";
        r.kind = "loss";
        r.phase = StepPhase::loss;
        r.seconds = times.loss;
        make_row(r, loss);
        p.rows.back().why.insert(p.rows.back().why.begin(), "softmax cross-entropy: outside the per-layer model");
    }

    auto named = [](const std::string& kind) {
        Total t;
        t.kind = kind;
        return t;
    };
    p.by_type.clear();
    p.total = named("total");
    for (const Row& r : p.rows) {
        auto it = std::find_if(p.by_type.begin(), p.by_type.end(), [&](const Total& t) { return t.kind == r.kind; });
        if (it == p.by_type.end()) {
            p.by_type.push_back(named(r.kind));
            it = p.by_type.end() - 1;
        }
        for (Total* t : {&*it, &p.total}) {
            ++t->rows;
            t->analytic_flops += r.analytic_flops;
            t->expected_flops += r.expected_flops;
            t->analytic_bytes += std::max<int64_t>(r.analytic_bytes, 0);
            t->seconds += r.seconds;
            if (r.measured) add_measured(t->measured, *r.measured);
        }
    }
}

namespace {

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Brackets each step with the optional eviction and a counter range.
class Ranges final : public StepObserver {
public:
    Ranges(CounterSource* src, const std::function<void()>& before) : src_(src), before_(before) {}
    void before(const StepInfo& s) override {
        if (before_) before_();
        if (record) seen.push_back(s);
        if (src_) src_->begin_range(cat(s.node, ":", step_phase_name(s.phase)));
    }
    void after(const StepInfo&) override {
        if (src_) src_->end_range();
    }
    bool record = false;
    std::vector<StepInfo> seen;

private:
    CounterSource* src_;
    const std::function<void()>& before_;
};

}  // namespace

Profile run_profile(Executor& ex, const Graph& g, CounterSource* src, const ProfileOptions& o) {
    Profile p;
    p.mode = o.mode;
    p.repeat = o.repeat;
    p.batch = g.input_shape()[0];
    const bool train = o.mode == Mode::train;
    ex.prepare();
    ex.load(init_weights(g, o.seed));
    const Shape& out = g.tensor(g.output()).shape;
    ex.set_input(random_input(g.input_shape(), o.seed + 1), random_labels(g.input_shape()[0], out.back(), o.seed + 2));
    auto step = [&] {
        ex.forward();
        if (train) ex.backward();
    };
    for (int i = 0; i < o.warmup; ++i) step();

    // Timed steps: the executor's clock around each step; the eviction (if any) runs outside it.
    Ranges evict(nullptr, o.before_step);
    ex.observe(o.before_step ? &evict : nullptr);
    ex.time_layers(true);
    size_t L = g.nodes().size();
    std::vector<std::vector<double>> f(L), d(L), w(L);
    std::vector<double> loss;
    for (int i = 0; i < o.repeat; ++i) {
        step();
        const StepTimes& t = ex.step_times();
        for (size_t l = 0; l < L; ++l) {
            f[l].push_back(t.layers[l].fwd);
            d[l].push_back(t.layers[l].dgrad);
            w[l].push_back(t.layers[l].wgrad);
        }
        loss.push_back(t.loss);
    }
    ex.time_layers(false);
    ex.observe(nullptr);
    PhaseTimes times;
    for (size_t l = 0; l < L; ++l) times.layers.push_back({median(f[l]), median(d[l]), median(w[l])});
    times.loss = median(loss);

    std::vector<StepInfo> steps = ex.steps();
    std::vector<std::vector<int64_t>> counts;
    std::vector<Counter> counters;
    if (src) {
        p.scope = src->scope();
        Ranges ranges(src, o.before_step);
        try {
            src->prepare(steps.size());
            for (int pass = 0; pass < src->passes(); ++pass) {
                ranges.record = pass == 0;
                src->begin_pass(pass);
                ex.observe(&ranges);
                step();
                ex.observe(nullptr);
                src->end_pass();
            }
            if (ranges.seen.size() != steps.size())
                throw std::logic_error(cat("profile: ", ranges.seen.size(), " steps ran, the executor lists ", steps.size()));
            steps = ranges.seen;
            p.source = src->describe();
            counts = src->results();
            counters = src->counters();
        } catch (const CountingError& e) {
            ex.observe(nullptr);
            p.unmeasured = e.what();
        } catch (...) {
            ex.observe(nullptr);
            throw;
        }
    }
    attribute(p, g, analyze(g, DType::fp32), steps, counters, counts, times);
    return p;
}

std::function<void()> cpu_cache_flush(int64_t bytes) {
    auto buffer = std::make_shared<std::vector<char>>(size_t(std::max<int64_t>(bytes, 1)));
    return [buffer] {
        std::vector<char>& b = *buffer;
        std::memset(b.data(), 1, b.size());
        volatile char sink = 0;
        for (size_t i = 0; i < b.size(); i += 64) sink = char(sink + b[i]);
    };
}

}  // namespace ridge::profile
