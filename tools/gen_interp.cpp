// tools/gen_interp.cpp: the build-time generator of the bytecode interpreter (issue 35).
// No kernel is written by hand: this program writes the interpreter from the op table.
//
//   gen_interp FORMAT_HPP CORE_INC SOURCE_CU IMAGES_CPP [ARCH...]
//
// 1. CORE_INC: the interpreter's core, `cfi_run` (one instruction dispatch per CFI_TILE
//    elements: columnar, the thread's registers of a tile in `cfi_regs`), with one case per
//    instruction number of codegen/bytecode_ops.hpp: loads and stores per dtype, conversions
//    and casts per pair, every op row on every register type it computes in, its text the
//    row's own expression. Plain C++ over the helpers of codegen/device_helpers.inc, so the
//    host compiles the same text (src/reference/eval_bytecode.cpp) and CPU tests run it.
//    Row programs (reductions) add the accumulate and row-value cases, the reductions'
//    identities and combines (cfi_red_init, cfi_red_combine) and the per-section drivers.
//    Then the narrow core (tools/gen_interp_narrow.cpp: programs whose registers are all at
//    most 4 bytes), the kernel cf_interp_narrow's (the host launches it for a program whose
//    CfiProgram::narrow is set).
// 2. SOURCE_CU: the CUDA source of the kernels `cf_interp`, `cf_interp_narrow` and
//    `cf_interp_rows`: the preamble's device texts
//    (codegen/preamble_device.inc), every helper, the program struct (FORMAT_HPP), the core
//    and the kernel, which keeps its register file in shared memory.
// 3. IMAGES_CPP: that source compiled by NVRTC for each ARCH (sm_XX: a CUBIN; compute_XX:
//    PTX, for later archs to JIT), as byte arrays src/compile/interp_images.cpp loads.
#include <nvrtc.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "codegen/bytecode_ops.hpp"
#include "codegen/preamble_device.inc"
#include "tools/gen_interp_narrow.hpp"

using namespace cufuse;
using namespace cufuse::detail;
using namespace cufuse::detail::bc;

