#include "profile/perf_events.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "engine/shape.h"
#include "roofline/probes/cpu/probes.h"

namespace ridge::profile {

namespace {

std::string hex(int v) {
    char b[16];
    std::snprintf(b, sizeof b, "%02Xh", v);
    return b;
}

PerfEvent amd(std::string name, std::string label, Measure m, int event, int umask) {
    return {{std::move(name), std::move(label), m, 1}, uint64_t(umask) << 8 | uint64_t(event)};
}

PerfEvent intel(std::string name, std::string label, int umask, int64_t lanes) {
    return {{std::move(name), std::move(label), Measure::flops, lanes}, uint64_t(umask) << 8 | 0xC7};
}

// AMD PMCx003 "Retired SSE/AVX FLOPs": the unit mask's low four bits select operations; it counts
// FLOPs, not instructions (a 512-bit fp32 FMA adds 32). Zen 5 adds a precision/width field in bits
// 7:5, which counts only together with operation bits (0x60 alone counts nothing here; 0x6F counts
// every packed fp32 FLOP).
//
// One PMCx003 event per pass: it can add more than 15 per cycle, so the PMU pairs its counter with
// a merge counter, and on the Zen 5 VM this was written on two such events together (grouped or
// not) left one of them reading 0 or a wrong count, whichever the order. Alone, each matched
// hand-counted loops exactly (tests/test_perf_counters.cpp).
CpuEventPlan amd_plan(int family, int model) {
    CpuEventPlan p;
    bool zen5 = family == 0x1A;
    std::string gen = family == 0x17 ? "Zen 2" : zen5 ? "Zen 5" : (model >= 0x10 && model < 0x20) || model >= 0x60 ? "Zen 4" : "Zen 3";
    p.cpu = cat("AMD ", gen, " (family ", hex(family), ", model ", hex(model), ")");
    p.scope = "PMCx003 counts add/sub, multiply, divide/sqrt and FMA (2 per lane) of SSE/AVX; not max, "
              "compare, convert, logic or x87";
    p.events = {amd("fp_ret_sse_avx_ops.add_sub_flops", "add/sub", Measure::flops, 0x03, 0x01),
                amd("fp_ret_sse_avx_ops.mult_flops", "mul", Measure::flops, 0x03, 0x02),
                amd("fp_ret_sse_avx_ops.div_flops", "div/sqrt", Measure::flops, 0x03, 0x04),
                amd("fp_ret_sse_avx_ops.mac_flops", "fma", Measure::flops, 0x03, 0x08)};
    if (zen5) {
        p.events.push_back(amd("fp_ret_sse_avx_ops.scalar_single_flops", "fp32 scalar", Measure::breakdown, 0x03, 0x4F));
        p.events.push_back(amd("fp_ret_sse_avx_ops.packed_single_flops", "fp32 packed", Measure::breakdown, 0x03, 0x6F));
        p.events.push_back(amd("fp_ret_sse_avx_ops.scalar_double_flops", "fp64 scalar", Measure::breakdown, 0x03, 0x8F));
        p.events.push_back(amd("fp_ret_sse_avx_ops.packed_double_flops", "fp64 packed", Measure::breakdown, 0x03, 0xAF));
    }
    for (size_t i = 0; i < p.events.size(); ++i) p.passes.push_back({int(i)});
    return p;
}

// Intel FP_ARITH_INST_RETIRED (event C7h): instructions by precision and width; each count is as
// many FLOPs as the instruction has lanes, and an FMA counts twice.
CpuEventPlan intel_plan(int family, int model) {
    CpuEventPlan p;
    p.cpu = cat("Intel (family ", hex(family), ", model ", hex(model), ")");
    p.scope = "FP_ARITH_INST_RETIRED counts add, sub, mul, div, min, max, sqrt, rcp14/rsqrt14 and FMA (twice) "
              "of SSE/AVX; not compare, convert, logic or x87";
    p.events = {intel("fp_arith_inst_retired.scalar_single", "fp32 scalar", 0x02, 1),
                intel("fp_arith_inst_retired.128b_packed_single", "fp32 128-bit", 0x08, 4),
                intel("fp_arith_inst_retired.256b_packed_single", "fp32 256-bit", 0x20, 8),
                intel("fp_arith_inst_retired.512b_packed_single", "fp32 512-bit", 0x80, 16),
                intel("fp_arith_inst_retired.scalar_double", "fp64 scalar", 0x01, 1),
                intel("fp_arith_inst_retired.128b_packed_double", "fp64 128-bit", 0x04, 2),
                intel("fp_arith_inst_retired.256b_packed_double", "fp64 256-bit", 0x10, 4),
                intel("fp_arith_inst_retired.512b_packed_double", "fp64 512-bit", 0x40, 8)};
    p.passes = {{0, 1, 2, 3}, {4, 5, 6, 7}};
    return p;
}

long perf_open(perf_event_attr* a, pid_t tid, int group) {
    return syscall(SYS_perf_event_open, a, tid, -1, group, PERF_FLAG_FD_CLOEXEC);
}

std::vector<pid_t> threads_of_this_process() {
    std::vector<pid_t> tids;
    DIR* d = opendir("/proc/self/task");
    if (!d) throw CountingError(cat("cannot list /proc/self/task: ", std::strerror(errno)));
    while (dirent* e = readdir(d))
        if (e->d_name[0] != '.') tids.push_back(pid_t(std::atoi(e->d_name)));
    closedir(d);
    std::sort(tids.begin(), tids.end());
    return tids;
}

int paranoid_level() {
    std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
    int v = 99;
    f >> v;
    return v;
}

// The type of the core PMU: "cpu", or on Intel's hybrid parts "cpu_core" (the P-cores).
uint32_t core_pmu_type(std::string* pmu) {
    for (const char* name : {"cpu", "cpu_core"}) {
        std::ifstream f(cat("/sys/bus/event_source/devices/", name, "/type"));
        uint32_t t = 0;
        if (f >> t) {
            *pmu = name;
            return t;
        }
    }
    *pmu = "";
    return PERF_TYPE_RAW;
}

// One group of events on one thread.
struct Group {
    std::vector<int> fds;  // leader first
    ~Group() {
        for (int fd : fds) close(fd);
    }
    Group() = default;
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    Group(Group&& o) noexcept : fds(std::move(o.fds)) { o.fds.clear(); }
};

struct Reading {
    uint64_t enabled = 0, running = 0;
    std::vector<uint64_t> values;
};

Reading read_group(const Group& g, size_t n) {
    std::vector<uint64_t> buf(3 + n);
    ssize_t got = read(g.fds.front(), buf.data(), buf.size() * sizeof(uint64_t));
    if (got != ssize_t(buf.size() * sizeof(uint64_t)) || buf[0] != n)
        throw CountingError(cat("reading a perf event group: ", got < 0 ? std::strerror(errno) : "short read"));
    return {buf[1], buf[2], std::vector<uint64_t>(buf.begin() + 3, buf.end())};
}

// Opens `configs` as one group on thread tid; on failure returns an empty group and sets *err.
Group open_group(uint32_t type, const std::vector<uint64_t>& configs, pid_t tid, int* err) {
    Group g;
    for (uint64_t c : configs) {
        perf_event_attr a;
        std::memset(&a, 0, sizeof a);
        a.size = sizeof a;
        a.type = type;
        a.config = c;
        a.exclude_kernel = 1;
        a.exclude_hv = 1;
        a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
        long fd = perf_open(&a, tid, g.fds.empty() ? -1 : g.fds.front());
        if (fd < 0) {
            *err = errno;
            return Group{};
        }
        g.fds.push_back(int(fd));
    }
    *err = 0;
    return g;
}

std::string open_failure(int err, const std::string& cpu) {
    if (err == EACCES || err == EPERM)
        return cat("perf_event_paranoid is ", paranoid_level(),
                   ": counting this process's own events in user mode needs 2 or less (sysctl "
                   "kernel.perf_event_paranoid=2) or CAP_PERFMON");
    if (err == ENOENT || err == ENODEV || err == EOPNOTSUPP)
        return cat("this kernel exposes no hardware performance counters for the ", cpu,
                   " (a virtual machine without a virtual PMU?); perf_event_open: ", std::strerror(err));
    return cat("perf_event_open refused the ", cpu, "'s FLOP events: ", std::strerror(err));
}

class PerfCounters final : public CounterSource {
public:
    PerfCounters(CpuEventPlan plan, uint32_t type, std::string pmu)
        : plan_(std::move(plan)), type_(type), pmu_(std::move(pmu)) {
        for (const PerfEvent& e : plan_.events) counters_.push_back(e.counter);
    }

