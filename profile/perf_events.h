#pragma once
// CPU floating-point counters through Linux perf events (perf_event_open), counted in user mode on
// every thread of this process, read around each range.
//
// Which events, and how many FLOPs one count is, depends on the CPU (cpu_flop_events below):
// - AMD Zen 2 to Zen 5: PMCx003, retired SSE/AVX FLOPs, by operation (add/sub, multiply,
//   divide/square root, multiply-accumulate counted as 2); on Zen 5 also by precision and width.
// - Intel (Broadwell and later cores): FP_ARITH_INST_RETIRED (event 0xC7), instructions by
//   precision and width, weighted by lanes (an FMA counts twice).
// profile/README.md gives the encodings and where they are documented.
#include <optional>

#include "profile/counters.h"

namespace ridge::profile {

struct PerfEvent {
    Counter counter;
    uint64_t config = 0;  // the raw event: (umask << 8) | event select
};

struct CpuEventPlan {
    std::string cpu;    // "AMD Zen 5 (family 1Ah, model 02h)"
    std::string scope;  // what the events do not count
    std::vector<PerfEvent> events;
    // Events counted together in one pass, by index into events (perf_events.cpp says why AMD's
    // get a pass each).
    std::vector<std::vector<int>> passes;
};

// The FLOP events of a CPU named by cpuid's vendor string, family and model, or nullopt with the
// reason in *why (a CPU whose events ridge does not know).
std::optional<CpuEventPlan> cpu_flop_events(std::string_view vendor, int family, int model, std::string* why);

// Opens this machine's FLOP counters on every thread of this process; null with one line in
// *why where there are none (a kernel without a PMU for this CPU, as in many VMs, or
// perf_event_paranoid forbidding it). Threads must not start or end between begin_pass() and
// end_pass(): start the work's thread pool first.
std::unique_ptr<CounterSource> open_cpu_counters(std::string* why);

}  // namespace ridge::profile