namespace {

const char* kHelpers =
#include "device_helpers_str.inc"
    ;

std::string read_file(const char* path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::cerr << "gen_interp: cannot read " << path << "\n";
    std::exit(1);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_if_changed(const char* path, const std::string& text) {
  {
    std::ifstream f(path, std::ios::binary);
    if (f) {
      std::stringstream ss;
      ss << f.rdbuf();
      if (ss.str() == text) return;  // no rebuild of what includes it
    }
  }
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) {
    std::cerr << "gen_interp: cannot write " << path << "\n";
    std::exit(1);
  }
}

bool is_half_dtype(int t) { return t == static_cast<int>(DType::Float16) || t == static_cast<int>(DType::BFloat16); }

// One case: `body` runs for each element k of the tile.
// One case: its body for each k < CFI_TILE, in a loop kept rolled (CFI_LOOP: a quarter of
// the code for NVRTC, whose time is the build's) or, for the hot cases (`unrolled`: memory,
// accumulates and float arithmetic), unrolled, so the tile's register slots are a base address
// and constant strides and the loop's count, compare and branch go.
// `pre`: what the case reads once before its loop (an operand's address, a row value, the
// tile's loads), so the loop does not read it again after each of its stores; `post`: what it
// writes back after the loop (an accumulator kept in a register meanwhile).
void add_case(std::string& out, int code, const std::string& body, bool unrolled = false, const std::string& pre = "",
              const std::string& post = "") {
  out += "    case " + std::to_string(code) + ": { " + pre + (unrolled ? "CFI_UNROLL" : "CFI_LOOP") +
         " for (int k = 0; k < CFI_TILE; ++k) { " + body + " } " + post + "} break;\n";
}

// Operand `field`'s element pointer (`name`, of storage type S, at the row's kept offset) and
// its one-dim stride, read once per dispatch: CFI_AT(name, e) is then element e's offset.
std::string addr(const std::string& name, const std::string& S, const char* field, bool is_const) {
  const std::string f = std::string("ins.") + field, c = is_const ? "const " : "";
  return c + S + "* const " + name + " = (" + c + S + "*)p.opnd[" + f + "].ptr + (row ? row->kofs[" + f +
         "] : 0); const CfiOperand& " + name + "_o = p.opnd[" + f + "]; const long long " + name + "_s = p.ndim == 1 ? " +
         name + "_o.st[0] : 0; const bool " + name + "_f = p.ndim <= 1; ";
}
// Element `k` of operand `name` (addr()): `k` is the loop's variable or a literal 0..3.
std::string at(const std::string& name, const std::string& k = "k") {
  return name + "[CFI_AT(" + name + ", CFI_E(" + k + "))]";
}

// The tile's elements of operand `m` (addr()), loaded together into name0..name3 before a loop
// that uses them one at a time (`pick`), so the loads wait on memory once, not in turn.
std::string prefetch(const std::string& name, const std::string& T, const std::string& m) {
  std::string s;
  for (int k = 0; k < 4; ++k) {
    const std::string K = std::to_string(k);
    s += "const " + T + " " + name + K + " = CFI_IN(" + K + ") ? " + at(m, K) + " : (" + T + ")0; ";
  }
  return s;
}
std::string pick(const std::string& name) {
  return "(k == 0 ? " + name + "0 : k == 1 ? " + name + "1 : k == 2 ? " + name + "2 : " + name + "3)";
}
// A reduction's accumulator in registers for the tile (row->acc is in memory: each element's
// combine would otherwise load and store it, and order every load after that store).
const std::string kAccPre = "unsigned long long acc_ = row->acc[ins.k]; long long acci_ = row->acci[ins.k]; ";
const std::string kAccPost = "row->acc[ins.k] = acc_; row->acci[ins.k] = acci_; ";

// The ops whose float cases are unrolled: the arithmetic of the row normalizations (softmax,
// layernorm) and of the common elementwise groups.
bool hot_op(Op op) {
  switch (op) {
    case Op::Add: case Op::Subtract: case Op::Multiply: case Op::TrueDivide: case Op::Maximum: case Op::Minimum:
    case Op::Negative: case Op::Exp: case Op::Sqrt: case Op::Where:
      return true;
    default:
      return false;
  }
}

std::string R(RegType t, const char* reg) {
  return std::string("CFI_R(") + kRegCType[t] + ", ins." + reg + ", k)";
}

// Reduction kind `kind` in accumulator type t: its identity, and the combine of accumulator
// (a, ai) with value (b, bi), both over 8-byte slots (the value in the low bytes), as
// codegen/reduction_emitter.cpp's identity() and combine() write them.
std::string red_identity(int kind, RegType t) {
  const std::string T = kRegCType[t];
  switch (kind) {
    case KSum: return "(" + T + ")0";
    case KProd: return "(" + T + ")1";
    case KMax: case KArgMax: return "cf_lowest<" + T + ">()";
    case KMin: case KArgMin: return "cf_highest<" + T + ">()";
    case KNanMax: return "cf_nan_or<" + T + ">(cf_lowest<" + T + ">())";
    case KNanMin: return "cf_nan_or<" + T + ">(cf_highest<" + T + ">())";
    case KAny: return "false";
    default: return "true";
  }
}
std::string red_combine(int kind, RegType t, const std::string& a, const std::string& ai, const std::string& b,
                        const std::string& bi) {
  const std::string T = kRegCType[t];
  std::string s = "{ " + T + "& A = *(" + T + "*)&(" + a + "); const " + T + " B = *(const " + T + "*)&(" + b + "); ";
  switch (kind) {
    case KSum: s += "A = cf_add(A, B);"; break;
    case KProd: s += "A = cf_mul(A, B);"; break;
    case KMax: s += "A = cf_red_max(A, B);"; break;
    case KMin: s += "A = cf_red_min(A, B);"; break;
    case KNanMax: s += "A = cf_red_nanmax(A, B);"; break;
    case KNanMin: s += "A = cf_red_nanmin(A, B);"; break;
    case KArgMax: case KArgMin:
      s += "if (cf_arg_better(B, (long long)(" + bi + "), A, " + ai + ", " + (kind == KArgMax ? "true" : "false") +
           ")) { A = B; " + ai + " = (long long)(" + bi + "); }";
      break;
    case KAny: s += "A = A || B;"; break;
    default: s += "A = A && B;"; break;
  }
  return s + " }";
}

std::string core_text() {
  std::string o;
  o += "// Generated by tools/gen_interp.cpp from the op table (cufuse/op_rows.hpp): do not edit.\n";
  o += "// The bytecode interpreter's core: one dispatch per instruction per CFI_TILE elements.\n";
  o += "#define CFI_R(T, r, k) (*(T*)(cfi_regs + ((int)(r) * CFI_TILE + (k)) * cfi_nthr + cfi_tid))\n";
  // Out of line where the build allows (CFI_COLD): the cases inline only the one-dim multiply
  // (CFI_AT), so the many copies of this loop's 64-bit divisions do not swell the kernel.
  o += "CFI_COLD long long cfi_offset(const CfiProgram& p, const CfiOperand& o, long long e) {\n"
       "  long long off = 0;\n"
       "  for (int d = p.ndim - 1; d > 0; --d) { const long long s = p.shape[d]; off += (e % s) * o.st[d]; e /= s; }\n"
       "  return p.ndim > 0 ? off + e * o.st[0] : off;\n"
       "}\n";
  o += "// A row program's state for one row (codegen/bytecode_format.hpp): each operand's offset at\n"
       "// the row's kept coordinates, this thread's accumulators, the reductions' row values.\n"
       "struct CfiRow {\n"
       "  const long long* kofs;\n"
       "  unsigned long long* acc;\n"
       "  long long* acci;\n"
       "  const unsigned long long* val;\n"
       "  const long long* vali;\n"
       "};\n";
  o += "CFI_FN void cfi_red_init(int code, unsigned long long& acc, long long& ai) {\n"
       "  acc = 0;\n  ai = 0x7fffffffffffffffLL;\n  switch (code) {\n";
  for (int kind = 0; kind < kRedKinds; ++kind)
    for (int t = 0; t < kRegTypes; ++t) {
      if (!has_acc(kind, RegType(t))) continue;
      o += "    case " + std::to_string(acc_code(RedKind(kind), RegType(t))) + ": *(" + kRegCType[t] + "*)&acc = " +
           red_identity(kind, RegType(t)) + "; break;\n";
    }
  o += "    default: break;\n  }\n}\n";
  o += "CFI_FN void cfi_red_combine(int code, unsigned long long& acc, long long& ai, unsigned long long v, long long vi) {\n"
       "  switch (code) {\n";
  for (int kind = 0; kind < kRedKinds; ++kind)
    for (int t = 0; t < kRegTypes; ++t) {
      if (!has_acc(kind, RegType(t))) continue;
      o += "    case " + std::to_string(acc_code(RedKind(kind), RegType(t))) + ": " +
           red_combine(kind, RegType(t), "acc", "ai", "v", "vi") + " break;\n";
    }
  o += "    default: break;\n  }\n}\n";
  o += "// Runs code[begin, end) on the elements e0 + k * estep, k < CFI_TILE (those at or past elim\n"
       "// load zeros and store nothing); `row`: a row program's state (null for an elementwise\n"
       "// program). The elements are arithmetic, not an array: an array indexed in a rolled loop\n"
       "// lives in local memory, one load per element and instruction.\n";
  o += "#define CFI_E(k) (e0 + (long long)(k) * estep)\n#define CFI_IN(k) (CFI_E(k) < elim)\n";
  o += "// Element e's offset in operand `m` (addr() in tools/gen_interp.cpp): a multiply where the\n"
       "// iteration space is one dim (or none), the general index arithmetic otherwise.\n"
       "#define CFI_AT(m, e) (m##_f ? (e) * m##_s : cfi_offset(p, m##_o, (e)))\n";
  o += "static_assert(CFI_TILE == 4, \"the prefetched loads are name0..name3\");\n";
  // Inlined into each kernel (CFI_HOT), with cfi_run and cfi_row_section: `p` is then the kernel
  // parameter itself, so the instruction fetch and the operands' pointers and strides are
  // constant-cache loads (LDC), not generic loads through a reference to it.
  o += "CFI_HOT void cfi_exec(const CfiProgram& p, unsigned long long* cfi_regs, int cfi_nthr, int cfi_tid, long long e0,\n"
       "                      long long estep, long long elim, int begin, int end, const CfiRow* row) {\n"
       "  for (int i = begin; i < end; ++i) {\n"
       "    // One 8-byte load of the instruction (CfiInstr is 8 bytes, 8-aligned), not one per field.\n"
       "    const unsigned long long w_ = ((const unsigned long long*)p.code)[i];\n"
       "    CfiInstr ins;\n"
       "    ins.code = (unsigned short)(w_ & 0xffff); ins.dst = (unsigned char)(w_ >> 16); ins.a = (unsigned char)(w_ >> 24);\n"
       "    ins.b = (unsigned char)(w_ >> 32); ins.c = (unsigned char)(w_ >> 40); ins.k = (unsigned char)(w_ >> 48);\n"
       "    ins.pad = (unsigned char)(w_ >> 56);\n"
       "    switch (ins.code) {\n";
  add_case(o, kConst, "CFI_R(unsigned long long, ins.dst, k) = p.consts[ins.k];");
  add_case(o, kRoundF16, R(RF32, "dst") + " = cf_round_f16(" + R(RF32, "a") + ");");
  add_case(o, kRoundBF16, R(RF32, "dst") + " = cf_round_bf16(" + R(RF32, "a") + ");");
  for (int t = 0; t < kBcDTypes; ++t) {
    const RegType rt = reg_of(static_cast<DType>(t));
    const std::string S = kStorageCType[t], RT = kRegCType[rt];
    add_case(o, load_code(static_cast<DType>(t)),
             R(rt, "dst") + " = CFI_IN(k) ? " + (is_half_dtype(t) ? "cf_ld(" : "(") + at("m_") + ") : (" + RT + ")0;", true,
             addr("m_", S, "k", true));
    add_case(o, store_code(static_cast<DType>(t)),
             "if (CFI_IN(k)) " + at("m_") + " = " + (is_half_dtype(t) ? "cf_st<" + S + ">(" : "(" + S + ")(") + R(rt, "a") + ");",
             true, addr("m_", S, "k", false));
  }
  for (int f = 0; f < kRegTypes; ++f)
    for (int t = 0; t < kRegTypes; ++t) {
      if (f == t) continue;
      const std::string v = R(RegType(f), "a");
      add_case(o, convert_code(RegType(f), RegType(t)),
               R(RegType(t), "dst") + " = " + (t == RBool ? "(" + v + " != 0)" : "(" + std::string(kRegCType[t]) + ")(" + v + ")") + ";",
               (f == RF32 || f == RF64) && (t == RF32 || t == RF64));
    }
  for (int f = 0; f < kRegTypes; ++f)
    for (int t = 0; t < kBcDTypes; ++t) {
      const std::string v = R(RegType(f), "a");
      std::string e;
      if (is_half_dtype(t))
        e = std::string(t == static_cast<int>(DType::Float16) ? "cf_round_f16(" : "cf_round_bf16(") +
            (f == RF64 ? v : "cf_cast<float>(" + v + ")") + ")";
      else
        e = std::string("cf_cast<") + kRegCType[reg_of(static_cast<DType>(t))] + ">(" + v + ")";
      add_case(o, cast_code(RegType(f), static_cast<DType>(t)), R(reg_of(static_cast<DType>(t)), "dst") + " = " + e + ";");
    }
  for (int op = 0; op < kNumOps; ++op) {
    const BcRow& row = kBcRows[op];
    for (int t = 0; t < kRegTypes; ++t) {
      if (!has_op(op, RegType(t))) continue;
      const RegType rt = RegType(t);
      const RegType ra = row.rule == TypeRule::Where ? RBool : rt;
      const RegType rr = bool_result(row.rule) ? RBool : rt;
      std::string b = std::string("using T = ") + kRegCType[rt] + "; using R = " + kRegCType[rr] + "; ";
      b += std::string("const ") + kRegCType[ra] + " a = " + R(ra, "a") + "; ";
      if (row.arity > 1) b += "const T b = " + R(rt, "b") + "; ";
      if (row.arity > 2) b += "const T c = " + R(rt, "c") + "; ";
      b += R(rr, "dst") + " = static_cast<R>(" + std::string(row.expr) + ");";
      add_case(o, op_code(static_cast<Op>(op), rt), "{ " + b + " }", (rt == RF32 || rt == RF64) && hot_op(static_cast<Op>(op)));
    }
  }
  // Superinstructions (bytecode_ops.hpp: kHotOps): operand a loaded (LA), operand b a row
  // value (RB), the result stored (ST).
  for (int h = 0; h < kNumHot; ++h)
    for (RegType rt : {RF32, RF64}) {
      const BcRow& row = kBcRows[static_cast<int>(kHotOps[h])];
      const std::string T = kRegCType[rt];
      const std::string S = rt == RF64 ? "double" : "float";
      for (int flags = 1; flags < 8; ++flags) {
        if ((flags & kFuseRB) && row.arity < 2) continue;
        // The loop stays rolled (the variants are many); the tile's loads are issued together
        // before it, and the operands' addresses and the row value read once.
        std::string pre = "using T = " + T + "; using R = " + T + "; ";
        std::string b;
        if (flags & kFuseLA) {
          pre += addr("la_", S, "k", true) + prefetch("la", "T", "la_");
          b += "const T a = " + pick("la") + "; ";
        } else {
          b += "const T a = " + R(rt, "a") + "; ";
        }
        if (row.arity > 1) {
          if (flags & kFuseRB) pre += "const T b = *(const T*)&row->val[ins.c]; ";
          else b += "const T b = " + R(rt, "b") + "; ";
        }
        b += "const R r_ = static_cast<R>(" + std::string(row.expr) + "); ";
        if (flags & kFuseST) {
          pre += addr("st_", S, "pad", false);
          b += "if (CFI_IN(k)) " + at("st_") + " = r_;";
        } else {
          b += R(rt, "dst") + " = r_;";
        }
        add_case(o, fused_code(h, rt, flags), "{ " + b + " }", false, pre);
      }
    }
  for (int kind = 0; kind < kRedKinds; ++kind)
    for (RegType rt : {RF32, RF64}) {
      if (kind == KAny || kind == KAll) continue;
      const std::string T = kRegCType[rt];
      add_case(o, acc_load_code(kind, rt),
               "if (CFI_IN(k)) { const " + T + " v_ = " + pick("v") + "; " +
                   red_combine(kind, rt, "acc_", "acci_", "v_", "CFI_E(k)") + " }",
               true, addr("m_", T, "pad", true) + prefetch("v", T, "m_") + kAccPre, kAccPost);
    }
  for (int kind = 0; kind < kRedKinds; ++kind)
    for (int t = 0; t < kRegTypes; ++t) {
      if (!has_acc(kind, RegType(t))) continue;
      add_case(o, acc_code(RedKind(kind), RegType(t)),
               "if (CFI_IN(k)) " + red_combine(kind, RegType(t), "acc_", "acci_", "CFI_R(unsigned long long, ins.a, k)", "CFI_E(k)"),
               true, kAccPre, kAccPost);
    }
  add_case(o, kRed, "CFI_R(unsigned long long, ins.dst, k) = row->val[ins.k];", true);
  add_case(o, kRedIndex, "CFI_R(long long, ins.dst, k) = row->vali[ins.k];");
  o += "    default: break;\n    }\n  }\n}\n#undef CFI_E\n#undef CFI_IN\n";
  o += "// An elementwise program on the elements base + k * cfi_nthr + cfi_tid, k < CFI_TILE.\n"
       "CFI_HOT void cfi_run(const CfiProgram& p, unsigned long long* cfi_regs, int cfi_nthr, int cfi_tid, long long base) {\n"
       "  cfi_exec(p, cfi_regs, cfi_nthr, cfi_tid, base + cfi_tid, cfi_nthr, p.numel, 0, p.n_instrs, (const CfiRow*)0);\n"
       "}\n";
  o += "// Row programs: each operand's offset at row r's kept coordinates.\n"
       "CFI_FN void cfi_row_offsets(const CfiProgram& p, long long r, long long* kofs) {\n"
       "  for (int a = 0; a < p.n_operands; ++a) {\n"
       "    long long e = r, off = 0;\n"
       "    for (int d = p.kdim - 1; d >= 0; --d) { const long long s = p.kshape[d]; off += (e % s) * p.opnd[a].kst[d]; e /= s; }\n"
       "    kofs[a] = off;\n"
       "  }\n"
       "}\n"
       "CFI_FN void cfi_row_init(const CfiProgram& p, unsigned long long* acc, long long* acci) {\n"
       "  for (int k = 0; k < p.n_reds; ++k) cfi_red_init(p.red_code[k], acc[k], acci[k]);\n"
       "}\n"
       "// Section s over the row's elements (this thread's share, tiles of nthr * CFI_TILE; a row split\n"
       "// over `parts` blocks deals block `part` the tiles part, part + parts, ...: the blocks resident\n"
       "// at a time read one window of memory, as the reduction kernel's split does), or once (an\n"
       "// epilogue section: the caller runs it on one thread).\n"
       "CFI_HOT void cfi_row_section(const CfiProgram& p, unsigned long long* cfi_regs, int cfi_nthr, int cfi_tid, int s,\n"
       "                             int part, int parts, const CfiRow* row) {\n"
       "  // One call site (cfi_exec is inlined): an epilogue section runs element 0 once (k = 0 is in;\n"
       "  // 1, 2, 3 are past elim = 1).\n"
       "  const bool once = p.sec_kind[s] == 1;\n"
       "  const long long n = once ? 1 : p.numel, step = once ? 1 : (long long)cfi_nthr * CFI_TILE;\n"
       "  const long long first = once ? 0 : (long long)part * step, stride = once ? 1 : step * parts;\n"
       "  for (long long base = first; base < n; base += stride)\n"
       "    cfi_exec(p, cfi_regs, cfi_nthr, cfi_tid, once ? 0 : base + cfi_tid, once ? 1 : cfi_nthr, n, p.sec[s], p.sec[s + 1], row);\n"
       "}\n"
       "// A split program's workspace (CfiProgram::ws): the tickets (4 bytes a row, padded to 16),\n"
       "// then the partials [reduction][row][split], then their indices.\n"
       "CFI_FN long long cfi_ws_partials(const CfiProgram& p) { return (p.rows * 4 + 15) / 16 * 16; }\n"
       "CFI_FN long long cfi_ws_at(const CfiProgram& p, int k, long long r) { return ((long long)k * p.rows + r) * p.splits; }\n";
  o += "#undef CFI_R\n";
  return o + narrow_core_text();
}

std::string strip_pragma_once(std::string s) {
  const std::string p = "#pragma once\n";
  if (auto at = s.find(p); at != std::string::npos) s.erase(at, p.size());
  return s;
}

std::string device_source(const std::string& format, const std::string& core) {
  std::string s = "// Generated by tools/gen_interp.cpp: the bytecode interpreter kernel (issue 35).\n";
  // One loop per case, not unrolled: a quarter of the code for NVRTC (its time is the build's).
  s += std::string(kHead) + std::string(kOutlineHead) + "#define CFI_FN __device__\n#define CFI_HOT __device__ __forceinline__\n#define CFI_COLD __device__ __noinline__\n#define CFI_LOOP _Pragma(\"unroll 1\")\n#define CFI_UNROLL _Pragma(\"unroll\")\n";
  s += std::string(kFirst) + kHelpers + kTypes;
  s += strip_pragma_once(format);
  // The narrow core's register vectors (tools/gen_interp_narrow.cpp): a 16-byte shared-memory
  // access per 4 elements of a register, not one 4-byte access an element.
  s += "CFI_HOT void cfn_ld4(unsigned* d, const unsigned* s) {\n"
       "  const cf_vec<unsigned, 4> v = *(const cf_vec<unsigned, 4>*)s; d[0] = v.v[0]; d[1] = v.v[1]; d[2] = v.v[2]; d[3] = v.v[3];\n"
       "}\n"
       "CFI_HOT void cfn_st4(unsigned* d, const unsigned* s) {\n"
       "  cf_vec<unsigned, 4> v; v.v[0] = s[0]; v.v[1] = s[1]; v.v[2] = s[2]; v.v[3] = s[3]; *(cf_vec<unsigned, 4>*)d = v;\n"
       "}\n";
  s += core;
  s += "\n// A grid-stride loop over tiles of blockDim.x * CFI_TILE elements; the register file,\n"
       "// n_regs * CFI_TILE * blockDim.x slots, is the block's dynamic shared memory.\n"
       "extern \"C\" __global__ void __launch_bounds__(256, 4) cf_interp(const __grid_constant__ CfiProgram p) {\n"
       "  extern __shared__ unsigned long long cfi_smem[];\n"
       "  const long long step = (long long)gridDim.x * blockDim.x * CFI_TILE;\n"
       "  for (long long base = (long long)blockIdx.x * blockDim.x * CFI_TILE; base < p.numel; base += step)\n"
       "    cfi_run(p, cfi_smem, (int)blockDim.x, (int)threadIdx.x, base);\n"
       "}\n";
  // The narrow core in a kernel of its own (the host launches it where CfiProgram::narrow is set,
  // codegen/bytecode.cpp): its code is laid out alone, not between the general core's ~930
  // cases (W1-interp's top stall in cf_interp was instruction-cache misses), and its registers
  // are allocated for it alone.
  s += "\n// A narrow program (tools/gen_interp_narrow.cpp): 4-byte registers, CFN_TILE elements a\n"
       "// dispatch, a grid-stride loop over tiles of blockDim.x * CFN_TILE elements.\n"
       "extern \"C\" __global__ void __launch_bounds__(256, 4) cf_interp_narrow(const __grid_constant__ CfiProgram p) {\n"
       "  extern __shared__ unsigned long long cfi_smem[];\n"
       "  cfn_run(p, (unsigned*)cfi_smem, (int)blockDim.x, (int)threadIdx.x, blockIdx.x, gridDim.x);\n"
       "}\n";
  s += "\n// Reduction k's accumulators (a, ai) of the block's threads combined in a fixed tree through\n"
       "// the scratch sv / si into the row value val[k] / vali[k]; every thread of the block calls it.\n"
       "CFI_HOT void cfi_block_combine(const CfiProgram& p, int k, unsigned long long a, long long ai, unsigned long long* sv,\n"
       "                               long long* si, unsigned long long* val, long long* vali, int nthr, int tid) {\n"
       "  sv[tid] = a; si[tid] = ai;\n"
       "  __syncthreads();\n"
       "  for (int o = nthr / 2; o > 0; o >>= 1) {\n"
       "    if (tid < o) cfi_red_combine(p.red_code[k], sv[tid], si[tid], sv[tid + o], si[tid + o]);\n"
       "    __syncthreads();\n"
       "  }\n"
       "  if (tid == 0) { val[k] = sv[0]; vali[k] = si[0]; }\n"
       "  __syncthreads();\n"
       "}\n";
  s += "\n// A row program: a block a row (a grid-stride loop over rows), blockDim.x a power of two.\n"
       "// Shared memory: the register file, then the combine's scratch (a value and an index a\n"
       "// thread), the row values and each operand's kept offset. Each reduction's accumulators\n"
       "// combine over the block in a fixed tree once its section has run.\n"
       "// Few long rows (CfiProgram::splits > 1, gridDim = (rows, splits)): block (r, y) runs the\n"
       "// phase over its tiles of row r and writes its partials; the last block of the row to take a\n"
       "// ticket (zeroed at launch, as the reduction kernel's) combines them, thread t the partials\n"
       "// t, t + nthr, ... in order, then the tree (the same order every run), and runs the epilogue.\n"
       "extern \"C\" __global__ void __launch_bounds__(256, 3) cf_interp_rows(const __grid_constant__ CfiProgram p) {\n"
       "  extern __shared__ unsigned long long cfi_smem[];\n"
       "  const int nthr = (int)blockDim.x, tid = (int)threadIdx.x;\n"
       "  unsigned long long* regs = cfi_smem;\n"
       "  unsigned long long* sv = regs + (long long)(p.n_regs > 0 ? p.n_regs : 1) * CFI_TILE * nthr;\n"
       "  long long* si = (long long*)(sv + nthr);\n"
       "  unsigned long long* val = (unsigned long long*)(si + nthr);\n"
       "  long long* vali = (long long*)(val + CFI_MAX_REDS);\n"
       "  long long* kofs = vali + CFI_MAX_REDS;\n"
       "  unsigned long long acc[CFI_MAX_REDS];\n"
       "  long long acci[CFI_MAX_REDS];\n"
       "  CfiRow row;\n"
       "  row.kofs = kofs; row.acc = acc; row.acci = acci; row.val = val; row.vali = vali;\n"
       "  __shared__ int cfi_last;\n"
       "  const int part = (int)blockIdx.y, parts = (int)gridDim.y;\n"
       "  for (long long r = blockIdx.x; r < p.rows; r += gridDim.x) {\n"
       "    if (tid == 0) cfi_row_offsets(p, r, kofs);\n"
       "    cfi_row_init(p, acc, acci);\n"
       "    __syncthreads();\n"
       "    for (int s = 0; s < p.n_sections; ++s) {\n"
       "      if (p.sec_kind[s] == 0 || tid == 0) cfi_row_section(p, regs, nthr, tid, s, part, parts, &row);\n"
       "      for (int k = 0; k < p.n_reds; ++k) {\n"
       "        if (p.red_sec[k] != s) continue;\n"
       "        cfi_block_combine(p, k, acc[k], acci[k], sv, si, val, vali, nthr, tid);\n"
       "      }\n"
       "      __syncthreads();\n"
       "      if (parts > 1 && s == 0) {  // a split row: this block's partials, the last block combines\n"
       "        unsigned* const tick = (unsigned*)p.ws;\n"
       "        unsigned long long* const wv = (unsigned long long*)(p.ws + cfi_ws_partials(p));\n"
       "        long long* const wi = (long long*)(wv + (long long)p.n_reds * p.rows * parts);\n"
       "        if (tid == 0) {\n"
       "          for (int k = 0; k < p.n_reds; ++k) { wv[cfi_ws_at(p, k, r) + part] = val[k]; wi[cfi_ws_at(p, k, r) + part] = vali[k]; }\n"
       "          __threadfence();\n"
       "          cfi_last = atomicAdd(tick + r, 1u) == (unsigned)parts - 1;\n"
       "        }\n"
       "        __syncthreads();\n"
       "        if (!cfi_last) return;\n"
       "        __threadfence();\n"
       "        for (int k = 0; k < p.n_reds; ++k) {\n"
       "          const volatile unsigned long long* const pv = wv + cfi_ws_at(p, k, r);\n"
       "          const volatile long long* const pi = wi + cfi_ws_at(p, k, r);\n"
       "          unsigned long long a; long long ai;\n"
       "          cfi_red_init(p.red_code[k], a, ai);\n"
       "          // Eight partials loaded before any is combined (not one L2 round trip after another).\n"
       "          for (int q0 = tid; q0 < parts; q0 += 8 * nthr) {\n"
       "            unsigned long long bv[8]; long long bi[8];\n"
       "#pragma unroll\n"
       "            for (int u = 0; u < 8; ++u) { const int q = q0 + u * nthr; bv[u] = q < parts ? pv[q] : 0ull; bi[u] = q < parts ? pi[q] : 0ll; }\n"
       "#pragma unroll 1\n"
       "            for (int u = 0; u < 8 && q0 + u * nthr < parts; ++u) cfi_red_combine(p.red_code[k], a, ai, bv[u], bi[u]);\n"
       "          }\n"
       "          cfi_block_combine(p, k, a, ai, sv, si, val, vali, nthr, tid);\n"
       "        }\n"
       "      }\n"
       "    }\n"
       "  }\n"
       "}\n";
  return s;
}

#define NVRTC_CHECK(x)                                                                   \
  do {                                                                                   \
    nvrtcResult r_ = (x);                                                                \
    if (r_ != NVRTC_SUCCESS) {                                                           \
      std::cerr << "gen_interp: " #x " failed: " << nvrtcGetErrorString(r_) << "\n";     \
      return false;                                                                      \
    }                                                                                    \
  } while (0)

// One image: a CUBIN for "sm_XX", PTX for "compute_XX". False (with the log) if refused.
bool compile(const std::string& src, const std::string& arch, std::vector<char>& out) {
  nvrtcProgram prog;
  NVRTC_CHECK(nvrtcCreateProgram(&prog, src.c_str(), "cf_interp.cu", 0, nullptr, nullptr));
  const std::string a = "-arch=" + arch;
  // ptxas's optimizations on every core (--split-compile=0). The interpreter is one huge switch:
  // ptxas took 150 of the 205 s an sm_90 image took here (76 s on two threads, the same code), and
  // the image is the build's critical path (the library links after it; 515 s of a device build).
  // Only ptxas: NVRTC's own -split-compile also splits NVVM's work and changed the code.
  const char* opts[] = {a.c_str(), "-std=c++17", "--fmad=false", "-default-device", "-minimal",
                        "--ptxas-options=--split-compile=0"};
  const auto t0 = std::chrono::steady_clock::now();
  const nvrtcResult r = nvrtcCompileProgram(prog, 6, opts);
  size_t n = 0;
  nvrtcGetProgramLogSize(prog, &n);
  std::string log(n, '\0');
  if (n) nvrtcGetProgramLog(prog, log.data());
  if (r != NVRTC_SUCCESS) {
    std::cerr << "gen_interp: NVRTC refused " << arch << ": " << nvrtcGetErrorString(r) << "\n" << log << "\n";
    nvrtcDestroyProgram(&prog);
    // An arch this NVRTC does not know is left out; an error in the source fails the build (an
    // sm_80 image once went missing that way, and its PTX failed to JIT on the device).
    if (r == NVRTC_ERROR_COMPILATION) std::_Exit(1);
    return false;
  }
  const bool ptx = arch.rfind("compute_", 0) == 0;
  if (ptx) {
    NVRTC_CHECK(nvrtcGetPTXSize(prog, &n));
    out.resize(n);
    NVRTC_CHECK(nvrtcGetPTX(prog, out.data()));
  } else {
    NVRTC_CHECK(nvrtcGetCUBINSize(prog, &n));
    out.resize(n);
    NVRTC_CHECK(nvrtcGetCUBIN(prog, out.data()));
  }
  nvrtcDestroyProgram(&prog);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "gen_interp: %s: %zu bytes in %.1f s\n", arch.c_str(), out.size(), s);
  return true;
}

