// src/exec/tiered.hpp: tiered first calls (issue 35). A kernel step of a lazy evaluation whose
// kernel is in neither the memory nor the disk cache runs at once on the prebuilt bytecode
// interpreter (codegen/bytecode.hpp, images from src/compile/interp_images.hpp) while its
// NVRTC compile waits on a small background pool at the lowest priority, one compile per key
// however many steps want it; runs after the compile use the compiled kernel (a "swap").
// Groups the interpreter cannot run (scans, gathers, user kernels, few very long rows,
// program limits) compile as before. CUFUSE_TIERED (runtime/env.hpp): 0 off, interpret (never
// compile what the interpreter runs), 1 (default) on. State: the runtime context's Tiers slot.
//
// Deferred source (a lazy evaluation's new plan, CUFUSE_TIERED=1): the caches are keyed by a
// kernel's full source, but generating that source only to learn that no cache holds it is
// work before the first launch. A step's hint key (tier_hint_key: the graph's signature, the
// step, the arch and the settings code generation reads; no source) says whether its kernel
// was stored before, in this process or on disk. Without a hint the step starts on the
// interpreter at once and its source is generated after the launch, while the interpreter
// runs (exec/executor.cpp); with one the source is generated first and the kernel taken, with
// nothing else made or read: the disk's hint entry holds the kernel (one file read before the
// launch, the bytecode program never made), this process's hint means its memory cache has it.
// A hint only decides when the source is made and saves reads: a wrong one costs time, never
// a wrong kernel (the kernel is taken only where its full compile key, source included, is the
// one of the source made now: hinted_kernel; else the caches are asked by that source).
// The load of the hint entry's CUBIN needs no source: a preload (exec/hint_preload.hpp) runs it
// on the loader thread while the building thread makes the source.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codegen/bytecode.hpp"
#include "compile/disk_cache.hpp"
#include "exec/executable.hpp"
#include "exec/hint_preload.hpp"

namespace cufuse::detail {

struct TieredStep {
  KernelSpec interp;  // the interpreter's launch of this step's group
  std::string source, name;
  int arch = 0;
  std::string hint;                 // tier_hint_key, stored once the kernel is (empty: none)
  bool background = false;          // a compile is queued, or will be once the source is made
  bool deferred = false;            // the source is generated after the first launch
  std::atomic<bool> swapped{false}; // a run has used the compiled kernel (counted once)

  // The compiled kernel, once the background compile published it (else null).
  CompiledKernelPtr compiled() const {
    if (!ready_.load(std::memory_order_acquire)) return nullptr;
    std::lock_guard<std::mutex> lk(mu_);
    return kernel_;
  }
  void publish(CompiledKernelPtr k, std::string failure);
  std::string failure() const {
    std::lock_guard<std::mutex> lk(mu_);
    return failure_;
  }

 private:
  mutable std::mutex mu_;
  CompiledKernelPtr kernel_;
  std::string failure_;  // the compile's error: the step stays interpreted
  std::atomic<bool> ready_{false};
};

// For a kernel step of a lazy evaluation (build_executable with `tiered`): its kernel from
// the caches, else its tier (interpreter now, compile queued), else a compile now. `prog` is
// the group's bytecode (its refusal says why a group waits for NVRTC). `looked_up`: the caches
// were asked for the kernel already (hinted_kernel), so they are not again.
void choose_tier(Step& st, BytecodeProgram prog, int arch, std::string hint = {}, bool looked_up = false);

// The hint key of kernel step `step` of the plan of `scan` for `arch` (see above).
std::string tier_hint_key(const GraphScan& scan, size_t step, int arch);
// What a step's hint found (TierHint: exec/hint_preload.hpp).
TierHint find_tier_hint(const std::string& hint);
// Was the kernel of `hint` stored, by this process or (the disk cache) an earlier one?
inline bool tier_hinted(const std::string& hint) { return find_tier_hint(hint).found; }
// The kernel of a step whose hint was found and whose source `spec` is made now: the disk
// entry's kernel if its compile key is this source's (never otherwise), else the caches'
// (find_compiled_kernel); null if neither has it.
CompiledKernelPtr hinted_kernel(const std::string& hint, TierHint found, const KernelSpec& spec, int arch);
// The same with the hint read and its entry's kernel loaded by a preload (exec/hint_preload.hpp),
// while the caller made the source: the kernel comes loaded where the keys agree (else the
// preload's module is dropped). Null, the caches not asked, where the entry's CUBIN failed to
// load (its step then compiles: choose_tier with looked_up).
CompiledKernelPtr hinted_kernel(const std::string& hint, HintPreload& pre, const KernelSpec& spec, int arch);
// The preload of hint `hint` for a step built for `arch`: the read is find_tier_hint's; the
// entry's CUBIN is loaded on this thread's device where one is usable and the arch runs there
// (else nothing is loaded and the kernel loads at its first launch, as before).
std::shared_ptr<HintPreload> make_hint_preload(std::string hint, int arch);
// Gives the preload's stages not yet run to the loader thread (none where it loads nothing).
void submit_hint_preload(const std::shared_ptr<HintPreload>& pre);
// Tests: what preloads load and unload with in place of the device's (load_kernel_library,
// unload_library), so that they run without one; empty functions: the device's again.
struct KernelLoader {
  std::function<LoadedKernel(const std::vector<char>& cubin, const std::string& name, int device)> load;
  std::function<void(void* library)> unload;
};
void set_kernel_loader_for_tests(KernelLoader loader);
// Waits until the loader thread has nothing queued or running (tests).
void wait_for_preloads();
// Stores the hint of a kernel stored on disk (the background pool, precompile).
bool store_tier_hint(const std::string& hint, const CompiledKernel& k);
// Forgets this process's hints (tests: what a new process knows; the disk keeps its own).
void forget_tier_hints();
// A step whose source is generated after its first launch: the interpreter runs it until then.
// `prog` must be accepted. Its spec holds only the interpreter's numel until start_deferred.
void defer_tier(Step& st, BytecodeProgram prog, int arch, std::string hint);
// The deferred step's spec (source, parameters) is made now: its compile is queued.
void start_deferred(Step& st);

// The interpreter kernel `name` (kInterpKernelName, kInterpNarrowKernelName or
// kInterpRowsKernelName) on `device`,
// loaded once; null where the build has no image for it.
void* interpreter_kernel(int device, const std::string& name = kInterpKernelName);

// The compiled kernel a step launches now: its own, or its tier's once published (null: the
// step runs interpreted).
const CompiledKernel* current_kernel(const Step& st);
// The step's compiled kernel, compiling it now if the background pool has not (a device the
// interpreter has no image for).
CompiledKernelPtr compiled_now(const Step& st);
// The kernel a run (a lazy evaluation or a fused call) launches for a step: current_kernel,
// else compiled_now where the device has no interpreter image for it; the first run that finds
// a tiered step compiled counts the swap. Null: the step runs interpreted (or is a library call).
const CompiledKernel* kernel_for_run(const Step& st, int device);

// Blocks until the background pool has no compile queued or running (tests, benchmarks).
void wait_for_background_compiles();

// One line for plan dumps: the step's tier and why.
std::string describe_tier(const Step& st);

}  // namespace cufuse::detail
