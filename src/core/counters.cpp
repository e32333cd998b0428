// src/core/counters.cpp: the counters behind cufuse::stats().
#include "core/counters.hpp"

#include "cufuse/eval.hpp"
#include "runtime/context.hpp"

namespace cufuse {
namespace detail {
Counters& counters() { return runtime().state<Counters>(); }
}  // namespace detail

Stats stats() {
  auto& c = detail::counters();
  Stats s;
  s.evaluations = c.evaluations.load();
  s.plans_built = c.plans_built.load();
  s.plan_cache_hits = c.plan_cache_hits.load();
  s.kernels_launched = c.kernels_launched.load();
  s.graph_launches = c.graph_launches.load();
  s.kernels_compiled = c.kernels_compiled.load();
  s.memory_cache_hits = c.memory_cache_hits.load();
  s.disk_cache_hits = c.disk_cache_hits.load();
  s.auto_evaluations = c.auto_evaluations.load();
  s.compile_ms = static_cast<double>(c.compile_us.load()) / 1000.0;
  s.interpreted_launches = c.interpreted_launches.load();
  s.background_compiles = c.background_compiles.load();
  s.tier_swaps = c.tier_swaps.load();
  s.startup_warmups = c.startup_warmups.load();
  s.startup_waits = c.startup_waits.load();
  return s;
}

void reset_stats() {
  auto& c = detail::counters();
  for (auto* a : {&c.evaluations, &c.plans_built, &c.plan_cache_hits, &c.kernels_launched, &c.graph_launches,
                  &c.kernels_compiled, &c.memory_cache_hits, &c.disk_cache_hits, &c.auto_evaluations, &c.compile_us,
                  &c.interpreted_launches, &c.background_compiles, &c.tier_swaps, &c.startup_warmups,
                  &c.startup_waits})
    a->store(0);
}

}  // namespace cufuse
