// src/fuse/engine.hpp: the state behind cufuse::fuse (include/cufuse/fuse.hpp): one traced
// signature (an Entry: what the trace assumed about each argument, the executable planned
// from the traced graph, and the binding table that turns a call's arguments into kernel
// parameters) and the engine holding a function's entries. trace.cpp builds entries;
// replay.cpp matches a call to an entry and launches it.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "core/node.hpp"
#include "cufuse/fuse.hpp"
#include "cufuse/precompile.hpp"
#include "exec/executable.hpp"
#include "graph/tracing.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

// What a trace assumed about one argument. A call matches when every argument does.
struct ArgSig {
  bool is_array = false;
  // arrays
  DType dtype = DType::Float32;
  Shape shape;
  Strides strides;
  uint8_t mod16 = 0;     // data address mod 16 bytes
  int16_t device = -1;   // -1: host memory (reference backend)
  int64_t residue = 0;   // mod16 in elements: the traced placeholder's layout offset
  // scalars
  Scalar::Kind kind = Scalar::Kind::Int;
  bool weak = true;
  DType sdtype = DType::Int64;
  bool by_value = false;  // the traced code used the value itself: it is part of the signature
  Scalar value;
};

// Where the kernel parameters of one leaf of the planned graph come from at replay.
struct LeafBind {
  enum class Kind : uint8_t { Fixed, ArgData, ArgScalar } kind = Kind::Fixed;
  int slot = -1;            // the argument (ArgData, ArgScalar)
  int64_t delta_bytes = 0;  // ArgData: from the argument's data address to this leaf's
  const char* fixed = nullptr;  // Fixed Buffer leaves: captured memory (kept alive by the plan)
};

struct StepBind {
  std::vector<unsigned char> params;  // every fixed patch already applied
  std::vector<Patch> dynamic;         // patches each call applies (arguments, buffers, workspace)
  void* kernel = nullptr;             // the loaded kernel on the entry's device (null while tiered)
  // A step that started on the bytecode interpreter (Step::tier, exec/tiered.hpp): the
  // interpreter's template, used until the background compile publishes the kernel.
  std::vector<unsigned char> interp_params;
  std::vector<Patch> interp_dynamic;
};

class KernelChain;  // runtime/kernel_chain.hpp: an entry's kernels as one graph launch

struct Entry {
  std::vector<ArgSig> sig;
  int device = -1;      // where it runs (-1: the host reference)
  bool host = false;
  std::vector<std::pair<int, DType>> fits;  // weak int scalar argument slot -> dtype it must fit
  std::vector<NodePtr> roots;         // the traced results (they keep the traced graph alive)
  std::vector<const Node*> leaves;    // the plan's leaves, in scan order
  std::vector<LeafBind> binds;        // per leaf
  std::shared_ptr<Executable> ex;
  std::vector<StepBind> steps;        // per executable step
  std::vector<int> out_root;          // result k -> root (== its buffer)
  std::vector<uint64_t> root_hash;    // hash of the Buffer leaf each root becomes
  std::vector<Layout> root_layout;    // and its (contiguous) layout
  std::vector<std::shared_ptr<Storage>> captured;  // memory read at fixed addresses
  std::vector<std::pair<const Node*, int>> arg_scalar_nodes;  // Scalar leaves bound to arguments
  int kernel_steps = 0;
  std::shared_ptr<KernelChain> chain;  // cuda_graph on and the plan is kernels only
  // Tiered first calls: a step still runs on the interpreter. The chain is made (under
  // chain_mu) by the first call that finds every step compiled, then this is cleared
  // (release: a call that reads it false sees the chain).
  std::atomic<bool> tier_pending{false};
  std::mutex chain_mu;
  bool wants_chain = false;  // cuda_graph on, kernels only, graphs enabled: a chain once compiled
  uint64_t last_use = 0;
  ~Entry();
};

struct FuseEngine {
  FuseOptions opt;
  std::mutex mu;
  std::vector<std::shared_ptr<Entry>> entries;  // most recently used first
  uint64_t clock = 0;
  std::atomic<uint64_t> traces{0}, replays{0}, graph_launches{0};
  std::atomic<bool> scalars_by_value{false};  // set once a trace found scalars used other than as operands
};

// Traces `thunk` on the call's arguments (arrays already in memory) into a new entry.
// `precompile` (cufuse::precompile, fuse/precompile.cpp): the array arguments are
// placeholders standing for contiguous, aligned arrays on the current device (the host
// without a device or on the reference backend), and the kernels are compiled for `arch`
// into the caches, counted in *precompile.
std::shared_ptr<Entry> trace_entry(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs,
                                   int nout, PrecompileStats* precompile = nullptr);
// The entry's kernels as one graph launch (en.chain), every step's kernel loaded (at the
// trace, or by the replay that swapped the last interpreted step for its compiled kernel).
void make_entry_chain(Entry& en);
// Does an array argument match what the trace assumed (in memory, dtype, shape, strides,
// device, alignment)? Sets *data to its data address.
inline bool array_matches(const ArgSig& s, const Array& a, const char** data) {
  const NodePtr& n = a.node();
  if (!n || !n->is_materialized()) return false;
  if (n->dtype != s.dtype || n->layout.shape != s.shape || n->layout.strides != s.strides) return false;
  const Storage& st = *n->storage;
  if (st.device != s.device) return false;
  const char* p = static_cast<const char*>(st.ptr) + n->layout.offset * itemsize(n->dtype);
  if ((reinterpret_cast<uintptr_t>(p) & 15u) != s.mod16) return false;
  *data = p;
  return true;
}
// Does the call match the entry? Fills data[i] with array i's data address.
bool matches(const Entry& en, const FuseArg* args, int nargs, const char** data);
// The parameter bytes of kernel step `step` for one call (what replay launches with).
void bind_step(const Entry& en, size_t step, const FuseArg* args, const char* const* data, void* const* buffers,
               void* workspace, std::vector<unsigned char>& out);
// Wraps each result's new block in an Array (out[k]: result k; a result returned twice is one
// Array twice). The typed layer's run site (src/typed) delivers through it too.
void deliver(const Entry& en, std::shared_ptr<Storage>* stor, Array* out);
// A call's array arguments and the entry's captured memory were used on `stream`.
void note_entry_uses(const Entry& en, const FuseArg* args, void* stream, int device);
// Runs an entry for one call (results into out[0..nroots) by result index).
void replay_entry(FuseEngine& e, Entry& en, const FuseArg* args, const char* const* data, Array* out);

}  // namespace cufuse::detail
