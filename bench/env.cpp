#include "bench/env.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "ridge_revision.h"

#include "bench/omp_wait.h"
#include "engine/shape.h"
#include "roofline/probes/cpu/probes.h"
#include "roofline/probes/cuda/probes.h"
#ifdef RIDGE_HAVE_CUDNN
#include "engine/backend/cudnn/cudnn.h"
#endif
#ifdef RIDGE_HAVE_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

namespace ridge::bench {

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

// KEY="value" or KEY=value from /etc/os-release.
std::string os_release(const std::string& key) {
    std::ifstream f("/etc/os-release");
    for (std::string line; std::getline(f, line);) {
        if (!line.starts_with(key + "=")) continue;
        std::string v = line.substr(key.size() + 1);
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        return v;
    }
    return "";
}

#ifdef RIDGE_HAVE_ONEDNN
std::string onednn_isa_name(dnnl_cpu_isa_t isa) {
    switch (isa) {
        case dnnl_cpu_isa_sse41: return "sse41";
        case dnnl_cpu_isa_avx: return "avx";
        case dnnl_cpu_isa_avx2: return "avx2";
        case dnnl_cpu_isa_avx512_core: return "avx512_core";
        case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
        case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
        case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
        case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
        default: return cat("isa ", int(isa));
    }
}
#endif

// The first integer in a file ("max" and anything unreadable: nullopt).
std::optional<int64_t> file_integer(const std::string& path) {
    std::ifstream f(path);
    int64_t v = 0;
    if (!(f >> v)) return std::nullopt;
    return v;
}

// The value of `key` in a "key value" file such as memory.stat.
std::optional<int64_t> stat_field(const std::string& path, std::string_view key) {
    std::ifstream f(path);
    std::string k;
    int64_t v = 0;
    while (f >> k >> v)
        if (k == key) return v;
    return std::nullopt;
}

// cgroup v1 writes "no limit" as the largest page-aligned counter, about 2^63.
constexpr int64_t no_cgroup_limit = int64_t(1) << 62;

struct Limit {
    int64_t bytes;
    std::string name;
};

// Each cgroup from this process's own up to the hierarchy's root limits it; a group's use counts
// its descendants'. Page cache the kernel can drop (inactive files) is not counted as use, as
// container runtimes count the working set.
void cgroup_limits(const MemorySources& from, std::vector<Limit>& out) {
    std::ifstream f(from.self_cgroup);
    for (std::string line; std::getline(f, line);) {
        size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
        if (b == std::string::npos) continue;
        std::string controllers = line.substr(a + 1, b - a - 1), rel = line.substr(b + 1);
        bool v2 = line.compare(0, a, "0") == 0 && controllers.empty();
        bool v1 = false;
        std::stringstream list(controllers);
        for (std::string c; std::getline(list, c, ',');) v1 = v1 || c == "memory";
        if (!v1 && !v2) continue;
        std::string base = from.cgroup_root + (v1 ? "/memory" : "");
        std::string max_file = v1 ? "memory.limit_in_bytes" : "memory.max";
        std::string use_file = v1 ? "memory.usage_in_bytes" : "memory.current";
        std::string cache_key = v1 ? "total_inactive_file" : "inactive_file";
        while (true) {
            std::string dir = base + (rel == "/" ? "" : rel);
            if (auto limit = file_integer(dir + "/" + max_file); limit && *limit < no_cgroup_limit) {
                int64_t use = file_integer(dir + "/" + use_file).value_or(0);
                use -= std::min(use, stat_field(dir + "/memory.stat", cache_key).value_or(0));
                out.push_back({std::max<int64_t>(*limit - use, 0),
                               cat("the cgroup limit ", max_file, " (", *limit / (1 << 20), " MiB) less the group's use")});
            }
            if (rel.empty() || rel == "/") break;
            rel = rel.substr(0, rel.rfind('/'));
            if (rel.empty()) rel = "/";
        }
    }
}
}  // namespace

