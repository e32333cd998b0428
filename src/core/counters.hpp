// src/core/counters.hpp: the process-wide counters behind cufuse::stats().
#pragma once
#include <atomic>
#include <cstdint>

#include "runtime/context.hpp"

namespace cufuse::detail {

// Process state: the runtime context's Counters slot (runtime/context.hpp).
struct Counters {
  static constexpr StateSlot kSlot = StateSlot::Counters;
  std::atomic<uint64_t> evaluations{0}, plans_built{0}, plan_cache_hits{0}, kernels_launched{0}, graph_launches{0},
      kernels_compiled{0}, memory_cache_hits{0}, disk_cache_hits{0}, auto_evaluations{0},
      compile_us{0},  // NVRTC wall time, microseconds
      build_ns{0},    // building executables (plan, code generation, cache look-ups), nanoseconds (bench W12)
      interpreted_launches{0}, background_compiles{0}, tier_swaps{0},  // tiered first calls (exec/tiered.hpp)
      startup_warmups{0}, startup_waits{0};       // process start (exec/startup.hpp)
};
Counters& counters();

}  // namespace cufuse::detail
