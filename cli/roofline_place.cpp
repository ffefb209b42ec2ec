#include "cli/roofline_common.h"

#include <algorithm>
#include <cctype>

#include "bench/format.h"
#include "bench/ledger.h"
#include "cli/net_arg.h"
#include "engine/analysis.h"
#include "netdefs/zoo.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/roofline.h"

namespace ridge::cli::roofline_sub {

using bench::check_output, bench::Column, bench::csv_cell, bench::Json, bench::si, bench::table_header,
    bench::table_row, bench::UsageError, bench::write_output;

using namespace ridge::roofline;

const Command place_cmd{
    "roofline place", "NET --chip NAME|this [options]",
    "Places a net and each of its layers on a chip's roofline: forward FLOPs over minimum forward\n"
    "traffic (ridge summary's intensity), the ceiling that binds (memory below the ridge point,\n"
    "compute above it), how far from the ridge (x ridge = intensity / ridge point), the attainable\n"
    "FLOP/s and the lower bound on time. Layers are placed alone, as an unfused executor runs them.\n"
    "--chip takes a database name (case-insensitive; a unique part of a name is enough) or `this`:\n"
    "this machine's CPU, measured on the spot by the quick probes (2 to 10 s): the fp32 FMA peak\n"
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

namespace {

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

}  // namespace

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
        if (a.has("--chips"))
            throw UsageError("ridge roofline place: --chips does not apply to --chip this (this machine is measured)");
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

}  // namespace ridge::cli::roofline_sub
