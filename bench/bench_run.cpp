#include "bench/bench_run.h"

#include <chrono>

namespace ridge::bench {

namespace {
using Clock = std::chrono::steady_clock;
double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// A rate small enough that thousands of steps on random labels stay far from divergence, so the
// last repeat times the same arithmetic as the first (no NaNs, no denormals).
constexpr float sgd_lr = 1e-4f;

void start(Executor& ex, const Graph& g, uint64_t seed) {
    ex.prepare();
    ex.load(init_weights(g, seed));
    const Shape& out = g.tensor(g.output()).shape;
    ex.set_input(random_input(g.input_shape(), seed + 1), random_labels(g.input_shape()[0], out.back(), seed + 2));
}
}  // namespace

int64_t BenchJob::planned_bytes() const {
    int64_t a = fused->planned_bytes();
    return unfused ? std::max(a, unfused->planned_bytes()) : a;
}

BenchJob plan_job(Graph g, const BenchPlan& p) {
    BenchJob job{std::make_unique<Graph>(std::move(g)), nullptr, nullptr};
    ExecOptions o{.mode = p.mode, .fused = true, .threads = p.threads, .precision = p.precision,
                  .cuda_graph = p.cuda_graph, .winograd = p.winograd};
    job.fused = make_executor(p.backend, *job.g, o);
    if (p.layers) {
        o.fused = false;
        o.cuda_graph = false;  // layers are timed one by one, between events
        job.unfused = make_executor(p.backend, *job.g, o);
    }
    return job;
}

int64_t host_copy_bytes(const Graph& g) {
    return 2 * analyze(g, DType::fp32).totals.param_bytes + numel(g.input_shape()) * 4;
}

BenchResult run_job(BenchJob& job, const BenchPlan& p, const Progress& progress) {
    BenchResult r;
    r.g = job.g.get();
    r.analysis = analyze(*job.g, DType::fp32);
    r.planned_bytes = job.planned_bytes();
    bool train = p.mode == Mode::train;

    {
        Executor& ex = *job.fused;
        start(ex, *job.g, p.seed);
        std::vector<double> step, fwd, bwd, upd;
        for (int i = 0; i < p.warmup + p.repeat; ++i) {
            auto t0 = Clock::now();
            ex.forward();
            auto t1 = Clock::now(), t2 = t1, t3 = t1;
            if (train) {
                r.loss = ex.backward();
                t2 = Clock::now();
                ex.update(sgd_lr);
                t3 = Clock::now();
            }
            if (i >= p.warmup) {
                const StepTimes& dt = ex.step_times();
                bool device = dt.forward >= 0;
                double f = device ? dt.forward : seconds(t0, t1);
                double b = !train ? 0 : device ? dt.backward : seconds(t1, t2);
                step.push_back(f + b);
                fwd.push_back(f);
                bwd.push_back(b);
                upd.push_back(!train ? 0 : device ? dt.update : seconds(t2, t3));
            }
            progress(i < p.warmup ? "warm-up" : "steps", i < p.warmup ? i + 1 : i + 1 - p.warmup,
                     i < p.warmup ? p.warmup : p.repeat);
        }
        r.step = summarize(step);
        r.fwd = summarize(fwd);
        if (train) {
            r.bwd = summarize(bwd);
            r.update = summarize(upd);
        }
        job.fused.reset();  // its memory goes back before the layer pass allocates
    }

    if (job.unfused) {
        Executor& ex = *job.unfused;
        start(ex, *job.g, p.seed);
        ex.time_layers(true);
        size_t L = job.g->nodes().size();
        for (size_t l = 0; l < L; ++l) r.algo.push_back(ex.algorithm(int(l)));
        std::vector<std::vector<double>> f(L), d(L), w(L);
        std::vector<double> loss;
        int warm = std::min(p.warmup, 1);
        for (int i = 0; i < warm + p.repeat; ++i) {
            ex.forward();
            if (train) {
                ex.backward();
                ex.update(sgd_lr);
            }
            if (i >= warm) {
                const StepTimes& t = ex.step_times();
                for (size_t l = 0; l < L; ++l) {
                    f[l].push_back(t.layers[l].fwd);
                    d[l].push_back(t.layers[l].dgrad);
                    w[l].push_back(t.layers[l].wgrad);
                }
                loss.push_back(t.loss);
            }
            progress("layers", i < warm ? 0 : i + 1 - warm, p.repeat);
        }
        for (size_t l = 0; l < L; ++l) r.layers.push_back({summarize(f[l]), summarize(d[l]), summarize(w[l])});
        r.loss_time = summarize(loss);
        job.unfused.reset();
    }
    return r;
}

}  // namespace ridge::bench
