// tools/gen_interp_narrow.cpp: the narrow core of the bytecode interpreter (issue 35), written
// by the build-time generator (tools/gen_interp.cpp appends it to interp_core.inc; the kernel
// cf_interp_narrow runs it).
//
// A narrow program (codegen/bytecode_ops.hpp: every register at most 4 bytes, its codes
// renumbered densely by kNarrow) runs `cfn_run`: 4-byte register slots, a thread's CFN_TILE
// elements of one register as CFN_TILE / 4 16-byte vectors (cfn_ld4 / cfn_st4, given by the
// includer: the kernel source or src/reference/eval_bytecode.cpp), vector g of every thread of
// the block side by side, so a warp's 16-byte access covers 512 contiguous bytes (no bank
// conflict; a thread's 64 contiguous bytes made each a 4-way conflict); one dispatch per
// CFN_TILE elements; switches over the narrow codes only, the unrolled float32 ops in the first
// (bytecode_ops.hpp: narrow_group), the rolled ones (group 2) out of line in cfn_rolled, so the
// dispatch loop and the unrolled cases lie together in the instruction cache. The unrolled cases other than CONST (narrow_acc) keep their
// result in registers, `acc_`, and read a source from it, from the program's constants or from
// a register as the instruction's fields say (kSrcAcc, kSrcConst); they write the result to
// its register only where a later instruction reads it there (kDstSpill): W1's chain
// neg-multiply-exp-neg-fma touches shared memory once. The other cases read and write
// registers only. Constants read by those run in a thread's first tile only
// (CfiProgram::n_pre). Elements are e0 + k * estep, those with k >= kin out of the iteration
// space.
#include "tools/gen_interp_narrow.hpp"

#include <string>
#include <vector>

#include "codegen/bytecode_ops.hpp"

using namespace cufuse;
using namespace cufuse::detail;
using namespace cufuse::detail::bc;

