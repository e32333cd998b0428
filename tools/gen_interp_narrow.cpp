// tools/gen_interp_narrow.cpp: the narrow core of the bytecode interpreter (issue 35), written
// by the build-time generator (tools/gen_interp.cpp appends it to interp_core.inc).
//
// A narrow program (codegen/bytecode_ops.hpp: every register at most 4 bytes, its codes
// renumbered densely by kNarrow) runs `cfn_run`: 4-byte register slots, a thread's CFN_TILE
// elements of one register contiguous in shared memory, so the unrolled cases read and write 8
// elements of a register as two 16-byte vectors (cfn_ld8 / cfn_st8, given by the includer: the
// kernel source or src/reference/eval_bytecode.cpp), against one 8-byte slot access per element
// in the general core; one dispatch per CFN_TILE elements, not 4; switches over the narrow codes
// only, the unrolled float32 ops in the first (bytecode_ops.hpp: narrow_group); a scalar
// operand of a hot float32 op read from the program's constants (const_operand_code); other
// constants set in a thread's first tile only (CfiProgram::n_pre). Elements are e0 + k * estep,
// those with k >= kin out of the iteration space.
#include "tools/gen_interp_narrow.hpp"

#include <string>
#include <vector>

#include "codegen/bytecode_ops.hpp"

using namespace cufuse;
using namespace cufuse::detail;
using namespace cufuse::detail::bc;

