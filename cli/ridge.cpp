// ridge: what a deep network costs, and why.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "bench/format.h"
#include "bench/interrupt.h"
#include "bench/omp_wait.h"
#include "cli/analysis_text.h"
#include "cli/args.h"
#include "cli/compare_cmd.h"
#include "cli/bench_cmd.h"
#include "cli/net_arg.h"
#include "cli/profile_cmd.h"
#include "cli/report_cmd.h"
#include "cli/roofline_cmd.h"
#include "cli/train_cmd.h"
#include "netdefs/zoo.h"

using namespace ridge;
using namespace ridge::cli;
using ridge::bench::check_output, ridge::bench::install_interrupt_handlers, ridge::bench::printable,
    ridge::bench::UsageError, ridge::bench::write_output;

namespace {

const Option batch_opt{"--batch", "N", "batch size (default 1)"};
const Option res_opt{"--res", "H|HxW", "input resolution (default: the net's own, e.g. 224)"};
const Option dtype_opt{"--dtype", "T", "fp32 (default), fp16 or bf16: sets every byte count"};
const Option format_opt{"--format", "F", "table (default), csv or json"};
const Option out_opt{"--out", "FILE", "write to FILE (atomically) instead of stdout"};

const Command list_cmd{"list", "", "The zoo: each net's name, default input and a one-line description.", 0, {}};
const Command summary_cmd{
    "summary", "NET [options]",
    "Per-layer costs of one net (params, MACs, forward/dgrad/wgrad FLOPs, output bytes, memory\n"
    "traffic, intensity), totals by layer type and grand totals with training memory.\n"
    "table scales numbers (k M G); csv and json carry exact integers.",
    1, {batch_opt, res_opt, dtype_opt, format_opt, out_opt}};
const Command zoo_cmd{"zoo", "[options]",
                      "One row of totals per zoo net, each at its default resolution.",
                      0,
                      {batch_opt, dtype_opt, format_opt, {"--layers", "", "csv/json: every layer of every net too"},
                       out_opt}};
const Command explain_cmd{"explain", "NET LAYER [options]",
                          "A layer's cost formulas with its numbers substituted, as the model computes them.\n"
                          "Layer names are those of `ridge summary NET`.",
                          2, {batch_opt, res_opt, dtype_opt}};
const Command* commands[] = {&list_cmd,  &summary_cmd, &zoo_cmd,    &explain_cmd,
                             &bench_cmd, &train_cmd,   &profile_cmd, &report_cmd, &compare_cmd};

std::string usage() {
    return "usage: ridge COMMAND [options]     (ridge COMMAND --help for each)\n\n"
           "  list                 the zoo's nets\n"
           "  summary NET          per-layer and total costs of one net\n"
           "  zoo                  totals of every net\n"
           "  explain NET LAYER    one layer's formulas with numbers substituted\n"
           "  bench NET            run it and time it, whole steps and every layer\n"
           "  train NET            train it on an image folder or synthetic data; log the runs\n"
           "  profile NET          per layer: what ran, its time, counted FLOPs beside the model's, and why\n"
           "  roofline ...         chip ceilings, measured ceilings, a net on a roofline\n"
           "  report               the whole study: counts, ceilings, benchmarks, figures, report.md\n"
           "  compare DIR...       several environments' results side by side: one report, rooflines, speed-ups\n\n"
           "Costs are analytic and exact: nothing runs, nothing is allocated. bench, train and roofline measure.\n"
           "See README.md.\n";
}

std::string format_arg(const Args& a) { return a.choice("--format", "table", {"table", "csv", "json"}); }

int run_list(const Args&) {
    std::string s;
    for (const ZooEntry& e : zoo()) {
        std::string name(e.name);
        s += cat(name, std::string(name.size() < 20 ? 20 - name.size() : 1, ' '), e.default_res, "x", e.default_res,
                 "  ", e.description, "\n");
    }
    write_output("", s);
    return 0;
}

int run_summary(const Args& a) {
    const ZooEntry& e = net_arg(a);
    std::string fmt = format_arg(a);
    DType t = a.dtype();
    check_output(a.get("--out", ""));
    Analysis an = analyze(build_for(a, e, a.positive("--batch", 1, max_batch)), t);
    write_output(a.get("--out", ""), fmt == "csv" ? summary_csv(an) : fmt == "json" ? summary_json(an) : summary_table(an));
    return 0;
}

int run_zoo(const Args& a) {
    std::string fmt = format_arg(a);
    int64_t N = a.positive("--batch", 1, max_batch);
    DType t = a.dtype();
    bool layers = a.has("--layers");
    if (layers && fmt == "table") throw UsageError("ridge zoo: --layers needs --format csv or json");
    check_output(a.get("--out", ""));
    std::vector<Analysis> nets;
    for (const ZooEntry& e : zoo()) nets.push_back(analyze(build(e, N, e.default_res, e.default_res), t));
    write_output(a.get("--out", ""), fmt == "csv" ? zoo_csv(nets, layers) : fmt == "json" ? zoo_json(nets, layers) : zoo_table(nets));
    return 0;
}

int run_explain(const Args& a) {
    const ZooEntry& e = net_arg(a);
    DType t = a.dtype();
    Graph g = build_for(a, e, a.positive("--batch", 1, max_batch));
    const Node* n = g.find(a.pos[1]);
    if (!n) {
        std::vector<std::string_view> names;
        for (const Node& node : g.nodes()) names.push_back(node.name);
        throw UsageError(cat("ridge explain: ", e.name, " has no layer '", a.pos[1], "'; closest: ",
                             closest(a.pos[1], names), " (ridge summary ", e.name, " lists them)"));
    }
    write_output("", explain_text(g, *n, t));
    return 0;
}

int dispatch(const std::vector<std::string>& argv) {
    if (argv.empty())
        throw UsageError(
            "ridge: missing command: list, summary, zoo, explain, bench, train, profile, roofline, report or compare (ridge --help)");
    const std::string& name = argv[0];
    if (name == "--help" || name == "-h" || name == "help") {
        std::cout << usage();
        return 0;
    }
    std::vector<std::string> rest(argv.begin() + 1, argv.end());
    if (name == "roofline") return run_roofline(rest);
    for (const Command* c : commands) {
        if (c->name != name) continue;
        Args a = parse(*c, rest);
        if (a.help) {
            std::cout << help_text(*c);
            return 0;
        }
        if (c == &list_cmd) return run_list(a);
        if (c == &summary_cmd) return run_summary(a);
        if (c == &zoo_cmd) return run_zoo(a);
        if (c == &bench_cmd) return run_bench(a);
        if (c == &train_cmd) return run_train(a, rest);
        if (c == &profile_cmd) return run_profile(a);
        if (c == &report_cmd) return run_report(a);
        if (c == &compare_cmd) return run_compare(a);
        return run_explain(a);
    }
    std::vector<std::string_view> names;
    for (const Command* c : commands) names.push_back(c->name);
    names.push_back("roofline");
    throw UsageError(cat("ridge: unknown command '", name, "'; closest: ", closest(name, names, 1),
                         " (ridge --help lists them)"));
}

}  // namespace

// The commands that run OpenMP work (timed layers, training, the machine's ceilings: roofline
// place measures it with `--chip this`). Only they choose how idle threads wait, which samples the
// machine for 4 ms and starts the process again; the others (list, summary, zoo, explain, compare)
// never start a thread team. Under AddressSanitizer that second start doubled each run's time
// (77 against 146 ms for a refused command), most of the fuzzer's time in CI.
bool runs_openmp(int argc, char** argv) {
    if (argc < 2) return false;
    const std::string_view name = argv[1];
    return name == "bench" || name == "train" || name == "profile" || name == "report" || name == "roofline";
}

int main(int argc, char** argv) {
    if (runs_openmp(argc, argv)) bench::set_thread_wait(argv);
    install_interrupt_handlers();
    try {
        return dispatch(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const UsageError& e) {
        // Messages quote what the user typed or a file held: printable keeps them one line of text.
        std::cerr << printable(e.what()) << "\n";
        return 2;
    } catch (const CountOverflow&) {
        std::cerr << "ridge: at this batch and resolution a count exceeds 64 bits; use a smaller --batch or --res\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "ridge: internal error: " << printable(e.what()) << "\n";
        return 1;
    }
}
