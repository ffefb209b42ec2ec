#pragma once
// The NET argument and --res of every command that builds a zoo net, with the same messages.
#include "cli/args.h"
#include "netdefs/zoo.h"

namespace ridge::cli {

// Beyond any real study; counts that still exceed 64 bits are refused (CountOverflow).
constexpr int64_t max_batch = 65536, max_res = 4096;

const ZooEntry& net_named(std::string_view command, const std::string& name);  // closest names when unknown
const ZooEntry& net_arg(const Args& a);  // the first positional, with closest names when unknown

// The net at batch N and --res (default: the net's own), a shape that does not fit the
// architecture turned into one line that says what would.
Graph build_for(const Args& a, const ZooEntry& e, int64_t N);

}  // namespace ridge::cli
