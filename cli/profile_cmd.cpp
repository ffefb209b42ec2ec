#include "cli/profile_cmd.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "bench/bench_run.h"
#include "bench/env.h"
#include "bench/format.h"
#include "cli/net_arg.h"
#include "profile/gpu.h"
#include "profile/perf_events.h"
#include "profile/render.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"

namespace ridge::cli {

using bench::available_memory_bytes, bench::fits_in, bench::hardware_threads, bench::host_copy_bytes,
    bench::UsageError, bench::write_output;

using profile::Profile;

const Command profile_cmd{
    "profile", "NET [options]",
    "Per layer and phase (fwd, dgrad, wgrad): the analytic FLOPs and minimum bytes beside what ran,\n"
    "on the unfused executor (one step per layer): the implementation the library chose, the median\n"
    "time, and where the machine exposes counters the FLOPs (and on GPU the DRAM and L2 bytes) the\n"
    "hardware counted, the measured/analytic ratio and a `why` column of facts: the implementation,\n"
    "other steps charged to the layer (reorders, gradient sums), blocked layouts that pad a dimension,\n"
    "the taps of a convolution on zero padding (a direct kernel skips them: the `expected` column),\n"
    "ridge's own kernels, a layer run on fewer threads than the largest steps, and where counted\n"
    "and analytic differ, the counted FLOPs per element by kind. Totals per layer type and for the\n"
    "net.\n"
    "CPU counters: Linux perf events (AMD Zen 2-5 PMCx003, Intel FP_ARITH_INST_RETIRED), on every\n"
    "thread of the process; GPU: CUPTI's range profiler.\n"
    "Without counters the table is still printed, one line on stderr says why, and the exit\n"
    "status is 4. --device cuda without a CUDA device exits with status 3.",
    1,
    {{"--device", "D", "cpu (default) or cuda"},
     {"--precision", "P", "fp32 (default), or on cuda tf32, fp16 or bf16"},
     {"--batch", "N", "batch size (default 1)"},
     {"--res", "H|HxW", "input resolution (default: the net's own, e.g. 224)"},
     {"--mode", "M", "infer (default) or train (forward, loss, backward; no update)"},
     {"--threads", "T", "cpu threads (default: every core this process may use)"},
     {"--warmup", "W", "untimed steps first (default 2)"},
     {"--repeat", "R", "timed steps, the time is their median (default 5)"},
     {"--cold-cache", "", "evict the caches before every step (cpu: write 2x the last level; cuda: 2x L2)"},
     {"--no-winograd", "", "cpu: every conv direct (by default 3x3 stride-1 convs run as Winograd: oneDNN's on "
                          "AVX-512, ridge's own below)"},
     {"--seed", "S", "seed of weights, input and labels (default 1)"},
     {"--format", "F", "table (default), csv (a row per layer phase) or json"},
     {"--out", "FILE", "write to FILE (atomically) instead of stdout"}}};

namespace {

constexpr int max_repeat = 100000, max_threads = 4096;

// --out is checked before anything runs: a folder, or a file in a folder that does not exist,
// is refused at once rather than after the profile.
void check_destination(const std::string& path) {
    if (path.empty() || path == "-") return;
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.back() == '/' || fs::is_directory(path, ec))
        throw UsageError(cat("ridge profile: cannot write '", path, "': it is a directory"));
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty() && !fs::is_directory(parent, ec))
        throw UsageError(cat("ridge profile: cannot write '", path, "': no folder '", parent.string(), "'"));
    if (::access(parent.empty() ? "." : parent.c_str(), W_OK) != 0)
        throw UsageError(cat("ridge profile: cannot write '", path, "': the folder is not writable"));
}

}  // namespace

