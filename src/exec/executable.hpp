// src/exec/executable.hpp: a plan turned into launches: the kernels (compiled), their
// parameter templates and patches, and the buffers they write. Built once per graph
// structure and cached by the structural key (src/plan/signature.hpp).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen/kernel.hpp"
#include "compile/compiler.hpp"
#include "core/library_call.hpp"
#include "plan/hazards.hpp"
#include "plan/plan.hpp"
#include "plan/signature.hpp"
#include "runtime/kernel_chain.hpp"

namespace cufuse::detail {

struct BufferSpec {
  DType dtype;
  int64_t numel;
  int root;        // the root this buffer holds, or -1 for an intermediate result
  bool is_target;  // written into a Target instead of new memory
};

struct LibInput {
  int leaf = -1;    // read from a leaf of the graph (its memory and layout), or
  int buffer = -1;  // from a buffer an earlier step wrote (contiguous, of this dtype and shape)
  DType dtype = DType::Float32;
  Shape shape;
};

struct TieredStep;  // exec/tiered.hpp

struct Step {
  int group = 0;
  KernelSpec spec;           // kernel steps
  CompiledKernelPtr kernel;  // null when built without compiling, or while `tier` runs it
  // Tiered first calls (exec/tiered.hpp): the interpreter runs the step until its kernel is
  // compiled; `interp_refusal` says why a group waits for NVRTC instead.
  std::shared_ptr<TieredStep> tier;
  std::string interp_refusal;
  // library steps
  std::shared_ptr<const LibraryCall> call;
  std::vector<LibInput> lib_in;
  std::vector<int> lib_out;  // per output of the call: buffer, or -1 (scratch memory)
};

struct Executable {
  Plan plan;
  std::vector<BufferSpec> buffers;
  std::vector<Step> steps;
  std::string text;  // filled when logging or dumping
  ChainSlot chains;  // the kernels as one graph launch, once the plan is run repeatedly
  // Writes into existing memory that this plan cannot make in place (plan/hazards.hpp): the
  // executor then runs it into new memory and copies the written results in.
  WriteHazard hazard;
  // Per step, its group's outputs as node ids of the graph scan (GraphScan::nodes): a cached
  // plan run by the host reference evaluator finds the nodes of the graph in hand by them.
  std::vector<std::vector<int>> output_ids;
  // CUFUSE_REFERENCE_INTERPRET (host plans): per step, the bytecode interpreter's launch of its
  // group (an empty name: the interpreter refuses it), run on the interpreter's host build.
  bool host_programs = false;
  std::vector<KernelSpec> host_interp;
};

// `notes`: per root, why the evaluation computes it (empty: asked for), for dumps and logs.
// `tiered` (with `compile`): a kernel step not in the caches may start on the interpreter
// while NVRTC compiles it in the background (exec/tiered.hpp): lazy evaluation and fuse()
// entries on the device (fuse/replay.cpp swaps the compiled kernel into the entry).
// `host_programs`: each group's bytecode program as well (Executable::host_interp).
// `defer_source` (lazy evaluation, with `tiered`): a step whose kernel no hint says was stored
// gets no source yet (exec/tiered.hpp, "Deferred source"): its first run launches the
// interpreter, then calls make_deferred_sources while the plan still holds its graph.
std::shared_ptr<Executable> build_executable(const std::vector<NodePtr>& roots,
                                             const std::vector<const Target*>& targets, const GraphScan& scan,
                                             bool compile, int arch,
                                             const std::vector<std::string>* notes = nullptr, bool tiered = false,
                                             bool host_programs = false, bool defer_source = false);
// Steps whose source is still to be made (build_executable's defer_source).
bool has_deferred_steps(const Executable& ex);
// Their sources and parameters now, from the plan's graph (`scan` and `targets` of the
// evaluation that built it), each compile queued; a step whose source fails stays interpreted.
void make_deferred_sources(Executable& ex, const GraphScan& scan, const std::vector<const Target*>& targets) noexcept;
std::string describe_executable(const Executable& ex, bool with_source,
                                const std::vector<std::string>* notes = nullptr);

// Is root `r` a plain view of every element of a library call's result (rfft2's swapaxes of
// its column transform)? An evaluation then computes the call and makes the view a leaf on its
// memory, with no copy (executor.cpp); the CLI's report plans it the same way.
bool is_view_of_call(const Node& r);

}  // namespace cufuse::detail
