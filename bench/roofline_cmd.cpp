#include "bench/roofline_cmd.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iostream>

#include "bench/args.h"
#include "bench/format.h"
#include "bench/net_arg.h"
#include "engine/analysis.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#include "netdefs/zoo.h"
#include "roofline/chips.h"
#include "roofline/cpu_clocks.h"
#include "roofline/roofline.h"

namespace ridge::cli {

namespace {

using namespace ridge::roofline;

constexpr int exit_no_device = 3;

const Option chips_opt{"--chips", "FILE", "chip database (default: this tree's roofline/chips.csv; peaks.csv beside it)"};
const Option out_opt{"--out", "FILE", "write to FILE (atomically) instead of stdout"};
const Option precision_opt{"--precision", "P", "fp64, fp32, tf32, fp16, bf16, fp8 or int8"};
const Option sparse_opt{"--sparse", "", "the 2:4-sparse peak instead of the dense one (where a datasheet gives one)"};

const Command chips_cmd{
    "roofline chips", "[options]",
    "The chip database: datasheet peaks per precision (TFLOP/s; int8 in TOP/s), memory bandwidth\n"
    "(GB/s = 1e9 B/s), memory size and type, TDP and a source for every figure. Values marked = are\n"
    "derived, with the arithmetic stored beside them in the database.\n"
    "With --precision P: each chip's peak in P, its source and its ridge point; chips without a\n"
    "peak in P are left out and named.\n"
    "Sources, units and how derived figures are computed: roofline/README.md.",
    0,
    {{"--kind", "K", "only chips of one kind: cpu, gpu, asic, soc or fpga"},
     precision_opt,
     sparse_opt,
     {"--format", "F", "table (default), csv (every column, exact) or json"},
     chips_opt,
     out_opt}};

const Command measure_cmd{
    "roofline measure", "[options]",
    "Measures this machine's ceilings with hand-written probes.\n"
    "cpu: the all-core clock (a chain of dependent adds) beside the clock /proc/cpuinfo reports,\n"
    "  fp32 FMA throughput on every core beside the theoretical peak at both clocks and the\n"
    "  datasheet peak (at the model's maximum boost clock from roofline/cpu_clocks.csv; where the\n"
    "  CPU hides its model, at the reported clock: a lower bound), STREAM copy/scale/add/triad\n"
    "  (arrays 4x the last-level cache) beside glibc memcpy on the same buffers, and a read sweep\n"
    "  over working sets whose plateaus are the L1/L2/L3/DRAM ceilings.\n"
    "  Takes about 15 s (--quick: about 2 s, less accurate).\n"
    "cuda: fp32/fp16/bf16 FMA and tensor-core peaks, an intensity sweep, DRAM and L2 bandwidth,\n"
    "  beside the ceilings the device properties imply. Without a CUDA device it prints one line\n"
    "  and exits 3.",
    0,
    {{"--device", "D", "cpu (default) or cuda"},
     {"--format", "F", "table (default) or json"},
     {"--threads", "N", "cpu: threads, one per core (default: every physical core)"},
     {"--quick", "", "short runs (what `place --chip this` uses)"},
     out_opt}};

const Command place_cmd{
    "roofline place", "NET --chip NAME|this [options]",
    "Places a net and each of its layers on a chip's roofline: forward FLOPs over minimum forward\n"
    "traffic (ridge summary's intensity), the ceiling that binds (memory below the ridge point,\n"
    "compute above it), how far from the ridge (x ridge = intensity / ridge point), the attainable\n"
    "FLOP/s and the lower bound on time. Layers are placed alone, as an unfused executor runs them.\n"
    "--chip takes a database name (case-insensitive; a unique part of a name is enough) or `this`:\n"
    "this machine's CPU, measured on the spot by the quick probes (about 2 s): the fp32 FMA peak\n"
    "and the STREAM triad bandwidth (or a cache plateau with --level).\n"
    "--dtype sets the bytes each tensor element takes; --precision the peak the FLOPs run at (by\n"
    "default the one of --dtype: tf32 runs on fp32 bytes at the tf32 peak).",
    1,
    {{"--chip", "NAME", "a chip of `ridge roofline chips`, or `this`"},
     {"--batch", "N", "batch size (default 1)"},
     {"--res", "H|HxW", "input resolution (default: the net's own)"},
     {"--dtype", "T", "element type: fp32 (default), tf32 (fp32 bytes), fp16 or bf16"},
     {"--precision", "P", "the peak: fp64, fp32, tf32, fp16, bf16, fp8 or int8 (default: --dtype's)"},
     sparse_opt,
     {"--level", "L", "memory level: dram (default); l1, l2 or l3 with --chip this"},
     {"--format", "F", "table (default), csv or json"},
     chips_opt,
     out_opt}};

const Command* subcommands[] = {&chips_cmd, &measure_cmd, &place_cmd};

std::string usage() {
    return "usage: ridge roofline COMMAND [options]     (ridge roofline COMMAND --help for each)\n\n"
           "  chips                 the chip database: datasheet peaks, bandwidth, sources\n"
           "  measure               this machine's measured ceilings (--device cpu|cuda)\n"
           "  place NET --chip C    a net and its layers on chip C's roofline (C may be `this`)\n";
}

// Numbers for people: three significant digits, no exponent.
std::string num(double v) {
    double a = std::fabs(v);
    if (v == std::floor(v) && a < 1e9) return std::to_string(int64_t(v));
    return fixed(v, a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3);
}

// Numbers for machines: the shortest text that reads back as the same double.
std::string exact(double v) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// "8.22 GFLOP", "3.35 TB", "512 FLOP/s": SI-scaled with the prefix on the unit.
std::string si_unit(double v, std::string_view unit) {
    std::string s = si(v);
    if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back())))
        return s.substr(0, s.size() - 1) + " " + s.back() + std::string(unit);
    return s + " " + std::string(unit);
}

