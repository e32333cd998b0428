// codegen/bytecode_ops.hpp: the interpreter's instruction numbers, shared by the pass that
// writes programs (codegen/bytecode.cpp) and the build-time generator of the interpreter
// (tools/gen_interp.cpp), which emits one case per valid number. Everything here is constexpr
// over the op table's rows (cufuse/op_rows.hpp), so a new row gets its instructions with no
// edit here.
//
// Registers hold a value in its *register type*, the C type kernels compute a dtype in
// (float for float16 and bfloat16): bool, the eight integers, float, double.
#pragma once
#include <cstdint>

#include "codegen/bytecode_format.hpp"
#include "core/op_table.hpp"

namespace cufuse::detail::bc {

enum RegType : uint8_t { RBool, RI8, RI16, RI32, RI64, RU8, RU16, RU32, RU64, RF32, RF64 };
inline constexpr int kRegTypes = 11;
inline constexpr const char* kRegCType[kRegTypes] = {
    "bool", "signed char", "short", "int", "long long", "unsigned char", "unsigned short", "unsigned int",
    "unsigned long long", "float", "double"};
inline constexpr uint8_t kRegKind[kRegTypes] = {kKB, kKI, kKI, kKI, kKI, kKU, kKU, kKU, kKU, kKF, kKF};

// Each dtype's storage type in kernels (core/dtype.cpp's cuda_type; tests/test_bytecode.cpp
// checks they agree).
// The dtypes the interpreter loads, stores and casts to: the real ones (complex values are
// refused by the bytecode pass, codegen/bytecode.cpp). The instruction numbering keeps
// kNumDTypes slots per dtype-indexed family.
inline constexpr int kBcDTypes = static_cast<int>(DType::Complex64);
inline constexpr const char* kStorageCType[kBcDTypes] = {
    "bool", "signed char", "short", "int", "long long", "unsigned char", "unsigned short", "unsigned int",
    "unsigned long long", "cf_f16", "cf_bf16", "float", "double"};

constexpr RegType reg_of(DType t) {
  switch (t) {
    case DType::Bool: return RBool;
    case DType::Int8: return RI8;
    case DType::Int16: return RI16;
    case DType::Int32: return RI32;
    case DType::Int64: return RI64;
    case DType::UInt8: return RU8;
    case DType::UInt16: return RU16;
    case DType::UInt32: return RU32;
    case DType::UInt64: return RU64;
    case DType::Float64: return RF64;
    default: return RF32;  // float16, bfloat16, float32
  }
}

// Instruction numbers (CfiInstr::code).
inline constexpr uint16_t kNop = 0;
inline constexpr uint16_t kConst = 1;         // dst <- consts[k]
inline constexpr uint16_t kRoundF16 = 2;      // dst <- a rounded to float16 (a float register)
inline constexpr uint16_t kRoundBF16 = 3;     // dst <- a rounded to bfloat16
inline constexpr uint16_t kLoad = 8;          // + dtype: dst <- operand k at the element
inline constexpr uint16_t kStore = kLoad + kNumDTypes;  // + dtype: operand k at the element <- a
inline constexpr uint16_t kConvert = 40;      // + from * 11 + to: a C conversion (to bool: != 0)
inline constexpr uint16_t kCast = kConvert + kRegTypes * kRegTypes;  // + from * 13 + to dtype: astype
inline constexpr uint16_t kOp = kCast + kRegTypes * kNumDTypes;      // + op * 11 + compute register type
// Row programs (bytecode_format.hpp): ACC combines a into reduction k's accumulator (+ kind *
// 11 + accumulator register type; the index of arg kinds is the element's place in the row);
// RED / RED_INDEX read reduction k's row value (its accumulator's bits) / index.
enum RedKind : uint8_t { KSum, KProd, KMax, KMin, KNanMax, KNanMin, KArgMax, KArgMin, KAny, KAll };
inline constexpr int kRedKinds = 10;
inline constexpr uint16_t kAcc = kOp + kNumOps * kRegTypes;
inline constexpr uint16_t kRed = kAcc + kRedKinds * kRegTypes;
inline constexpr uint16_t kRedIndex = kRed + 1;
// Superinstructions: a hot float op (kHotOps, float or double registers, arity 1 or 2) with
// operand a loaded from operand k (LA: a float32/float64 array), operand b a reduction's row
// value (RB: its index in the instruction's c) and/or its result stored into operand `pad`
// (ST: a float32/float64 array), in one dispatch: softmax's row output `exp(x - max) / sum`
// is three dispatches, not seven (codegen/bytecode.cpp: fuse_superinstructions).
inline constexpr Op kHotOps[] = {Op::Add, Op::Subtract, Op::Multiply, Op::TrueDivide, Op::Maximum,
                                 Op::Minimum, Op::Negative, Op::Exp, Op::Sqrt};
inline constexpr int kNumHot = static_cast<int>(sizeof(kHotOps) / sizeof(kHotOps[0]));
enum FuseFlag : uint8_t { kFuseLA = 1, kFuseRB = 2, kFuseST = 4 };
inline constexpr uint16_t kFused = kRedIndex + 1;
constexpr int hot_index(Op op) {
  for (int i = 0; i < kNumHot; ++i)
    if (kHotOps[i] == op) return i;
  return -1;
}
constexpr uint16_t fused_code(int hot, RegType t, int flags) {
  return static_cast<uint16_t>(kFused + (hot * 2 + (t == RF64 ? 1 : 0)) * 8 + flags);
}
// ACC of a float32/float64 array's element loaded in the same dispatch (the load's operand in
// CfiInstr::pad): a sum or max over rows is one dispatch a tile, not two.
inline constexpr uint16_t kAccLoad = kFused + kNumHot * 2 * 8;
constexpr uint16_t acc_load_code(int kind, RegType t) { return static_cast<uint16_t>(kAccLoad + kind * 2 + (t == RF64 ? 1 : 0)); }
inline constexpr uint16_t kCodeCount = kAccLoad + kRedKinds * 2;
constexpr uint16_t acc_code(RedKind k, RegType t) { return kAcc + k * kRegTypes + t; }
// The accumulators the interpreter has: sums and products of 32/64-bit integers and floats,
// max/min and their arg forms of every number, nan-forms of floats, any/all of bools.
constexpr bool has_acc(int kind, RegType t) {
  const bool fl = t == RF32 || t == RF64, wide = t == RI32 || t == RI64 || t == RU32 || t == RU64;
  switch (kind) {
    case KSum: case KProd: return fl || wide;
    case KMax: case KMin: case KArgMax: case KArgMin: return t != RBool;
    case KNanMax: case KNanMin: return fl;
    default: return t == RBool;
  }
}

constexpr uint16_t load_code(DType t) { return kLoad + static_cast<uint16_t>(t); }
constexpr uint16_t store_code(DType t) { return kStore + static_cast<uint16_t>(t); }
constexpr uint16_t convert_code(RegType from, RegType to) { return kConvert + from * kRegTypes + to; }
constexpr uint16_t cast_code(RegType from, DType to) { return kCast + from * kNumDTypes + static_cast<uint16_t>(to); }
constexpr uint16_t op_code(Op op, RegType t) { return kOp + static_cast<uint16_t>(op) * kRegTypes + t; }

// The op rows as constants (op_table.cpp's are not constexpr).
struct BcRow {
  const char* name;
  int arity;
  TypeRule rule;
  uint8_t accepts;
  bool bool_as_int8;
  const char* expr;
};
#define CUFUSE_BC_ROW(id, nm, sym, sig, rule, acc, b8, prec, ...) \
  BcRow{#nm, sig_arity(Sig::sig), TypeRule::rule, acc, b8, #__VA_ARGS__},
inline constexpr BcRow kBcRows[] = {CUFUSE_ELEMENTWISE_OPS(CUFUSE_BC_ROW)};
#undef CUFUSE_BC_ROW

// The register types an op row computes in (as src/reference/op_reference.cpp instantiates).
constexpr uint8_t compute_mask(TypeRule r, uint8_t accepts, bool b8) {
  switch (r) {
    case TypeRule::Same: return b8 ? (accepts & ~kKB) : accepts;
    case TypeRule::Float: case TypeRule::TrueDivide: case TypeRule::FloatReal: return kKF | (accepts & kKC);
    case TypeRule::Logical: return kKB;
    default: return accepts;
  }
}
constexpr bool bool_result(TypeRule r) {
  return r == TypeRule::Compare || r == TypeRule::Logical || r == TypeRule::Predicate;
}
// True where the interpreter has op `op` computing in register type t.
constexpr bool has_op(int op, RegType t) {
  const BcRow& r = kBcRows[op];
  return r.rule != TypeRule::Cast && (compute_mask(r.rule, r.accepts, r.bool_as_int8) & kRegKind[t]) != 0;
}


// Narrow programs (issue 35): an elementwise program whose every register is at most 4 bytes
// (no int64, uint64 or float64 value) runs on the narrow core, the kernel cf_interp_narrow
// (tools/gen_interp_narrow.cpp):
// 4-byte register slots, a thread's CFN_TILE elements of a register as 16-byte vectors in shared
// memory (each vector of a block's threads side by side), constants set once per thread or read from the
// program's constants, the last result kept in registers (narrow_acc). Its instructions are
// renumbered densely (kNarrow) in three groups, each its own switch: the unrolled float32 ops,
// then constants, loads and stores, then the rest (rolled loops); a hot op's dispatch is then a
// search over about 20 cases, not the general core's ~930.
constexpr bool narrow_reg(int t) { return t != RI64 && t != RU64 && t != RF64; }
constexpr bool narrow_dtype(int d) { return d < kBcDTypes && narrow_reg(reg_of(static_cast<DType>(d))); }
// Codes the narrow core has: constants, half rounding, loads and stores of narrow dtypes,
// conversions and casts between them, and every op row on a narrow register type.
constexpr bool is_narrow_code(int c) {
  if (c == kConst || c == kRoundF16 || c == kRoundBF16) return true;
  if (c >= kLoad && c < kStore + kNumDTypes) return narrow_dtype((c - kLoad) % kNumDTypes);
  if (c >= kConvert && c < kCast) {
    const int f = (c - kConvert) / kRegTypes, t = (c - kConvert) % kRegTypes;
    return f != t && narrow_reg(f) && narrow_reg(t);
  }
  if (c >= kCast && c < kOp) return narrow_reg((c - kCast) / kNumDTypes) && narrow_dtype((c - kCast) % kNumDTypes);
  if (c >= kOp && c < kAcc) {
    const int op = (c - kOp) / kRegTypes, t = (c - kOp) % kRegTypes;
    return has_op(op, static_cast<RegType>(t)) && narrow_reg(t);
  }
  return false;
}
// The ops whose float32 cases the narrow core unrolls (the rest run a rolled loop over the tile).
constexpr bool narrow_hot_op(int op) {
  switch (static_cast<Op>(op)) {
    case Op::Add: case Op::Subtract: case Op::Multiply: case Op::TrueDivide: case Op::Maximum: case Op::Minimum:
    case Op::Negative: case Op::Absolute: case Op::Exp: case Op::Sqrt: case Op::Where: case Op::Square:
    case Op::Less: case Op::LessEqual: case Op::Greater: case Op::GreaterEqual: case Op::Fma:
      return true;
    default:
      return false;
  }
}
// A narrow code's group: 0 the unrolled float32 ops (and int32/bool -> float32), 1 constants,
// loads and stores (unrolled too), 2 the rest; -1 for a code the narrow core lacks.
constexpr int narrow_group(int c) {
  if (!is_narrow_code(c)) return -1;
  if (c == kConst || (c >= kLoad && c < kStore + kNumDTypes)) return 1;
  if (c == convert_code(RI32, RF32) || c == convert_code(RBool, RF32)) return 0;
  if (c >= kOp && c < kAcc && (c - kOp) % kRegTypes == RF32 && narrow_hot_op((c - kOp) / kRegTypes)) return 0;
  return 2;
}
constexpr bool narrow_unrolled(int c) { return narrow_group(c) == 0 || narrow_group(c) == 1; }
// The accumulator (issue 35): the narrow core keeps the last result of an unrolled case other
// than CONST (narrow_acc) in its registers, a thread's CFN_TILE elements, until the next such
// case; the other cases neither read nor write it. In those cases' instruction fields
// (codegen/bytecode.cpp: narrow_operands) a source is the accumulator (kSrcAcc), a constant
// consts[i] (kSrcConst | i: a scalar, no CONST and no register) or a register (its number),
// and the result goes to its register too only where dst has kDstSpill (a later instruction
// reads it from there); the other codes' fields are plain register numbers.
constexpr bool narrow_acc(int c) { return narrow_unrolled(c) && c != kConst; }
inline constexpr unsigned char kSrcAcc = 0x40, kSrcConst = 0x80, kSrcIndex = 0x3f, kDstSpill = 0x80;
static_assert(CFI_MAX_REGS <= kSrcIndex + 1 && CFI_MAX_CONSTS <= kSrcIndex + 1, "a narrow field's index is 6 bits");
// The dense numbering, group by group: group g is numbers [end[g - 1], end[g]).
struct NarrowTable {
  int16_t index[kCodeCount];  // narrow number of each code, -1 where the narrow core lacks it
  uint16_t code[kCodeCount];  // the code of each narrow number
  int count = 0;
  int end[3] = {0, 0, 0};
};
constexpr NarrowTable make_narrow_table() {
  NarrowTable t{};
  for (int c = 0; c < kCodeCount; ++c) t.index[c] = -1;
  for (int g = 0; g < 3; ++g) {
    for (int c = 0; c < kCodeCount; ++c)
      if (narrow_group(c) == g) {
        t.index[c] = static_cast<int16_t>(t.count);
        t.code[t.count++] = static_cast<uint16_t>(c);
      }
    t.end[g] = t.count;
  }
  return t;
}
inline constexpr NarrowTable kNarrow = make_narrow_table();

}  // namespace cufuse::detail::bc
