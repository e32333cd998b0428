// src/exec/run_path.cpp: the one run path of a planned executable (run_path.hpp).
#include "exec/run_path.hpp"

#include "core/counters.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/launch.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

RunOutcome run_executable(const Executable& ex, RunSite& site, KernelChain* chain, void* stream, int device,
                          std::shared_ptr<Storage>* storage) {
  // allocate
  const size_t nb = ex.buffers.size();
  thread_local std::vector<void*> ptrs;
  ptrs.assign(nb, nullptr);
  for (size_t b = 0; b < nb; ++b) {
    if (site.target(b, &ptrs[b])) continue;
    const BufferSpec& bs = ex.buffers[b];
    storage[b] = allocate_device(static_cast<size_t>(bs.numel) * static_cast<size_t>(itemsize(bs.dtype)));
    ptrs[b] = storage[b]->ptr;
  }
  // bind and launch
  RunOutcome out;
  std::vector<std::shared_ptr<Storage>> ws;  // workspaces live until every launch is queued
  if (chain) {  // a graph launch: the kernels' parameters, then one call
    thread_local std::vector<std::vector<unsigned char>> params;
    thread_local std::vector<const void*> pp;
    params.resize(ex.steps.size());
    pp.clear();
    for (size_t s = 0; s < ex.steps.size(); ++s) {
      const Step& st = ex.steps[s];
      if (st.spec.numel == 0) continue;
      site.bind(s, ptrs.data(), step_workspace(site.launched(s, st), ws, stream), params[s]);
      pp.push_back(params[s].data());
    }
    out.graph = chain->launch(pp.data(), stream);
    out.kernels = pp.size();
  } else {
    thread_local std::vector<unsigned char> bytes;
    for (size_t s = 0; s < ex.steps.size(); ++s) {
      const Step& st = ex.steps[s];
      if (st.call) {
        run_library_step(st, site.source(), ptrs, stream);
        continue;
      }
      if (st.spec.numel == 0) continue;
      site.bind(s, ptrs.data(), step_workspace(site.launched(s, st), ws, stream), bytes);
      launch_kernel(site.kernel(s), site.dims(s, st), bytes.data(), stream);  // logs the launch
      ++out.kernels;
    }
  }
  if (out.graph) counters().graph_launches++;
  counters().kernels_launched += out.kernels;
  // Memory ordered on another stream that this work read or wrote is not reused by the
  // pool before this stream is done with it.
  site.note_uses(stream, device);
  // realize
  site.realize(storage);
  return out;
}

}  // namespace cufuse::detail
