#include "cli/analysis_text.h"

#include "bench/format.h"

namespace ridge::cli {

using bench::Column, bench::fixed, bench::grouped, bench::Json, bench::si, bench::table_header, bench::table_row;

namespace {

double ratio(int64_t num, int64_t den) { return den ? double(num) / double(den) : 0.0; }

std::string dims(const Shape& s, char sep) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) out += (i ? std::string(1, sep) : "") + std::to_string(s[i]);
    return out;
}

std::string input_desc(const Analysis& a) {
    return cat("batch ", a.input[0], ", input ", a.input[1], "x", a.input[2], "x", a.input[3], ", ",
               dtype_name(a.dtype), " (", dtype_bytes(a.dtype), " B/element)");
}

// The table's type column: short names so a row fits 100 columns.
std::string short_kind(const std::string& kind, Category cat) {
    if (cat == Category::dwconv) return "dwconv";
    static const std::pair<const char*, const char*> abbrev[] = {
        {"conv2d", "conv"}, {"batchnorm", "bn"}, {"layernorm", "ln"}, {"linear", "fc"},
        {"hardswish", "hswish"}, {"hardsigmoid", "hsigmoid"}, {"adaptive_avgpool", "adapool"},
        {"layer_scale", "lscale"}, {"channel_shuffle", "shuffle"}, {"stochastic_depth", "sdepth"},
        {"class_token", "clstoken"}, {"pos_embedding", "posemb"}};
    for (auto [k, s] : abbrev)
        if (kind == k) return s;
    return kind;
}

// The batch is in the heading, so the output column shows one image's shape.
const std::vector<Column> layer_cols = {{"layer", 22, true}, {"type", 8, true}, {"output", 12, true},
                                        {"param", 5},        {"MACs", 5},       {"fwd", 5},
                                        {"dgrad", 5},        {"wgrad", 5},      {"out B", 5},
                                        {"trafB", 5},        {"FLOP/B", 6}};

std::vector<std::string> count_cells(const Counts& c) {
    return {si(c.params), si(c.macs), si(c.fwd_flops), si(c.dgrad_flops), si(c.wgrad_flops),
            si(c.activation_bytes), si(c.fwd_traffic_bytes), fixed(c.fwd_intensity(), 1)};
}

void counts_json(Json& j, const Counts& c) {
    j.field("params", c.params)
        .field("macs", c.macs)
        .field("fwd_flops", c.fwd_flops)
        .field("dgrad_flops", c.dgrad_flops)
        .field("wgrad_flops", c.wgrad_flops)
        .field("param_bytes", c.param_bytes)
        .field("activation_bytes", c.activation_bytes)
        .field("saved_bytes", c.saved_bytes)
        .field("fwd_traffic_bytes", c.fwd_traffic_bytes)
        .field("bwd_traffic_bytes", c.bwd_traffic_bytes)
        .field("fwd_intensity", c.fwd_intensity())
        .field("bwd_intensity", c.bwd_intensity())
        .field("bwd_fwd_flops_ratio", ratio(c.bwd_flops(), c.fwd_flops));
}

void totals_json(Json& j, const Totals& t) {
    j.begin_object("totals");
    counts_json(j, t);
    j.field("train_memory_bytes", t.train_memory_bytes).field("train_memory_adam_bytes", t.train_memory_adam_bytes);
    j.end_object();
}

void layers_json(Json& j, const Analysis& a) {
    j.begin_array("layers");
    for (const LayerCost& L : a.layers) {
        j.begin_object().field("name", L.name).field("type", L.kind).field("category", category_name(L.category));
        j.array("output", L.out);
        counts_json(j, L.c);
        j.end_object();
    }
    j.end_array();
}

const char* counts_csv_header =
    "params,macs,fwd_flops,dgrad_flops,wgrad_flops,param_bytes,activation_bytes,saved_bytes,fwd_traffic_bytes,"
    "bwd_traffic_bytes,fwd_intensity,bwd_intensity,bwd_fwd_flops_ratio";

std::string counts_csv(const Counts& c) {
    return cat(c.params, ",", c.macs, ",", c.fwd_flops, ",", c.dgrad_flops, ",", c.wgrad_flops, ",", c.param_bytes,
               ",", c.activation_bytes, ",", c.saved_bytes, ",", c.fwd_traffic_bytes, ",", c.bwd_traffic_bytes, ",",
               fixed(c.fwd_intensity(), 4), ",", fixed(c.bwd_intensity(), 4), ",",
               fixed(ratio(c.bwd_flops(), c.fwd_flops), 4));
}

