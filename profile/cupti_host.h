#pragma once
// CUPTI's host-side profiler API, which needs no GPU: for a chip name ("GH100") it knows every
// metric, builds the configuration image the range profiler would load, and says how many replay
// passes it needs. ridge checks its metric list (gpu_metrics.h) with it, in CI, without a device.
#include <string>
#include <vector>

namespace ridge::profile {

struct MetricCheck {
    std::string chip;
    std::string error;  // the host library could not start or build the image (then passes is 0)
    struct Metric {
        std::string name;
        bool known = false;
        std::string unit;  // CUPTI's dimension unit: "byte", "instruction", "math_op", ...
        std::string description;
    };
    std::vector<Metric> metrics;
    size_t config_bytes = 0;  // the configuration image of all known metrics together
    size_t passes = 0;        // replay passes that image needs
};

// Chip names the host library supports ("GH100", "GB100", ...); empty, with the reason in
// *error, when it cannot start.
std::vector<std::string> cupti_chips(std::string* error);

// Checks `metrics` on `chip`: which CUPTI knows, their units, the passes of all known together.
MetricCheck check_metrics(const std::string& chip, const std::vector<std::string>& metrics);

}  // namespace ridge::profile
