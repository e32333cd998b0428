// codegen/bytecode.cpp: a fused elementwise group as an interpreter program (see bytecode.hpp).
// Values are first numbered in the emitter's order (post-order over each output), then given
// registers by liveness, so a long chain needs few of them.
#include "codegen/bytecode.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/bytecode_ops.hpp"
#include "codegen/bytecode_values.hpp"
#include "core/op_table.hpp"
#include "core/walk.hpp"
#include "graph/gather.hpp"

namespace cufuse::detail {

namespace bc {

int ValueCode::emit(uint16_t c, int a, int b, int cc, int k) {
  VInstr v;
  v.code = c;
  v.dst = nvals++;
  v.src[0] = a;
  v.src[1] = b;
  v.src[2] = cc;
  v.k = k;
  code.push_back(v);
  return v.dst;
}

void ValueCode::put(uint16_t c, int a, int k) {
  VInstr v;
  v.code = c;
  v.src[0] = a;
  v.k = k;
  code.push_back(v);
}

int ValueCode::convert(int v, DType from, DType to) {
  if (from == to) return v;
  const RegType f = reg_of(from), t = to == DType::Bool ? RBool : reg_of(to);
  if (f == t) return v;
  return emit(convert_code(f, t), v);
}

int ValueCode::op(const Node* n, const int* in) {
  const OpRow& row = op_row(n->op);
  DType in_dt[3];
  int in_v[3] = {-1, -1, -1};
  for (int k = 0; k < row.arity; ++k) {
    in_dt[k] = n->inputs[k]->dtype;
    in_v[k] = in[k];
  }
  if (row.id == Op::Cast) return emit(cast_code(reg_of(in_dt[0]), n->dtype), in_v[0]);
  const OpTyping ty = type_op(row.id, in_dt, row.arity, n->dtype);
  for (int k = 0; k < row.arity; ++k) in_v[k] = convert(in_v[k], in_dt[k], ty.compute[k]);
  const RegType t = reg_of(ty.compute[row.arity > 1 ? 1 : 0]);
  if (!has_op(static_cast<int>(row.id), t)) {
    refuse(fmt::format("{} computing in {}", row.name, name(ty.compute[row.arity > 1 ? 1 : 0])));
    return -1;
  }
  int v = emit(op_code(row.id, t), in_v[0], in_v[1], in_v[2]);
  if (n->dtype == DType::Float16) v = emit(kRoundF16, v);
  else if (n->dtype == DType::BFloat16) v = emit(kRoundBF16, v);
  return v;
}

std::string ValueCode::unsupported(const Node* n) {
  if (n->dtype == DType::Complex64 || n->dtype == DType::Complex128)
    return fmt::format("a {} value (the interpreter's registers are real)", name(n->dtype));
  if (n->k() == NodeKind::Generator) return "a generator (arange, linspace, random) computed inline";
  if (is_gather(*n)) return "a gather";
  if (n->k() == NodeKind::Elementwise && is_user_op(n->op)) return "a user kernel (ElementwiseKernel code)";
  return {};
}

namespace {
// The op row and register type of an op instruction, if it is a hot float op.
bool hot_of(uint16_t code, int& hot, RegType& t) {
  if (code < kOp || code >= kAcc) return false;
  const int op = (code - kOp) / kRegTypes;
  t = static_cast<RegType>((code - kOp) % kRegTypes);
  hot = hot_index(static_cast<Op>(op));
  return hot >= 0 && (t == RF32 || t == RF64) && kBcRows[op].arity <= 2;
}
bool is_plain_store(uint16_t code, RegType t) {
  return code == store_code(t == RF64 ? DType::Float64 : DType::Float32);
}
}  // namespace

void fuse_superinstructions(std::vector<VInstr>& code, int nvals) {
  std::vector<int> uses(static_cast<size_t>(std::max(nvals, 0)), 0), def(uses.size(), -1);
  for (size_t i = 0; i < code.size(); ++i) {
    for (int s : code[i].src)
      if (s >= 0) ++uses[static_cast<size_t>(s)];
    if (code[i].dst >= 0) def[static_cast<size_t>(code[i].dst)] = static_cast<int>(i);
  }
  std::vector<bool> gone(code.size(), false);
  // Is value v a load of a `t` array (float32 or float64) read only by instruction j, with no
  // store between? Then its instruction's index, else -1.
  const auto sole_load = [&](int v, RegType t, size_t j) {
    if (v < 0 || uses[static_cast<size_t>(v)] != 1) return -1;
    const int d = def[static_cast<size_t>(v)];
    bool clear = d >= 0 && !gone[static_cast<size_t>(d)] &&
                 code[static_cast<size_t>(d)].code == load_code(t == RF64 ? DType::Float64 : DType::Float32);
    for (size_t m = static_cast<size_t>(std::max(d, 0)) + 1; clear && m < j; ++m)
      clear = !(code[m].code >= kStore && code[m].code < kStore + kNumDTypes) && code[m].store < 0;
    return clear ? d : -1;
  };
  for (size_t j = 0; j < code.size(); ++j) {
    VInstr& in = code[j];
    if (in.code >= kAcc && in.code < kRed) {  // ACC of a loaded element
      const int kind = (in.code - kAcc) / kRegTypes;
      const RegType t = static_cast<RegType>((in.code - kAcc) % kRegTypes);
      if ((t != RF32 && t != RF64) || kind == KAny || kind == KAll) continue;
      const int d = sole_load(in.src[0], t, j);
      if (d < 0) continue;
      in.load = code[static_cast<size_t>(d)].k;
      in.src[0] = -1;
      in.code = acc_load_code(kind, t);
      gone[static_cast<size_t>(d)] = true;
      continue;
    }
    int hot;
    RegType t;
    if (!hot_of(in.code, hot, t)) continue;
    const int arity = kBcRows[(in.code - kOp) / kRegTypes].arity;
    int flags = 0;
    // b: a row value read only here.
    if (arity == 2 && in.src[1] >= 0 && uses[static_cast<size_t>(in.src[1])] == 1) {
      const int d = def[static_cast<size_t>(in.src[1])];
      if (d >= 0 && code[static_cast<size_t>(d)].code == kRed && !gone[static_cast<size_t>(d)]) {
        in.red = code[static_cast<size_t>(d)].k;
        in.src[1] = -1;
        gone[static_cast<size_t>(d)] = true;
        flags |= kFuseRB;
      }
    }
    // a: a load of a float32/float64 array read only here, with no store between.
    if (const int d = in.src[0] != in.src[1] ? sole_load(in.src[0], t, j) : -1; d >= 0) {
      in.k = code[static_cast<size_t>(d)].k;
      in.src[0] = -1;
      gone[static_cast<size_t>(d)] = true;
      flags |= kFuseLA;
    }
    // The result: stored by the next instruction only.
    if (in.dst >= 0 && uses[static_cast<size_t>(in.dst)] == 1 && j + 1 < code.size() &&
        is_plain_store(code[j + 1].code, t) && code[j + 1].src[0] == in.dst) {
      in.store = code[j + 1].k;
      in.dst = -1;
      gone[j + 1] = true;
      flags |= kFuseST;
    }
    if (flags) in.code = fused_code(hot, t, flags);
  }
  size_t w = 0;
  for (size_t i = 0; i < code.size(); ++i)
    if (!gone[i]) code[w++] = code[i];
  code.resize(w);
}

void fold_scalar_operands(std::vector<VInstr>& code, int nvals) {
  std::vector<int> def(static_cast<size_t>(std::max(nvals, 0)), -1), uses(def.size(), 0);
  for (size_t i = 0; i < code.size(); ++i)
    if (code[i].dst >= 0) def[static_cast<size_t>(code[i].dst)] = static_cast<int>(i);
  for (VInstr& in : code) {
    if (!narrow_acc(in.code)) continue;
    for (int j = 0; j < 3; ++j) {
      const int d = in.src[j] >= 0 ? def[static_cast<size_t>(in.src[j])] : -1;
      if (d < 0 || code[static_cast<size_t>(d)].code != kConst) continue;
      in.lit[j] = code[static_cast<size_t>(d)].k;
      in.src[j] = -1;
    }
  }
  for (const VInstr& in : code)
    for (int s : in.src)
      if (s >= 0) ++uses[static_cast<size_t>(s)];
  std::erase_if(code, [&](const VInstr& in) { return in.code == kConst && uses[static_cast<size_t>(in.dst)] == 0; });
}

void chain_accumulator(std::vector<VInstr>& code, int nvals) {
  int held = -1;  // the value in the accumulator
  for (VInstr& in : code) {
    if (!narrow_acc(in.code)) continue;
    for (int j = 0; j < 3; ++j)
      if (in.src[j] >= 0 && in.src[j] == held) {
        in.acc[j] = true;
        in.src[j] = -1;
      }
    if (in.dst >= 0) held = in.dst;
  }
  std::vector<int> uses(static_cast<size_t>(std::max(nvals, 0)), 0);
  for (const VInstr& in : code)
    for (int s : in.src)
      if (s >= 0) ++uses[static_cast<size_t>(s)];
  for (VInstr& in : code) {
    if (!narrow_acc(in.code) || in.dst < 0) continue;
    in.spill = uses[static_cast<size_t>(in.dst)] > 0;
    if (!in.spill) in.dst = -1;
  }
}

// Physical registers by liveness: a value's register is free after its last use; the values of
// code[0, pinned) keep theirs to the end.
int allocate(std::vector<VInstr>& code, int nvals, int pinned) {
  std::vector<int> last(static_cast<size_t>(nvals), -1), reg(static_cast<size_t>(nvals), -1);
  for (size_t i = 0; i < code.size(); ++i)
    for (int s : code[i].src)
      if (s >= 0) last[s] = static_cast<int>(i);
  for (int i = 0; i < pinned; ++i)
    if (code[static_cast<size_t>(i)].dst >= 0) last[static_cast<size_t>(code[static_cast<size_t>(i)].dst)] = static_cast<int>(code.size());
  std::vector<int> free_regs;
  int n = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    VInstr& in = code[i];
    for (int& s : in.src) {
      if (s < 0) continue;
      const int v = s;
      s = reg[v];
      if (last[v] == static_cast<int>(i) && std::find(free_regs.begin(), free_regs.end(), reg[v]) == free_regs.end())
        free_regs.push_back(reg[v]);
    }
    if (in.dst >= 0) {
      int r;
      if (!free_regs.empty()) {
        r = free_regs.back();
        free_regs.pop_back();
      } else {
        r = n++;
      }
      if (last[in.dst] < 0) free_regs.push_back(r);  // never read (none such today)
      reg[in.dst] = r;
      in.dst = r;
    }
  }
  return n;
}

void write_code(CfiProgram& p, int at, const std::vector<VInstr>& code) {
  for (size_t i = 0; i < code.size(); ++i) {
    const VInstr& v = code[i];
    CfiInstr& in = p.code[at + static_cast<int>(i)];
    const auto field = [&](int j) {
      return static_cast<unsigned char>(v.acc[j] ? kSrcAcc : v.lit[j] >= 0 ? kSrcConst | v.lit[j] : std::max(v.src[j], 0));
    };
    in.code = v.code;
    in.dst = static_cast<unsigned char>(std::max(v.dst, 0) | (v.spill ? kDstSpill : 0));
    in.a = field(0);
    in.b = field(1);
    in.c = static_cast<unsigned char>(v.red >= 0 ? v.red : field(2));
    in.k = static_cast<unsigned char>(v.k);
    in.pad = static_cast<unsigned char>(v.store >= 0 ? v.store : std::max(v.load, 0));
  }
}

Patch operand_patch(size_t offset, const Node* mem, int buffer, const LeafBinding& bind) {
  const int buf = mem ? (bind.buffer_of ? bind.buffer_of(mem) : -1) : buffer;
  const DType t = mem ? mem->dtype : DType::UInt8;
  if (!mem || (mem->k() != NodeKind::Buffer && buf >= 0))
    return Patch{static_cast<uint32_t>(offset), PatchSrc::BufferPtr, t, static_cast<uint32_t>(buf)};
  return Patch{static_cast<uint32_t>(offset), PatchSrc::LeafPtr, t, static_cast<uint32_t>(bind.leaf_index(mem))};
}

}  // namespace bc

