// codegen/bytecode.hpp: the passes that turn a fused elementwise group (bytecode.cpp) or a
// reduction group (bytecode_rows.cpp) into a program for the prebuilt bytecode interpreter
// (issue 35), from the same group the CUDA emitter gets. The
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
#include "codegen/reduction_kernel.hpp"

namespace cufuse::detail {

// The interpreter kernels' entry names (tools/gen_interp.cpp writes them): elementwise
// programs, narrow elementwise programs (CfiProgram::narrow: the narrow core, a kernel of its
// own), and row programs (reduction groups).
inline constexpr const char* kInterpKernelName = "cf_interp";
inline constexpr const char* kInterpNarrowKernelName = "cf_interp_narrow";
inline constexpr const char* kInterpRowsKernelName = "cf_interp_rows";

struct BytecodeProgram {
  // Empty when the interpreter runs the group; else why not ("a gather", "program limits:
  // 40 registers, at most 32"), for the plan dump and CUFUSE_LOG.
  std::string refusal;
  // The launch: name kInterpKernelName (kInterpNarrowKernelName for a narrow program), params a CfiProgram's bytes with its patches, dims
  // and shared memory (the register file), numel (0: nothing to launch).
  KernelSpec spec;
};

BytecodeProgram compile_elementwise_bytecode(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                             const LeafBinding& bind);

// A reduction group (the spec the reduction emitter gets) as a row program for
// cf_interp_rows (codegen/bytecode_rows.cpp): sum, prod, max, min and their nan- and arg-
// forms, any, all, with their prologues and epilogues, in phases (a later reduction reading
// earlier ones' row values), and row-shaped outputs (softmax, layernorm). A block a row; few
// long rows of one phase and no row outputs split over several blocks (CfiProgram::splits, the
// step's workspace holding their partials); few very long rows of other programs are refused
// (one block would run each).
BytecodeProgram compile_reduction_bytecode(const ReductionSpec& spec, const LeafBinding& bind);
// Its launch: a power-of-two block whose register file and combine scratch fit
// CFI_SMEM_BYTES, a grid-stride loop over the rows; where `splittable`, few long rows split
// over grid[1] blocks each (the reduction kernel's choice of gridDim.y).
LaunchDims interp_row_dims(int64_t rows, int64_t row_len, int n_regs, bool splittable);

// The launch shape of a program of `n_regs` registers over `numel` elements: threads per block
// such that their register file fits CFI_SMEM_BYTES, a grid-stride loop over tiles (a narrow
// program's: 4-byte slots, CFN_TILE elements a thread).
LaunchDims interp_dims(int64_t numel, int n_regs, bool narrow = false);

// The program as text, one instruction a line ("r2 = multiply.f32 r0, r1"), for dumps and tests.
std::string disassemble(const CfiProgram& p);

}  // namespace cufuse::detail