namespace {

bool is_half(int t) { return t == static_cast<int>(DType::Float16) || t == static_cast<int>(DType::BFloat16); }

// Register r's slots (CfiInstr field `f`) of this thread's tile.
std::string P(const char* f) { return std::string("CFN_P(ins.") + f + ")"; }

void add(std::string& out, int code, const std::string& body) {
  out += "    case " + std::to_string(kNarrow.index[code]) + ": { " + body + " } break;\n";
}

// An op-like case: sources `src` (field, C type) read, `expr` computed in `pre` (type aliases),
// the result of C type `rt` written to register dst. Unrolled (kUnrolled): 16-byte vectors, a
// one- or two-source case reading the whole tile before it computes (its loads wait once a
// dispatch), 8 elements at a time otherwise. kWide: a rolled loop over 4 elements at a time
// (one vector a register, the next 4 loaded before these compute), for the float32 math
// functions (sin, log ...: each element's load no longer waited on in turn). kRolled: a rolled
// loop over the elements.
enum Shape { kRolled, kWide, kUnrolled };
struct Src {
  const char* field;
  std::string type;
};
std::string op_body(const std::vector<Src>& src, const std::string& pre, const std::string& expr, const std::string& rt,
                    Shape shape) {
  static const char* names[] = {"a", "b", "c"};
  const auto compute = [&](const std::string& idx, int n) {
    std::string s = "unsigned d_[" + std::to_string(n) + "]; CFI_UNROLL for (int k = 0; k < " + std::to_string(n) + "; ++k) { " + pre;
    for (size_t i = 0; i < src.size(); ++i)
      s += "const " + src[i].type + " " + names[i] + " = cfn_get<" + src[i].type + ">(" + names[i] + "_[" + idx + "]); ";
    return s + "d_[k] = cfn_put<" + rt + ">(static_cast<" + rt + ">(" + expr + ")); } ";
  };
  std::string s;
  if (shape == kUnrolled && src.size() <= 2) {
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[CFN_TILE]; CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) cfn_ld8(" +
           names[i] + "_ + h, " + P(src[i].field) + " + h); ";
    s += "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { " + compute("h + k", 8) + "cfn_st8(" + P("dst") + " + h, d_); }";
  } else if (shape == kUnrolled) {
    s += "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { ";
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[8]; cfn_ld8(" + names[i] + "_, " + P(src[i].field) + " + h); ";
    s += compute("k", 8) + "cfn_st8(" + P("dst") + " + h, d_); }";
  } else if (shape == kWide) {  // the next 4 elements' loads issued before these 4 compute
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "n_[4]; cfn_ld4(" + names[i] + "n_, " + P(src[i].field) + "); ";
    s += "CFI_LOOP for (int h = 0; h < CFN_TILE; h += 4) { ";
    for (size_t i = 0; i < src.size(); ++i)
      s += std::string("unsigned ") + names[i] + "_[4] = {" + names[i] + "n_[0], " + names[i] + "n_[1], " + names[i] + "n_[2], " +
           names[i] + "n_[3]}; if (h + 4 < CFN_TILE) cfn_ld4(" + names[i] + "n_, " + P(src[i].field) + " + h + 4); ";
    s += compute("k", 4) + "cfn_st4(" + P("dst") + " + h, d_); }";
  } else {
    for (size_t i = 0; i < src.size(); ++i) s += std::string("const unsigned* ") + names[i] + "_ = " + P(src[i].field) + "; ";
    s += "unsigned* d_ = " + P("dst") + "; CFI_LOOP for (int k = 0; k < CFN_TILE; ++k) { " + pre;
    for (size_t i = 0; i < src.size(); ++i)
      s += "const " + src[i].type + " " + names[i] + " = cfn_get<" + src[i].type + ">(" + names[i] + "_[k]); ";
    s += "d_[k] = cfn_put<" + rt + ">(static_cast<" + rt + ">(" + expr + ")); }";
  }
  return s;
}

// Operand ins.k's elements: where the space is one dim (or none), a pointer stepped by the
// stride (the unrolled loop keeps no 64-bit element index alive across dispatches); the
// general offset otherwise (cfn_offset, out of line, a rolled loop).
std::string load_body(int t) {
  const std::string S = kStorageCType[t], RT = kRegCType[reg_of(static_cast<DType>(t))];
  const std::string v = is_half(t) ? "cf_ld(*q_)" : "*q_";
  const std::string g = is_half(t) ? "cf_ld(m_[cfn_offset(p, o_, e0, estep, k)])" : "m_[cfn_offset(p, o_, e0, estep, k)]";
  return "const CfiOperand& o_ = p.opnd[ins.k]; const " + S + "* const m_ = (const " + S + "*)o_.ptr; "
         "if (p.ndim <= 1) { const long long s_ = p.ndim == 1 ? o_.st[0] : 0; const " + S + "* q_ = m_ + e0 * s_; "
         "const long long qs_ = estep * s_; "
         "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { unsigned d_[8]; "
         "CFI_UNROLL for (int k = 0; k < 8; ++k) { d_[k] = cfn_put<" + RT + ">(h + k < kin ? (" + RT + ")" + v + " : (" + RT + ")0); q_ += qs_; } "
         "cfn_st8(" + P("dst") + " + h, d_); } } else { unsigned* d_ = " + P("dst") + "; "
         "CFI_LOOP for (int k = 0; k < CFN_TILE; ++k) d_[k] = cfn_put<" + RT + ">(k < kin ? (" + RT + ")" + g + " : (" + RT + ")0); }";
}
std::string store_body(int t) {
  const std::string S = kStorageCType[t], RT = kRegCType[reg_of(static_cast<DType>(t))];
  const auto conv = [&](const std::string& x) {
    return is_half(t) ? "cf_st<" + S + ">(cfn_get<" + RT + ">(" + x + "))" : "(" + S + ")(cfn_get<" + RT + ">(" + x + "))";
  };
  return "const CfiOperand& o_ = p.opnd[ins.k]; " + S + "* const m_ = (" + S + "*)o_.ptr; "
         "if (p.ndim <= 1) { const long long s_ = p.ndim == 1 ? o_.st[0] : 0; " + S + "* q_ = m_ + e0 * s_; "
         "const long long qs_ = estep * s_; "
         "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { unsigned a_[8]; cfn_ld8(a_, " + P("a") + " + h); "
         "CFI_UNROLL for (int k = 0; k < 8; ++k) { if (h + k < kin) *q_ = " + conv("a_[k]") + "; q_ += qs_; } } "
         "} else { const unsigned* a_ = " + P("a") + "; "
         "CFI_LOOP for (int k = 0; k < CFN_TILE; ++k) if (k < kin) m_[cfn_offset(p, o_, e0, estep, k)] = " + conv("a_[k]") + "; }";
}

// A kConstOps float32 op with one operand the scalar consts[ins.k], the other register a.
std::string const_operand_body(int code) {
  const int i = (code - kConstOperand) / 2;
  const bool a_const = (code - kConstOperand) % 2 != 0;
  const BcRow& row = kBcRows[static_cast<int>(kConstOps[i])];
  const std::string rr = bool_result(row.rule) ? "bool" : "float";
  return "const float cv_ = cfn_get<float>((unsigned)p.consts[ins.k]); unsigned x_[CFN_TILE]; "
         "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) cfn_ld8(x_ + h, " + P("a") + " + h); "
         "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) { unsigned d_[8]; CFI_UNROLL for (int k = 0; k < 8; ++k) { "
         "using T = float; using R = " + rr + "; const float a = " + (a_const ? "cv_" : "cfn_get<float>(x_[h + k])") +
         "; const float b = " + (a_const ? "cfn_get<float>(x_[h + k])" : "cv_") + "; d_[k] = cfn_put<" + rr +
         ">(static_cast<" + rr + ">(" + row.expr + ")); } cfn_st8(" + P("dst") + " + h, d_); }";
}

std::string case_text(int code) {
  if (code >= kConstOperand) return const_operand_body(code);
  const Shape un = narrow_unrolled(code) ? kUnrolled : kRolled;
  if (code == kConst)
    return "const unsigned v_ = (unsigned)p.consts[ins.k]; unsigned d_[8]; CFI_UNROLL for (int k = 0; k < 8; ++k) d_[k] = v_; "
           "CFI_UNROLL for (int h = 0; h < CFN_TILE; h += 8) cfn_st8(" + P("dst") + " + h, d_);";
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
  o += "#define CFN_P(r) ((unsigned*)((char*)cfn_rf + (int)(r) * cfn_rs))\n";
  o += "static_assert(CFN_TILE % 8 == 0, \"the unrolled cases run 8 elements at a time\");\n";
  // Out of line: the caller then keeps no element index e0 + k * estep per k (64-bit values the
  // compiler hoisted out of the dispatch loop, 16 registers, and spilled the loop's counter).
  o += "CFI_COLD long long cfn_offset(const CfiProgram& p, const CfiOperand& o, long long e0, long long estep, int k) {\n"
       "  return cfi_offset(p, o, e0 + k * estep);\n}\n";
  o += "template <class T> CFI_FN T cfn_get(unsigned w) { union { unsigned w; T v; } u; u.w = w; return u.v; }\n"
       "template <class T> CFI_FN unsigned cfn_put(T v) { union { unsigned w; T v; } u; u.w = 0; u.v = v; return u.w; }\n";
  o += "// Runs code[begin, end) on the elements e0 + k * estep, k < kin (<= CFN_TILE); cfn_rf: this\n"
       "// thread's slots of register 0, cfn_rs: the bytes from one register to the next.\n";
  o += "CFI_HOT void cfn_exec(const CfiProgram& p, unsigned* cfn_rf, int cfn_rs, long long e0, long long estep, int kin,\n"
       "                      int begin, int end) {\n"
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
  for (int g = 0; g < 3; ++g) {
    o += g == 0 ? "    if (code_ < " + std::to_string(kNarrow.end[0]) + ") {\n"
         : g == 1 ? "    } else if (code_ < " + std::to_string(kNarrow.end[1]) + ") {\n" : "    } else {\n";
    o += "    switch (code_) {\n";
    for (int n = g ? kNarrow.end[g - 1] : 0; n < kNarrow.end[g]; ++n) add(o, kNarrow.code[n], case_text(kNarrow.code[n]));
    o += "    default: break;\n    }\n";
  }
  o += "    }\n  }\n}\n";
  o += "// A narrow program over the tiles blk, blk + nblk, ... of nthr * CFN_TILE elements (thread tid's\n"
       "// elements base + tid + k * nthr); the constants run in the thread's first tile only.\n"
       "CFI_HOT void cfn_run(const CfiProgram& p, unsigned* smem, int nthr, int tid, long long blk, long long nblk) {\n"
       "  unsigned* const rf = smem + tid * CFN_TILE;\n"
       "  const long long tile = (long long)nthr * CFN_TILE;\n"
       "  int begin = 0;\n"
       "  for (long long base = blk * tile; base < p.numel; base += nblk * tile) {\n"
       "    const long long e0 = base + tid, rem = p.numel - e0;\n"
       "    const int kin = rem >= tile ? CFN_TILE : rem <= 0 ? 0 : (int)((rem + nthr - 1) / nthr);\n"
       "    cfn_exec(p, rf, nthr * CFN_TILE * 4, e0, nthr, kin, begin, p.n_instrs);\n"
       "    begin = p.n_pre;\n"
       "  }\n"
       "}\n";
  o += "#undef CFN_P\n";
  return o;
}