namespace {

using namespace bc;

struct Opnd {
  const Node* mem;  // the node whose memory (pointer) is read; null for an output
  Strides st;       // over the iteration dims (then collapsed)
  int buffer = -1;  // an output's buffer
};

struct Builder : ValueCode {
  const Shape& S;
  const std::vector<EwOutput>& outs;
  const LeafBinding& bind;

  std::vector<Opnd> opnds;
  std::unordered_map<const Node*, int> opnd_of, const_of, val;
  std::vector<const Node*> consts;

  Builder(const Shape& s, const std::vector<EwOutput>& o, const LeafBinding& b) : S(s), outs(o), bind(b) {}

  int operand(const Node* mem, const Node* key, Strides st) {
    auto [it, fresh] = opnd_of.emplace(key, static_cast<int>(opnds.size()));
    if (fresh) opnds.push_back(Opnd{mem, std::move(st), -1});
    return it->second;
  }
  bool walks_into(const Node* n) const {
    return n->k() == NodeKind::Elementwise && !reads_memory(n, bind) && !is_user_op(n->op) && !is_gather(*n) &&
           !is_scatter(*n);
  }
  void visit(const Node* n) {
    if (!refusal.empty()) return;
    int v = -1;
    Strides st;
    if (n->dtype == DType::Complex64 || n->dtype == DType::Complex128) return refuse(unsupported(n));
    if (reads_memory(n, bind)) {
      v = emit(load_code(n->dtype), -1, -1, -1, operand(n, n, memory_layout(n, bind).strides));
    } else if (strided_memory_view(n, bind, st)) {
      v = emit(load_code(n->dtype), -1, -1, -1, operand(n->inputs[0].get(), n, st));
    } else if (n->k() == NodeKind::Scalar) {
      auto [it, fresh] = const_of.emplace(n, static_cast<int>(consts.size()));
      if (fresh) consts.push_back(n);
      v = emit(kConst, -1, -1, -1, it->second);
    } else if (std::string why = unsupported(n); !why.empty()) {
      return refuse(why);
    } else if (n->k() == NodeKind::View) {
      return refuse("an index-remapping view");
    } else if (n->k() != NodeKind::Elementwise) {
      return refuse(fmt::format("a {} node", kind_name(n->k())));
    } else {
      int in[3] = {-1, -1, -1};
      for (size_t k = 0; k < n->inputs.size() && k < 3; ++k) in[k] = val.at(n->inputs[k].get());
      v = op(n, in);
    }
    val[n] = v;
  }

