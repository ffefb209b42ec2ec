#include "report/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "bench/usage_error.h"
#include "bench/format.h"
#include "engine/analysis.h"
#include "netdefs/zoo.h"
#include "report/folder.h"
#include "roofline/roofline.h"

namespace fs = std::filesystem;

namespace ridge::report {

namespace {

using bench::UsageError;

// What makes an environment: rows differing in any of these are never pooled.
const char* const env_fields[] = {"host",   "device",  "cpu",      "isa",          "onednn_isa", "cores",
                                  "threads", "memory_bytes", "os", "kernel",   "compiler",     "onednn",
                                  "runtime_env", "gpu",  "gpu_sms", "gpu_memory_bytes", "driver", "cuda",
                                  "cudnn",   "cublas",  "git"};
// What makes a configuration within an environment: rows agreeing on these are repeats.
const char* const config_fields[] = {"kind",  "net",     "mode",    "batch",        "height", "width",
                                     "precision", "backend", "cuda_graph", "winograd", "workers", "data", "classes",
                                     "warmup_iters", "iters", "lr", "momentum", "weight_decay"};
// The part of a configuration other environments are matched on.
const char* const compare_fields[] = {"kind", "net", "mode", "batch", "height", "width", "precision"};
// What names one run: two rows agreeing on these are the same run, read twice.
const char* const run_fields[] = {"kind",   "label",   "run",    "started", "date",  "host",  "device",
                                  "backend", "precision", "cuda_graph", "winograd", "net", "mode", "batch", "height",
                                  "width",  "threads", "workers", "warmup_iters", "iters", "seed", "data", "git"};
// Which fields name environments apart, in order of preference.
const char* const naming_fields[] = {"device", "threads", "runtime_env", "onednn_isa", "git", "host",
                                     "gpu",    "cpu",     "cores",       "isa",        "compiler", "onednn",
                                     "os",     "kernel",  "memory_bytes", "gpu_sms", "gpu_memory_bytes",
                                     "driver", "cuda",    "cudnn",       "cublas"};

template <size_t N>
std::string key_of(const bench::LedgerRecord& r, const char* const (&fields)[N]) {
    std::string k;
    for (const char* f : fields) k += r.get(f) + '\x1f';
    return k;
}

std::string where(const SourcedRow& r) { return cat(r.file, ":", r.rec.line); }

std::optional<double> number(const SourcedRow& r, const char* column) {
    const std::string& v = r.rec.get(column);
    if (v.empty()) return std::nullopt;
    double d = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
    if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(d) || d < 0)
        throw UsageError(cat("ridge compare: ", where(r), ": ", column, " is '", v, "', not a number"));
    return d;
}

std::string trimmed(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

// The name --label-by label gives an input: its last component, or the last two where that is a
// ledger's usual name.
std::string input_label(const std::string& given) {
    fs::path p(trimmed(given));
    std::string last = p.filename().string();
    if ((last == "ledger.csv" || last == "metrics.csv") && p.has_parent_path())
        return (p.parent_path().filename() / last).string();
    return last.empty() ? given : last;
}

bool is_report_folder(const fs::path& d) {
    std::error_code ec;
    return fs::is_regular_file(d / marker_file, ec);
}
bool is_compare_folder(const fs::path& d) {
    std::error_code ec;
    return fs::is_regular_file(d / compare_marker_file, ec);
}

// Whether a .csv's first line is a ledger's header: a folder scan reads only those (a report's
// runs.csv and layers.csv are not ledgers).
bool looks_like_ledger(const fs::path& f) {
    std::ifstream in(f);
    std::string head;
    std::getline(in, head);
    if (!head.empty() && head.back() == '\r') head.pop_back();
    return bench::ledger_format(head).has_value();
}

// The ledgers an input names. A file is a ledger (or an error); a report folder is its
// ledger.csv; any other folder is searched two levels down for report folders and ledgers.
std::vector<std::string> ledgers_of(const std::string& input, std::vector<std::string>& notes) {
    std::error_code ec;
    fs::path p(input);
    if (!fs::exists(p, ec)) throw UsageError(cat("ridge compare: '", input, "' does not exist"));
    if (!fs::is_directory(p, ec)) return {input};
    auto report_ledger = [&](const fs::path& d, bool named) -> std::vector<std::string> {
        fs::path l = d / "ledger.csv";
        if (fs::is_regular_file(l, ec)) return {l.string()};
        std::string why = cat("'", d.string(),
                              "' is a ridge report from before ridge compare (it has no ledger.csv): run ridge "
                              "report again, or give the ledgers (results/ledger.csv, logs/metrics.csv)");
        if (named) throw UsageError("ridge compare: " + why);
        notes.push_back(why + "; skipped");
        return {};
    };
    if (is_compare_folder(p))
        throw UsageError(cat("ridge compare: '", input, "' is the output of ridge compare, not a result to compare"));
    if (is_report_folder(p)) return report_ledger(p, true);
    std::vector<std::string> found;
    std::function<void(const fs::path&, int)> scan = [&](const fs::path& d, int depth) {
        std::vector<fs::path> entries;
        for (const fs::directory_entry& e : fs::directory_iterator(d, ec)) entries.push_back(e.path());
        std::sort(entries.begin(), entries.end());
        for (const fs::path& e : entries) {
            if (fs::is_directory(e, ec) && !fs::is_symlink(e, ec)) {
                if (is_compare_folder(e)) {
                    notes.push_back(cat("'", e.string(), "' is a ridge compare output: skipped"));
                } else if (is_report_folder(e)) {
                    for (std::string& l : report_ledger(e, false)) found.push_back(std::move(l));
                } else if (depth < 2) {
                    scan(e, depth + 1);
                }
            } else if (e.extension() == ".csv" && fs::is_regular_file(e, ec) && looks_like_ledger(e)) {
                found.push_back(e.string());
            }
        }
    };
    size_t notes_before = notes.size();
    scan(p, 1);
    if (found.empty() && notes.size() > notes_before) {
        std::string why = notes[notes_before];
        why = why.substr(0, why.rfind(why.ends_with("; skipped") ? "; skipped" : ": skipped"));
        throw UsageError(cat("ridge compare: '", input, "' holds no ledger to compare: ", why));
    }
    if (found.empty())
        throw UsageError(cat("ridge compare: '", input,
                             "' is not a ridge result: no report folder (.ridge-report) and no ledger (a .csv with "
                             "ridge's header) in it or its subfolders"));
    return found;
}

std::string display(std::string_view field, const std::string& v) {
    if (v.empty()) return cat(field, " none");
    if (field == "device" || field == "host" || field == "gpu" || field == "cpu") return v;
    return cat(field, " ", v);
}

void add(Spread& s, double v) {
    s.mean = (s.mean * s.n + v) / (s.n + 1);
    s.min = s.n ? std::min(s.min, v) : v;
    s.max = s.n ? std::max(s.max, v) : v;
    ++s.n;
}

std::string config_label(const SourcedRow& r) {
    const bench::LedgerRecord& x = r.rec;
    std::string what = x.get("kind") == "train" ? "train run" : x.get("mode") == "train" ? "train step" : "infer";
    std::string s = cat(what, " b", x.get("batch"));
    if (x.get("precision") != "fp32" && !x.get("precision").empty()) s += " " + x.get("precision");
    const ZooEntry* e = find_net(x.get("net"));
    if (!e || x.get("height") != std::to_string(e->default_res) || x.get("width") != std::to_string(e->default_res))
        s += cat(" ", x.get("height"), "x", x.get("width"));
    return s;
}

// The analytic FLOPs and bytes of a step, for rows written before the ledger carried them.
std::pair<int64_t, int64_t> analytic_counts(const SourcedRow& r) {
    const ZooEntry* e = find_net(r.rec.get("net"));
    if (!e) return {0, 0};
    auto i = [&](const char* c) { return int64_t(number(r, c).value_or(0)); };
    int64_t N = i("batch"), H = i("height"), W = i("width");
    if (N <= 0 || H <= 0 || W <= 0) return {0, 0};
    const std::string& p = r.rec.get("precision");
    DType t = p == "fp16" ? DType::fp16 : p == "bf16" ? DType::bf16 : DType::fp32;
    int64_t classes = i("classes");
    Analysis a = analyze(classes > 0 ? build(*e, N, H, W, classes) : build(*e, N, H, W), t);
    bool train = r.rec.get("mode") == "train";
    return {train ? a.totals.fwd_flops + a.totals.bwd_flops() : a.totals.fwd_flops,
            train ? a.totals.fwd_traffic_bytes + a.totals.bwd_traffic_bytes : a.totals.fwd_traffic_bytes};
}

}  // namespace

const std::string& Environment::field(std::string_view name) const {
    static const std::string none;
    for (const auto& [k, v] : fields)
        if (k == name) return v;
    return none;
}

size_t Comparison::rows_compared() const {
    size_t n = 0;
    for (const Group& g : groups) n += g.rows.size();
    return n;
}

std::vector<const Group*> Comparison::groups_of(size_t env) const {
    std::vector<const Group*> out;
    for (const Group& g : groups)
        if (g.env == env) out.push_back(&g);
    return out;
}

const Group* Comparison::match(size_t env, const std::string& compare_key) const {
    const Group* best = nullptr;
    for (const Group& g : groups)
        if (g.env == env && g.compare_key == compare_key && (!best || g.images_per_s.n > best->images_per_s.n)) best = &g;
    return best;
}

RoofPlace roof_place(const Comparison& c, const Group& g) {
    RoofPlace p;
    const Environment& e = c.envs[g.env];
    double i = g.intensity();
    if (!e.has_roof() || i <= 0 || g.gflops <= 0) return p;
    p.known = true;
    p.memory_bound = roofline::bound_at(e.peak_flops, e.bytes_per_s, i) == roofline::Bound::memory;
    p.roof_flops = roofline::attainable(e.peak_flops, e.bytes_per_s, i);
    p.fraction = g.gflops * 1e9 / p.roof_flops;
    return p;
}

Comparison load_comparison(const std::vector<std::string>& inputs, const CompareOptions& o) {
    Comparison c;
    c.inputs = inputs;
    for (const std::string& n : o.nets)
        if (!find_net(n)) throw UsageError(cat("ridge compare: --nets names '", n, "', not a net of the zoo (ridge list)"));

    // Every row of every input, identical rows counted once, the same run with other figures refused.
    std::map<std::string, size_t> by_run;
    std::set<std::string> files_read;
    for (size_t i = 0; i < inputs.size(); ++i) {
        for (const std::string& file : ledgers_of(inputs[i], c.notes)) {
            std::error_code ec;
            std::string canonical = fs::weakly_canonical(fs::absolute(file), ec).string();
            bool again = !files_read.insert(canonical + "\x1f" + std::to_string(i)).second;
            if (again) continue;
            bench::LedgerFile f = bench::read_ledger_file(file);
            if (f.format != bench::LedgerFormat::current)
                c.notes.push_back(cat(file, " is ", bench::format_name(f.format), ": read with its columns renamed"));
            if (f.torn_rows) c.notes.push_back(cat(file, ": ", f.torn_rows, " row(s) cut short (a crash?) skipped"));
            if (f.rows.empty()) c.notes.push_back(cat(file, " has no rows"));
            for (bench::LedgerRecord& rec : f.rows) {
                SourcedRow r{std::move(rec), file, i};
                std::string run = key_of(r.rec, run_fields);
                auto [it, fresh] = by_run.emplace(run, c.rows.size());
                if (!fresh) {
                    const SourcedRow& before = c.rows[it->second];
                    if (before.rec.cells == r.rec.cells) {
                        ++c.duplicates;
                        continue;
                    }
                    std::string differs;
                    for (size_t k = 0; k < r.rec.cells.size() && differs.empty(); ++k)
                        if (r.rec.cells[k] != before.rec.cells[k])
                            differs = cat(bench::ledger_columns()[k].name, " '", before.rec.cells[k], "' against '",
                                          r.rec.cells[k], "'");
                    throw UsageError(cat("ridge compare: conflicting rows: ", where(before), " and ", where(r),
                                         " are the same run (", r.rec.get("net"), " batch ", r.rec.get("batch"), " on ",
                                         r.rec.get("host").empty() ? std::string("an unnamed host") : r.rec.get("host"),
                                         " at ", r.rec.get("date"), ") with different figures: ", differs,
                                         "; keep one of them"));
                }
                c.rows.push_back(std::move(r));
            }
        }
    }

    // Which nets, in order; the rows kept.
    std::vector<const SourcedRow*> kept;
    for (const SourcedRow& r : c.rows) {
        const std::string& net = r.rec.get("net");
        if (!o.nets.empty() && std::find(o.nets.begin(), o.nets.end(), net) == o.nets.end()) continue;
        if (std::find(c.nets.begin(), c.nets.end(), net) == c.nets.end()) c.nets.push_back(net);
        kept.push_back(&r);
    }
    if (!o.nets.empty()) {
        std::vector<std::string> ordered;
        for (const std::string& n : o.nets) {
            if (std::find(c.nets.begin(), c.nets.end(), n) != c.nets.end()) ordered.push_back(n);
            else c.notes.push_back(cat("--nets: no row measured ", n));
        }
        c.nets = ordered;
    }
    if (kept.empty())
        throw UsageError(o.nets.empty() ? std::string("ridge compare: the inputs hold no rows")
                                        : std::string("ridge compare: no row measured any of the --nets"));

    // Environments, in the order first read.
    std::vector<std::string> labels;
    for (const std::string& in : inputs) labels.push_back(input_label(in));
    for (size_t i = 0; i < labels.size(); ++i)
        if (std::count(labels.begin(), labels.end(), labels[i]) > 1) labels[i] = trimmed(inputs[i]);
    std::map<std::string, size_t> env_of_key;
    std::vector<std::string> base_names;
    std::vector<size_t> env_of_row(kept.size());
    std::map<size_t, std::pair<double, double>> report_roof, train_roof;  // per environment: peak, bandwidth
    std::vector<std::pair<size_t, std::string>> roof_disagreements;
    for (size_t k = 0; k < kept.size(); ++k) {
        const SourcedRow& r = *kept[k];
        std::string base;
        switch (o.label_by) {
            case LabelBy::host: base = r.rec.get("host").empty() ? "unnamed host" : r.rec.get("host"); break;
            case LabelBy::device:
                base = r.rec.get("device") == "cuda" ? r.rec.get("gpu") : r.rec.get("cpu");
                if (base.empty()) base = r.rec.get("device");
                break;
            case LabelBy::label: base = labels[r.input]; break;
        }
        std::string key = base + '\x1e' + key_of(r.rec, env_fields);
        auto [it, fresh] = env_of_key.emplace(key, c.envs.size());
        if (fresh) {
            Environment e;
            for (const char* f : env_fields) e.fields.emplace_back(f, r.rec.get(f));
            e.device = r.rec.get("device");
            c.envs.push_back(std::move(e));
            base_names.push_back(base);
        }
        env_of_row[k] = it->second;
        Environment& e = c.envs[it->second];
        ++e.rows;
        if (std::find(e.files.begin(), e.files.end(), r.file) == e.files.end()) e.files.push_back(r.file);
        const std::string& date = r.rec.get("date");
        if (!date.empty() && (e.first_date.empty() || date < e.first_date)) e.first_date = date;
        if (date > e.last_date) e.last_date = date;
        // A report's ceilings come from the probes' fuller runs; a training run measures a quick roof
        // of its own (on every core, whatever its --threads), used only where no report measured one.
        auto [peak, bw] = number(r, "roof_peak_gflops").value_or(0) > 0 && number(r, "roof_bandwidth_gbs").value_or(0) > 0
                              ? std::pair(*number(r, "roof_peak_gflops") * 1e9, *number(r, "roof_bandwidth_gbs") * 1e9)
                              : std::pair(0.0, 0.0);
        if (peak > 0) {
            bool from_report = r.rec.get("kind") == "bench";
            std::pair<double, double>& roof = from_report ? report_roof[it->second] : train_roof[it->second];
            roof = {std::max(roof.first, peak), std::max(roof.second, bw)};
        }
        if (auto v = number(r, "roof_datasheet_peak_gflops")) e.datasheet_peak_flops = *v * 1e9;
        if (auto v = number(r, "roof_datasheet_bandwidth_gbs")) e.datasheet_bytes_per_s = *v * 1e9;
        if (auto v = number(r, e.device == "cuda" ? "gpu_clock_mhz" : "clock_mhz"); v && *v > 0) {
            e.clock_min_mhz = e.clock_min_mhz > 0 ? std::min(e.clock_min_mhz, *v) : *v;
            e.clock_max_mhz = std::max(e.clock_max_mhz, *v);
        }
    }

    for (size_t e = 0; e < c.envs.size(); ++e) {
        auto rep = report_roof.find(e), tr = train_roof.find(e);
        if (rep != report_roof.end()) std::tie(c.envs[e].peak_flops, c.envs[e].bytes_per_s) = rep->second;
        else if (tr != train_roof.end()) std::tie(c.envs[e].peak_flops, c.envs[e].bytes_per_s) = tr->second;
        if (rep == report_roof.end() || tr == train_roof.end()) continue;
        auto far = [](double a, double b) { return std::max(a, b) > 1.25 * std::min(a, b); };
        if (far(rep->second.first, tr->second.first) || far(rep->second.second, tr->second.second))
            roof_disagreements.push_back(
                {e, cat(bench::fixed(rep->second.first / 1e9, 0), " GFLOP/s and ", bench::fixed(rep->second.second / 1e9, 1),
                        " GB/s by ridge report against ", bench::fixed(tr->second.first / 1e9, 0), " GFLOP/s and ",
                        bench::fixed(tr->second.second / 1e9, 1), " GB/s by ridge train")});
    }

    // Names: the base, and where environments share it, as few of the fields that tell them apart
    // (in naming_fields' order) as make the names unique.
    std::vector<bool> named(c.envs.size(), false);
    for (size_t i = 0; i < c.envs.size(); ++i) {
        if (named[i]) continue;
        std::vector<size_t> same;
        for (size_t j = 0; j < c.envs.size(); ++j)
            if (base_names[j] == base_names[i]) same.push_back(j);
        std::vector<const char*> differing;
        for (const char* f : naming_fields)
            for (size_t j : same)
                if (c.envs[j].field(f) != c.envs[same[0]].field(f)) {
                    differing.push_back(f);
                    break;
                }
        for (size_t k = 0; k <= differing.size(); ++k) {
            std::set<std::string> names;
            for (size_t j : same) {
                std::string extra;
                for (size_t f = 0; f < k; ++f) extra += cat(f ? ", " : "", display(differing[f], c.envs[j].field(differing[f])));
                c.envs[j].name = base_names[j] + (extra.empty() ? "" : " (" + extra + ")");
                names.insert(c.envs[j].name);
                named[j] = true;
            }
            if (names.size() == same.size()) break;
        }
    }
    for (size_t i = 0; i < c.envs.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (c.envs[i].name == c.envs[j].name) c.envs[i].name += cat(" #", i + 1);

    // Repeats.
    std::map<std::string, size_t> group_of_key;
    for (size_t k = 0; k < kept.size(); ++k) {
        const SourcedRow& r = *kept[k];
        size_t env = env_of_row[k];
        std::string key = std::to_string(env) + '\x1e' + key_of(r.rec, config_fields);
        auto [it, fresh] = group_of_key.emplace(key, c.groups.size());
        if (fresh) {
            Group g;
            g.env = env;
            g.kind = r.rec.get("kind");
            g.net = r.rec.get("net");
            g.mode = r.rec.get("mode");
            g.precision = r.rec.get("precision");
            g.backend = r.rec.get("backend");
            g.batch = int64_t(number(r, "batch").value_or(0));
            g.height = int64_t(number(r, "height").value_or(0));
            g.width = int64_t(number(r, "width").value_or(0));
            g.key = key;
            g.compare_key = key_of(r.rec, compare_fields);
            g.label = config_label(r);
            c.groups.push_back(std::move(g));
        }
        Group& g = c.groups[it->second];
        g.rows.push_back(&r);
        std::optional<double> median = number(r, "step_median_ms"), ips = number(r, "images_per_s");
        if (!ips && median && *median > 0 && g.batch > 0) ips = double(g.batch) / (*median / 1e3);
        if (!ips) throw UsageError(cat("ridge compare: ", where(r), ": the row has neither images_per_s nor step_median_ms"));
        add(g.images_per_s, *ips);
        if (median) add(g.step_ms, *median);
        int64_t flops = int64_t(number(r, "flops_per_step").value_or(0)), bytes = int64_t(number(r, "bytes_per_step").value_or(0));
        if (flops == 0 || bytes == 0) std::tie(flops, bytes) = analytic_counts(r);
        g.flops_per_step = flops;
        g.bytes_per_step = bytes;
        std::optional<double> gf = number(r, "gflops");
        if ((!gf || *gf == 0) && flops > 0 && median && *median > 0) gf = double(flops) / (*median / 1e3) / 1e9;
        g.gflops = (g.gflops * double(g.rows.size() - 1) + gf.value_or(0)) / double(g.rows.size());
    }
    // By environment, then net (in --nets' or first-read order), inference by batch, training
    // steps, training runs.
    auto order = [&](const Group& g) {
        auto net = size_t(std::find(c.nets.begin(), c.nets.end(), g.net) - c.nets.begin());
        int what = g.kind == "train" ? 2 : g.mode == "train" ? 1 : 0;
        return std::make_tuple(g.env, net, what, g.batch);
    };
    std::stable_sort(c.groups.begin(), c.groups.end(), [&](const Group& a, const Group& b) { return order(a) < order(b); });

    // The baseline.
    if (!o.baseline.empty()) {
        auto it = std::find_if(c.envs.begin(), c.envs.end(), [&](const Environment& e) { return e.name == o.baseline; });
        if (it == c.envs.end()) {
            std::string names;
            for (const Environment& e : c.envs) names += cat(names.empty() ? "" : ", ", "'", e.name, "'");
            throw UsageError(cat("ridge compare: --baseline '", o.baseline, "' names no environment; they are ", names));
        }
        c.baseline = size_t(it - c.envs.begin());
    }

    // What the reader must know.
    if (c.envs.size() == 1)
        c.flags.push_back(cat("One environment only (", c.envs[0].name,
                              "): nothing to compare it with, so no speed-ups; the tables and figures show it alone."));
    for (size_t i = 0; i < c.envs.size(); ++i)
        for (size_t j = i + 1; j < c.envs.size(); ++j) {
            const Environment &a = c.envs[i], &b = c.envs[j];
            if (a.field("host") != b.field("host") || a.device != b.device) continue;
            std::string diff;
            for (const auto& [k, v] : a.fields)
                if (b.field(k) != v) diff += cat(diff.empty() ? "" : "; ", k, " ", v.empty() ? "none" : v, " against ",
                                                 b.field(k).empty() ? "none" : b.field(k));
            bool git = a.field("git") != b.field("git");
            c.flags.push_back(cat("`", a.name, "` and `", b.name, "` ran on the same host and device with different ",
                                  git ? "ridge revisions or settings" : "settings", " (", diff,
                                  "): kept apart", git ? "; part of their difference may be ridge's own" : "", "."));
        }
    for (size_t e = 0; e < c.envs.size(); ++e) {
        if (!c.envs[e].has_roof())
            c.notes.push_back(cat(c.envs[e].name,
                                  ": no measured roof in its rows (bench ledgers carry none; a ridge report folder or "
                                  "a ridge train row does), so its runs are not placed on a roof"));
        std::map<std::string, int> per_key;
        for (const Group* g : c.groups_of(e)) ++per_key[g->compare_key];
        for (const Group* g : c.groups_of(e))
            if (per_key[g->compare_key] > 1 && g == c.match(e, g->compare_key))
                c.flags.push_back(cat("`", c.envs[e].name, "` measured ", g->net, " ", g->label,
                                      " with different settings (steps, workers, data, SGD settings or Winograd): each is a row "
                                      "of its own in the table; the figures use the one with the most repeats."));
    }
    for (const auto& [e, what] : roof_disagreements)
        c.flags.push_back(cat("`", c.envs[e].name, "`'s rows measured different roofs (", what,
                              "); its runs are placed on the report's: ridge train measures a quick roof on every "
                              "core whatever its --threads."));
    if (c.duplicates)
        c.notes.push_back(cat(c.duplicates, " row(s) were read twice (the same ledger under two inputs?) and counted once"));
    return c;
}

}  // namespace ridge::report
