#pragma once
// `ridge profile`: per layer and phase, the analytic FLOPs and bytes beside what ran (the
// implementation, its time) and, where the machine exposes counters, what the hardware counted,
// with the facts that explain each gap.
#include "bench/args.h"
#include "profile/profile.h"

namespace ridge::cli {

extern const Command profile_cmd;
int run_profile(const Args& a);

// The three renderings of a profile (also used by tests).
std::string profile_table(const profile::Profile& p);
std::string profile_csv(const profile::Profile& p);
std::string profile_json(const profile::Profile& p);

// The exit status when counts were asked for but none could be read: the table is still printed.
constexpr int exit_no_counters = 4;

}  // namespace ridge::cli
