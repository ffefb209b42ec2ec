#include "train/data/transforms.h"

#include <algorithm>
#include <cmath>

namespace ridge::data {

namespace {
// Uniform integer in [lo, hi], as torch.randint(lo, hi + 1).
int uniform_int(Rng& rng, int lo, int hi) { return lo + int(rng.next() % uint64_t(hi - lo + 1)); }
double uniform(Rng& rng, double lo, double hi) { return lo + (hi - lo) * double(rng.next() >> 11) * 0x1.0p-53; }
}  // namespace

Crop random_resized_crop(int width, int height, Rng& rng) {
    constexpr double min_scale = 0.08, max_scale = 1.0, min_ratio = 3.0 / 4.0, max_ratio = 4.0 / 3.0;
    const double area = double(width) * double(height);
    for (int attempt = 0; attempt < 10; ++attempt) {
        double target = area * uniform(rng, min_scale, max_scale);
        double aspect = std::exp(uniform(rng, std::log(min_ratio), std::log(max_ratio)));
        int w = int(std::lround(std::sqrt(target * aspect)));
        int h = int(std::lround(std::sqrt(target / aspect)));
        if (w > 0 && h > 0 && w <= width && h <= height) {
            int top = uniform_int(rng, 0, height - h);
            int left = uniform_int(rng, 0, width - w);
            return {top, left, h, w};
        }
    }
    double in_ratio = double(width) / double(height);
    int w = width, h = height;
    if (in_ratio < min_ratio) {
        h = int(std::lround(w / min_ratio));
    } else if (in_ratio > max_ratio) {
        w = int(std::lround(h * max_ratio));
    }
    return {(height - h) / 2, (width - w) / 2, h, w};
}

int val_resize(int out) { return int(std::lround(out * 256.0 / 224.0)); }

CenterCrop center_crop(int width, int height, int resize, int out) {
    CenterCrop c;
    if (width <= height) {
        c.resized_width = resize;
        c.resized_height = int(int64_t(resize) * height / width);
    } else {
        c.resized_height = resize;
        c.resized_width = int(int64_t(resize) * width / height);
    }
    c.top = int(std::nearbyint((c.resized_height - out) / 2.0));
    c.left = int(std::nearbyint((c.resized_width - out) / 2.0));
    return c;
}

Taps resample_taps(int lo, int hi, double b0, double b1, int out_size, int out_offset, int out_count) {
    const double scale = (b1 - b0) / out_size;
    const double filterscale = std::max(scale, 1.0);
    const double support = filterscale;  // the triangle's half-width is 1 source pixel, widened
    Taps t;
    t.taps = int(std::ceil(support)) * 2 + 1;
    t.first.resize(size_t(out_count));
    t.count.resize(size_t(out_count));
    t.w.assign(size_t(out_count) * size_t(t.taps), 0.0f);
    std::vector<double> w(size_t(t.taps));
    for (int i = 0; i < out_count; ++i) {
        double center = b0 + (out_offset + i + 0.5) * scale;
        // Truncation toward zero, then the clamp: PIL's integer bounds of the filter's support.
        int xmin = std::max(int(center - support + 0.5), lo);
        int xmax = std::min(int(center + support + 0.5), hi);
        int n = std::min(std::max(xmax - xmin, 0), t.taps);
        double sum = 0;
        for (int k = 0; k < n; ++k) {
            double d = std::fabs((xmin + k - center + 0.5) / filterscale);
            w[size_t(k)] = d < 1 ? 1 - d : 0;
            sum += w[size_t(k)];
        }
        t.first[size_t(i)] = xmin;
        t.count[size_t(i)] = n;
        for (int k = 0; k < n; ++k)
            t.w[size_t(i) * size_t(t.taps) + size_t(k)] = float(sum != 0 ? w[size_t(k)] / sum : 0);
    }
    return t;
}

void Resampler::crop_resize(const Image& src, const Crop& c, int out_h, int out_w, bool flip, float* chw) {
    Taps ty = resample_taps(c.top, c.top + c.height, c.top, c.top + c.height, out_h, 0, out_h);
    Taps tx = resample_taps(c.left, c.left + c.width, c.left, c.left + c.width, out_w, 0, out_w);
    run(src, ty, tx, out_h, out_w, flip, chw);
}

void Resampler::resize_center(const Image& src, const CenterCrop& cc, int out_h, int out_w, float* chw) {
    Taps ty = resample_taps(0, src.height, 0, src.height, cc.resized_height, cc.top, out_h);
    Taps tx = resample_taps(0, src.width, 0, src.width, cc.resized_width, cc.left, out_w);
    run(src, ty, tx, out_h, out_w, false, chw);
}

void Resampler::run(const Image& src, const Taps& ty, const Taps& tx, int out_h, int out_w, bool flip, float* chw) {
    // Only the source rows the vertical filter reaches go through the horizontal pass.
    int y0 = src.height, y1 = 0;
    for (int i = 0; i < out_h; ++i) {
        y0 = std::min(y0, ty.first[size_t(i)]);
        y1 = std::max(y1, ty.first[size_t(i)] + ty.count[size_t(i)]);
    }
    y1 = std::max(y1, y0);
    rows.resize(size_t(y1 - y0) * size_t(out_w) * 3);
    for (int y = y0; y < y1; ++y) {
        const uint8_t* line = src.at(y, 0);
        float* dst = rows.data() + size_t(y - y0) * size_t(out_w) * 3;
        for (int j = 0; j < out_w; ++j) {
            const float* w = tx.w.data() + size_t(j) * size_t(tx.taps);
            const uint8_t* p = line + size_t(tx.first[size_t(j)]) * 3;
            float r = 0, g = 0, b = 0;
            for (int k = 0; k < tx.count[size_t(j)]; ++k, p += 3) {
                r += w[k] * float(p[0]);
                g += w[k] * float(p[1]);
                b += w[k] * float(p[2]);
            }
            dst[j * 3 + 0] = r;
            dst[j * 3 + 1] = g;
            dst[j * 3 + 2] = b;
        }
    }
    // (v / 255 - mean) / std as one multiply-add per element.
    float mul[3], add[3];
    for (int c = 0; c < 3; ++c) {
        mul[c] = 1.0f / (255.0f * imagenet_std[c]);
        add[c] = -imagenet_mean[c] / imagenet_std[c];
    }
    const size_t plane = size_t(out_h) * size_t(out_w);
    acc.resize(size_t(out_w) * 3);
    for (int i = 0; i < out_h; ++i) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        const float* w = ty.w.data() + size_t(i) * size_t(ty.taps);
        for (int k = 0; k < ty.count[size_t(i)]; ++k) {
            const float* row = rows.data() + size_t(ty.first[size_t(i)] + k - y0) * size_t(out_w) * 3;
            const float wk = w[k];
            for (size_t e = 0; e < acc.size(); ++e) acc[e] += wk * row[e];
        }
        for (int j = 0; j < out_w; ++j) {
            int x = flip ? out_w - 1 - j : j;
            for (int c = 0; c < 3; ++c)
                chw[size_t(c) * plane + size_t(i) * size_t(out_w) + size_t(x)] =
                    acc[size_t(j) * 3 + size_t(c)] * mul[c] + add[c];
        }
    }
}

}  // namespace ridge::data
