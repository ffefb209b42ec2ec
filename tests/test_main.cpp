// The main of every doctest binary built by ridge_add_test: doctest's, plus the skip report of
// skip.h (exit 77 when a case skipped and nothing failed).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>
#include <vector>

#include "skip.h"

namespace testskip {

namespace {
std::vector<std::string>& reasons() {
    static std::vector<std::string> r;
    return r;
}
}  // namespace

void skip(const std::string& why) {
    reasons().push_back(why);
    MESSAGE("skipped: ", why);
}

}  // namespace testskip

int main(int argc, char** argv) {
    doctest::Context context(argc, argv);
    const int rc = context.run();
    if (context.shouldExit() || rc != 0 || testskip::reasons().empty()) return rc;
    for (const std::string& why : testskip::reasons()) std::cout << "skipped: " << why << "\n";
    return 77;
}
