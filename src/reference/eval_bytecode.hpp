// src/reference/eval_bytecode.hpp: the bytecode interpreter run on the host (issue 35): the
// same generated core the interpreter kernel runs (tools/gen_interp.cpp writes it once;
// here it is compiled as host C++ over codegen/host_helpers.hpp), so CPU tests check the
// programs codegen/bytecode.cpp writes and the generator's text against the reference.
#pragma once
#include "codegen/bytecode_format.hpp"

namespace cufuse::detail {

// Runs `p` over its whole iteration space, reading and writing host memory at the operands'
// pointers (the program's patches applied), one tile of CFI_TILE elements at a time (a narrow
// program: the narrow core, as three threads of a block, CFN_TILE elements a tile).
void run_bytecode_on_host(const CfiProgram& p);

// Runs a row program (a reduction group) as the kernel cf_interp_rows does: each row by
// `threads` simulated threads (a power of two), their accumulators combined in the kernel's tree;
// a split program's rows (CfiProgram::splits) by that many simulated blocks each, their partials
// combined in the kernel's order (host memory of its own: the program's workspace is not read).
void run_row_bytecode_on_host(const CfiProgram& p, int threads = 4);

}  // namespace cufuse::detail
