// codegen/bytecode_values.hpp: what the two bytecode passes share (internal to codegen/):
// elementwise groups (bytecode.cpp) and reduction groups (bytecode_rows.cpp). Values are
// numbered as they are emitted and get registers by liveness (allocate); an op node's value
// is the emitter's (its row's compute type, the same conversions, half rounding after it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/bytecode_format.hpp"
#include "codegen/bytecode_ops.hpp"
#include "codegen/kernel.hpp"
#include "core/node.hpp"

namespace cufuse::detail::bc {

struct VInstr {
  uint16_t code;
  int dst = -1;  // value defined, or -1
  int src[3] = {-1, -1, -1};
  int k = 0;     // operand, constant or reduction
  int red = -1;  // a superinstruction's row value (RB), written to CfiInstr::c
  int store = -1;  // a superinstruction's stored operand (ST), written to CfiInstr::pad
  int load = -1;   // an ACC's loaded operand (kAccLoad), written to CfiInstr::pad
  // Narrow programs' accumulator cases (bytecode_ops.hpp: narrow_acc), source j read from the
  // accumulator (kSrcAcc) or from the constant lit[j] (kSrcConst) instead of src[j] (then -1);
  // `spill`: the result written to its register dst too (kDstSpill).
  bool acc[3] = {false, false, false};
  int lit[3] = {-1, -1, -1};
  bool spill = false;
};

// Fuses loads, row values and stores into the hot float ops that read or write them
// (bytecode_ops.hpp: kHotOps); on code before register allocation, where values are single
// assignments. A store is fused only into the instruction right before it (moved earlier it
// could pass a load of the same memory), a load only where no store comes between.
void fuse_superinstructions(std::vector<VInstr>& code, int nvals);

struct ValueCode {
  std::string refusal;
  std::vector<VInstr> code;
  int nvals = 0;

  int emit(uint16_t c, int a = -1, int b = -1, int cc = -1, int k = 0);
  void put(uint16_t c, int a, int k);  // an instruction that defines no value (STORE, ACC)
  void refuse(std::string why) {
    if (refusal.empty()) refusal = std::move(why);
  }
  // v of dtype `from` as the compute dtype `to` (expr_emitter.cpp's convert).
  int convert(int v, DType from, DType to);
  // Elementwise node n over its inputs' values `in` (one per input); -1 after a refusal.
  int op(const Node* n, const int* in);
  // A node the passes cannot run at all: why (empty: none of those).
  static std::string unsupported(const Node* n);
};

// A narrow program's accumulator cases (bytecode_ops.hpp: narrow_acc) read a scalar source
// from the program's constants (VInstr::lit); a CONST no longer read goes.
void fold_scalar_operands(std::vector<VInstr>& code, int nvals);
// A narrow program in its final order: the accumulator cases read the value the accumulator
// holds from it (VInstr::acc; the last such case's result: the other cases leave it), and keep
// their result in a register (VInstr::spill) only where some source still reads it there, no
// register otherwise (dst -1).
void chain_accumulator(std::vector<VInstr>& code, int nvals);

// Physical registers by liveness over `code` (values < nvals); returns how many. The values
// code[0, pinned) defines keep their registers to the end (a narrow program's constants).
int allocate(std::vector<VInstr>& code, int nvals, int pinned = 0);

// Writes `code` into p.code from instruction `at` on.
void write_code(CfiProgram& p, int at, const std::vector<VInstr>& code);

// The pointer patch of an operand reading `mem` (a leaf's memory, or a buffer an earlier group
// wrote), or of an output into `buffer` (mem null).
Patch operand_patch(size_t offset, const Node* mem, int buffer, const LeafBinding& bind);

}  // namespace cufuse::detail::bc
