// codegen/bytecode.hpp: the pass that turns a fused elementwise group into a program for the
// prebuilt bytecode interpreter (issue 35), from the same group the CUDA emitter gets. The
// program is the interpreter kernel's parameter struct (codegen/bytecode_format.hpp) as a byte
// template with the same patches a generated kernel's has (pointers, scalar values), so the
// executor binds and launches either alike.
//
// The values are the emitter's: each op in its row's compute type with the same conversions
// of its inputs (codegen/expr_emitter.cpp: op_value), float16/bfloat16 results rounded after
// each op, casts as cf_cast; broadcasting and strides are the operands' element strides over
// the iteration dims collapsed as codegen/elementwise_kernel.cpp collapses them. Every thread
// loads what an element reads before it stores any output, as the emitted kernels do.
#pragma once
#include <string>
#include <vector>

#include "codegen/bytecode_format.hpp"
#include "codegen/elementwise_kernel.hpp"
#include "codegen/kernel.hpp"

namespace cufuse::detail {

// The interpreter kernel's entry name (tools/gen_interp.cpp writes it).
inline constexpr const char* kInterpKernelName = "cf_interp";

struct BytecodeProgram {
  // Empty when the interpreter runs the group; else why not ("a gather", "program limits:
  // 40 registers, at most 32"), for the plan dump and CUFUSE_LOG.
  std::string refusal;
  // The launch: name kInterpKernelName, params a CfiProgram's bytes with its patches, dims
  // and shared memory (the register file), numel (0: nothing to launch).
  KernelSpec spec;
};

BytecodeProgram compile_elementwise_bytecode(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                             const LeafBinding& bind);

// The launch shape of a program of `n_regs` registers over `numel` elements: threads per block
// such that their register file fits CFI_SMEM_BYTES, a grid-stride loop over tiles.
LaunchDims interp_dims(int64_t numel, int n_regs);

// The program as text, one instruction a line ("r2 = multiply.f32 r0, r1"), for dumps and tests.
std::string disassemble(const CfiProgram& p);

}  // namespace cufuse::detail
