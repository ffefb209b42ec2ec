#pragma once
// Channel means of a channels-last map with fewer images than threads (channel_means, and
// silu_channel_means as it writes the SiLU): each thread sums its own range of positions, runs of
// means_run channels at a time, into sums of its own, added in thread order after. The threads
// then each hold, in their own core's caches, the positions the steps around split the same way.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "kernels/simd/simd.h"

namespace ridge::simd::inline RIDGE_SIMD_ISA {

constexpr int split_most_threads = 8;  // threads a position split takes at most
constexpr int64_t means_run = 1024;    // channels summed at once: 4 KB of sums a thread

// out (N, C) = the means over positions; rows(at, rows, width, sums) adds to sums[0, width) the
// `rows` rows of `width` channels from float offset `at` of the map (rows l.C floats apart).
template <class Rows>
void means_by_positions(const ChannelLayout& l, float* out, Rows rows) {
    const float k = 1.0f / float(l.HW);
    float sums[split_most_threads][means_run];
#pragma omp parallel num_threads(std::min(omp_get_max_threads(), split_most_threads))
    {
        const int t = omp_get_thread_num(), parts = omp_get_num_threads();
        const int64_t lo = l.HW * t / parts, hi = l.HW * (t + 1) / parts;
        for (int64_t n = 0; n < l.N; ++n)
            for (int64_t c0 = 0; c0 < l.C; c0 += means_run) {
                const int64_t w = std::min(means_run, l.C - c0);
                std::fill(sums[t], sums[t] + w, 0.0f);
                rows(n * l.batch_stride() + c0 + lo * l.C, hi - lo, w, sums[t]);
#pragma omp barrier
#pragma omp for schedule(static)
                for (int64_t j = 0; j < w; ++j) {
                    float sum = 0.0f;
                    for (int u = 0; u < parts; ++u) sum += sums[u][j];
                    out[n * l.C + c0 + j] = k * sum;
                }
            }
    }
}

}  // namespace ridge::simd::inline RIDGE_SIMD_ISA