  void build() {
    for (const auto& o : outs) {
      if (is_scatter(*o.node)) return refuse("a scatter");
      walk_post_order(
          o.node.get(), [&](const Node* x) { return val.count(x) != 0 || !refusal.empty(); },
          [&](const Node* x) { return walks_into(x); }, [&](const Node* x) { visit(x); });
      if (!refusal.empty()) return;
    }
    // Every value first, then the stores: an element's loads come before its stores.
    for (size_t i = 0; i < outs.size(); ++i) {
      const int k = static_cast<int>(opnds.size());
      opnds.push_back(Opnd{nullptr, outs[i].layout.strides, outs[i].buffer});
      put(store_code(outs[i].node->dtype), val.at(outs[i].node.get()), k);
    }
  }
};

}  // namespace

LaunchDims interp_dims(int64_t numel, int n_regs, bool narrow) {
  LaunchDims d;
  const int tile = narrow ? CFN_TILE : CFI_TILE;
  const int per_thread = std::max(1, n_regs) * tile * (narrow ? 4 : 8);
  int nthr = std::min(256, CFI_SMEM_BYTES / per_thread);
  nthr = std::max(32, nthr / 32 * 32);
  const int64_t tiles = (numel + int64_t(nthr) * tile - 1) / (int64_t(nthr) * tile);
  d.grid[0] = static_cast<unsigned>(std::clamp<int64_t>(tiles, 1, 4096));
  d.block[0] = static_cast<unsigned>(nthr);
  d.shared_bytes = static_cast<unsigned>(per_thread * nthr);
  return d;
}