std::string total_line(std::string_view what, int64_t v, std::string_view note = {}) {
    std::string left = cat("  ", what);
    left += std::string(left.size() < 32 ? 32 - left.size() : 1, ' ');
    std::string num = grouped(v);
    return left + std::string(num.size() < 22 ? 22 - num.size() : 0, ' ') + num + "  " + std::string(note) + "\n";
}

std::string bytes_note(int64_t b) { return cat("(", si(double(b)), "B)"); }

}  // namespace

std::string summary_table(const Analysis& a) {
    std::string s = cat(a.model, ": ", input_desc(a), "\n\n", table_header(layer_cols));
    for (const LayerCost& L : a.layers) {
        std::vector<std::string> cells = {L.name, short_kind(L.kind, L.category),
                                          dims(Shape(L.out.begin() + 1, L.out.end()), 'x')};
        for (auto& c : count_cells(L.c)) cells.push_back(c);
        s += table_row(layer_cols, cells);
    }
    const std::vector<Column> type_cols = {{"by type", 16, true}, {"layers", 6}, {"params", 6}, {"MACs", 6},
                                           {"fwd", 6},            {"dgrad", 6},  {"wgrad", 6},  {"out B", 6},
                                           {"trafB", 6},          {"FLOP/B", 6}, {"fwd %", 5}};
    s += "\n" + table_header(type_cols);
    for (const TypeTotals& t : a.by_type) {
        std::vector<std::string> cells = {std::string(category_name(t.category)), std::to_string(t.layers)};
        for (auto& c : count_cells(t.c)) cells.push_back(c);
        cells.push_back(fixed(100.0 * ratio(t.c.fwd_flops, a.totals.fwd_flops), 1));
        s += table_row(type_cols, cells);
    }
    const Totals& t = a.totals;
    s += "\ntotals\n";
    s += total_line("params", t.params, cat("(", si(t.params), ", ", si(t.param_bytes), "B)"));
    s += total_line("MACs", t.macs, cat("(", si(t.macs), ")"));
    s += total_line("forward FLOPs", t.fwd_flops, cat("(", si(t.fwd_flops), ")"));
    s += total_line("backward dgrad FLOPs", t.dgrad_flops, cat("(", si(t.dgrad_flops), ")"));
    s += total_line("backward wgrad FLOPs", t.wgrad_flops, cat("(", si(t.wgrad_flops), ")"));
    s += cat("  backward / forward FLOPs        ", std::string(16, ' '), fixed(ratio(t.bwd_flops(), t.fwd_flops), 3), "\n");
    s += total_line("activation bytes", t.activation_bytes, bytes_note(t.activation_bytes));
    s += total_line("saved for backward (bytes)", t.saved_bytes, bytes_note(t.saved_bytes));
    s += total_line("forward traffic bytes", t.fwd_traffic_bytes, bytes_note(t.fwd_traffic_bytes));
    s += total_line("backward traffic bytes", t.bwd_traffic_bytes, bytes_note(t.bwd_traffic_bytes));
    s += cat("  intensity fwd / bwd (FLOP/B)    ", std::string(12, ' '), fixed(t.fwd_intensity(), 2), " / ",
             fixed(t.bwd_intensity(), 2), "\n");
    s += total_line("train memory, SGD momentum", t.train_memory_bytes, bytes_note(t.train_memory_bytes));
    s += total_line("train memory, Adam", t.train_memory_adam_bytes, bytes_note(t.train_memory_adam_bytes));
    return s;
}

std::string summary_csv(const Analysis& a) {
    // One table for three kinds of row: layers, per-type totals (category set) and the net's total
    // (output holds the input shape; only it has training memory).
    std::string s =
        cat("row,name,type,category,output,", counts_csv_header, ",train_memory_bytes,train_memory_adam_bytes\n");
    for (const LayerCost& L : a.layers)
        s += cat("layer,", L.name, ",", L.kind, ",", category_name(L.category), ",", dims(L.out, 'x'), ",",
                 counts_csv(L.c), ",,\n");
    for (const TypeTotals& t : a.by_type)
        s += cat("type,", category_name(t.category), ",,", category_name(t.category), ",,", counts_csv(t.c), ",,\n");
    s += cat("total,", a.model, ",,,", dims(a.input, 'x'), ",", counts_csv(a.totals), ",", a.totals.train_memory_bytes,
             ",", a.totals.train_memory_adam_bytes, "\n");
    return s;
}

std::string summary_json(const Analysis& a) {
    Json j;
    j.begin_object().field("model", a.model).field("batch", a.input[0]);
    j.array("input", Shape(a.input.begin() + 1, a.input.end())).field("dtype", dtype_name(a.dtype));
    totals_json(j, a.totals);
    j.begin_array("by_type");
    for (const TypeTotals& t : a.by_type) {
        j.begin_object().field("type", category_name(t.category)).field("layers", t.layers);
        counts_json(j, t.c);
        j.end_object();
    }
    j.end_array();
    layers_json(j, a);
    j.end_object();
    return j.str();
}

