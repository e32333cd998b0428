// src/exec/run_path.hpp: the one run path of a planned executable on the device, shared by
// lazy evaluation (exec/executor.cpp) and fuse() replay (fuse/replay.cpp): allocate its
// buffers, bind each step's parameters, launch (a kernel, a CUDA-graph chain of the kernels,
// or a library call), record the memory used on the stream, and realize the results. What
// differs between the two callers is a RunSite: where a kernel step's parameter bytes and
// function come from (the plan's spec patched from the graph's leaves, or a fused entry's
// template patched from the call's arguments), and what a result becomes (the graph's node
// turned into a leaf, or a new Array).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "exec/binding.hpp"
#include "exec/executable.hpp"

namespace cufuse::detail {

class KernelChain;

class RunSite {
 public:
  virtual ~RunSite() = default;
  // Where the leaves' data and scalars come from (library steps read their inputs there).
  virtual const LeafSource& source() const = 0;
  // Kernel step `step`'s parameter bytes for this run, into `out`.
  virtual void bind(size_t step, void* const* buffers, void* workspace, std::vector<unsigned char>& out) const = 0;
  // Kernel step `step`'s function on the run's device.
  virtual void* kernel(size_t step) const = 0;
  // Kernel step `step`'s launch shape (another one where it runs on the interpreter:
  // exec/tiered.hpp).
  virtual const LaunchDims& dims(size_t /*step*/, const Step& st) const { return st.spec.dims; }
  // The spec whose launch that is (the interpreter's where it runs on it): its workspace.
  virtual const KernelSpec& launched(size_t /*step*/, const Step& st) const { return st.spec; }
  // True when buffer b is written into existing memory (a target), at *ptr.
  virtual bool target(size_t /*b*/, void** /*ptr*/) const { return false; }
  // The memory this run read or wrote besides its new buffers was used on `stream`.
  virtual void note_uses(void* stream, int device) const = 0;
  // The results, each buffer's new block (null for a target's).
  virtual void realize(std::shared_ptr<Storage>* storage) = 0;
};

struct RunOutcome {
  uint64_t kernels = 0;  // kernels launched
  bool graph = false;    // as one graph launch
};

// Runs `ex` on `stream` of `device` (the current device): allocates every buffer that is not
// a target, launches every step (through `chain`, one graph launch of the kernel steps, when
// given), notes the uses, counts the launches (cufuse::stats()), and realizes the results.
// `storage`: room for one block per buffer.
RunOutcome run_executable(const Executable& ex, RunSite& site, KernelChain* chain, void* stream, int device,
                          std::shared_ptr<Storage>* storage);

}  // namespace cufuse::detail
