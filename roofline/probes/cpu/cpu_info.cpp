// What the CPU reports about itself: /proc/cpuinfo, sysfs caches (or glibc's), cpuid, and the table of FMA
// units per core model that turns a clock into a theoretical peak.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "roofline/probes/cpu/probes.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ridge::probe {

namespace {

std::string read_line(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// "32K", "32768K", "1M", "4096" -> bytes.
int64_t parse_size(const std::string& s) {
    if (s.empty()) return 0;
    int64_t v = 0;
    size_t i = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) v = v * 10 + (s[i++] - '0');
    char u = i < s.size() ? char(std::toupper(static_cast<unsigned char>(s[i]))) : ' ';
    return u == 'K' ? v << 10 : u == 'M' ? v << 20 : u == 'G' ? v << 30 : v;
}

// "0-3,8,10-11" -> 7.
int count_cpu_list(const std::string& s) {
    int n = 0;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, ',')) {
        if (part.empty()) continue;
        size_t dash = part.find('-');
        if (dash == std::string::npos) ++n;
        else n += std::stoi(part.substr(dash + 1)) - std::stoi(part.substr(0, dash)) + 1;
    }
    return n;
}

// Some VMs and sandboxes list no caches in sysfs (seen on a 2-core Zen 5 guest). glibc reads the
// sizes from cpuid, but not which CPUs share each level; assumed here: L1 and L2 private to a
// core, anything further shared by the whole machine (one instance), which keeps the probes'
// per-thread working sets within what each level can hold.
void add_sysconf_caches(CpuInfo& info) {
#ifdef _SC_LEVEL1_DCACHE_SIZE
    const int per_core = std::max(1, info.logical_cpus / std::max(1, int(info.core_cpus.size())));
    const int names[] = {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE};
    for (int level = 1; level <= 4; ++level) {
        const long bytes = sysconf(names[level - 1]);
        if (bytes <= 0) continue;
        CacheLevel c;
        c.level = level;
        c.type = level == 1 ? "Data" : "Unified";
        c.bytes = bytes;
        c.shared_by = level <= 2 ? per_core : info.logical_cpus;
        c.instances = std::max(1, (info.logical_cpus + c.shared_by - 1) / c.shared_by);
        info.caches.push_back(c);
    }
    // The sizes are cpuid's, unchecked: a guest may be shown its host's whole L3 (508 MiB on a
    // 2-core Zen 5 guest, whose cores share at most a 32 MiB one).
    if (!info.caches.empty())
        info.caches_from =
            "glibc's reading of cpuid, as sysfs lists none (L1 and L2 assumed private, L3 shared by all; sizes "
            "unverified)";
#else
    (void)info;
#endif
}

}  // namespace

int64_t probe_memory_cap() {
    std::ifstream f("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    while (f >> key >> kib) {
        if (key == "MemAvailable:") return kib * 1024 / 2;
        f.ignore(1 << 10, '\n');
    }
    return std::numeric_limits<int64_t>::max();
}

int64_t CpuInfo::llc_bytes_total() const {
    const CacheLevel* last = nullptr;
    for (const CacheLevel& c : caches)
        if (!last || c.level > last->level) last = &c;
    return last ? last->bytes * last->instances : 0;
}

const CacheLevel* CpuInfo::level(int n) const {
    for (const CacheLevel& c : caches)
        if (c.level == n) return &c;
    return nullptr;
}

