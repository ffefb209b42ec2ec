#pragma once
// The GPU side of `ridge profile`: CUPTI's range profiler on device 0, one user range per executor
// step and user replay (the caller runs the same step once per pass), reading gpu_metrics().
// Written against CUDA 13's cupti_range_profiler.h; first ran on an H200 on 2026-12-04 (README).
#include <functional>

#include "profile/counters.h"

namespace ridge::profile {

// Null with one line in *why where counting cannot start: no CUPTI in this build, no device, or
// CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (counters restricted to administrators).
std::unique_ptr<CounterSource> open_gpu_counters(std::string* why);

// Evicts the device's L2 by writing a buffer twice its size and waiting; empty where no device.
std::function<void()> gpu_cache_flush();

}  // namespace ridge::profile
