#pragma once
// The zoo: names, one-line descriptions, default resolutions and builders.
#include <string_view>

#include "engine/graph.h"

namespace ridge {

struct ZooEntry {
    std::string_view name;
    std::string_view description;
    int64_t default_res;  // square input side the network was designed for
    Tensor (*body)(Tensor x, int64_t classes);
};

const std::vector<ZooEntry>& zoo();
const ZooEntry* find_net(std::string_view name);

// ImageNet's classes: the classifier width of every net unless a dataset asks for another.
constexpr int64_t imagenet_classes = 1000;

// Builds the network for an (N,3,H,W) input with a classifier of `classes` outputs; throws
// BuildError when the shape does not fit it.
Graph build(const ZooEntry& e, int64_t N, int64_t H, int64_t W, int64_t classes = imagenet_classes);

// Smallest square side at which the network builds (searched, not typed in).
int64_t min_resolution(const ZooEntry& e);

}  // namespace ridge
