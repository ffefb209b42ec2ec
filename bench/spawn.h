#pragma once
// Running another program (make, gnuplot): an argument vector handed to exec, never a shell
// command line, so nothing in an argument (a path with quotes, `$(...)` or backticks) is parsed.
#include <string>
#include <vector>

namespace ridge::bench {

struct RunOptions {
    std::string cwd;  // the folder it runs in; empty: ridge's own
    enum class Shown { all, errors, nothing } shown = Shown::all;  // what of its stdout and stderr reaches ridge's
    std::vector<std::string> unset;  // environment variables it does not inherit
};

// Runs argv[0] (looked up on PATH) with argv and waits for it. It reads /dev/null and runs in a
// process group of its own, which an interrupt kills with everything in it (interrupt.h).
// Returns its exit status, 128 + the signal that killed it, or 127 when it could not be started.
int run_program(const std::vector<std::string>& argv, const RunOptions& opt = {});

}  // namespace ridge::bench