std::string images_cpp(const std::vector<std::pair<std::string, std::vector<char>>>& images) {
  std::string s = "// Generated by tools/gen_interp.cpp: the interpreter's images (issue 35), do not edit.\n";
  s += "#include \"compile/interp_images.hpp\"\n\nnamespace cufuse::detail {\nnamespace {\n";
  char buf[8];
  for (size_t i = 0; i < images.size(); ++i) {
    s += "alignas(16) const unsigned char kImage" + std::to_string(i) + "[] = {";
    const auto& b = images[i].second;
    for (size_t j = 0; j < b.size(); ++j) {
      if (j % 24 == 0) s += "\n";
      std::snprintf(buf, sizeof buf, "%u,", static_cast<unsigned char>(b[j]));
      s += buf;
    }
    s += "0};\n";
  }
  s += "const InterpImage kImages[] = {\n";
  for (size_t i = 0; i < images.size(); ++i) {
    const std::string& a = images[i].first;
    const bool ptx = a.rfind("compute_", 0) == 0;
    const std::string num = a.substr(a.find('_') + 1);
    s += "    {" + num + ", " + (ptx ? "true" : "false") + ", kImage" + std::to_string(i) + ", sizeof(kImage" +
         std::to_string(i) + ")" + (ptx ? "" : " - 1") + "},\n";
  }
  if (images.empty()) s += "    {0, false, nullptr, 0},\n";
  s += "};\n}  // namespace\n\n";
  s += "std::span<const InterpImage> interp_images() { return {kImages, " + std::to_string(images.size()) + "}; }\n";
  s += "\n}  // namespace cufuse::detail\n";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::cerr << "usage: gen_interp FORMAT_HPP CORE_INC SOURCE_CU IMAGES_CPP [sm_XX|compute_XX ...]\n";
    return 2;
  }
  const std::string format = read_file(argv[1]);
  const std::string core = core_text();
  write_if_changed(argv[2], core);
  const std::string src = device_source(format, core);
  write_if_changed(argv[3], src);
  // One NVRTC compile per arch, all at once (NVRTC is thread-safe; each takes a minute or more):
  // the build waits for the slowest, not for their sum.
  const int n = argc - 5;
  std::vector<std::vector<char>> img(static_cast<size_t>(n));
  std::vector<char> ok(static_cast<size_t>(n), 0);
  {
    std::vector<std::thread> th;
    for (int i = 0; i < n; ++i)
      th.emplace_back([&, i] { ok[static_cast<size_t>(i)] = compile(src, argv[5 + i], img[static_cast<size_t>(i)]); });
    for (auto& t : th) t.join();
  }
  std::vector<std::pair<std::string, std::vector<char>>> images;
  for (int i = 0; i < n; ++i) {
    if (ok[static_cast<size_t>(i)]) images.emplace_back(argv[5 + i], std::move(img[static_cast<size_t>(i)]));
    else std::cerr << "gen_interp: " << argv[5 + i] << " left out\n";
  }
  write_if_changed(argv[4], images_cpp(images));
  return 0;
}