int run_profile(const Args& a) {
    const ZooEntry& e = net_arg(a);
    std::string device = a.choice("--device", "cpu", {"cpu", "cuda"});
    const bool gpu = device == "cuda";
    std::string precision = a.choice("--precision", "fp32", {"fp32", "tf32", "fp16", "bf16"});
    if (!gpu && precision != "fp32")
        throw UsageError(cat("ridge profile: --precision ", precision, " needs --device cuda; the CPU computes in fp32"));
    if (gpu && a.has("--no-winograd"))
        throw UsageError(
            "ridge profile: --no-winograd is for the CPU's oneDNN executor; cuDNN picks its own algorithms");
    int64_t N = a.positive("--batch", 1, max_batch);
    Mode mode = a.choice("--mode", "infer", {"infer", "train"}) == "train" ? Mode::train : Mode::infer;
    std::string fmt = a.choice("--format", "table", {"table", "csv", "json"});
    int threads = int(a.positive("--threads", hardware_threads(), max_threads));
    profile::ProfileOptions o;
    o.mode = mode;
    o.warmup = int(a.non_negative("--warmup", 2, max_repeat));
    o.repeat = int(a.positive("--repeat", 5, max_repeat));
    o.seed = uint64_t(a.positive("--seed", 1, int64_t(1) << 62));
    std::string out = a.get("--out", "");
    check_destination(out);
    Graph g = build_for(a, e, N);

    if (gpu) {
        if (std::string why = probe::gpu::unavailable_reason(); !why.empty()) {
            std::cerr << "ridge profile: " << why << "\n";
            return 3;
        }
        if (gpu_backends().empty()) {
            std::cerr << "ridge profile: this build has no GPU executor (cmake found no cuDNN; configure with CUDNN_ROOT)\n";
            return 3;
        }
    }
    std::string backend = gpu ? gpu_backends().front() : cpu_backends().front();
    ExecOptions eo{.mode = mode, .fused = false, .threads = threads, .precision = *parse_precision(precision),
                   .cuda_graph = false, .winograd = !a.has("--no-winograd")};
    std::unique_ptr<Executor> ex = make_executor(backend, g, eo);
    int64_t host = host_copy_bytes(g);
    if (gpu && ex->planned_bytes() > probe::gpu::free_memory_bytes())
        throw UsageError(cat("ridge profile: ", e.name, " at batch ", N, " needs ", ex->planned_bytes(),
                             " bytes on the device; the GPU has ", probe::gpu::free_memory_bytes(), " free"));
    // --cold-cache on the CPU writes a buffer of twice the last-level cache before each step: a
    // gigabyte where glibc reports a host's whole L3 to a guest, so it counts against the memory too.
    const bool cold = a.has("--cold-cache");
    const int64_t flush = cold && !gpu ? 2 * std::max<int64_t>(probe::cpu_info().llc_bytes_total(), 1 << 20) : 0;
    const int64_t need = (gpu ? host : ex->planned_bytes() + host) + flush;
    if (!fits_in(need, available_memory_bytes()))
        throw UsageError(
            cat("ridge profile: ", e.name, " at batch ", N, " needs ", need,
                flush ? cat(" bytes (", flush, " of them the --cold-cache flush buffer)") : std::string(" bytes"),
                "; this machine has ", available_memory_bytes(), " available and ridge keeps a tenth of it free"));

    std::string why;
    std::unique_ptr<profile::CounterSource> src = gpu ? profile::open_gpu_counters(&why) : profile::open_cpu_counters(&why);
    if (cold) {
        o.before_step = gpu ? profile::gpu_cache_flush() : profile::cpu_cache_flush(flush);
        if (!o.before_step) throw UsageError("ridge profile: --cold-cache: cannot size or allocate the flush buffer");
    }
    Profile p = profile::run_profile(*ex, g, src.get(), o);
    p.model = std::string(e.name);
    p.device = device;
    p.backend = backend;
    p.threads = gpu ? 0 : threads;
    p.cold_cache = cold;
    p.winograd = eo.winograd;
    if (!src) p.unmeasured = why;

    write_output(out, fmt == "csv" ? profile::render_csv(p) : fmt == "json" ? profile::render_json(p) : profile::render_table(p));
    if (!p.measured) {
        std::cerr << "ridge profile: no counts: " << p.unmeasured << "\n";
        return exit_no_counters;
    }
    return 0;
}

}  // namespace ridge::cli
