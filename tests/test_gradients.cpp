// Every zoo net's training step on the CPU's float32 executors (the reference, and oneDNN fused
// where built) against the same step in double: the output, the loss and every gradient tensor,
// one by one, each within k times the float32 spread measured for it (exec_compare.h,
// check_against_f64). The test prints, per net, the worst (error - floor) / spread: k = 10 must
// stay above it. Measured here (2-core AMD EPYC, AVX2 and AVX-512 oneDNN): see README.
#include <doctest/doctest.h>

#include "exec_compare.h"

using namespace ridge;
using namespace exec_compare;

TEST_CASE("every zoo net: each tensor of a float32 training step against double") {
    std::vector<std::pair<std::string, bool>> backends;
    for (const std::string& b : cpu_backends())
        if (b != "reference") backends.push_back({b, true});
    check_zoo_against_f64(backends);
}
