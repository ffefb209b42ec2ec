#pragma once
// An 8-bit RGB image as decoders produce it and transforms read it.
#include <cstdint>
#include <vector>

namespace ridge::data {

// rgb (height, width, 3), row-major, channels interleaved.
struct Image {
    int width = 0, height = 0;
    std::vector<uint8_t> rgb;
    const uint8_t* at(int y, int x) const { return rgb.data() + (size_t(y) * size_t(width) + size_t(x)) * 3; }
};

}  // namespace ridge::data
