// codegen/bytecode_format.hpp: the bytecode interpreter's program, as the interpreter kernel
// takes it (one struct by value, like every generated kernel) and as the host runs it
// (src/reference/eval_bytecode.cpp). Plain C++ with no include: the build-time generator
// (tools/gen_interp.cpp) pastes this file's text into the interpreter's CUDA source, so the
// host and the device read one layout. codegen/bytecode.cpp fills it from a fused group;
// codegen/bytecode_ops.hpp numbers the instructions.
#pragma once

#define CFI_MAX_DIMS 8       // collapsed iteration dims
#define CFI_MAX_OPERANDS 24  // memory read or written (inputs and outputs)
#define CFI_MAX_CONSTS 32    // scalar leaves (kernel parameters), 8 bytes each
#define CFI_MAX_INSTRS 448
#define CFI_MAX_REGS 32      // register columns (codegen/bytecode.cpp allocates them by liveness)
#define CFI_TILE 4           // elements each thread runs per instruction dispatch
#define CFN_TILE 16          // narrow programs (CfiProgram::narrow): elements a dispatch (a multiple of 8)
#define CFI_SMEM_BYTES 49152 // the register file's shared memory, at most (no opt-in needed)
#define CFI_MAX_REDS 8       // row programs: reductions
#define CFI_MAX_SECTIONS 8   // row programs: code sections (phases, the row's epilogue, row outputs)
#define CFI_ROW_THREADS 256  // row programs: threads a row (a power of two: the combine's tree)

// One array the program reads or writes: its data pointer (patched per run) and its element
// strides over the collapsed iteration dims (0 where broadcast); in a row program `st` runs
// over the reduced dims and `kst` over the kept dims.
struct CfiOperand {
  unsigned long long ptr;
  long long st[CFI_MAX_DIMS];
  long long kst[CFI_MAX_DIMS];
};

// One instruction: `code` (bytecode_ops.hpp), destination and source registers, and `k`, the
// operand (LOAD, STORE) or constant (CONST) it names.
struct alignas(8) CfiInstr {  // 8 bytes, 8-aligned: the interpreter loads one as a word
  unsigned short code;
  unsigned char dst, a, b, c, k, pad;
};

// A row program (the kernel cf_interp_rows: a reduction group, codegen/bytecode_rows.cpp) is
// sections of code: per element of a row (a phase ending in ACC instructions into the
// reductions' accumulators, then combined over the row's threads; or row-shaped outputs), or
// once per row (the epilogue: reduced values and what is computed from them). RED reads a
// reduction's row value in later sections.
struct CfiProgram {
  long long numel;  // elements of the iteration space (row programs: elements a row)
  int ndim, n_instrs, n_regs, n_operands;
  long long shape[CFI_MAX_DIMS];  // collapsed, row-major (row programs: the reduced dims)
  long long rows;                 // row programs: rows (kept elements)
  int kdim, n_sections, n_reds;
  // Narrow programs (bytecode_ops.hpp: every register at most 4 bytes): `narrow` set, codes
  // renumbered (kNarrow), run by the kernel cf_interp_narrow (the narrow core); code[0, n_pre) (the constants, whose
  // registers nothing else takes) runs in a thread's first tile only.
  unsigned short n_pre;
  unsigned char narrow, pad0;
  long long kshape[CFI_MAX_DIMS];  // row programs: the kept dims, collapsed
  int sec[CFI_MAX_SECTIONS + 1];   // section s runs code[sec[s] .. sec[s + 1])
  unsigned char sec_kind[CFI_MAX_SECTIONS];  // 0: per element of the row, 1: once per row
  unsigned short red_code[CFI_MAX_REDS];     // each reduction's ACC code (op and accumulator type)
  unsigned char red_sec[CFI_MAX_REDS];       // the section that accumulates it
  // Few long rows (codegen/bytecode_rows.cpp: interp_row_dims): each row split over `splits`
  // blocks (gridDim.y; 1: a block a row). A split program is one phase (section 0) and its
  // epilogue (section 1): each block writes its partials into `ws`, the last of a row to count
  // itself in (a ticket) combines them in a fixed order and runs the epilogue. `ws` (the
  // step's workspace, patched per run): a ticket a row (4 bytes, zeroed at launch), padded to
  // 16 bytes, then the partial accumulators [reduction][row][split] and their indices, 8 bytes each.
  int splits, pad1;
  unsigned long long ws;
  CfiOperand opnd[CFI_MAX_OPERANDS];
  unsigned long long consts[CFI_MAX_CONSTS];  // each a scalar in its compute type (low bytes)
  CfiInstr code[CFI_MAX_INSTRS];
};