BytecodeProgram compile_elementwise_bytecode(const Shape& S, const std::vector<EwOutput>& outputs, const LeafBinding& bind) {
  BytecodeProgram out;
  Builder b(S, outputs, bind);
  b.build();
  if (!b.refusal.empty()) {
    out.refusal = b.refusal;
    return out;
  }
  // Dims of size 1 dropped, neighbours merged where every operand's strides allow
  // (elementwise_kernel.cpp's collapse).
  Shape cs;
  std::vector<Strides> cst(b.opnds.size());
  for (int d = 0; d < S.ndim(); ++d) {
    if (S[d] == 1) continue;
    bool merge = !cs.empty();
    for (size_t a = 0; merge && a < b.opnds.size(); ++a) merge = cst[a].back() == b.opnds[a].st[d] * S[d];
    if (merge) {
      cs.back() *= S[d];
      for (size_t a = 0; a < b.opnds.size(); ++a) cst[a].back() = b.opnds[a].st[d];
    } else {
      cs.push_back(S[d]);
      for (size_t a = 0; a < b.opnds.size(); ++a) cst[a].push_back(b.opnds[a].st[d]);
    }
  }
  // Narrow (bytecode_ops.hpp): every instruction one the narrow core has, every constant at
  // most 4 bytes. The accumulator cases read scalars from the constants; the other constants go
  // first and keep their registers (set in a thread's first tile only); then the accumulator's
  // reads (chain_accumulator). The superinstructions are the general core's only.
  bool narrow = std::all_of(b.code.begin(), b.code.end(), [](const VInstr& v) { return is_narrow_code(v.code); }) &&
                std::all_of(b.consts.begin(), b.consts.end(),
                            [](const Node* c) { return narrow_dtype(static_cast<int>(c->dtype)); });
  // (At most kMaxPinned of them: a long chain of scalars keeps reusing its registers instead.)
  constexpr int kMaxPinned = 8;
  // (And a register file of 32 threads within CFI_SMEM_BYTES: a narrow register is 4 * CFN_TILE
  // bytes a thread.)
  const std::vector<VInstr> unfused = b.code;
  int n_pre = 0;
  if (narrow) {
    fold_scalar_operands(b.code, b.nvals);
    n_pre = static_cast<int>(std::count_if(b.code.begin(), b.code.end(), [](const VInstr& v) { return v.code == kConst; }));
    if (n_pre <= kMaxPinned) std::stable_partition(b.code.begin(), b.code.end(), [](const VInstr& v) { return v.code == kConst; });
    else n_pre = 0;
    chain_accumulator(b.code, b.nvals);
  } else {
    fuse_superinstructions(b.code, b.nvals);
  }
  int nregs = allocate(b.code, b.nvals, n_pre);
  if (narrow && nregs * CFN_TILE * 4 * 32 > CFI_SMEM_BYTES) {
    narrow = false;
    n_pre = 0;
    b.code = unfused;
    fuse_superinstructions(b.code, b.nvals);
    nregs = allocate(b.code, b.nvals);
  }
  if (cs.ndim() > CFI_MAX_DIMS) out.refusal = fmt::format("program limits: {} iteration dims, at most {}", cs.ndim(), CFI_MAX_DIMS);
  else if (b.opnds.size() > CFI_MAX_OPERANDS)
    out.refusal = fmt::format("program limits: {} arrays read or written, at most {}", b.opnds.size(), CFI_MAX_OPERANDS);
  else if (b.consts.size() > CFI_MAX_CONSTS)
    out.refusal = fmt::format("program limits: {} scalars, at most {}", b.consts.size(), CFI_MAX_CONSTS);
  else if (b.code.size() > CFI_MAX_INSTRS)
    out.refusal = fmt::format("program limits: {} instructions, at most {}", b.code.size(), CFI_MAX_INSTRS);
  else if (nregs > CFI_MAX_REGS)
    out.refusal = fmt::format("program limits: {} registers, at most {}", nregs, CFI_MAX_REGS);
  if (!out.refusal.empty()) return out;

  CfiProgram p;
  std::memset(&p, 0, sizeof p);
  p.numel = numel(S);
  p.ndim = cs.ndim();
  p.n_instrs = static_cast<int>(b.code.size());
  p.n_regs = nregs;
  p.n_operands = static_cast<int>(b.opnds.size());
  for (int d = 0; d < cs.ndim(); ++d) p.shape[d] = cs[d];
  KernelSpec& k = out.spec;
  for (size_t a = 0; a < b.opnds.size(); ++a) {
    for (int d = 0; d < cs.ndim(); ++d) p.opnd[a].st[d] = cst[a][d];
    const size_t off = offsetof(CfiProgram, opnd) + a * sizeof(CfiOperand) + offsetof(CfiOperand, ptr);
    k.patches.push_back(operand_patch(off, b.opnds[a].mem, b.opnds[a].buffer, bind));
  }
  for (size_t c = 0; c < b.consts.size(); ++c)
    k.patches.push_back(Patch{static_cast<uint32_t>(offsetof(CfiProgram, consts) + c * 8), PatchSrc::ScalarValue,
                              b.consts[c]->dtype, static_cast<uint32_t>(bind.leaf_index(b.consts[c]))});
  write_code(p, 0, b.code);
  if (narrow) {
    p.narrow = 1;
    p.n_pre = static_cast<unsigned short>(n_pre);
    for (int i = 0; i < p.n_instrs; ++i) p.code[i].code = static_cast<unsigned short>(kNarrow.index[p.code[i].code]);
  }
  k.name = narrow ? kInterpNarrowKernelName : kInterpKernelName;
  k.numel = p.numel;
  k.dims = interp_dims(p.numel, nregs, narrow);
  k.params.resize(sizeof(CfiProgram));
  std::memcpy(k.params.data(), &p, sizeof p);
  k.summary = fmt::format("bytecode interpreter: {} instructions, {} registers, {} arrays, {} threads x {} elements{}",
                          p.n_instrs, nregs, p.n_operands, k.dims.block[0], narrow ? CFN_TILE : CFI_TILE,
                          narrow ? " (narrow)" : "");
  return out;
}

