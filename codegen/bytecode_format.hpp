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
#define CFI_SMEM_BYTES 49152 // the register file's shared memory, at most (no opt-in needed)

// One array the program reads or writes: its data pointer (patched per run) and its element
// strides over the collapsed iteration dims (0 where broadcast).
struct CfiOperand {
  unsigned long long ptr;
  long long st[CFI_MAX_DIMS];
};

// One instruction: `code` (bytecode_ops.hpp), destination and source registers, and `k`, the
// operand (LOAD, STORE) or constant (CONST) it names.
struct CfiInstr {
  unsigned short code;
  unsigned char dst, a, b, c, k, pad;
};

struct CfiProgram {
  long long numel;  // elements of the iteration space
  int ndim, n_instrs, n_regs, n_operands;
  long long shape[CFI_MAX_DIMS];  // collapsed, row-major
  CfiOperand opnd[CFI_MAX_OPERANDS];
  unsigned long long consts[CFI_MAX_CONSTS];  // each a scalar in its compute type (low bytes)
  CfiInstr code[CFI_MAX_INSTRS];
};