std::string time_text(double seconds) {
    if (seconds < 1e-3) return num(seconds * 1e6) + " us";
    if (seconds < 1) return num(seconds * 1e3) + " ms";
    return num(seconds) + " s";
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string bytes_text(int64_t b) {
    if (b >= (int64_t(1) << 30) && b % (int64_t(1) << 30) == 0) return cat(b >> 30, " GiB");
    if (b >= (int64_t(1) << 20)) return fixed(double(b) / double(1 << 20), b % (1 << 20) ? 1 : 0) + " MiB";
    if (b >= 1024) return fixed(double(b) / 1024, b % 1024 ? 1 : 0) + " KiB";
    return cat(b, " B");
}

std::vector<Chip> load(const Args& a) {
    std::string path = a.get("--chips", default_chips_path());
    try {
        return load_chips(path);
    } catch (const ChipFileError& e) {
        throw UsageError(cat("ridge ", a.cmd->name, ": ", e.what()));
    }
}

std::vector<CpuClock> load_clocks(const Args& a) {
    try {
        return load_cpu_clocks(cpu_clocks_path(default_chips_path()));
    } catch (const ChipFileError& e) {
        throw UsageError(cat("ridge ", a.cmd->name, ": ", e.what()));
    }
}

// ---- chips ----------------------------------------------------------------------------------------

// A number a person reads, "=" in front when the database derives it rather than quoting it.
std::string marked(double v, bool derived) { return (derived ? "=" : "") + num(v); }

std::string chips_table(const std::vector<Chip>& chips) {
    std::vector<Column> cols{{"chip", 28, true}, {"kind", 4, true}, {"year", 4}};
    for (Precision p : precisions) cols.push_back({precision_name(p), 6});
    cols.push_back({"GB/s", 6});
    cols.push_back({"W", 4});
    std::string s = cat(chips.size(), " chips. Dense peaks in TFLOP/s (int8: TOP/s); memory bandwidth in GB/s\n",
                        "(1e9 B/s); TDP in W; = derived (the arithmetic is in the database); - = not applicable\n",
                        "or not confirmed. --precision P lists one precision with sources and ridge points.\n\n");
    s += table_header(cols);
    for (const Chip& c : chips) {
        std::vector<std::string> cells{c.name, std::string(kind_name(c.kind)), std::to_string(c.year)};
        for (Precision p : precisions) {
            const Peak* k = c.peak(p);
            cells.push_back(k ? marked(k->tflops, k->derived()) : "-");
        }
        cells.push_back(c.mem_bw_gbs ? marked(*c.mem_bw_gbs, !c.mem_bw_derivation.empty()) : "-");
        cells.push_back(c.tdp_w ? num(*c.tdp_w) : "-");
        s += table_row(cols, cells);
    }
    return s;
}

// The chips that have a peak in `p` (dense, or sparse when asked), and the names of those left out.
struct InPrecision {
    std::vector<std::pair<const Chip*, const Peak*>> chips;
    std::vector<std::string> left_out;
};
InPrecision in_precision(const std::vector<Chip>& chips, Precision p, bool sparse) {
    InPrecision r;
    for (const Chip& c : chips)
        if (const Peak* k = c.peak(p, sparse)) r.chips.push_back({&c, k});
        else r.left_out.push_back(c.name);
    return r;
}

std::string density_name(bool sparse) { return sparse ? "sparse" : "dense"; }

std::string chips_precision_table(const InPrecision& in, Precision p, bool sparse) {
    std::vector<Column> cols{{"chip", 34, true}, {"kind", 4, true}, {"year", 4},
                             {is_integer(p) ? "TOP/s" : "TFLOP/s", 8}, {"GB/s", 6}, {"ridge", 6},
                             {"engine", 22, true}};
    std::string s = cat(in.chips.size(), " chips with a ", density_name(sparse), " ", precision_name(p), " peak (",
                        rate_unit(p), "); memory bandwidth in GB/s (1e9 B/s);\nridge point in ",
                        is_integer(p) ? "op" : "FLOP", "/B; = derived (the arithmetic is in the database).\n\n");
    s += table_header(cols);
    for (const auto& [c, k] : in.chips) {
        std::string ridge = c->bandwidth_bytes() ? num(ridge_point(k->tflops * 1e12, *c->bandwidth_bytes())) : "-";
        s += table_row(cols, {c->name, std::string(kind_name(c->kind)), std::to_string(c->year), marked(k->tflops, k->derived()),
                              c->mem_bw_gbs ? marked(*c->mem_bw_gbs, !c->mem_bw_derivation.empty()) : "-", ridge,
                              k->engine.empty() ? "-" : k->engine});
    }
    if (!in.left_out.empty()) {
        // Wrapped at 100 columns, a name never split.
        std::string line = cat("Left out, no ", density_name(sparse), " ", precision_name(p), " peak in the database (",
                               in.left_out.size(), "):");
        s += "\n";
        for (size_t i = 0; i < in.left_out.size(); ++i) {
            std::string word = " " + in.left_out[i] + (i + 1 < in.left_out.size() ? "," : "");
            if (line.size() + word.size() > 100) s += line + "\n", line = " ";
            line += word;
        }
        s += line + "\n";
    }
    return s;
}

// The wide CSV: one row per chip, a column per precision. The first 13 columns are those of
// earlier ridge versions (fp16_tflops is now IEEE fp16 alone; bf16 has its own column).
std::string chips_csv(const std::vector<Chip>& chips) {
    std::string s = "name,kind,vendor,year,fp64_tflops,fp32_tflops,tf32_tflops,fp16_tflops,int8_tops,mem_bw_gbs,mem_gb,"
                    "mem_type,tdp_w,bf16_tflops,fp8_tflops,mem_bw_derivation,derived,source,mem_source,notes\n";
    auto opt = [](const std::optional<double>& v) { return v ? exact(*v) : std::string(); };
    for (const Chip& c : chips) {
        std::string derived;
        for (const Peak& k : c.peaks)
            if (k.derived() && !k.sparse) derived += cat(derived.empty() ? "" : " ", precision_name(k.precision));
        if (!c.mem_bw_derivation.empty()) derived += cat(derived.empty() ? "" : " ", "mem_bw");
        std::vector<std::string> cells{csv_cell(c.name), std::string(kind_name(c.kind)), csv_cell(c.vendor),
                                       std::to_string(c.year)};
        for (Precision p : {Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16, Precision::int8})
            cells.push_back(opt(c.peak_tflops(p)));
        cells.push_back(opt(c.mem_bw_gbs));
        cells.push_back(opt(c.mem_gb));
        cells.push_back(csv_cell(c.mem_type));
        cells.push_back(opt(c.tdp_w));
        cells.push_back(opt(c.peak_tflops(Precision::bf16)));
        cells.push_back(opt(c.peak_tflops(Precision::fp8)));
        cells.push_back(csv_cell(c.mem_bw_derivation));
        cells.push_back(derived);
        cells.push_back(csv_cell(c.source));
        cells.push_back(csv_cell(c.mem_source));
        cells.push_back(csv_cell(c.notes));
        std::string row;
        for (size_t i = 0; i < cells.size(); ++i) row += (i ? "," : "") + cells[i];
        s += row + "\n";
    }
    return s;
}

// One precision, long: a row per chip that has it, with the peak's own source and arithmetic.
std::string chips_precision_csv(const InPrecision& in, Precision p, bool sparse) {
    std::string s = "name,kind,vendor,year,precision,density,peak_tflops,peak_derivation,engine,peak_source,mem_bw_gbs,"
                    "mem_bw_derivation,ridge_flop_per_byte,source\n";
    for (const auto& [c, k] : in.chips) {
        std::optional<double> ridge;
        if (c->bandwidth_bytes()) ridge = ridge_point(k->tflops * 1e12, *c->bandwidth_bytes());
        s += cat(csv_cell(c->name), ",", kind_name(c->kind), ",", csv_cell(c->vendor), ",", c->year, ",", precision_name(p),
                 ",", density_name(sparse), ",", exact(k->tflops), ",", csv_cell(k->derivation), ",", csv_cell(k->engine), ",",
                 csv_cell(k->source), ",", c->mem_bw_gbs ? exact(*c->mem_bw_gbs) : "", ",", csv_cell(c->mem_bw_derivation),
                 ",", ridge ? exact(*ridge) : "", ",", csv_cell(c->source), "\n");
    }
    return s;
}

void peak_fields(Json& j, const Peak& k) {
    j.begin_object().field("precision", precision_name(k.precision)).field("density", density_name(k.sparse));
    j.field("tflops", k.tflops).boolean("derived", k.derived());
    if (k.derived()) j.field("derivation", k.derivation);
    if (!k.engine.empty()) j.field("engine", k.engine);
    j.field("source", k.source);
    if (!k.notes.empty()) j.field("notes", k.notes);
    j.end_object();
}

// JSON: a field is absent where the database cell is empty. peak_tflops holds the dense peaks,
// sparse_tflops the 2:4-sparse ones; "peaks" has each with its source and arithmetic.
std::string chips_json(const std::vector<const Chip*>& chips, std::optional<Precision> only, bool sparse,
                       const std::vector<std::string>& left_out) {
    Json j;
    j.begin_object().field("count", int64_t(chips.size()));
    if (only) {
        j.field("precision", precision_name(*only)).field("density", density_name(sparse));
        j.begin_array("left_out");
        for (const std::string& n : left_out) j.begin_object().field("name", n).end_object();
        j.end_array();
    }
    j.begin_array("chips");
    for (const Chip* cp : chips) {
        const Chip& c = *cp;
        j.begin_object().field("name", c.name).field("kind", kind_name(c.kind)).field("vendor", c.vendor).field("year", c.year);
        for (bool sp : {false, true}) {
            j.begin_object(sp ? "sparse_tflops" : "peak_tflops");
            for (Precision p : precisions)
                if (auto v = c.peak_tflops(p, sp)) j.field(precision_name(p), *v);
            j.end_object();
        }
        if (c.mem_bw_gbs) j.field("mem_bw_gbs", *c.mem_bw_gbs);
        if (!c.mem_bw_derivation.empty()) j.field("mem_bw_derivation", c.mem_bw_derivation);
        if (c.mem_gb) j.field("mem_gb", *c.mem_gb);
        if (!c.mem_type.empty()) j.field("mem_type", c.mem_type);
        if (c.tdp_w) j.field("tdp_w", *c.tdp_w);
        if (c.mem_bw_gbs) {
            j.begin_object("ridge_flop_per_byte");
            for (Precision p : precisions)
                if (auto v = c.peak_flops(p)) j.field(precision_name(p), ridge_point(*v, *c.bandwidth_bytes()));
            j.end_object();
        }
        j.begin_array("peaks");
        for (const Peak& k : c.peaks)
            if (!only || (k.precision == *only && k.sparse == sparse)) peak_fields(j, k);
        j.end_array();
        j.field("source", c.source);
        if (!c.mem_source.empty()) j.field("mem_source", c.mem_source);
        if (!c.notes.empty()) j.field("notes", c.notes);
        j.end_object();
    }
    j.end_array().end_object();
    return j.str();
}

std::optional<Precision> precision_arg(const Args& a) {
    if (!a.has("--precision")) return std::nullopt;
    return parse_precision(a.choice("--precision", "", {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8"}));
}

int run_chips(const Args& a) {
    std::string fmt = a.choice("--format", "table", {"table", "csv", "json"});
    std::optional<ChipKind> kind;
    if (a.has("--kind")) kind = parse_kind(a.choice("--kind", "", {"cpu", "gpu", "asic", "soc", "fpga"}));
    std::optional<Precision> precision = precision_arg(a);
    bool sparse = a.has("--sparse");
    if (sparse && !precision) throw UsageError("ridge roofline chips: --sparse needs --precision P");
    check_output(a.get("--out", ""));
    std::vector<Chip> chips = load(a);
    if (kind) std::erase_if(chips, [&](const Chip& c) { return c.kind != *kind; });
    std::string out;
    if (precision) {
        InPrecision in = in_precision(chips, *precision, sparse);
        std::vector<const Chip*> kept;
        for (const auto& [c, k] : in.chips) kept.push_back(c);
        out = fmt == "csv"    ? chips_precision_csv(in, *precision, sparse)
              : fmt == "json" ? chips_json(kept, precision, sparse, in.left_out)
                              : chips_precision_table(in, *precision, sparse);
    } else {
        std::vector<const Chip*> all;
        for (const Chip& c : chips) all.push_back(&c);
        out = fmt == "csv" ? chips_csv(chips) : fmt == "json" ? chips_json(all, std::nullopt, false, {}) : chips_table(chips);
    }
    write_output(a.get("--out", ""), out);
    return 0;
}

// ---- measure ------------------------------------------------------------------------------------

std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[16];
    std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
    return buf;
}

std::string cpu_table(const probe::CpuCeilings& m, const std::optional<DatasheetClock>& sheet) {
    const probe::CpuInfo& c = m.cpu;
    std::string s = cat("CPU: ", c.model_name, " (", c.vendor, " family ", c.family, " model ", c.model, "), ",
                        c.core_cpus.size(), " cores, ", c.logical_cpus, " logical CPUs; ",
                        c.avx512f ? "AVX-512" : c.avx2 ? "AVX2" : "no AVX2", c.fma ? "+FMA" : "", "\n");
    std::string caches;
    for (const probe::CacheLevel& l : c.caches)
        caches += cat(caches.empty() ? "" : ", ", "L", l.level, " ", bytes_text(l.bytes),
                      l.shared_by > 1 ? cat(" (shared by ", l.shared_by, ")") : std::string());
    if (m.load_average)
        s += cat("load average ", fixed(*m.load_average, 2),
                 " before the probes (other work on these cores lowers the bandwidths;\n",
                 "each figure is the best of many short runs)\n");
    s += cat("caches: ", caches.empty() ? std::string("not reported") : caches, "\n");
    s += cat("FMA units: ", m.units.rule, " = ", num(m.units.fp32_flops_per_cycle()), " fp32 FLOP/cycle/core\n");
    double reported = c.reported_mhz ? *c.reported_mhz / 1e3 : 0;
    s += cat("clock: ", c.reported_mhz ? cat(fixed(*c.reported_mhz, 0), " MHz reported (/proc/cpuinfo), ") : "",
             fixed(m.measured_clock_ghz * 1e3, 0), " MHz measured (dependent adds, all cores at once)\n\n");
    double theo = m.theoretical_gflops(m.measured_clock_ghz);
    auto row = [](const std::string& label, double gflops, const std::string& note) {
        return cat(label, std::string(label.size() < 37 ? 37 - label.size() : 1, ' '), num(gflops), " GFLOP/s  (", note, ")\n");
    };
    s += row(cat("fp32 FMA, ", m.fma.isa, ", ", m.threads, m.threads == 1 ? " thread" : " threads"), m.fma.gflops,
             "each core's best rate over its own CPU time");
    s += row("  all threads, wall-clock time", m.fma.gflops_wall, "lower while other processes share the cores");
    s += row("  theoretical at the measured clock", theo, cat(fixed(100 * m.fma.gflops / theo, 1), "% reached"));
    if (reported > 0) {
        double theo_r = m.theoretical_gflops(reported);
        s += row("  theoretical at the reported clock", theo_r,
                 cat(fixed(100 * m.fma.gflops / theo_r, 1), "% reached",
                     m.fma.gflops > theo_r ? ": the reported clock is too low" : ""));
    }
    if (sheet) {
        double theo_d = m.theoretical_gflops(sheet->ghz);
        s += row(sheet->lower_bound ? "  datasheet (a lower bound)" : "  datasheet", theo_d,
                 cat(fixed(100 * m.fma.gflops / theo_d, 1), "% reached"));
        s += cat("    at ", sheet->why, sheet->row ? cat(" (", sheet->row->source, ")") : std::string(), "\n");
    }
    const probe::StreamResult& st = m.stream;
    s += cat("\nSTREAM, ", st.threads, " threads, 3 arrays of ", bytes_text(st.array_bytes),
             st.nontemporal ? ", non-temporal stores" : ", cached stores", "\n",
             "  (GB/s = 1e9 B/s; bytes counted as STREAM does, the write-allocate read not counted)\n");
    s += cat("  copy ", num(st.copy), "   scale ", num(st.scale), "   add ", num(st.add), "   triad ", num(st.triad),
             " GB/s\n");
    s += cat("  memcpy (glibc, same buffers) ", num(st.memcpy), " GB/s   triad / memcpy ",
             fixed(100 * st.triad / st.memcpy, 1), "%\n");
    s += cat("  triad with cached stores ", num(st.triad_cached_stores), " GB/s (pays the write-allocate read)\n");
    s += cat("\nread sweep, ", m.threads, " threads, ", m.sweep.size(), " working sets from ",
             bytes_text(m.sweep.empty() ? 0 : m.sweep.front().bytes), " to ",
             bytes_text(m.sweep.empty() ? 0 : m.sweep.back().bytes), "; plateaus by cache size:\n");
    for (const probe::Plateau& p : m.levels)
        s += cat("  ", p.level, std::string(6 - std::min<size_t>(5, p.level.size()), ' '), bytes_text(p.from_bytes), " - ",
                 bytes_text(p.to_bytes), ": ", num(p.gbs), " GB/s (upper quartile of ", p.points, ")\n");
    return s;
}

std::string cpu_json(const probe::CpuCeilings& m, const std::optional<DatasheetClock>& sheet) {
    const probe::CpuInfo& c = m.cpu;
    Json j;
    j.begin_object().field("device", "cpu").field("date", today()).field("cpu", c.model_name).field("vendor", c.vendor);
    j.field("family", c.family).field("model", c.model).field("cores", int64_t(c.core_cpus.size()));
    j.field("logical_cpus", c.logical_cpus).field("threads", m.threads).field("isa", m.fma.isa);
    j.field("fma_units", m.units.units).field("fma_bits", m.units.bits).field("fma_rule", m.units.rule);
    j.field("fp32_flops_per_cycle_per_core", m.units.fp32_flops_per_cycle());
    if (c.reported_mhz) j.field("reported_clock_mhz", *c.reported_mhz);
    j.field("measured_clock_mhz", m.measured_clock_ghz * 1e3);
    if (m.load_average) j.field("load_average", *m.load_average);
    j.field("fp32_gflops", m.fma.gflops).field("fp32_gflops_wall_clock", m.fma.gflops_wall);
    j.field("fp32_theoretical_gflops", m.theoretical_gflops(m.measured_clock_ghz));
    if (c.reported_mhz) j.field("fp32_theoretical_reported_clock_gflops", m.theoretical_gflops(*c.reported_mhz / 1e3));
    if (sheet) {
        j.field("fp32_datasheet_gflops", m.theoretical_gflops(sheet->ghz)).field("datasheet_clock_mhz", sheet->ghz * 1e3);
        j.boolean("datasheet_lower_bound", sheet->lower_bound).field("datasheet_clock", sheet->why);
    }
    j.field("triad_gbs", m.stream.triad).field("memcpy_gbs", m.stream.memcpy);
    j.begin_object("stream").field("array_bytes", m.stream.array_bytes).field("threads", m.stream.threads);
    j.field("nontemporal_stores", m.stream.nontemporal ? "yes" : "no");
    j.field("copy_gbs", m.stream.copy).field("scale_gbs", m.stream.scale).field("add_gbs", m.stream.add);
    j.field("triad_gbs", m.stream.triad).field("triad_cached_stores_gbs", m.stream.triad_cached_stores);
    j.field("memcpy_gbs", m.stream.memcpy).end_object();
    j.begin_array("caches");
    for (const probe::CacheLevel& l : c.caches)
        j.begin_object().field("level", l.level).field("type", l.type).field("bytes", l.bytes).field("shared_by", l.shared_by).end_object();
    j.end_array();
    j.begin_array("plateaus");
    for (const probe::Plateau& p : m.levels)
        j.begin_object().field("level", p.level).field("from_bytes", p.from_bytes).field("to_bytes", p.to_bytes)
            .field("points", p.points).field("gbs", p.gbs).end_object();
    j.end_array();
    j.begin_array("sweep");
    for (const probe::SweepPoint& p : m.sweep)
        j.begin_object().field("bytes", p.bytes).field("gbs", p.gbs).field("gbs_wall_clock", p.gbs_wall).end_object();
    j.end_array().end_object();
    return j.str();
}

std::string gpu_table(const probe::gpu::GpuCeilings& g) {
    const auto& d = g.dev;
    std::string s = cat("GPU: ", d.name, " (sm_", d.cc_major, d.cc_minor, "), ", d.sms, " SMs x ", d.fp32_lanes_per_sm,
                        " fp32 lanes, L2 ", bytes_text(d.l2_bytes), ", ", bytes_text(d.mem_bytes), "\n");
    s += cat("clock: ", fixed(d.clock_mhz, 0), " MHz (driver peak), ", fixed(g.measured_clock_mhz, 0),
             " MHz measured during the fp32 kernel\n\n");
    double theo = g.fp32_theoretical_gflops(g.measured_clock_mhz), sheet = g.fp32_theoretical_gflops(d.clock_mhz);
    s += cat("fp32 FMA            ", num(g.fp32_gflops), " GFLOP/s   ", fixed(100 * g.fp32_gflops / theo, 1),
             "% of ", num(theo), " at the measured clock, ", fixed(100 * g.fp32_gflops / sheet, 1), "% of ", num(sheet),
             " at the driver's\n");
    s += cat("fp16x2 FMA          ", num(g.fp16x2_gflops), " GFLOP/s\n");
    s += cat("bf16x2 FMA          ", num(g.bf16x2_gflops), " GFLOP/s\n");
    s += cat("tensor mma.sync fp16 (fp32 accumulate) ", num(g.tensor_fp16_gflops), " GFLOP/s\n\n");
    double dram = std::max(g.dram_copy_gbs, g.dram_read_gbs), sheet_bw = g.dram_datasheet_gbs();
    s += cat("DRAM copy ", num(g.dram_copy_gbs), " GB/s, read ", num(g.dram_read_gbs), " GB/s (", bytes_text(g.dram_buffer_bytes),
             "); best ", fixed(100 * dram / sheet_bw, 1), "% of ", num(sheet_bw), " GB/s (2 x memory clock x bus width)\n");
    s += cat("L2 read ", num(g.l2_read_gbs), " GB/s (", bytes_text(g.l2_buffer_bytes), " read repeatedly)\n\n");
    s += "intensity sweep (FLOP/B, GFLOP/s):\n";
    std::string prev;
    for (const auto& p : g.sweep) {
        if (p.precision != prev) s += cat(prev.empty() ? "" : "\n", "  ", p.precision, ":");
        prev = p.precision;
        s += cat(" ", num(p.flop_per_byte), "->", num(p.gflops));
    }
    return s + "\n";
}

std::string gpu_json(const probe::gpu::GpuCeilings& g) {
    const auto& d = g.dev;
    Json j;
    j.begin_object().field("device", "cuda").field("date", today()).field("gpu", d.name);
    j.field("compute_capability", cat(d.cc_major, ".", d.cc_minor)).field("sms", d.sms);
    j.field("fp32_lanes_per_sm", d.fp32_lanes_per_sm).field("driver_clock_mhz", d.clock_mhz);
    j.field("measured_clock_mhz", g.measured_clock_mhz);
    j.field("fp32_gflops", g.fp32_gflops);
    j.field("fp32_theoretical_gflops", g.fp32_theoretical_gflops(g.measured_clock_mhz));
    j.field("fp32_datasheet_gflops", g.fp32_theoretical_gflops(d.clock_mhz));
    j.field("fp16x2_gflops", g.fp16x2_gflops).field("bf16x2_gflops", g.bf16x2_gflops);
    j.field("tensor_fp16_gflops", g.tensor_fp16_gflops);
    j.field("dram_copy_gbs", g.dram_copy_gbs).field("dram_read_gbs", g.dram_read_gbs);
    j.field("dram_datasheet_gbs", g.dram_datasheet_gbs()).field("l2_read_gbs", g.l2_read_gbs);
    j.field("dram_buffer_bytes", g.dram_buffer_bytes).field("l2_buffer_bytes", g.l2_buffer_bytes);
    j.begin_array("sweep");
    for (const auto& p : g.sweep)
        j.begin_object().field("precision", p.precision).field("ops_per_element", p.ops_per_element)
            .field("flop_per_byte", p.flop_per_byte).field("gflops", p.gflops).field("gbs", p.gbs).end_object();
    j.end_array().end_object();
    return j.str();
}

int run_measure(const Args& a) {
    std::string device = a.choice("--device", "cpu", {"cpu", "cuda"});
    std::string fmt = a.choice("--format", "table", {"table", "json"});
    int threads = int(a.positive("--threads", 0, 4096));
    bool quick = a.has("--quick");
    check_output(a.get("--out", ""));
    std::string out;
    if (device == "cuda") {
        if (a.has("--threads")) throw UsageError("ridge roofline measure: --threads applies to --device cpu only");
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge roofline measure: " << why << "\n";
            return exit_no_device;
        }
        probe::gpu::GpuCeilings g;
        try {
            g = probe::gpu::measure(quick);
        } catch (const std::exception& e) {
            std::cerr << "ridge roofline measure: " << e.what() << "\n";
            return 1;
        }
        out = fmt == "json" ? gpu_json(g) : gpu_table(g);
    } else {
        std::vector<CpuClock> clocks = load_clocks(a);
        probe::CpuCeilings m = probe::measure_cpu({quick, threads});
        std::optional<double> reported;
        if (m.cpu.reported_mhz) reported = *m.cpu.reported_mhz / 1e3;
        std::optional<DatasheetClock> sheet = datasheet_clock(clocks, m.cpu.model_name, reported);
        out = fmt == "json" ? cpu_json(m, sheet) : cpu_table(m, sheet);
    }
    write_output(a.get("--out", ""), out);
    return 0;
}

// ---- place --------------------------------------------------------------------------------------

const Chip& chip_arg(const Args& a, const std::vector<Chip>& chips, const std::string& name) {
    if (const Chip* c = find_chip(chips, name)) return *c;
    auto lower = [](std::string s) {
        for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
        return s;
    };
    std::vector<const Chip*> part;
    for (const Chip& c : chips)
        if (lower(c.name).find(lower(name)) != std::string::npos) part.push_back(&c);
    if (part.size() == 1) return *part.front();
    if (part.size() > 1) {
        std::string list;
        for (size_t i = 0; i < std::min<size_t>(part.size(), 4); ++i) list += (i ? ", " : "") + part[i]->name;
        throw UsageError(cat("ridge ", a.cmd->name, ": chip '", name, "' matches ", part.size(), " chips: ", list,
                             part.size() > 4 ? ", ..." : "", "; give more of the name"));
    }
    std::vector<std::string_view> names;
    for (const Chip& c : chips) names.push_back(c.name);
    throw UsageError(cat("ridge ", a.cmd->name, ": unknown chip '", name, "'; closest: ", closest(name, names),
                         " (ridge roofline chips lists all)"));
}

Roofline this_machine(probe::CpuCeilings& measured) {
    measured = probe::measure_cpu({true, 0});
    Roofline r;
    r.chip = cat("this machine (", measured.cpu.model_name, ", measured)");
    r.peak_flops[size_t(index(Precision::fp32))] = measured.fma.gflops * 1e9;
    for (const probe::Plateau& p : measured.levels)
        if (p.level != "DRAM") r.levels.push_back({p.level, p.gbs * 1e9});
    r.levels.push_back({"DRAM", measured.stream.triad * 1e9});
    return r;
}

struct Placed {
    std::string name, kind;
    Placement p;
    bool moves_nothing = false;  // views: no FLOPs and no bytes
};

std::string place_table(const std::string& header, const Placed& net, double sum_layer_seconds,
                        const std::vector<Placed>& layers) {
    std::string s = header;
    s += cat("net: ", si_unit(net.p.flops, "FLOP"), " forward over ", si_unit(net.p.bytes, "B"),
             " of traffic (the sum of its layers'):\n", "  intensity ", num(net.p.intensity), " FLOP/B, ",
             bound_name(net.p.bound), "-bound (", num(net.p.ratio), "x the ridge), attainable ",
             si_unit(net.p.attainable_flops, "FLOP/s"), "\n");
    s += cat("  time lower bound ", time_text(net.p.min_seconds), " at the net's intensity, ", time_text(sum_layer_seconds),
             " as the sum of its layers placed alone\n\n");
    std::vector<Column> cols{{"layer", 24, true}, {"kind", 11, true}, {"FLOP", 6}, {"bytes", 6}, {"FLOP/B", 7},
                             {"bound", 7, true},  {"x ridge", 7},      {"attainable FLOP/s", 17}, {"min us", 7}};
    s += table_header(cols);
    for (const Placed& l : layers) {
        if (l.moves_nothing) {
            s += table_row(cols, {l.name, l.kind, "0", "0", "-", "none", "-", "-", "0"});
            continue;
        }
        s += table_row(cols, {l.name, l.kind, si(l.p.flops), si(l.p.bytes), num(l.p.intensity), bound_name(l.p.bound),
                              num(l.p.ratio), si(l.p.attainable_flops), num(l.p.min_seconds * 1e6)});
    }
    return s;
}

std::string place_csv(const std::string& net, const std::string& chip, const std::string& dtype,
                      const std::string& level, const Placed& total, const std::vector<Placed>& layers) {
    std::string s = "net,chip,dtype,level,layer,kind,fwd_flops,fwd_traffic_bytes,intensity_flop_per_byte,peak_flops,"
                    "bandwidth_bytes_per_s,ridge_flop_per_byte,attainable_flops,bound,ridge_ratio,min_seconds\n";
    auto row = [&](const Placed& l) {
        const Placement& p = l.p;
        s += cat(csv_cell(net), ",", csv_cell(chip), ",", dtype, ",", level, ",", csv_cell(l.name), ",", l.kind, ",",
                 int64_t(p.flops), ",", int64_t(p.bytes), ",", l.moves_nothing ? "" : exact(p.intensity), ",",
                 exact(p.peak_flops), ",", exact(p.bytes_per_s), ",", exact(p.ridge), ",",
                 l.moves_nothing ? "" : exact(p.attainable_flops), ",", l.moves_nothing ? "none" : bound_name(p.bound), ",",
                 l.moves_nothing ? "" : exact(p.ratio), ",", exact(p.min_seconds), "\n");
    };
    row(total);
    for (const Placed& l : layers) row(l);
    return s;
}

void placement_fields(Json& j, const Placed& l) {
    j.field("fwd_flops", int64_t(l.p.flops)).field("fwd_traffic_bytes", int64_t(l.p.bytes));
    if (l.moves_nothing) {
        j.field("bound", "none");
        return;
    }
    j.field("intensity_flop_per_byte", l.p.intensity).field("attainable_flops", l.p.attainable_flops);
    j.field("bound", bound_name(l.p.bound)).field("ridge_ratio", l.p.ratio).field("min_seconds", l.p.min_seconds);
}

int run_place(const Args& a) {
    const ZooEntry& e = net_arg(a);
    if (!a.has("--chip"))
        throw UsageError("ridge roofline place: --chip NAME is required (ridge roofline chips lists them; `this` measures this machine)");
    std::string fmt = a.choice("--format", "table", {"table", "csv", "json"});
    std::string dtype = a.choice("--dtype", "fp32", {"fp32", "tf32", "fp16", "bf16"});
    std::string level_name = a.choice("--level", "dram", {"dram", "l1", "l2", "l3"});
    DType bytes_type = dtype == "fp16" ? DType::fp16 : dtype == "bf16" ? DType::bf16 : DType::fp32;
    Precision precision = precision_arg(a).value_or(*parse_precision(dtype));
    bool sparse = a.has("--sparse");
    int64_t N = a.positive("--batch", 1, max_batch);
    std::string peak_name = cat(sparse ? "sparse " : "", precision_name(precision));
    check_output(a.get("--out", ""));

    std::string chip_name = a.get("--chip", "");
    Roofline roof;
    std::optional<double> peak;
    std::string measured_line;
    if (chip_name == "this") {
        // Refuse what the probes cannot answer before spending seconds on them.
        if (precision != Precision::fp32 || sparse)
            throw UsageError(cat("ridge roofline place: this machine has no ", peak_name,
                                 " peak (the CPU probes measure fp32)"));
        probe::CpuCeilings m;
        roof = this_machine(m);
        peak = roof.peak(precision);
        std::string levels;
        for (const MemoryLevel& l : roof.levels) levels += cat(", ", l.name, " ", num(l.bytes_per_s / 1e9), " GB/s");
        measured_line = cat("measured just now (quick probes): fp32 FMA ", num(m.fma.gflops), " GFLOP/s\n  ",
                            levels.substr(2), " (DRAM = STREAM triad)\n");
    } else {
        std::vector<Chip> chips = load(a);
        const Chip& chip = chip_arg(a, chips, chip_name);
        roof = datasheet_roofline(chip);
        peak = chip.peak_flops(precision, sparse);
        if (!peak) {
            std::string have;
            for (const Peak& k : chip.peaks)
                have += cat(have.empty() ? "" : ", ", k.sparse ? "sparse " : "", precision_name(k.precision));
            throw UsageError(cat("ridge roofline place: ", roof.chip, " has no ", peak_name,
                                 " peak in the database (it has: ", have, ")"));
        }
    }
    const MemoryLevel* level = roof.level(level_name);
    if (!level) {
        std::string have;
        for (const MemoryLevel& l : roof.levels) have += (have.empty() ? "" : ", ") + l.name;
        throw UsageError(cat("ridge roofline place: ", roof.chip, " has no ", level_name, " bandwidth",
                             have.empty() ? std::string(" in the database") : cat(" (it has: ", have, ")")));
    }

    Graph g = build_for(a, e, N);
    Analysis an = analyze(g, bytes_type);
    std::vector<Placed> layers;
    double sum_seconds = 0;
    for (const LayerCost& l : an.layers) {
        Placed p{l.name, l.kind, place(double(l.c.fwd_flops), double(l.c.fwd_traffic_bytes), *peak, level->bytes_per_s),
                 l.c.fwd_flops == 0 && l.c.fwd_traffic_bytes == 0};
        sum_seconds += p.p.min_seconds;
        layers.push_back(p);
    }
    Placed total{"(net)", "net",
                 place(double(an.totals.fwd_flops), double(an.totals.fwd_traffic_bytes), *peak, level->bytes_per_s), false};

    std::string out;
    if (fmt == "csv") {
        out = place_csv(an.model, roof.chip, dtype, level->name, total, layers);
    } else if (fmt == "json") {
        Json j;
        j.begin_object().field("net", an.model).field("batch", N).array("input", {an.input[1], an.input[2], an.input[3]});
        j.field("dtype", dtype).field("precision", precision_name(precision)).field("density", density_name(sparse));
        j.field("chip", roof.chip);
        j.field("level", level->name).field("peak_flops", *peak).field("bandwidth_bytes_per_s", level->bytes_per_s);
        j.field("ridge_flop_per_byte", ridge_point(*peak, level->bytes_per_s));
        j.begin_object("totals");
        placement_fields(j, total);
        j.field("sum_layer_min_seconds", sum_seconds).end_object();
        j.begin_array("layers");
        for (const Placed& l : layers) {
            j.begin_object().field("name", l.name).field("kind", l.kind);
            placement_fields(j, l);
            j.end_object();
        }
        j.end_array().end_object();
        out = j.str();
    } else {
        std::string header = cat(an.model, " on ", roof.chip, ": batch ", N, ", ", an.input[2], "x", an.input[3], ", ", dtype,
                                 " (", peak_name, " peak, ", dtype_name(bytes_type), " bytes), ",
                                 level->name, "\n", measured_line,
                                 cat("roof: ", si_unit(*peak, is_integer(precision) ? "OP/s" : "FLOP/s"), " and ", num(level->bytes_per_s / 1e9), " GB/s; ridge point ",
                                     num(ridge_point(*peak, level->bytes_per_s)), " FLOP/B\n"));
        out = place_table(header, total, sum_seconds, layers);
    }
    write_output(a.get("--out", ""), out);
    return 0;
}

}  // namespace

int run_roofline(const std::vector<std::string>& argv) {
    if (argv.empty() || argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
        if (argv.empty()) throw UsageError("ridge roofline: missing command: chips, measure or place (ridge roofline --help)");
        std::cout << usage();
        return 0;
    }
    std::vector<std::string> rest(argv.begin() + 1, argv.end());
    for (const Command* c : subcommands) {
        if (c->name.substr(c->name.find(' ') + 1) != argv[0]) continue;
        Args a = parse(*c, rest);
        if (a.help) {
            std::cout << help_text(*c);
            return 0;
        }
        if (c == &chips_cmd) return run_chips(a);
        if (c == &measure_cmd) return run_measure(a);
        return run_place(a);
    }
    throw UsageError(cat("ridge roofline: unknown command '", argv[0], "'; closest: ",
                         closest(argv[0], {"chips", "measure", "place"}, 1), " (ridge roofline --help lists them)"));
}

}  // namespace ridge::cli
