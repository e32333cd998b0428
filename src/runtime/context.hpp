// src/runtime/context.hpp: the one home of cufuse's process state. RuntimeContext holds the
// parsed environment (Settings, runtime/env.hpp) and one slot for each process-wide cache,
// registry or table; nothing else in cufuse keeps mutable state at namespace or function
// scope (per-thread scratch and scopes, thread_local, are per thread, not process state).
//
// The slots are typed by their owners, which may sit in any layer above this one: a state
// struct names its slot (`static constexpr StateSlot kSlot = StateSlot::PlanCache;`) and is
// reached with runtime().state<T>(). The context creates it at first use, under its lock,
// and never destroys it (kernels, nodes and memory may be released while the process exits,
// after static destructors ran), so this layer includes nothing of theirs.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "runtime/env.hpp"

namespace cufuse::detail {

// Every piece of process-wide mutable state, by owner. Add a slot here to add one.
enum class StateSlot : uint8_t {
  MemoryPool,   // runtime/memory_pool.cpp: each device's pool and the small-block cache
  Staging,      // runtime/transfer.cpp: each device's pinned host staging buffers
  Devices,      // runtime/device.cpp: each device's properties, the stream-boundary hook
  LogLock,      // runtime/log.cpp: one line at a time on stderr
  NodeRegistry, // graph/registry.cpp: pending roots and the pending writes of ended threads
  GraphState,   // graph/node.cpp: graph_mutex() and the blocks of node creation numbers
  RandomStream, // graph/creation.cpp: cufuse::random's seed and counter
  CseSwitch,    // plan/cse.cpp: set_cse_enabled's override of CUFUSE_CSE
  FmaSwitch,    // graph/elementwise.cpp: Config::contract_fma's override of CUFUSE_FMA
  UserOps,      // codegen/user_kernel.cpp: the user-op registry (ids live for the process)
  KernelCache,  // compile/compiler.cpp: compiled kernels in memory, single flight
  NvrtcCalls,   // codegen/nvrtc.cpp: NVRTC compilations run
  DiskCache,    // codegen/disk_cache.cpp: the disk cache's settings and warnings
  KernelDump,   // codegen/dump.cpp: CUFUSE_DUMP_KERNELS's directory and warnings
  BlasHandles,  // library/blas_runtime.cpp: cuBLAS, cuBLASLt and cuSOLVER handles per stream
  LtPlans,      // library/gemm_cuda.cpp: cuBLASLt descriptors and algorithms per layout
  PlanCache,    // exec/executor.cpp: executables by graph signature (device and host)
  GraphBudget,  // exec/executor.cpp: cufuse::Config, read on every node built
  Counters,     // core/counters.cpp: cufuse::stats()
  StreamUses,   // exec/binding.cpp: the lock on a Storage's other-stream uses
  IndexErrors,  // graph/gather.cpp: each device's index-error word
  Tiers,        // exec/tiered.cpp: the background compile pool, its keys, the interpreter's kernels
  DistWorld,    // dist/world.cpp: dist::init's world (kind, devices, rank), its failure injection
  DistNccl,     // dist/nccl.cpp: the NCCL communicators, communication streams and events
  kCount
};

class RuntimeContext {
 public:
  // The process's context, made at first use (never at static initialization: no caller
  // needs it then) and never destroyed.
  static RuntimeContext& get() {
    static RuntimeContext* const c = new RuntimeContext;
    return *c;
  }

  // The environment as parsed at the first call (not when the context is made, which may be
  // at static initialization: a program may still setenv in main before using cufuse), or at
  // the last reload_settings. The reference stays valid for the process (earlier snapshots
  // are kept, not freed).
  const Settings& settings() {
    if (const Settings* s = settings_.load(std::memory_order_acquire)) [[likely]]
      return *s;
    return first_settings();
  }

  // Reads the environment again and publishes a new snapshot: for tests (ScopedEnv) and for
  // the CLI's --no-cache. Code that cached a value at first use (a thread's starting
  // backend) keeps it. Each warning is printed once per process, however often a bad value
  // is read.
  void reload_settings();

  // The state of slot T::kSlot, default-constructed at first use. Thread-safe; after the
  // first call one acquire load.
  template <class T>
  T& state() {
    constexpr size_t i = static_cast<size_t>(T::kSlot);
    static_assert(i < kSlots, "T::kSlot must be a StateSlot");
    if (void* p = slots_[i].load(std::memory_order_acquire)) [[likely]]
      return *static_cast<T*>(p);
    return *static_cast<T*>(make_state(i, [] { return static_cast<void*>(new T); }));
  }

  RuntimeContext(const RuntimeContext&) = delete;
  RuntimeContext& operator=(const RuntimeContext&) = delete;

 private:
  static constexpr size_t kSlots = static_cast<size_t>(StateSlot::kCount);

  RuntimeContext();
  void* make_state(size_t slot, void* (*make)());
  const Settings& first_settings();
  void publish(ParsedEnv parsed);  // caller holds mu_

  std::atomic<void*> slots_[kSlots] = {};
  std::atomic<const Settings*> settings_{nullptr};
  std::recursive_mutex slots_mu_;  // slot creation (a state's constructor may reach another)
  std::mutex mu_;                  // snapshots_, warned_ and generation_
  std::vector<std::unique_ptr<const Settings>> snapshots_;
  std::set<std::string> warned_;
  uint64_t generation_ = 0;
};

inline RuntimeContext& runtime() { return RuntimeContext::get(); }
inline const Settings& settings() { return RuntimeContext::get().settings(); }

}  // namespace cufuse::detail