CpuInfo cpu_info() {
    CpuInfo info;
    // One logical CPU per (package, core): the probes put one thread on each physical core.
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    int processor = -1, package = 0;
    std::set<std::pair<int, int>> cores;
    auto value = [](const std::string& l) {
        size_t c = l.find(':');
        std::string v = c == std::string::npos ? "" : l.substr(c + 1);
        size_t b = v.find_first_not_of(" \t");
        return b == std::string::npos ? std::string() : v.substr(b);
    };
    while (std::getline(f, line)) {
        if (line.starts_with("processor")) {
            processor = std::stoi(value(line));
            ++info.logical_cpus;
        } else if (line.starts_with("model name") && info.model_name.empty()) {
            info.model_name = value(line);
        } else if (line.starts_with("cpu MHz") && !info.reported_mhz) {
            info.reported_mhz = std::stod(value(line));
        } else if (line.starts_with("physical id")) {
            package = std::stoi(value(line));
        } else if (line.starts_with("core id") && processor >= 0) {
            if (cores.emplace(package, std::stoi(value(line))).second) info.core_cpus.push_back(processor);
        }
    }
    if (info.logical_cpus == 0) info.logical_cpus = int(std::max(1u, std::thread::hardware_concurrency()));
    if (info.core_cpus.empty())
        for (int i = 0; i < info.logical_cpus; ++i) info.core_cpus.push_back(i);

#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        char v[13] = {};
        std::copy_n(reinterpret_cast<char*>(&b), 4, v);
        std::copy_n(reinterpret_cast<char*>(&d), 4, v + 4);
        std::copy_n(reinterpret_cast<char*>(&c), 4, v + 8);
        info.vendor = v;
    }
    if (__get_cpuid(1, &a, &b, &c, &d)) {
        int base_family = int((a >> 8) & 0xF), base_model = int((a >> 4) & 0xF);
        info.family = base_family == 0xF ? base_family + int((a >> 20) & 0xFF) : base_family;
        info.model = base_family == 0x6 || base_family == 0xF ? base_model | int(((a >> 16) & 0xF) << 4) : base_model;
    }
    __builtin_cpu_init();
    info.avx2 = __builtin_cpu_supports("avx2");
    info.fma = __builtin_cpu_supports("fma");
    info.avx512f = __builtin_cpu_supports("avx512f");
#endif

    for (int i = 0; i < 16; ++i) {
        std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
        std::string level = read_line(dir + "level");
        if (level.empty()) break;
        CacheLevel c;
        c.level = std::stoi(level);
        c.type = read_line(dir + "type");
        if (c.type == "Instruction") continue;
        c.bytes = parse_size(read_line(dir + "size"));
        c.shared_by = std::max(1, count_cpu_list(read_line(dir + "shared_cpu_list")));
        c.instances = std::max(1, (info.logical_cpus + c.shared_by - 1) / c.shared_by);
        info.caches.push_back(c);
    }
    if (!info.caches.empty())
        info.caches_from = "sysfs";
    else
        add_sysconf_caches(info);
    std::sort(info.caches.begin(), info.caches.end(), [](const CacheLevel& x, const CacheLevel& y) {
        return x.level < y.level;
    });
    return info;
}

// FMA pipes per core by vendor and family (see roofline/README.md, "How the CPU peak is derived").
// cpuid gives the family; the vendors' optimization guides give the pipes.
FmaUnits fma_units(const CpuInfo& cpu) {
    if (!cpu.fma) return {0, 0, "no FMA instructions reported: no FMA peak"};
    if (cpu.vendor == "AuthenticAMD") {
        if (cpu.family == 0x17 && cpu.model < 0x30)
            return {1, 256, "AMD Zen/Zen+ (family 17h, model < 30h): two 128-bit FMA pipes, one 256-bit FMA per cycle"};
        if (cpu.family == 0x17) return {2, 256, "AMD Zen 2 (family 17h): two 256-bit FMA pipes"};
        if (cpu.family == 0x19 && cpu.avx512f)
            return {1, 512, "AMD Zen 4 (family 19h with AVX-512): 512-bit FMAs issue over both 256-bit pipes, one per cycle"};
        if (cpu.family == 0x19) return {2, 256, "AMD Zen 3 (family 19h): two 256-bit FMA pipes"};
        if (cpu.family == 0x1A && cpu.avx512f)
            return {2, 512, "AMD Zen 5 (family 1Ah): two 512-bit FMA pipes (parts with a 256-bit datapath have half)"};
        return {2, 256, "AMD, family not in the table: assumed two 256-bit FMA pipes"};
    }
    if (cpu.vendor == "GenuineIntel") {
        if (cpu.avx512f)
            return {2, 512, "Intel with AVX-512: two 512-bit FMA units (Xeon Platinum, Gold 6xxx; some Silver/Gold 5xxx and client cores have one)"};
        return {2, 256, "Intel with AVX2 (Haswell and later): two 256-bit FMA units"};
    }
    return {2, 256, "x86 vendor not in the table: assumed two 256-bit FMA pipes"};
}

}  // namespace ridge::probe
