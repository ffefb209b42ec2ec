#pragma once
// The error a user's input or environment causes (a bad option, an output that cannot be written):
// the command line prints it as one line on stderr and exits 2, before any long work and with
// nothing written. It sits here, below the command line, because the libraries' checks of
// destinations (format, ledger, report's folder) throw it too.
#include <stdexcept>

namespace ridge::bench {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace ridge::bench
