// cufuse/eval.hpp: knobs, counters and introspection of the evaluation pipeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

struct Config {
  // A lazy graph is evaluated on its own once it holds this many pending nodes (nodes, not
  // uses: a value read by many statements counts once). Planning and emitting a graph of
  // 8,192 costs ~40 ms on the development machine, ~4.5 us a node (16,384: ~100 ms); a plan
  // found in the cache costs its signature walk, well under 1 us a node...
  int32_t max_pending_nodes = 8192;
  // ...or keeps this many bytes of otherwise-dead memory alive.
  uint64_t max_pinned_bytes = uint64_t(1) << 30;
  // Float32/float64 `a * b + c` (also a * b - c, c - a * b) built as fma(a, b, c): one
  // rounding, as CuPy's, torch.compile's and JAX's compiled kernels give it; false: rounded op
  // by op, as NumPy does. Decided when the expression is built. Default: CUFUSE_FMA (1).
  bool contract_fma = true;
};
Config config();
void set_config(const Config& c);

// Process-wide counters (monotonic; reset_stats zeroes them).
struct Stats {
  uint64_t evaluations = 0;       // materialization points reached
  uint64_t plans_built = 0;       // plans made from scratch
  uint64_t plan_cache_hits = 0;   // plans reused for a graph of the same structure
  uint64_t kernels_launched = 0;  // kernels run (or run by the reference backend)
  uint64_t graph_launches = 0;    // of those, launches of a plan's kernels as one CUDA graph
  uint64_t kernels_compiled = 0;  // NVRTC compilations
  uint64_t memory_cache_hits = 0; // compiled kernels found in memory
  uint64_t disk_cache_hits = 0;   // compiled kernels found on disk
  uint64_t auto_evaluations = 0;  // graphs evaluated because they grew past the budget
  double compile_ms = 0;          // wall time spent in NVRTC compiles (all threads together)
  // Tiered first calls (CUFUSE_TIERED, issue 35): kernels run by the prebuilt bytecode
  // interpreter, NVRTC compiles handed to the background pool, and plans whose interpreted
  // steps were swapped for their compiled kernels.
  uint64_t interpreted_launches = 0;
  uint64_t background_compiles = 0;
  uint64_t tier_swaps = 0;
  // Process start (issue 35): at the first use of a device, a background thread loads the
  // interpreter's image and warms NVRTC with a tiny compile (not with CUFUSE_TIERED=0).
  // startup_warmups: those that finished (one per process); startup_waits: calls that found
  // the image still loading and waited for it (only calls that needed it wait).
  uint64_t startup_warmups = 0;
  uint64_t startup_waits = 0;
};
Stats stats();
void reset_stats();

// The plan for evaluating these arrays, as text (groups, the rule that cut each boundary,
// each kernel's source), without running anything.
std::string plan_dump(const std::vector<Array>& outputs, bool with_source = true);

}  // namespace cufuse
