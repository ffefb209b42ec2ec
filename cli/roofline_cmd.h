#pragma once
// `ridge roofline chips|measure|place`: datasheet ceilings of many chips, this machine's measured
// ceilings, and where a net and each of its layers sit on a chip's roofline.
#include <string>
#include <vector>

namespace ridge::cli {

// argv holds what follows "roofline". Usage errors throw UsageError (exit 2); a missing device
// prints one line and returns 3.
int run_roofline(const std::vector<std::string>& argv);

}  // namespace ridge::cli