std::string disassemble(const CfiProgram& p) {
  auto dt = [](int t) { return std::string(info(static_cast<DType>(t)).short_name); };
  std::string s;
  for (int i = 0; i < p.n_instrs; ++i) {
    const CfiInstr& in = p.code[i];
    const int c = p.narrow ? (in.code < kNarrow.count ? kNarrow.code[in.code] : 0) : in.code;
    // A narrow accumulator case's fields: a source "acc" (the accumulator) or "#k" (a constant),
    // the result "acc" where no register keeps it.
    const bool acc = p.narrow && narrow_acc(c);
    const auto R = [&](unsigned char f) {
      if (acc && (f & kSrcAcc)) return std::string("acc");
      if (acc && (f & kSrcConst)) return fmt::format("#{}", f & kSrcIndex);
      return fmt::format("r{}", f & (acc ? kSrcIndex : 0xff));
    };
    const std::string D = acc && !(in.dst & kDstSpill) ? std::string("acc") : fmt::format("r{}", in.dst & (acc ? kSrcIndex : 0xff));
    if (c == kConst) s += fmt::format("{} = const #{}\n", D, in.k);
    else if (c == kRoundF16 || c == kRoundBF16) s += fmt::format("{} = round.{} {}\n", D, c == kRoundF16 ? "f16" : "bf16", R(in.a));
    else if (c >= kLoad && c < kStore) s += fmt::format("{} = load.{} #{}\n", D, dt(c - kLoad), in.k);
    else if (c >= kStore && c < kStore + kNumDTypes) s += fmt::format("store.{} #{} <- {}\n", dt(c - kStore), in.k, R(in.a));
    else if (c >= kConvert && c < kCast)
      s += fmt::format("{} = convert.{}.{} {}\n", D, kRegCType[(c - kConvert) / kRegTypes], kRegCType[(c - kConvert) % kRegTypes], R(in.a));
    else if (c >= kCast && c < kOp)
      s += fmt::format("{} = astype.{} {}\n", D, dt((c - kCast) % kNumDTypes), R(in.a));
    else if (c >= kAcc && c < kRed) {
      static const char* kinds[] = {"sum", "prod", "max", "min", "nanmax", "nanmin", "argmax", "argmin", "any", "all"};
      s += fmt::format("acc.{}.{} #{} <- r{}\n", kinds[(c - kAcc) / kRegTypes], kRegCType[(c - kAcc) % kRegTypes], in.k, in.a);
    } else if (c == kRed) s += fmt::format("r{} = red #{}\n", in.dst, in.k);
    else if (c == kRedIndex) s += fmt::format("r{} = red.index #{}\n", in.dst, in.k);
    else if (c >= kOp && c < kAcc) {
      const BcRow& row = kBcRows[(c - kOp) / kRegTypes];
      s += fmt::format("{} = {}.{} {}", D, row.name, kRegCType[(c - kOp) % kRegTypes], R(in.a));
      if (row.arity > 1) s += fmt::format(", {}", R(in.b));
      if (row.arity > 2) s += fmt::format(", {}", R(in.c));
      s += "\n";
    } else if (c >= kAccLoad && c < kCodeCount) {
      static const char* kinds[] = {"sum", "prod", "max", "min", "nanmax", "nanmin", "argmax", "argmin", "any", "all"};
      s += fmt::format("acc.{}.{} #{} <- load #{}\n", kinds[(c - kAccLoad) / 2], (c - kAccLoad) % 2 ? "double" : "float", in.k, in.pad);
    } else if (c >= kFused && c < kAccLoad) {
      const int hot = (c - kFused) / 16, flags = (c - kFused) % 8;
      const BcRow& row = kBcRows[static_cast<int>(kHotOps[hot])];
      const char* T = ((c - kFused) / 8) % 2 ? "double" : "float";
      std::string dst = flags & kFuseST ? fmt::format("#{}", in.pad) : fmt::format("r{}", in.dst);
      s += fmt::format("{} = {}.{}.fused {}", dst, row.name, T, flags & kFuseLA ? fmt::format("load #{}", in.k) : fmt::format("r{}", in.a));
      if (row.arity > 1) s += flags & kFuseRB ? fmt::format(", red #{}", in.c) : fmt::format(", r{}", in.b);
      s += "\n";
    } else s += fmt::format("nop {}\n", c);
  }
  return s;
}

}  // namespace cufuse::detail
