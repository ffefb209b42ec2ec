#pragma once
// Writing small image folders for the training tests: JPEGs encoded by TurboJPEG from pixels a
// function gives, so a test knows what each file holds.
#include <turbojpeg.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace trainimg {

namespace fs = std::filesystem;

struct Rgb {
    uint8_t r, g, b;
};

// Quality 95, 4:4:4: close to the pixels given.
inline void write_jpeg(const fs::path& path, int w, int h, const std::function<Rgb(int x, int y)>& pixel) {
    std::vector<uint8_t> px(size_t(w) * size_t(h) * 3);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            Rgb c = pixel(x, y);
            uint8_t* p = &px[(size_t(y) * size_t(w) + size_t(x)) * 3];
            p[0] = c.r, p[1] = c.g, p[2] = c.b;
        }
    tjhandle tj = tjInitCompress();
    unsigned char* jpeg = nullptr;
    unsigned long size = 0;
    if (tjCompress2(tj, px.data(), w, 0, h, TJPF_RGB, &jpeg, &size, TJSAMP_444, 95, 0) != 0)
        throw std::runtime_error(tjGetErrorStr2(tj));
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(jpeg), std::streamsize(size));
    tjFree(jpeg);
    tjDestroy(tj);
}

inline void write_bytes(const fs::path& path, const std::string& bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

inline Rgb flat(uint8_t r, uint8_t g, uint8_t b) { return {r, g, b}; }

}  // namespace trainimg
