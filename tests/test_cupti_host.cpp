// ridge's GPU metric list (profile/gpu_metrics.h) checked with CUPTI's host-side profiler API,
// which needs no GPU: every metric exists on GH100 (H100/H200), its unit matches what ridge adds
// it to, and the configuration image of all of them builds. Where the host library cannot start
// (or this build has no CUPTI) the binary prints why and exits 77 (skipped).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <iostream>

#include "profile/gpu_metrics.h"
#ifdef RIDGE_HAVE_CUPTI
#include "profile/cupti_host.h"
#endif

using namespace ridge::profile;

#ifdef RIDGE_HAVE_CUPTI
namespace {
std::vector<std::string> names() {
    std::vector<std::string> n;
    for (const Counter& c : gpu_metrics()) n.push_back(c.name);
    return n;
}
}  // namespace

TEST_CASE("GH100 has every metric ridge reads, in the units ridge adds them as") {
    MetricCheck c = check_metrics("GH100", names());
    REQUIRE_MESSAGE(c.error.empty(), c.error);
    std::vector<Counter> metrics = gpu_metrics();
    REQUIRE(c.metrics.size() == metrics.size());
    for (size_t i = 0; i < metrics.size(); ++i) {
        CAPTURE(metrics[i].name);
        CHECK(c.metrics[i].known);
        bool bytes = metrics[i].measure == Measure::dram_read || metrics[i].measure == Measure::dram_write ||
                     metrics[i].measure == Measure::l2_bytes;
        // FLOP metrics count thread instructions (weight 2 for an FMA) or tensor math operations.
        if (bytes) CHECK(c.metrics[i].unit == "byte");
        else CHECK((c.metrics[i].unit == "instruction" || c.metrics[i].unit == "math_op"));
        if (metrics[i].name.find("_op_ffma_") != std::string::npos || metrics[i].name.find("_op_hfma_") != std::string::npos ||
            metrics[i].name.find("_op_dfma_") != std::string::npos)
            CHECK(metrics[i].weight == 2);
        else
            CHECK(metrics[i].weight == 1);
    }
    CHECK(c.config_bytes > 0);
    CHECK(c.passes >= 1);
    std::cout << "GH100: " << metrics.size() << " metrics, configuration image " << c.config_bytes << " bytes, "
              << c.passes << " replay passes\n";
}

TEST_CASE("a misspelled metric and an unknown chip are caught") {
    std::vector<std::string> n = names();
    n.push_back("dram__bytes_red.sum");
    MetricCheck c = check_metrics("GH100", n);
    REQUIRE(c.error.empty());
    CHECK(!c.metrics.back().known);
    CHECK(std::count_if(c.metrics.begin(), c.metrics.end(), [](const auto& m) { return m.known; }) == long(n.size() - 1));
    CHECK(!check_metrics("GX999", names()).error.empty());
}
#endif

int main(int argc, char** argv) {
#ifdef RIDGE_HAVE_CUPTI
    std::string why;
    std::vector<std::string> chips = cupti_chips(&why);
    if (chips.empty()) {
        std::cout << "skipped: CUPTI's host library cannot start: " << why << "\n";
        return 77;
    }
    if (std::find(chips.begin(), chips.end(), "GH100") == chips.end()) {
        std::cout << "skipped: this CUPTI does not know GH100\n";
        return 77;
    }
    doctest::Context context(argc, argv);
    return context.run();
#else
    (void)argc;
    (void)argv;
    std::cout << "skipped: this build has no CUPTI (configure found no cupti_profiler_host.h / libcupti)\n";
    return 77;
#endif
}