namespace {

bool is_half(int t) { return t == static_cast<int>(DType::Float16) || t == static_cast<int>(DType::BFloat16); }

// Register r's slots (CfiInstr field `f`; a plain register number) of this thread's tile:
// element k at CFN_E(P, k).
std::string P(const char* f) { return std::string("CFN_P(ins.") + f + ")"; }
// Source field `f` of an accumulator case (narrow_acc): elements [h, h + n) into x.
std::string fetch(const std::string& x, const char* f, int n, const std::string& h = "0") {
  return "cfn_src<" + std::to_string(n) + ">(" + x + ", ins." + f + ", acc_ + " + h + ", p, CFN_R(ins." + f + ", " + h + "), cfn_gs); ";
}
const std::string kSpill = "cfn_spill<CFN_TILE>(ins.dst, acc_, CFN_R(ins.dst, 0), cfn_gs);";

void add(std::string& out, int code, const std::string& body) {
  out += "    case " + std::to_string(kNarrow.index[code]) + ": { " + body + " } break;\n";
}

// An op-like case: sources `src` (field, C type) read, `expr` computed in `pre` (type aliases),
// the result of C type `rt`. kAcc (the unrolled cases, narrow_acc): sources by cfn_src, the
// result into acc_ (and its register where spilled); a one- or two-source case reads the whole
// tile before it computes (its loads wait once a dispatch), a three-source one 8 elements at a
// time. kWide: a rolled loop over 4 elements at a time (one vector a register, the next 4 loaded
// before these compute), for the float32 math functions (sin, log ...: each element's load no
// longer waited on in turn). kRolled: a rolled loop over the elements.
enum Shape { kRolled, kWide, kAcc };
struct Src {
  const char* field;
  std::string type;
};
std::string op_body(const std::vector<Src>& src, const std::string& pre, const std::string& expr, const std::string& rt,
                    Shape shape) {
  static const char* names[] = {"a", "b", "c"};
  const auto compute = [&](const std::string& idx, int n, const std::string& dst) {
    std::string s = "CFI_UNROLL for (int k = 0; k < " + std::to_string(n) + "; ++k) { " + pre;
    for (size_t i = 0; i < src.size(); ++i)
      s += "const " + src[i].type + " " + names[i] + " = cfn_get<" + src[i].type + ">(" + names[i] + "_[" + idx + "]); ";
    return s + dst + " = cfn_put<" + rt + ">(static_cast<" + rt + ">(" + expr + ")); } ";
  };
  std::string s;
  if (shape == kAcc && src.size() <= 2) {
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[CFN_TILE]; " + fetch(std::string(names[i]) + "_", src[i].field, 16);
    s += compute("k", 16, "acc_[k]") + kSpill;
  } else if (shape == kAcc) {
    s += "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { ";
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[8]; " + fetch(std::string(names[i]) + "_", src[i].field, 8, "h");
    s += compute("k", 8, "acc_[h + k]") + "} " + kSpill;
  } else if (shape == kWide) {  // the next 4 elements' loads issued before these 4 compute
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "n_[4]; cfn_ld4(" + names[i] + "n_, " + P(src[i].field) + "); ";
    s += "CFI_LOOP for (int h = 0; h < CFN_TILE; h += 4) { ";
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[4] = {" + names[i] + "n_[0], " + names[i] + "n_[1], " + names[i] + "n_[2], " +
           names[i] + "n_[3]}; if (h + 4 < CFN_TILE) cfn_ld4(" + names[i] + "n_, " + P(src[i].field) + " + (h / 4 + 1) * cfn_gw); ";
    s += "unsigned d_[4]; " + compute("k", 4, "d_[k]") + "cfn_st4(" + P("dst") + " + h / 4 * cfn_gw, d_); }";
  } else {
    for (size_t i = 0; i < src.size(); ++i) s += std::string("const unsigned* ") + names[i] + "_ = " + P(src[i].field) + "; ";
    s += "unsigned* d_ = " + P("dst") + "; CFI_LOOP for (int k = 0; k < CFN_TILE; ++k) { " + pre;
    for (size_t i = 0; i < src.size(); ++i)
      s += "const " + src[i].type + " " + names[i] + " = cfn_get<" + src[i].type + ">(CFN_E(" + names[i] + "_, k)); ";
    s += "CFN_E(d_, k) = cfn_put<" + rt + ">(static_cast<" + rt + ">(" + expr + ")); }";
  }
  return s;
}

// Operand ins.k's elements into acc_: where the space is one dim (or none), a pointer stepped by
// the stride (the unrolled loop keeps no 64-bit element index alive across dispatches); the
// general offsets otherwise (cfn_offsets, out of line).
std::string load_body(int t) {
  const std::string S = kStorageCType[t], RT = kRegCType[reg_of(static_cast<DType>(t))];
  const std::string v = is_half(t) ? "cf_ld(*q_)" : "*q_";
  const std::string g = is_half(t) ? "cf_ld(m_[o_k[k]])" : "m_[o_k[k]]";
  return "const CfiOperand& o_ = p.opnd[ins.k]; const " + S + "* const m_ = (const " + S + "*)o_.ptr; "
         "if (p.ndim <= 1) { const long long s_ = p.ndim == 1 ? o_.st[0] : 0; const " + S + "* q_ = m_ + e0 * s_; "
         "const long long qs_ = estep * s_; "
         "CFI_UNROLL for (int k = 0; k < CFN_TILE; ++k) { acc_[k] = cfn_put<" + RT + ">(k < kin ? (" + RT + ")" + v + " : (" + RT + ")0); q_ += qs_; } "
         "} else { long long o_k[CFN_TILE]; cfn_offsets(p, o_, e0, estep, o_k); "
         "CFI_UNROLL for (int k = 0; k < CFN_TILE; ++k) acc_[k] = cfn_put<" + RT + ">(k < kin ? (" + RT + ")" + g + " : (" + RT + ")0); } " + kSpill;
}
std::string store_body(int t) {
  const std::string S = kStorageCType[t], RT = kRegCType[reg_of(static_cast<DType>(t))];
  const auto conv = [&](const std::string& x) {
    return is_half(t) ? "cf_st<" + S + ">(cfn_get<" + RT + ">(" + x + "))" : "(" + S + ")(cfn_get<" + RT + ">(" + x + "))";
  };
  return "const CfiOperand& o_ = p.opnd[ins.k]; " + S + "* const m_ = (" + S + "*)o_.ptr; unsigned a_[CFN_TILE]; " + fetch("a_", "a", 16) +
         "if (p.ndim <= 1) { const long long s_ = p.ndim == 1 ? o_.st[0] : 0; " + S + "* q_ = m_ + e0 * s_; "
         "const long long qs_ = estep * s_; "
         "CFI_UNROLL for (int k = 0; k < CFN_TILE; ++k) { if (k < kin) *q_ = " + conv("a_[k]") + "; q_ += qs_; } "
         "} else { long long o_k[CFN_TILE]; cfn_offsets(p, o_, e0, estep, o_k); "
         "CFI_UNROLL for (int k = 0; k < CFN_TILE; ++k) if (k < kin) m_[o_k[k]] = " + conv("a_[k]") + "; }";
}

std::string case_text(int code) {
  const Shape un = narrow_acc(code) ? kAcc : kRolled;
  if (code == kConst)
    return "const unsigned v_ = (unsigned)p.consts[ins.k]; unsigned d_[4] = {v_, v_, v_, v_}; "
           "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 4) cfn_st4(" + P("dst") + " + h / 4 * cfn_gw, d_);";
  if (code == kRoundF16 || code == kRoundBF16)
    return op_body({{"a", "float"}}, "", code == kRoundF16 ? "cf_round_f16(a)" : "cf_round_bf16(a)", "float", un);
  if (code >= kLoad && code < kStore) return load_body(code - kLoad);
  if (code >= kStore && code < kStore + kNumDTypes) return store_body(code - kStore);
  if (code >= kConvert && code < kCast) {
    const int f = (code - kConvert) / kRegTypes, t = (code - kConvert) % kRegTypes;
    return op_body({{"a", kRegCType[f]}}, "", t == RBool ? "a != 0" : "a", kRegCType[t], un);
  }
  if (code >= kCast && code < kOp) {
    const int f = (code - kCast) / kNumDTypes, t = (code - kCast) % kNumDTypes;
    std::string e;
    if (is_half(t)) e = std::string(t == static_cast<int>(DType::Float16) ? "cf_round_f16(" : "cf_round_bf16(") + "cf_cast<float>(a))";
    else e = std::string("cf_cast<") + kRegCType[reg_of(static_cast<DType>(t))] + ">(a)";
    return op_body({{"a", kRegCType[f]}}, "", e, kRegCType[reg_of(static_cast<DType>(t))], un);
  }
  const int op = (code - kOp) / kRegTypes;
  const RegType rt = static_cast<RegType>((code - kOp) % kRegTypes);
  const BcRow& row = kBcRows[op];
  const RegType ra = row.rule == TypeRule::Where ? RBool : rt;
  const RegType rr = bool_result(row.rule) ? RBool : rt;
  std::vector<Src> src{{"a", kRegCType[ra]}};
  if (row.arity > 1) src.push_back({"b", kRegCType[rt]});
  if (row.arity > 2) src.push_back({"c", kRegCType[rt]});
  const std::string pre = std::string("using T = ") + kRegCType[rt] + "; using R = " + kRegCType[rr] + "; ";
  const bool math = rt == RF32 && (row.rule == TypeRule::Float || static_cast<Op>(op) == Op::Power);
  return op_body(src, pre, row.expr, kRegCType[rr], un == kRolled && math ? kWide : un);
}

}  // namespace

std::string narrow_core_text() {
  std::string o;
  o += "// The narrow core (tools/gen_interp_narrow.cpp): programs whose registers are all at most 4 bytes.\n";
  // A plain register field's slots; an accumulator case's field (flags masked) from element h.
  o += "#define CFN_P(r) ((unsigned*)(cfn_rf + (int)(r) * cfn_rs))\n";
  o += "#define CFN_R(f, h) (cfn_rf + (int)((f) & " + std::to_string(kSrcIndex) + ") * cfn_rs + (h) / 4 * cfn_gs)\n";
  o += "#define CFN_E(q, k) (q)[((k) >> 2) * cfn_gw + ((k) & 3)]\n";
  o += "static_assert(CFN_TILE == 16, \"the accumulator cases run 16 elements, or twice 8\");\n";
  // Out of line: the caller then keeps no element index e0 + k * estep per k (64-bit values the
  // compiler hoisted out of the dispatch loop, 16 registers, and spilled the loop's counter).
  o += "CFI_COLD void cfn_offsets(const CfiProgram& p, const CfiOperand& o, long long e0, long long estep, long long* off) {\n"
       "  for (int k = 0; k < CFN_TILE; ++k) off[k] = cfi_offset(p, o, e0 + k * estep);\n}\n";
  o += "template <class T> CFI_FN T cfn_get(unsigned w) { union { unsigned w; T v; } u; u.w = w; return u.v; }\n"
       "template <class T> CFI_FN unsigned cfn_put(T v) { union { unsigned w; T v; } u; u.w = 0; u.v = v; return u.w; }\n";
  o += "// An accumulator case's source field f, N elements: the accumulator's (acc), a constant's or\n"
       "// a register's (its vectors from r, gs bytes apart).\n"
       "template <int N> CFI_HOT void cfn_src(unsigned* d, unsigned f, const unsigned* acc, const CfiProgram& p, const char* r, int gs) {\n"
       "  if (f & " + std::to_string(kSrcAcc) + "u) {\n"
       "    CFI_UNROLL for (int k = 0; k < N; ++k) d[k] = acc[k];\n"
       "  } else if (f & " + std::to_string(kSrcConst) + "u) {\n"
       "    const unsigned v = (unsigned)p.consts[f & " + std::to_string(kSrcIndex) + "u];\n"
       "    CFI_UNROLL for (int k = 0; k < N; ++k) d[k] = v;\n"
       "  } else {\n"
       "    CFI_UNROLL for (int g = 0; g < N / 4; ++g) cfn_ld4(d + 4 * g, (const unsigned*)(r + g * gs));\n"
       "  }\n"
       "}\n"
       "// The result's register too where dst says so (a later instruction reads it there).\n"
       "template <int N> CFI_HOT void cfn_spill(unsigned dst, const unsigned* acc, char* r, int gs) {\n"
       "  if (dst & " + std::to_string(kDstSpill) + "u) {\n"
       "    CFI_UNROLL for (int g = 0; g < N / 4; ++g) cfn_st4((unsigned*)(r + g * gs), acc + 4 * g);\n"
       "  }\n"
       "}\n";
  // The rolled cases (group 2: hundreds of them, most of the core's code) out of line, so the
  // dispatch loop and the unrolled cases lie together in the instruction cache. They neither
  // read nor write the accumulator nor the program.
  o += "// The rolled cases (narrow group 2), out of line: code_ a narrow number, ins its fields.\n"
       "CFI_COLD void cfn_rolled(int code_, CfiInstr ins, char* cfn_rf, int cfn_rs, int cfn_gs) {\n"
       "  const int cfn_gw = cfn_gs / 4;\n"
       "  switch (code_) {\n";
  for (int n = kNarrow.end[1]; n < kNarrow.end[2]; ++n) add(o, kNarrow.code[n], case_text(kNarrow.code[n]));
  o += "  default: break;\n  }\n}\n";
  o += "// Runs code[begin, end) on the elements e0 + k * estep, k < kin (<= CFN_TILE); cfn_rf: this\n"
       "// thread's first vector of register 0; cfn_rs, cfn_gs: the bytes from one register, one\n"
       "// vector, to the next (cfn_gw: the words from one vector to the next).\n";
  o += "CFI_HOT void cfn_exec(const CfiProgram& p, char* cfn_rf, int cfn_rs, int cfn_gs, long long e0, long long estep, int kin,\n"
       "                      int begin, int end) {\n"
       "  const int cfn_gw = cfn_gs / 4;\n"
       "  unsigned acc_[CFN_TILE];  // the accumulator: the last result of an accumulator case\n"
       "  CFI_UNROLL for (int k = 0; k < CFN_TILE; ++k) acc_[k] = 0;\n"
       "  // The next instruction word is read a dispatch ahead: its constant-bank load (an indexed\n"
       "  // LDC) no longer stalls the dispatch that decodes it.\n"
       "  const unsigned long long* const code = (const unsigned long long*)p.code;\n"
       "  unsigned long long wn_ = code[begin < end ? begin : 0];\n"
       "  for (int i = begin; i < end; ++i) {\n"
       "    const unsigned long long w_ = wn_;\n"
       "    wn_ = code[i + 1 < end ? i + 1 : i];\n"
       "    const int code_ = (int)(w_ & 0xffff);\n"
       "    CfiInstr ins;\n"
       "    ins.dst = (unsigned char)(w_ >> 16); ins.a = (unsigned char)(w_ >> 24);\n"
       "    ins.b = (unsigned char)(w_ >> 32); ins.c = (unsigned char)(w_ >> 40); ins.k = (unsigned char)(w_ >> 48);\n"
       "    ins.pad = (unsigned char)(w_ >> 56);\n";
  for (int g = 0; g < 2; ++g) {
    o += g == 0 ? "    if (code_ < " + std::to_string(kNarrow.end[0]) + ") {\n"
                : "    } else if (code_ < " + std::to_string(kNarrow.end[1]) + ") {\n";
    o += "    switch (code_) {\n";
    for (int n = g ? kNarrow.end[g - 1] : 0; n < kNarrow.end[g]; ++n) add(o, kNarrow.code[n], case_text(kNarrow.code[n]));
    o += "    default: break;\n    }\n";
  }
  o += "    } else {\n      cfn_rolled(code_, ins, cfn_rf, cfn_rs, cfn_gs);\n    }\n  }\n}\n";
  o += "// A narrow program over the tiles blk, blk + nblk, ... of nthr * CFN_TILE elements (thread tid's\n"
       "// elements base + tid + k * nthr); the constants run in the thread's first tile only. Thread\n"
       "// tid's vector g of register r: smem words ((r * CFN_TILE / 4 + g) * nthr + tid) * 4 ...\n"
       "CFI_HOT void cfn_run(const CfiProgram& p, unsigned* smem, int nthr, int tid, long long blk, long long nblk) {\n"
       "  char* const rf = (char*)(smem + tid * 4);\n"
       "  const long long tile = (long long)nthr * CFN_TILE;\n"
       "  int begin = 0;\n"
       "  for (long long base = blk * tile; base < p.numel; base += nblk * tile) {\n"
       "    const long long e0 = base + tid, rem = p.numel - e0;\n"
       "    const int kin = rem >= tile ? CFN_TILE : rem <= 0 ? 0 : (int)((rem + nthr - 1) / nthr);\n"
       "    cfn_exec(p, rf, nthr * CFN_TILE * 4, nthr * 16, e0, nthr, kin, begin, p.n_instrs);\n"
       "    begin = p.n_pre;\n"
       "  }\n"
       "}\n";
  o += "#undef CFN_P\n#undef CFN_R\n#undef CFN_E\n";
  return o;
}
