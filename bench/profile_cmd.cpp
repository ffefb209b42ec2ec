#include "bench/profile_cmd.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "bench/format.h"
#include "bench/ledger.h"
#include "bench/net_arg.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "profile/gpu.h"
#include "profile/perf_events.h"

namespace ridge::cli {

using profile::Measured;
using profile::Profile;
using profile::Row;
using profile::Total;

const Command profile_cmd{
    "profile", "NET [options]",
    "Per layer and phase (fwd, dgrad, wgrad): the analytic FLOPs and minimum bytes beside what ran,\n"
    "on the unfused executor (one step per layer): the implementation the library chose, the median\n"
    "time, and where the machine exposes counters the FLOPs (and on GPU the DRAM and L2 bytes) the\n"
    "hardware counted, the measured/analytic ratio and a `why` column of facts: the implementation,\n"
    "other steps charged to the layer (reorders, gradient sums), blocked layouts that pad a dimension,\n"
    "the taps of a convolution on zero padding (a direct kernel skips them: the `expected` column),\n"
    "ridge's own kernels, and where counted and analytic differ, the counted FLOPs per element by\n"
    "kind. Totals per layer type and for the net.\n"
    "CPU counters: Linux perf events (AMD Zen 2-5 PMCx003, Intel FP_ARITH_INST_RETIRED), on every\n"
    "thread of the process; GPU: CUPTI's range profiler (built, not yet run on a device).\n"
    "Without counters the table is still printed, one line on stderr says why, and the exit\n"
    "status is 4. --device cuda without a CUDA device exits with status 3.",
    1,
    {{"--device", "D", "cpu (default) or cuda"},
     {"--precision", "P", "fp32 (default), or on cuda tf32, fp16 or bf16"},
     {"--batch", "N", "batch size (default 1)"},
     {"--res", "H|HxW", "input resolution (default: the net's own, e.g. 224)"},
     {"--mode", "M", "infer (default) or train (forward, loss, backward; no update)"},
     {"--threads", "T", "cpu threads (default: every core this process may use)"},
     {"--warmup", "W", "untimed steps first (default 2)"},
     {"--repeat", "R", "timed steps, the time is their median (default 5)"},
     {"--cold-cache", "", "evict the caches before every step (cpu: write 2x the last level; cuda: 2x L2)"},
     {"--seed", "S", "seed of weights, input and labels (default 1)"},
     {"--format", "F", "table (default), csv (a row per layer phase) or json"},
     {"--out", "FILE", "write to FILE (atomically) instead of stdout"}}};

namespace {

constexpr int max_repeat = 100000, max_threads = 4096;

std::string ms(double s) { return fixed(s * 1e3, s < 0.01 ? 3 : 2); }
std::string num(int64_t v) { return v < 0 ? "-" : si(double(v)); }

std::string phase_name(const Row& r) {
    return r.with_wgrad ? "dgrad+wgrad" : std::string(step_phase_name(r.phase));
}

std::string why_text(const std::vector<std::string>& why) {
    std::string s;
    for (const std::string& w : why) s += (s.empty() ? "" : "; ") + w;
    return s;
}

std::string measured_flops(const std::optional<Measured>& m) { return m ? si(double(m->flops)) : "-"; }
std::string measured_ratio(const std::optional<Measured>& m, int64_t analytic) {
    return m && analytic > 0 ? fixed(profile::ratio(m->flops, analytic), 2) : "-";
}
std::string dram(const std::optional<Measured>& m) {
    if (!m || (m->dram_read < 0 && m->dram_write < 0)) return "-";
    return si(double(std::max<int64_t>(m->dram_read, 0) + std::max<int64_t>(m->dram_write, 0)));
}

std::string header(const Profile& p) {
    std::string s = cat(p.model, " ", p.mode == Mode::train ? "train" : "infer", " on ", p.device, " (", p.backend,
                        p.device == "cpu" ? cat(", ", p.threads, p.threads == 1 ? " thread" : " threads") : "",
                        "), batch ", p.batch, ", median of ", p.repeat, " steps, ",
                        p.cold_cache ? "caches evicted before each step" : "warm caches", "\n");
    if (p.measured) {
        s += cat("counters: ", p.source, "\n");
        if (!p.scope.empty()) s += cat("they count: ", p.scope, "\n");
    } else {
        s += cat("counters: none (", p.unmeasured, ")\n");
    }
    return s;
}

}  // namespace

std::string profile_table(const Profile& p) {
    std::string s = header(p) + "\n";
    std::vector<Column> cols = {{"layer", 22, true},  {"type", 10, true}, {"phase", 11, true}, {"impl", 23, true},
                                {"ms", 8},            {"FLOP", 7},        {"expected", 8},       {"counted", 7},
                                {"cnt/FLOP", 8},      {"min B", 7},       {"DRAM B", 7},       {"why", 3, true}};
    s += table_header(cols);
    for (const Row& r : p.rows) {
        std::string line = table_row(cols, {r.name, r.kind, phase_name(r), r.impl, ms(r.seconds), num(r.analytic_flops),
                                            num(r.expected_flops), measured_flops(r.measured),
                                            measured_ratio(r.measured, r.analytic_flops), num(r.analytic_bytes),
                                            dram(r.measured), ""});
        line.pop_back();
        s += line + (r.why.empty() ? "" : "  " + why_text(r.why)) + "\n";
    }
    s += "\nby layer type\n";
    std::vector<Column> tc = {{"type", 12, true}, {"rows", 5},    {"ms", 9},       {"FLOP", 7},
                              {"expected", 8},      {"counted", 7}, {"cnt/FLOP", 8}, {"min B", 7}, {"DRAM B", 7}};
    s += table_header(tc);
    auto total_row = [&](const Total& t) {
        return table_row(tc, {t.kind, std::to_string(t.rows), ms(t.seconds), num(t.analytic_flops), num(t.expected_flops),
                              measured_flops(t.measured), measured_ratio(t.measured, t.analytic_flops),
                              num(t.analytic_bytes), dram(t.measured)});
    };
    for (const Total& t : p.by_type) s += total_row(t);
    s += total_row(p.total);
    return s;
}

std::string profile_csv(const Profile& p) {
    std::string s =
        "model,device,backend,mode,batch,threads,layer,type,phase,impl,steps,ms,analytic_flops,expected_flops,"
        "analytic_bytes,measured_flops,ratio,dram_read,dram_write,l2_bytes";
    for (const profile::Counter& c : p.counters) s += "," + csv_cell(c.name);
    s += ",why\n";
    for (const Row& r : p.rows) {
        s += cat(p.model, ",", p.device, ",", p.backend, ",", p.mode == Mode::train ? "train" : "infer", ",", p.batch, ",",
                 p.threads, ",", csv_cell(r.name), ",", r.kind, ",", phase_name(r), ",", csv_cell(r.impl), ",", r.steps, ",",
                 r.seconds * 1e3, ",", r.analytic_flops, ",", r.expected_flops, ",",
                 r.analytic_bytes < 0 ? "" : std::to_string(r.analytic_bytes), ",");
        if (r.measured) {
            const Measured& m = *r.measured;
            auto opt = [](int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
            s += cat(m.flops, ",", r.analytic_flops > 0 ? fixed(profile::ratio(m.flops, r.analytic_flops), 4) : "", ",",
                     opt(m.dram_read), ",", opt(m.dram_write), ",", opt(m.l2_bytes));
            for (int64_t v : m.counts) s += cat(",", v);
        } else {
            s += ",,,,";
            for (size_t i = 0; i < p.counters.size(); ++i) s += ",";
        }
        s += "," + csv_cell(why_text(r.why)) + "\n";
    }
    return s;
}

namespace {

void measured_json(Json& j, const Profile& p, const std::optional<Measured>& m, int64_t analytic) {
    if (!m) return;
    j.field("measured_flops", m->flops);
    if (analytic > 0) j.field("ratio", profile::ratio(m->flops, analytic));
    if (m->dram_read >= 0) j.field("dram_read_bytes", m->dram_read);
    if (m->dram_write >= 0) j.field("dram_write_bytes", m->dram_write);
    if (m->l2_bytes >= 0) j.field("l2_bytes", m->l2_bytes);
    j.begin_object("counts");
    for (size_t i = 0; i < p.counters.size() && i < m->counts.size(); ++i) j.field(p.counters[i].name, m->counts[i]);
    j.end_object();
}

void total_json(Json& j, const Profile& p, const Total& t, std::string_view key = {}) {
    j.begin_object(key)
        .field("type", t.kind)
        .field("rows", t.rows)
        .field("ms", t.seconds * 1e3)
        .field("analytic_flops", t.analytic_flops)
        .field("expected_flops", t.expected_flops)
        .field("analytic_bytes", t.analytic_bytes);
    measured_json(j, p, t.measured, t.analytic_flops);
    j.end_object();
}

}  // namespace

std::string profile_json(const Profile& p) {
    Json j;
    j.begin_object()
        .field("model", p.model)
        .field("device", p.device)
        .field("backend", p.backend)
        .field("mode", p.mode == Mode::train ? "train" : "infer")
        .field("batch", p.batch)
        .field("threads", p.threads)
        .field("repeat", p.repeat)
        .field("cold_cache", p.cold_cache ? "yes" : "no");
    j.begin_object("counters").field("measured", p.measured ? "yes" : "no");
    if (p.measured) j.field("source", p.source).field("scope", p.scope);
    else j.field("why_not", p.unmeasured);
    j.begin_array("list");
    for (const profile::Counter& c : p.counters)
        j.begin_object().field("name", c.name).field("label", c.label).field("weight", c.weight).end_object();
    j.end_array().end_object();
    j.begin_array("rows");
    for (const Row& r : p.rows) {
        j.begin_object()
            .field("layer", r.name)
            .field("type", r.kind)
            .field("phase", phase_name(r))
            .field("impl", r.impl)
            .field("steps", r.steps)
            .field("ms", r.seconds * 1e3)
            .field("analytic_flops", r.analytic_flops)
            .field("expected_flops", r.expected_flops);
        if (r.analytic_bytes >= 0) j.field("analytic_bytes", r.analytic_bytes);
        measured_json(j, p, r.measured, r.analytic_flops);
        j.begin_array("why");
        for (const std::string& w : r.why) j.field("", w);
        j.end_array().end_object();
    }
    j.end_array();
    j.begin_array("by_type");
    for (const Total& t : p.by_type) total_json(j, p, t);
    j.end_array();
    total_json(j, p, p.total, "total");
    j.end_object();
    return j.str();
}

namespace {

// --out is checked before anything runs: a folder, or a file in a folder that does not exist,
// is refused at once rather than after the profile.
void check_destination(const std::string& path) {
    if (path.empty() || path == "-") return;
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.back() == '/' || fs::is_directory(path, ec))
        throw UsageError(cat("ridge profile: cannot write '", path, "': it is a directory"));
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw UsageError(cat("ridge profile: cannot write '", path, "': no folder '", parent.string(), "'"));
    if (::access(parent.empty() ? "." : parent.c_str(), W_OK) != 0)
        throw UsageError(cat("ridge profile: cannot write '", path, "': the folder is not writable"));
}

}  // namespace

int run_profile(const Args& a) {
    const ZooEntry& e = net_arg(a);
    std::string device = a.choice("--device", "cpu", {"cpu", "cuda"});
    const bool gpu = device == "cuda";
    std::string precision = a.choice("--precision", "fp32", {"fp32", "tf32", "fp16", "bf16"});
    if (!gpu && precision != "fp32")
        throw UsageError(cat("ridge profile: --precision ", precision, " needs --device cuda; the CPU computes in fp32"));
    int64_t N = a.positive("--batch", 1, max_batch);
    Mode mode = a.choice("--mode", "infer", {"infer", "train"}) == "train" ? Mode::train : Mode::infer;
    std::string fmt = a.choice("--format", "table", {"table", "csv", "json"});
    int threads = int(a.positive("--threads", hardware_threads(), max_threads));
    profile::ProfileOptions o;
    o.mode = mode;
    o.warmup = int(a.non_negative("--warmup", 2, max_repeat));
    o.repeat = int(a.positive("--repeat", 5, max_repeat));
    o.seed = uint64_t(a.positive("--seed", 1, int64_t(1) << 62));
    std::string out = a.get("--out", "");
    check_destination(out);
    Graph g = build_for(a, e, N);

    if (gpu) {
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge profile: " << why << "\n";
            return 3;
        }
        if (gpu_backends().empty()) {
            std::cerr << "ridge profile: this build has no GPU executor (cmake found no cuDNN; configure with CUDNN_ROOT)\n";
            return 3;
        }
    }
    std::string backend = gpu ? gpu_backends().front() : cpu_backends().front();
    ExecOptions eo{.mode = mode, .fused = false, .threads = threads, .precision = *parse_precision(precision),
                   .cuda_graph = false};
    std::unique_ptr<Executor> ex = make_executor(backend, g, eo);
    int64_t host = host_copy_bytes(g);
    if (gpu && ex->planned_bytes() > probe::gpu::free_memory_bytes())
        throw UsageError(cat("ridge profile: ", e.name, " at batch ", N, " needs ", ex->planned_bytes(),
                             " bytes on the device; the GPU has ", probe::gpu::free_memory_bytes(), " free"));
    if (!fits_in(gpu ? host : ex->planned_bytes() + host, available_memory_bytes()))
        throw UsageError(cat("ridge profile: ", e.name, " at batch ", N, " needs ", ex->planned_bytes() + host,
                             " bytes; this machine has ", available_memory_bytes(),
                             " available and ridge keeps a tenth of it free"));

    std::string why;
    std::unique_ptr<profile::CounterSource> src = gpu ? profile::open_gpu_counters(&why) : profile::open_cpu_counters(&why);
    if (a.has("--cold-cache")) {
        o.before_step = gpu ? profile::gpu_cache_flush()
                            : profile::cpu_cache_flush(2 * std::max<int64_t>(probe::cpu_info().llc_bytes_total(), 1 << 20));
        if (!o.before_step) throw UsageError("ridge profile: --cold-cache: cannot size or allocate the flush buffer");
    }
    Profile p = profile::run_profile(*ex, g, src.get(), o);
    p.model = std::string(e.name);
    p.device = device;
    p.backend = backend;
    p.threads = gpu ? 0 : threads;
    p.cold_cache = a.has("--cold-cache");
    if (!src) p.unmeasured = why;

    write_output(out, fmt == "csv" ? profile_csv(p) : fmt == "json" ? profile_json(p) : profile_table(p));
    if (!p.measured) {
        std::cerr << "ridge profile: no counts: " << p.unmeasured << "\n";
        return exit_no_counters;
    }
    return 0;
}

}  // namespace ridge::cli
