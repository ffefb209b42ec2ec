// STREAM (McCalpin) copy/scale/add/triad on arrays at least 2x the last-level cache, and glibc's
// memcpy on the same buffers in the same run, all threads pinned one per core, each on its own
// contiguous slice (first-touched by that thread), best of repeats.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "roofline/probes/cpu/pinned_threads.h"
#include "roofline/probes/cpu/kernels.h"
#include "roofline/probes/cpu/probes.h"

namespace ridge::probe {

namespace {

// Cached-store versions (the portable path, and the write-allocate comparison).
void copy_plain(const double* a, double* c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i];
}
void scale_plain(const double* c, double* b, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) b[i] = s * c[i];
}
void add_plain(const double* a, const double* b, double* c, int64_t n) {
    for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
void triad_plain(const double* b, const double* c, double* a, double s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

}  // namespace

StreamResult measure_stream(const CpuInfo& cpu, int threads, int64_t array_bytes, int repeats) {
    using clock = std::chrono::steady_clock;
    if (array_bytes <= 0)
        array_bytes = std::min(std::max<int64_t>(2 * cpu.llc_bytes_total(), int64_t(64) << 20), probe_memory_cap() / 3);
    // Each thread's slice is a whole number of 256-byte blocks, rounded up (the arrays are at
    // least the size asked for), and each half of it at least one.
    int64_t per_thread = std::max<int64_t>(64, (array_bytes / 8 / threads + 31) / 32 * 32);
    int64_t n = per_thread * threads;
    const size_t array = size_t(n) * sizeof(double);
    ProbeBuffer a{array}, b{array}, c{array};
    if (!a.get() || !b.get() || !c.get()) throw std::bad_alloc();
    bool nt = false;
#if defined(__x86_64__)
    nt = cpu.avx2;
#endif
    StreamResult r;
    r.threads = threads;
    r.array_bytes = n * int64_t(sizeof(double));
    r.nontemporal = nt;
    enum { copy, scale, add, triad, triad_cached, memcpy_, kernels_n };
    double best[kernels_n];
    std::fill(best, best + kernels_n, 1e30);
    const double s = 3.0;
    // Each timed run covers half of every array (3x the last-level cache of distinct data at the
    // default size, so a run cannot keep its own data in cache), and consecutive runs take the two
    // halves in turn, so no run finds the data of the one before it in cache. STREAM's rule of
    // arrays 4x the cache, each run over all of them, asks the same of every run; halves ask it
    // with half the memory, which matters where the cache reported is large: a guest told of its
    // host's 508 MiB L3 first-touched 6 GB in every quick measurement, 2 to 12 s of page clearing.
    // Short runs make it likelier that some run of each kernel is one no other process
    // interrupted (the best is kept).
    const int slices = 2;
    const int64_t slice = per_thread / slices / 32 * 32;
    run_pinned(threads, cpu.core_cpus, [&](int t, std::barrier<>& sync) {
        double *a0 = a.get() + t * per_thread, *b0 = b.get() + t * per_thread, *c0 = c.get() + t * per_thread;
        for (int64_t i = 0; i < per_thread; ++i) a0[i] = 1.0, b0[i] = 2.0, c0[i] = 0.0;
        int next = 0;
        auto timed = [&](int which, auto&& body) {
            int64_t off = (next++ % slices) * slice;
            sync.arrive_and_wait();
            auto t0 = clock::now();
            body(a0 + off, b0 + off, c0 + off);
            sync.arrive_and_wait();
            if (t == 0) best[which] = std::min(best[which], std::chrono::duration<double>(clock::now() - t0).count());
        };
        for (int rep = 0; rep < repeats; ++rep) {
#if defined(__x86_64__)
            if (nt) {
                timed(copy, [&](double* pa, double*, double* pc) { kernels::copy_nt(pa, pc, slice); });
                timed(scale, [&](double*, double* pb, double* pc) { kernels::scale_nt(pc, pb, s, slice); });
                timed(add, [&](double* pa, double* pb, double* pc) { kernels::add_nt(pa, pb, pc, slice); });
                timed(triad, [&](double* pa, double* pb, double* pc) { kernels::triad_nt(pb, pc, pa, s, slice); });
            } else
#endif
            {
                timed(copy, [&](double* pa, double*, double* pc) { copy_plain(pa, pc, slice); });
                timed(scale, [&](double*, double* pb, double* pc) { scale_plain(pc, pb, s, slice); });
                timed(add, [&](double* pa, double* pb, double* pc) { add_plain(pa, pb, pc, slice); });
                timed(triad, [&](double* pa, double* pb, double* pc) { triad_plain(pb, pc, pa, s, slice); });
            }
            timed(triad_cached, [&](double* pa, double* pb, double* pc) { triad_plain(pb, pc, pa, s, slice); });
            timed(memcpy_, [&](double* pa, double*, double* pc) { std::memcpy(pc, pa, size_t(slice) * sizeof(double)); });
        }
    });
    double bytes = double(slice * threads) * sizeof(double);  // one array's half, all threads
    r.copy = 2 * bytes / best[copy] / 1e9;
    r.scale = 2 * bytes / best[scale] / 1e9;
    r.add = 3 * bytes / best[add] / 1e9;
    r.triad = 3 * bytes / best[triad] / 1e9;
    r.triad_cached_stores = 3 * bytes / best[triad_cached] / 1e9;
    r.memcpy = 2 * bytes / best[memcpy_] / 1e9;
    return r;
}

}  // namespace ridge::probe
