#include "bench/env.h"

#include <sched.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "engine/shape.h"
#include "kernels/cuda/probes.h"
#ifdef RIDGE_HAVE_CUDNN
#include "engine/backend/cudnn/cudnn.h"
#endif
#ifdef RIDGE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace ridge::cli {

namespace {
// The value after "key<spaces>:" on the first /proc line that starts with key.
std::string proc_field(const char* file, const std::string& key) {
    std::ifstream f(file);
    for (std::string line; std::getline(f, line);) {
        if (line.compare(0, key.size(), key) != 0) continue;
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
    }
    return "";
}

std::string run(const std::string& cmd) {
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(cmd.c_str(), "r"), pclose);
    if (!p) return "";
    std::string out;
    std::array<char, 256> buf;
    while (fgets(buf.data(), int(buf.size()), p.get())) out += buf.data();
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

std::string git_revision() {
    std::string dir = RIDGE_SOURCE_DIR;
    std::string rev = run("git -C '" + dir + "' rev-parse --short=12 HEAD 2>/dev/null");
    if (rev.empty()) return "unknown";
    bool dirty = !run("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null").empty();
    return dirty ? rev + "+dirty" : rev;
}
}  // namespace

int hardware_threads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    return int(std::thread::hardware_concurrency());
}

int64_t available_memory_bytes() {
    std::string kb = proc_field("/proc/meminfo", "MemAvailable");
    if (kb.empty()) return -1;
    return std::stoll(kb) * 1024;
}

Env capture_env(int threads, bool gpu) {
    Env e;
    e.cpu = proc_field("/proc/cpuinfo", "model name");
    if (e.cpu.empty()) e.cpu = "unknown";
    e.cores = hardware_threads();
    e.threads = threads;
    std::string mhz = proc_field("/proc/cpuinfo", "cpu MHz");
    e.clock_mhz = mhz.empty() ? 0 : std::stod(mhz);
    for (const char* v : {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"})
        if (const char* s = std::getenv(v)) e.omp_wait += cat(e.omp_wait.empty() ? "" : " ", v, "=", s);
    if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
        if (std::fscanf(f, "%lf", &e.load_average) != 1) e.load_average = -1;
        std::fclose(f);
    }
#if defined(__clang__)
    e.compiler = cat("clang ", __clang_major__, ".", __clang_minor__, ".", __clang_patchlevel__);
#elif defined(__GNUC__)
    e.compiler = cat("g++ ", __GNUC__, ".", __GNUC_MINOR__, ".", __GNUC_PATCHLEVEL__);
#else
    e.compiler = "unknown";
#endif
#ifdef RIDGE_HAVE_ONEDNN
    const dnnl_version_t* v = dnnl_version();
    e.onednn = cat(v->major, ".", v->minor, ".", v->patch);
#else
    e.onednn = "none";
#endif
    e.git = git_revision();
    if (gpu) {
        probe::gpu::Device d = probe::gpu::device_info();
        e.gpu = true;
        e.gpu_name = d.name;
        e.gpu_sms = d.sms;
        e.gpu_clock_mhz = d.clock_mhz;
        e.gpu_mem_clock_mhz = d.mem_clock_mhz;
        e.gpu_mem_bytes = d.mem_bytes;
        e.driver = probe::gpu::driver_version();
        e.cuda_runtime = probe::gpu::runtime_version();
#ifdef RIDGE_HAVE_CUDNN
        e.cudnn = cudnn_version();
        e.cublas = cublas_version();
#else
        e.cudnn = e.cublas = "none";
#endif
    }
    std::time_t now = std::time(nullptr);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    e.date = buf;
    return e;
}

std::string host_name() {
    char buf[256] = {};
    return gethostname(buf, sizeof buf - 1) == 0 && buf[0] ? buf : "localhost";
}

}  // namespace ridge::cli
