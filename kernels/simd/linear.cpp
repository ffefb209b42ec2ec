// A linear layer on one row in inference, y = w x + b: the classifiers at batch 1, whose time is
// reading the weights once. The weights are in panels of 16 output rows, each panel the rows'
// columns in order, 16 floats per column (oneDNN's AB16b16a): a thread reads one contiguous stream,
// which the prefetcher follows even where rows are short (regnet_y_400mf's 440 inputs), and each
// column is one vector times a broadcast input, no sums across lanes. On the 2-core EPYC this read
// AlexNet's 9216x4096 fc1 from memory at about 37 GB/s, where oneDNN 2.6's brgemm inner product (in
// its AB16b64a) reached about 27.
// x (C)  w (K,C) in AB16b16a, C and K padded to 16 with zeros  b (K) or null  y (K)
#include <algorithm>

#include "kernels/simd/simd.h"
#include "kernels/simd/vec.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

namespace {

constexpr int64_t panel = 16;

// out[j] = sum over c < C of w[c, j] * x[c] for one panel w (C, 16): two chains over c to hide the
// FMA latency, each a pair of 8-lane halves. Memory-bound, so 8 lanes cost nothing on AVX-512,
// and GCC keeps 16-lane accumulators in AVX2 registers only by spilling them every column (the
// AVX2 clone ran at half the speed of the AVX-512 one).
RIDGE_SIMD_CLONES void panel_dots(const float* x, const float* w, int64_t C, float* out) {
    using V = Vec<8>;
    V a0 = {}, a1 = {}, b0 = {}, b1 = {};
    int64_t c = 0;
    for (; c + 2 <= C; c += 2, w += 2 * panel) {
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
        b0 += load<V>(w + panel) * x[c + 1];
        b1 += load<V>(w + panel + 8) * x[c + 1];
    }
    if (c < C) {
        a0 += load<V>(w) * x[c];
        a1 += load<V>(w + 8) * x[c];
    }
    store(out, a0 + b0);
    store(out + 8, a1 + b1);
}

}  // namespace

void linear_row(const float* x, const float* w, const float* b, bool relu, float* y, int64_t C, int64_t K) {
    const int64_t panels = (K + panel - 1) / panel, panel_floats = (C + panel - 1) / panel * panel * panel;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < panels; ++i) {
        float out[panel];
        panel_dots(x, w + i * panel_floats, C, out);
        for (int64_t j = 0, k = i * panel; j < panel && k < K; ++j, ++k) {
            const float v = b ? out[j] + b[k] : out[j];
            y[k] = relu && !(v > 0) ? 0.0f : v;  // ReLU of NaN is 0, as the reference takes it
        }
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
