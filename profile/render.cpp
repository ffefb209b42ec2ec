#include "profile/render.h"

#include <algorithm>

#include "bench/format.h"
#include "bench/ledger.h"

namespace ridge::profile {

using bench::Column;
using bench::csv_cell;
using bench::fixed;
using bench::Json;
using bench::si;
using bench::table_header;
using bench::table_row;

namespace {

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
    return m && analytic > 0 ? fixed(ratio(m->flops, analytic), 2) : "-";
}
std::string dram(const std::optional<Measured>& m) {
    if (!m || (m->dram_read < 0 && m->dram_write < 0)) return "-";
    return si(double(std::max<int64_t>(m->dram_read, 0) + std::max<int64_t>(m->dram_write, 0)));
}

std::string header(const Profile& p) {
    std::string s = cat(p.model, " ", p.mode == Mode::train ? "train" : "infer", " on ", p.device, " (", p.backend,
                        p.device == "cpu" ? cat(", ", p.threads, p.threads == 1 ? " thread" : " threads") : "",
                        p.backend == "onednn" && !p.winograd ? ", no Winograd" : "",
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

std::string render_table(const Profile& p) {
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

std::string render_csv(const Profile& p) {
    std::string s =
        "model,device,backend,mode,batch,threads,layer,type,phase,impl,steps,ms,analytic_flops,expected_flops,"
        "analytic_bytes,measured_flops,ratio,dram_read,dram_write,l2_bytes";
    for (const Counter& c : p.counters) s += "," + csv_cell(c.name);
    s += ",why\n";
    for (const Row& r : p.rows) {
        s += cat(p.model, ",", p.device, ",", p.backend, ",", p.mode == Mode::train ? "train" : "infer", ",", p.batch, ",",
                 p.threads, ",", csv_cell(r.name), ",", r.kind, ",", phase_name(r), ",", csv_cell(r.impl), ",", r.steps, ",",
                 r.seconds * 1e3, ",", r.analytic_flops, ",", r.expected_flops, ",",
                 r.analytic_bytes < 0 ? "" : std::to_string(r.analytic_bytes), ",");
        if (r.measured) {
            const Measured& m = *r.measured;
            auto opt = [](int64_t v) { return v < 0 ? std::string() : std::to_string(v); };
            s += cat(m.flops, ",", r.analytic_flops > 0 ? fixed(ratio(m.flops, r.analytic_flops), 4) : "", ",",
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
    if (analytic > 0) j.field("ratio", ratio(m->flops, analytic));
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

std::string render_json(const Profile& p) {
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
    if (p.backend == "onednn") j.field("winograd", p.winograd ? "yes" : "no");
    j.begin_object("counters").field("measured", p.measured ? "yes" : "no");
    if (p.measured) j.field("source", p.source).field("scope", p.scope);
    else j.field("why_not", p.unmeasured);
    j.begin_array("list");
    for (const Counter& c : p.counters)
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

}  // namespace ridge::profile
