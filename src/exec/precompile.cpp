// src/exec/precompile.cpp: cufuse::precompile for lazy functions (include/cufuse/precompile.hpp):
// the function run on placeholders, its results planned as one evaluation of them would be
// (common subexpressions merged, the graph scanned, build_executable), each kernel compiled
// into the caches (exec/precompile.hpp); nothing runs.
#include "exec/precompile.hpp"

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "compile/disk_cache.hpp"
#include "cufuse/creation.hpp"
#include "graph/realize.hpp"
#include "exec/tiered.hpp"
#include "plan/cse.hpp"
#include "plan/signature.hpp"
#include "runtime/device.hpp"
#include "runtime/log.hpp"

namespace cufuse::detail {

void precompile_steps(Executable& ex, int arch, PrecompileStats& stats) {
  for (Step& st : ex.steps) {
    if (st.call || st.spec.numel <= 0) continue;
    ++stats.kernels;
    if (CompiledKernelPtr k = find_compiled_kernel(st.spec.source, st.spec.name, arch)) {
      ++stats.cached;
      st.kernel = std::move(k);
      continue;
    }
    st.kernel = compile_kernel(st.spec.source, st.spec.name, arch);
    ++stats.compiled;  // (or another thread's compile of the same key, finished meanwhile)
  }
}

void check_step_sources(const Executable& ex, int arch) {
  for (const Step& st : ex.steps)
    if (!st.call) check_kernel_source(st.spec.source, st.spec.name, arch);
}

bool precompile_has_device() {
  try {
    require_device();
    return true;
  } catch (const NoDeviceError&) {
    return false;
  }
}

Array precompile_placeholder(const ArgType& t) { return placeholder(t.dtype, t.shape); }

PrecompileStats precompile_lazy(const void* fn, TraceThunk thunk, const FuseArg* args, int /*nargs*/) {
  std::vector<Array> outs;
  try {
    thunk(fn, args, outs);
  } catch (const Error& e) {
    const std::string w = e.what();
    if (w.find("placeholder") == std::string::npos) throw;
    throw ValueError(fmt::format("{} (while precompiling a lazy function: its arguments are placeholders, so it "
                                 "cannot read values; move item()/to_host()/eval() out of it)", w));
  }
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  std::vector<NodePtr> roots;
  for (const auto& a : outs) {
    if (!a.defined()) throw ValueError("precompile: the function returned an empty Array handle");
    bool dup = false;
    for (const auto& r : roots) dup |= r.get() == a.node().get();
    if (!a.node()->is_leaf() && !dup) roots.push_back(a.node());  // (a leaf: nothing to compute)
  }
  PrecompileStats stats;
  stats.signatures = 1;
  if (roots.empty()) return stats;  // nothing to compute: the results are arguments or in memory
  eliminate_common_subexpressions(roots);
  GraphScan scan;
  scan_graph(roots, {}, scan);
  const int arch = default_arch();
  auto ex = build_executable(roots, {}, scan, false, arch);
  precompile_steps(*ex, arch, stats);
  // Each kernel's hint (exec/tiered.hpp): a process evaluating the function on arrays like
  // these finds its kernels before the first launch, as it would without the hint's check.
  for (size_t si = 0; si < ex->steps.size(); ++si)
    if (ex->steps[si].kernel) (void)store_tier_hint(tier_hint_key(scan, si, arch), *ex->steps[si].kernel);
  log(LogChannel::Compile, "precompiled a lazy function for sm_{}: {} kernel(s), {} compiled, {} cached", arch,
      stats.kernels, stats.compiled, stats.cached);
  return stats;
}

}  // namespace cufuse::detail