    std::string describe() const override {
        return cat(plan_.cpu, ", perf events on the '", pmu_, "' PMU, user mode, every thread of this process (",
                   threads_, " in the last pass), ", plan_.passes.size(), " passes");
    }
    std::string scope() const override { return plan_.scope; }
    const std::vector<Counter>& counters() const override { return counters_; }
    int passes() const override { return int(plan_.passes.size()); }

    void begin_pass(int pass) override {
        pass_ = pass;
        if (pass == 0) results_.clear();
        tids_ = threads_of_this_process();
        threads_ = int(tids_.size());
        std::vector<uint64_t> configs;
        for (int e : plan_.passes[size_t(pass)]) configs.push_back(plan_.events[size_t(e)].config);
        groups_.clear();
        for (pid_t tid : tids_) {
            int err = 0;
            Group g = open_group(type_, configs, tid, &err);
            // A thread that ended since the listing has nothing left to count.
            if (err == ESRCH) continue;
            if (err) throw CountingError(open_failure(err, plan_.cpu));
            groups_.push_back(std::move(g));
        }
        range_ = 0;
    }

    void begin_range(std::string_view) override { start_ = read_all(); }

    void end_range() override {
        std::vector<Reading> end = read_all();
        size_t n = plan_.passes[size_t(pass_)].size();
        if (results_.size() <= range_) results_.resize(range_ + 1, std::vector<int64_t>(counters_.size(), 0));
        for (size_t t = 0; t < end.size(); ++t) {
            uint64_t enabled = end[t].enabled - start_[t].enabled, running = end[t].running - start_[t].running;
            // Counts of a group that was off the PMU part of the time would be estimates: refuse.
            if (running != enabled)
                throw CountingError(cat("the ", plan_.cpu, "'s counters were shared with another user during a "
                                             "range (counted ", running, " of ", enabled,
                                             " ns): the counts would be estimates"));
            for (size_t i = 0; i < n; ++i)
                results_[range_][size_t(plan_.passes[size_t(pass_)][i])] +=
                    int64_t(end[t].values[i] - start_[t].values[i]);
        }
        ++range_;
    }

