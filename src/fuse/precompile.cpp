// src/fuse/precompile.cpp: cufuse::precompile for fuse()'d functions (include/cufuse/precompile.hpp):
// a trace on placeholders (fuse/trace.cpp, `precompile`) whose kernels are compiled into the
// caches; the entry is kept, so a first call with arguments of the signature (contiguous,
// aligned, on the current device) replays without tracing.
#include <fmt/format.h>

#include "cufuse/backend.hpp"
#include "exec/precompile.hpp"
#include "fuse/engine.hpp"
#include "graph/tracing.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

PrecompileStats precompile_fused(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs,
                                 int nout) {
  if (fuse_is_tracing())
    throw ValueError(fmt::format("{}: precompile inside a fused function's trace", e.opt.name));
  PrecompileStats stats;
  stats.signatures = 1;
  std::shared_ptr<Entry> en = trace_entry(e, fn, thunk, args, nargs, nout, &stats);
  // Kept where calls can find it: on the reference backend a host entry, else a device's
  // (without a device the kernels are cached for later processes; the trace is dropped).
  const bool usable = current_backend() == Backend::Reference ? en->host : !en->host;
  if (usable) {
    std::lock_guard<std::mutex> lk(e.mu);
    e.entries.insert(e.entries.begin(), std::move(en));
    if (static_cast<int>(e.entries.size()) > e.opt.max_signatures) e.entries.pop_back();
  }
  log(LogChannel::Compile, "precompiled {}: {} kernel(s), {} compiled, {} cached{}", e.opt.name, stats.kernels,
      stats.compiled, stats.cached, usable ? "" : " (no device: the trace is not kept)");
  return stats;
}

}  // namespace cufuse::detail