int hardware_threads() {
    cpu_set_t set;
    return openmp_cpus(set) ? CPU_COUNT(&set) : int(std::thread::hardware_concurrency());
}

MemorySources MemorySources::this_process() {
    MemorySources s;
    struct rlimit r;
    if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) s.address_space_limit = int64_t(r.rlim_cur);
    return s;
}

MemoryBudget memory_budget(const MemorySources& from) {
    // "MemAvailable:   23981392 kB", "VmSize:  123456 kB": kibibytes.
    auto kib = [](const std::string& text) -> std::optional<int64_t> {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec != std::errc() || v < 0) return std::nullopt;
        return v * 1024;
    };
    std::vector<Limit> limits;
    MemoryBudget b;
    if (auto avail = kib(proc_field(from.meminfo.c_str(), "MemAvailable"))) {
        b.mem_available = *avail;
        limits.push_back({*avail, "MemAvailable"});
    }
    cgroup_limits(from, limits);
    if (from.address_space_limit) {
        int64_t used = kib(proc_field(from.self_status.c_str(), "VmSize")).value_or(0);
        limits.push_back({std::max<int64_t>(*from.address_space_limit - used, 0),
                          cat("RLIMIT_AS (ulimit -v, ", *from.address_space_limit / (1 << 20),
                              " MiB) less this process's address space")});
    }
    for (const Limit& l : limits) {
        if (b.bytes >= 0 && l.bytes >= b.bytes) continue;
        b.bytes = l.bytes;
        b.limit = l.name;
    }
    return b;
}

int64_t available_memory_bytes() { return memory_budget().bytes; }

std::string build_revision() { return RIDGE_REVISION; }

Env capture_env(int threads, bool gpu) {
    Env e;
    e.cpu = proc_field("/proc/cpuinfo", "model name");
    if (e.cpu.empty()) e.cpu = "unknown";
    e.cores = hardware_threads();
    e.threads = threads;
    std::string mhz = proc_field("/proc/cpuinfo", "cpu MHz");
    e.clock_mhz = mhz.empty() ? 0 : std::stod(mhz);
    if (std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); f) {
        double khz = 0;
        if (f >> khz) e.clock_max_mhz = khz / 1e3;
    }
    probe::CpuInfo ci = probe::cpu_info();
    for (auto [has, name] : {std::pair{ci.avx512f, "avx512f"}, {ci.avx2, "avx2"}, {ci.fma, "fma"}})
        if (has) e.isa += (e.isa.empty() ? "" : " ") + std::string(name);
    if (e.isa.empty()) e.isa = "none of avx2, fma, avx512f";
    e.os = os_release("PRETTY_NAME");
    if (e.os.empty()) e.os = "unknown";
    utsname u{};
    e.kernel = uname(&u) == 0 ? cat(u.sysname, " ", u.release, " ", u.machine) : "unknown";
    for (const char* name : {"OMP_NUM_THREADS", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_PROC_BIND", "OMP_PLACES",
                             "ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ONEDNN_CPU_ISA_HINTS", "CUDA_VISIBLE_DEVICES"})
        if (const char* v = std::getenv(name)) e.runtime_env += cat(e.runtime_env.empty() ? "" : " ", name, "=", v);
    std::string kb = proc_field("/proc/meminfo", "MemTotal");
    e.memory_bytes = kb.empty() ? 0 : std::stoll(kb) * 1024;
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
    e.onednn_isa = onednn_isa_name(dnnl_get_effective_cpu_isa());
#else
    e.onednn = "none";
    e.onednn_isa = "none";
#endif
    e.git = build_revision();
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

std::string shell_quoted(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") ==
                          std::string::npos)
        return s;
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string command_line(const std::string& fallback) {
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), out;
    for (size_t start = 0; start < raw.size();) {
        size_t end = raw.find('\0', start);
        if (end == std::string::npos) end = raw.size();
        out += (out.empty() ? "" : " ") + shell_quoted(raw.substr(start, end - start));
        start = end + 1;
    }
    return out.empty() ? fallback : out;
}

}  // namespace ridge::bench
