#include "train/data/decode.h"

#include <png.h>
#include <turbojpeg.h>

#include <cstring>
#include <stdexcept>

namespace ridge::data {

Format sniff(std::span<const uint8_t> b) {
    if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return Format::jpeg;
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    if (b.size() >= 8 && std::memcmp(b.data(), png_sig, 8) == 0) return Format::png;
    return Format::unknown;
}

namespace {
// PIL's rounded a * b / 255 for bytes (exact for every pair of 8-bit values).
inline int muldiv255(int a, int b) {
    int t = a * b + 128;
    return ((t >> 8) + t) >> 8;
}

std::string decode_png(std::span<const uint8_t> bytes, Image& out) {
    png_image img;
    std::memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&img, bytes.data(), bytes.size())) return img.message;
    // Read with alpha and drop it, as PIL's RGBA -> RGB does; without alpha in the request libpng
    // would composite onto a background instead.
    img.format = PNG_FORMAT_RGBA;
    std::vector<uint8_t> rgba(PNG_IMAGE_SIZE(img));
    if (!png_image_finish_read(&img, nullptr, rgba.data(), 0, nullptr)) {
        std::string why = img.message;
        png_image_free(&img);
        return why;
    }
    out.width = int(img.width);
    out.height = int(img.height);
    out.rgb.resize(size_t(out.width) * size_t(out.height) * 3);
    for (size_t p = 0, n = size_t(out.width) * size_t(out.height); p < n; ++p)
        std::memcpy(&out.rgb[p * 3], &rgba[p * 4], 3);
    return {};
}
}  // namespace

void cmyk_to_rgb(const uint8_t* cmyk, uint8_t* rgb, size_t pixels, bool inverted) {
    for (size_t p = 0; p < pixels; ++p, cmyk += 4, rgb += 3) {
        int c = cmyk[0], m = cmyk[1], y = cmyk[2], k = cmyk[3];
        if (inverted) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
        int nk = 255 - k;
        rgb[0] = uint8_t(nk - muldiv255(c, nk));
        rgb[1] = uint8_t(nk - muldiv255(m, nk));
        rgb[2] = uint8_t(nk - muldiv255(y, nk));
    }
}

Decoder::Decoder() : tj_(tjInitDecompress()) {
    if (!tj_)
        throw std::runtime_error(std::string("TurboJPEG: cannot create a decompressor: ") + tjGetErrorStr2(nullptr));
}

Decoder::~Decoder() { tjDestroy(static_cast<tjhandle>(tj_)); }

std::string Decoder::decode(std::span<const uint8_t> bytes, Image& out) {
    switch (sniff(bytes)) {
        case Format::jpeg:
            return decode_jpeg(bytes, out);
        case Format::png:
            return decode_png(bytes, out);
        case Format::unknown:
            break;
    }
    return "neither a JPEG nor a PNG (no signature)";
}

std::string Decoder::decode_jpeg(std::span<const uint8_t> bytes, Image& out) {
    tjhandle h = static_cast<tjhandle>(tj_);
    int w = 0, ht = 0, subsamp = 0, colorspace = 0;
    if (tjDecompressHeader3(h, bytes.data(), bytes.size(), &w, &ht, &subsamp, &colorspace) != 0)
        return tjGetErrorStr2(h);
    if (w <= 0 || ht <= 0) return "empty image";
    out.width = w;
    out.height = ht;
    out.rgb.resize(size_t(w) * size_t(ht) * 3);
    // A warning (TJERR_WARNING) still leaves a whole image, and PIL accepts it too (ImageNet has
    // files with extraneous bytes before a marker), except a premature end of the data: libjpeg
    // pads the missing rows with gray, PIL refuses the file as truncated, and so do we.
    auto failed = [&](int rc) {
        if (rc == 0) return false;
        return tjGetErrorCode(h) == TJERR_FATAL || std::strncmp(tjGetErrorStr2(h), "Premature end", 13) == 0;
    };
    if (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) {
        // TurboJPEG hands CMYK images back only as CMYK.
        cmyk_.resize(size_t(w) * size_t(ht) * 4);
        if (failed(tjDecompress2(h, bytes.data(), bytes.size(), cmyk_.data(), w, 0, ht, TJPF_CMYK, 0)))
            return tjGetErrorStr2(h);
        cmyk_to_rgb(cmyk_.data(), out.rgb.data(), size_t(w) * size_t(ht), true);
        return {};
    }
    // Grayscale is expanded to RGB by the library.
    if (failed(tjDecompress2(h, bytes.data(), bytes.size(), out.rgb.data(), w, 0, ht, TJPF_RGB, 0)))
        return tjGetErrorStr2(h);
    return {};
}

}  // namespace ridge::data
