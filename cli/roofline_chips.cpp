#include "cli/roofline_common.h"

#include <algorithm>

#include "bench/format.h"
#include "bench/ledger.h"
#include "roofline/roofline.h"

namespace ridge::cli::roofline_sub {

using bench::check_output, bench::Column, bench::csv_cell, bench::Json, bench::table_header, bench::table_row,
    bench::UsageError, bench::write_output;

using namespace ridge::roofline;

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

namespace {

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

}  // namespace

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

}  // namespace ridge::cli::roofline_sub