std::string zoo_table(const std::vector<Analysis>& nets) {
    const std::vector<Column> cols = {{"net", 18, true}, {"input", 7, true}, {"params", 6}, {"MACs", 6},
                                      {"fwd", 6},        {"bwd", 6},         {"act B", 6},  {"saved", 6},
                                      {"trainB", 6},     {"FLOP/B", 6},      {"bwd/fwd", 7}};
    std::string s;
    if (!nets.empty())
        s = cat("batch ", nets[0].input[0], ", ", dtype_name(nets[0].dtype),
                "; bwd = dgrad + wgrad FLOPs; trainB = training memory with SGD momentum\n\n");
    s += table_header(cols);
    for (const Analysis& a : nets) {
        const Totals& t = a.totals;
        s += table_row(cols, {a.model, cat(a.input[2], "x", a.input[3]), si(t.params), si(t.macs), si(t.fwd_flops),
                              si(t.bwd_flops()), si(t.activation_bytes), si(t.saved_bytes), si(t.train_memory_bytes),
                              fixed(t.fwd_intensity(), 1), fixed(ratio(t.bwd_flops(), t.fwd_flops), 2)});
    }
    return s;
}

std::string zoo_csv(const std::vector<Analysis>& nets, bool layers) {
    std::string s;
    if (layers) {
        s = cat("net,batch,height,width,dtype,layer,type,category,output,", counts_csv_header, "\n");
        for (const Analysis& a : nets)
            for (const LayerCost& L : a.layers)
                s += cat(a.model, ",", a.input[0], ",", a.input[2], ",", a.input[3], ",", dtype_name(a.dtype), ",",
                         L.name, ",", L.kind, ",", category_name(L.category), ",", dims(L.out, 'x'), ",",
                         counts_csv(L.c), "\n");
        return s;
    }
    s = cat("net,batch,height,width,dtype,", counts_csv_header, ",train_memory_bytes,train_memory_adam_bytes\n");
    for (const Analysis& a : nets)
        s += cat(a.model, ",", a.input[0], ",", a.input[2], ",", a.input[3], ",", dtype_name(a.dtype), ",",
                 counts_csv(a.totals), ",", a.totals.train_memory_bytes, ",", a.totals.train_memory_adam_bytes, "\n");
    return s;
}

std::string zoo_json(const std::vector<Analysis>& nets, bool layers) {
    Json j;
    j.begin_object();
    if (!nets.empty()) j.field("batch", nets[0].input[0]).field("dtype", dtype_name(nets[0].dtype));
    j.begin_array("nets");
    for (const Analysis& a : nets) {
        j.begin_object().field("model", a.model).array("input", Shape(a.input.begin() + 1, a.input.end()));
        totals_json(j, a.totals);
        if (layers) layers_json(j, a);
        j.end_object();
    }
    j.end_array().end_object();
    return j.str();
}

std::string explain_text(const Graph& g, const Node& n, DType dtype) {
    std::string s = cat(g.model(), " / ", n.name, " (", op_kind(n.op), "): batch ", g.input_shape()[0], ", input ",
                        to_string(g.input_shape()), ", ", dtype_name(dtype), "\n");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
        const TensorInfo& t = g.tensor(n.inputs[i]);
        s += cat("  input ", i, "  ", to_string(t.shape), t.requires_grad ? "" : "  (needs no gradient: no dgrad)", "\n");
    }
    s += cat("  output   ", to_string(g.tensor(n.output).shape), "\n\n");
    Work w = layer_work(g, n, dtype);
    if (w.lines.empty()) s += "  costs nothing: a view or an identity, it moves no data and computes nothing\n";
    for (const auto& [what, e] : w.lines) {
        std::string left = cat("  ", what);
        left += std::string(left.size() < 20 ? 20 - left.size() : 1, ' ');
        s += left + "= " + e.sym;
        if (e.num != e.sym) s += "\n" + std::string(20, ' ') + "= " + e.num;
        s += "\n" + std::string(20, ' ') + "= " + grouped(e.v) + "\n";
    }
    s += "\nsymbols: N batch, C in-channels, H W input, K out-channels, R S kernel, P Q output, G groups,\n"
         "M rows, L inner dim, J columns, D width, T tokens, E elements; X Y inputs/output elements,\n"
         "Wt weights, Sv saved elements, DX input-gradient elements, b bytes per element.\n"
         "Rules for every op: engine/README.md\n";
    return s;
}

}  // namespace ridge::cli
