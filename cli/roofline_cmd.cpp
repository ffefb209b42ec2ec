#include "cli/roofline_cmd.h"

#include <iostream>

#include "bench/format.h"
#include "cli/args.h"
#include "cli/roofline_common.h"

namespace ridge::cli {

using bench::UsageError;

namespace {

using namespace roofline_sub;

const Command* subcommands[] = {&chips_cmd, &measure_cmd, &place_cmd};

std::string usage() {
    return "usage: ridge roofline COMMAND [options]     (ridge roofline COMMAND --help for each)\n\n"
           "  chips                 the chip database: datasheet peaks, bandwidth, sources\n"
           "  measure               this machine's measured ceilings (--device cpu|cuda)\n"
           "  place NET --chip C    a net and its layers on chip C's roofline (C may be `this`)\n";
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
