#pragma once
// Decoding image files into 8-bit RGB, as torchvision's ImageFolder sees them through PIL's
// convert("RGB"): grayscale repeated into three channels, CMYK converted with PIL's formula from
// samples stored inverted (PIL assumes Adobe's polarity for every 4-channel JPEG, and Photoshop,
// which writes most of them, stores them so), PNG alpha dropped. JPEG through
// libjpeg-turbo's TurboJPEG API; PNG through libpng's simplified API, 8 bits per channel (16-bit
// files are reduced by libpng).
#include <cstdint>
#include <span>
#include <string>

#include "train/data/image.h"

namespace ridge::data {

enum class Format { jpeg, png, unknown };
Format sniff(std::span<const uint8_t> bytes);  // by signature, not by file name

// One decoder per thread: it keeps the library's state (a TurboJPEG handle) between images.
class Decoder {
public:
    Decoder();
    ~Decoder();
    Decoder(const Decoder&) = delete;
    Decoder& operator=(const Decoder&) = delete;

    // Fills `out` and returns an empty string, or returns why the bytes are not a decodable image.
    // Warnings from libjpeg (extraneous bytes before a marker) do not fail an image, as they do
    // not in PIL; a truncated or malformed one does.
    std::string decode(std::span<const uint8_t> bytes, Image& out);

private:
    std::string decode_jpeg(std::span<const uint8_t> bytes, Image& out);
    void* tj_ = nullptr;
    std::vector<uint8_t> cmyk_;
};

// CMYK to RGB as PIL computes it: R = (255 - K) - C (255 - K) / 255 with PIL's rounding of the
// division, and likewise G from M and B from Y. `inverted`: the samples are stored as 255 - value.
void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t pixels, bool inverted);

}  // namespace ridge::data
