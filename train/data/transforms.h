#pragma once
// The image transforms of torchvision's ImageNet recipe, fused into one resampling pass that
// writes the network's input directly:
//   training:   RandomResizedCrop(R, scale (0.08, 1), ratio (3/4, 4/3)), RandomHorizontalFlip,
//   validation: Resize(round(R * 256 / 224)) of the shorter side, CenterCrop(R),
// then ToTensor and Normalize with ImageNet's mean and standard deviation. Resampling is PIL's
// antialiased bilinear filter (a triangle widened by the downscaling factor), computed in float
// without PIL's rounding to 8 bits between the horizontal and the vertical pass.
#include <cstdint>
#include <vector>

#include "engine/backend/host_tensor.h"
#include "train/data/image.h"

namespace ridge::data {

constexpr float imagenet_mean[3] = {0.485f, 0.456f, 0.406f};
constexpr float imagenet_std[3] = {0.229f, 0.224f, 0.225f};

// A region of the source image in pixels: rows [top, top + height), columns [left, left + width).
struct Crop {
    int top = 0, left = 0, height = 0, width = 0;
};

// torchvision's RandomResizedCrop.get_params: up to ten draws of an area fraction in [0.08, 1] and
// a log-uniform aspect ratio in [3/4, 4/3]; the first that fits is placed uniformly; if none fits,
// the whole image cropped to the nearest allowed aspect ratio, centered.
Crop random_resized_crop(int width, int height, Rng& rng);

// Where the validation transform reads: the image resized so its shorter side is `resize` (the
// longer scaled in proportion and truncated, as torchvision does), then the centered out x out
// window of that resized grid (offsets rounded half to even, as Python's round()).
struct CenterCrop {
    int resized_width = 0, resized_height = 0;
    int top = 0, left = 0;  // in the resized grid
};
CenterCrop center_crop(int width, int height, int resize, int out);
int val_resize(int out);  // round(out * 256 / 224): 256 for 224

// One axis of a resampling: output sample i reads source samples first[i] .. first[i] + count[i]
// with weights w[i * taps ...]. The source region [b0, b1) is mapped onto `out_size` samples, of
// which `out_count` starting at `out_offset` are computed; source samples outside [lo, hi) are
// never read (the filter is cut and renormalized at the edge, as PIL does at an image's edge).
struct Taps {
    int taps = 0;
    std::vector<int> first, count;
    std::vector<float> w;
};
Taps resample_taps(int lo, int hi, double b0, double b1, int out_size, int out_offset, int out_count);

// Scratch a thread reuses between images.
struct Resampler {
    std::vector<float> rows;  // the horizontal pass: (rows needed, out width, 3)
    std::vector<float> acc;   // one output row of the vertical pass: (out width, 3)

    // The crop of `src` resized to out_h x out_w (training), or the centered window of the whole
    // image resized (validation); mirrored left-right when `flip`; written as (3, out_h, out_w)
    // planes of (v / 255 - mean) / std.
    void crop_resize(const Image& src, const Crop& crop, int out_h, int out_w, bool flip, float* chw);
    void resize_center(const Image& src, const CenterCrop& cc, int out_h, int out_w, float* chw);

private:
    void run(const Image& src, const Taps& ty, const Taps& tx, int out_h, int out_w, bool flip, float* chw);
};

}  // namespace ridge::data