    void end_pass() override {
        if (threads_of_this_process() != tids_)
            throw CountingError("a thread started or ended during a counting pass: its counts are missing");
        if (pass_ > 0 && range_ != ranges_)
            throw std::runtime_error(cat("counting pass ", pass_ + 1, " saw ", range_, " ranges, the first ", ranges_));
        ranges_ = range_;
        groups_.clear();
    }

    std::vector<std::vector<int64_t>> results() override { return results_; }

private:
    std::vector<Reading> read_all() const {
        std::vector<Reading> r;
        size_t n = plan_.passes[size_t(pass_)].size();
        for (const Group& g : groups_) r.push_back(read_group(g, n));
        return r;
    }

    CpuEventPlan plan_;
    uint32_t type_;
    std::string pmu_;
    std::vector<Counter> counters_;
    int pass_ = 0, threads_ = 0;
    size_t range_ = 0, ranges_ = 0;
    std::vector<pid_t> tids_;
    std::vector<Group> groups_;
    std::vector<Reading> start_;
    std::vector<std::vector<int64_t>> results_;
};

}  // namespace

std::optional<CpuEventPlan> cpu_flop_events(std::string_view vendor, int family, int model, std::string* why) {
    if (vendor == "AuthenticAMD") {
        if (family == 0x19 || family == 0x1A || (family == 0x17 && model >= 0x30)) return amd_plan(family, model);
        *why = cat("no FLOP events known for AMD family ", hex(family), " model ", hex(model),
                   " (ridge knows Zen 2 to Zen 5: family 17h model 30h and later, 19h, 1Ah)");
        return std::nullopt;
    }
    if (vendor == "GenuineIntel") {
        // FP_ARITH_INST_RETIRED came with Broadwell; Haswell (3Ch, 3Fh, 45h, 46h) and older lack it.
        bool haswell_or_older = model < 0x3D || model == 0x3F || model == 0x45 || model == 0x46;
        if (family == 6 && !haswell_or_older) return intel_plan(family, model);
        *why = cat("no FLOP events known for Intel family ", hex(family), " model ", hex(model),
                   " (FP_ARITH_INST_RETIRED needs Broadwell or later)");
        return std::nullopt;
    }
    *why = cat("no FLOP events known for a '", vendor, "' CPU");
    return std::nullopt;
}

std::unique_ptr<CounterSource> open_cpu_counters(std::string* why) {
    probe::CpuInfo cpu = probe::cpu_info();
    std::optional<CpuEventPlan> plan = cpu_flop_events(cpu.vendor, cpu.family, cpu.model, why);
    if (!plan) return nullptr;
    std::string pmu;
    uint32_t type = core_pmu_type(&pmu);
    if (pmu.empty()) {
        *why = cat("this kernel exposes no core PMU (no /sys/bus/event_source/devices/cpu): no hardware counters");
        return nullptr;
    }
    // Try every pass's group on this thread, over a little arithmetic, before promising counts.
    for (const auto& pass : plan->passes) {
        std::vector<uint64_t> configs;
        for (int e : pass) configs.push_back(plan->events[size_t(e)].config);
        int err = 0;
        Group g = open_group(type, configs, 0, &err);
        if (err) {
            *why = open_failure(err, plan->cpu);
            return nullptr;
        }
        volatile double x = 1.0;
        for (int i = 0; i < 1000; ++i) x = x * 1.0000001 + 1e-9;
        Reading r = read_group(g, configs.size());
        if (r.running == 0) {
            *why = cat("the ", plan->cpu, "'s PMU did not schedule a group of ", configs.size(),
                       " FLOP events (too few counter registers free?)");
            return nullptr;
        }
    }
    return std::make_unique<PerfCounters>(std::move(*plan), type, pmu);
}

}  // namespace ridge::profile
