// src/core/library_call.hpp: a library node (matmul, einsum contraction, solver call)
// says what it computes; src/library does the call. The planner gives a call its own
// group: its inputs are read as they are where the call can read their layout (a GEMM
// reads transposed and strided views through op flags, leading dimensions and batch
// strides), otherwise one elementwise kernel writes them contiguously first; its outputs
// go to memory, read by later kernels (the elementwise work after a GEMM is one kernel).
// Each output of a call is a node of kind Library; the nodes of one call share it.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

struct HostArray;
struct KernelSpec;  // codegen/kernel.hpp
struct LeafBinding;  // codegen/expr_emitter.hpp

// An operand as the call sees it: memory, dtype, shape and strides in elements.
struct TensorRef {
  void* ptr = nullptr;  // device memory (host memory under the reference backend)
  DType dtype = DType::Float32;
  Shape shape;
  Strides strides;
};

class LibraryCall {
 public:
  virtual ~LibraryCall() = default;
  // One line for plan dumps: "matmul float32 (64, 128) @ (128, 32) -> (64, 32), cuBLAS, TF32 off".
  virtual std::string describe() const = 0;
  virtual int num_outputs() const = 0;
  virtual DType output_dtype(int i) const = 0;
  virtual Shape output_shape(int i) const = 0;
  // Can input i be read with this layout as it is? (Default: contiguous only.)
  virtual bool accepts_layout(int input, const Layout& l, DType t) const { return l.is_contiguous(); }
  // Runs on the device, on `stream`; every output is contiguous new memory.
  virtual void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const = 0;
  // The host reference: inputs and outputs row-major HostArrays (outputs pre-shaped).
  virtual void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const = 0;
  // Attributes that change the generated plan or call (for plan caching): must differ
  // between calls that compute different things from same-shaped inputs.
  virtual uint64_t attributes_hash() const = 0;
  // A call that runs a kernel cufuse generates (not a vendor library) fills `k` with it,
  // pointers unbound, for plan dumps; the others return false.
  virtual bool generated_kernel(KernelSpec& k) const { return false; }
  // A call whose device run is one kernel cufuse generates may give that kernel to the plan as
  // a kernel step instead (true, `k` filled): its inputs bound as any kernel's are (leaves,
  // earlier groups' results: `bind`), its outputs the plan's buffers `out_buffers` (per output
  // of the call, -1 for none). Such a call may also compute an input element by element from
  // its elementwise producer (fuses_input): the planner's fused-input rule then hands it the
  // producer's subgraph instead of writing that input to memory first.
  virtual bool emit_kernel(const std::vector<const Node*>& inputs, const std::vector<int>& out_buffers,
                           const LeafBinding& bind, KernelSpec& k) const {
    return false;
  }
  virtual bool fuses_input(int input) const { return false; }
  // The GEMM-epilogue rule (plan/epilogue.cpp): can this call also compute, in the same run,
  // a bias add along its output's last axis and/or a GELU on its one output? (A plain GEMM
  // can; the default, and every other call, cannot.)
  virtual bool takes_epilogue() const { return false; }
  // The call computing gelu?(this call's output + bias?), its bias as input 2; only where
  // takes_epilogue().
  virtual std::shared_ptr<const LibraryCall> with_epilogue(bool bias, bool gelu) const { return nullptr; }
};

// LibraryAttrs: core/node_attrs.hpp.
inline const LibraryAttrs& library_attrs(const Node& n) { return std::get<LibraryAttrs>(n.attrs); }

// The nodes of a call, one per output (all share `inputs`).
std::vector<NodePtr> make_library_nodes(std::shared_ptr<const LibraryCall> call, InputVec inputs);

}  // namespace cufuse::detail
