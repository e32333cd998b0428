// codegen/bytecode_rows.cpp: a reduction group as a row program for the interpreter kernel
// cf_interp_rows (bytecode.hpp, bytecode_format.hpp). The group is analysed as the reduction
// kernel's emitter analyses it (RedEmitter::analyse: the reductions and their phases, the
// nodes of the row context (over the input shape) and of the output context (over a row),
// the kept and reduced dims collapsed over every accessor and output); then one section per
// phase (each reduction's prologue, ending in its ACC), one epilogue section (the reduced
// values and what the group computes from them, once per row) and one section of row-shaped
// outputs (softmax's, layernorm's), each with registers of its own. Values cross sections
// only as the reductions' row values (RED).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "codegen/bytecode.hpp"
#include "codegen/bytecode_values.hpp"
#include "codegen/reduction_emitter.hpp"
#include "core/reduce_attrs.hpp"
#include "core/walk.hpp"

namespace cufuse::detail {

namespace {

using namespace bc;

int red_kind(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return KSum;
    case ReduceOp::Prod: return KProd;
    case ReduceOp::Max: return KMax;
    case ReduceOp::Min: return KMin;
    case ReduceOp::NanMax: return KNanMax;
    case ReduceOp::NanMin: return KNanMin;
    case ReduceOp::ArgMax: return KArgMax;
    case ReduceOp::ArgMin: return KArgMin;
    case ReduceOp::Any: return KAny;
    case ReduceOp::All: return KAll;
    default: return -1;
  }
}

// The accumulator's register type (reduction_emitter.cpp's acc_type): 8- and 16-bit integers
// reduce in 32 bits; any/all in bool here (the combine's truth value either way).
RegType acc_reg(int kind, DType in) {
  if (kind == KAny || kind == KAll) return RBool;
  if (is_integer(in) && itemsize(in) < 4) return is_unsigned_int(in) ? RU32 : RI32;
  return reg_of(in);
}

struct RowBuilder : ValueCode {
  const ReductionSpec& sp;
  const LeafBinding& bind;
  red::RedEmitter& em;
  std::vector<int> kinds;       // per reduction
  std::vector<RegType> accs;    // per reduction: accumulator register type
  std::vector<int> opnd_of_acc; // per RedEmitter accessor: its operand, -1 (not memory)
  std::unordered_map<const Node*, int> val;  // this section's values
  std::vector<int> sec_begin;   // per section: its first instruction
  std::vector<int> sec_kind;

  RowBuilder(const ReductionSpec& s, const LeafBinding& b, red::RedEmitter& e) : sp(s), bind(b), em(e) {}

  // Reduction k's row value as a value of its node's dtype (an arg reduction's index).
  int red_value(int k) {
    if (kinds[k] == KArgMax || kinds[k] == KArgMin) return emit(kRedIndex, -1, -1, -1, k);
    const int v = emit(kRed, -1, -1, -1, k);
    const RegType want = em.reds[k].node->dtype == DType::Bool ? RBool : reg_of(em.reds[k].node->dtype);
    return want == accs[k] ? v : emit(convert_code(accs[k], want), v);
  }

  // A node's value in the row context (over the input shape at the element) or the output
  // context (over a row), emitting what it needs first.
  int value(const Node* root, bool row_ctx) {
    const auto& acc_map = row_ctx ? em.row_acc : em.out_acc;
    auto kind_of = [&](const Node* n) {
      auto it = acc_map.find(n);
      return it == acc_map.end() ? -1 : it->second;
    };
    auto computed = [&](const Node* n) {
      const int j = kind_of(n);
      if (j == -2 || n->k() == NodeKind::Scalar) return false;
      return j < 0;
    };
    walk_post_order(
        root, [&](const Node* n) { return val.count(n) != 0 || !refusal.empty(); }, computed,
        [&](const Node* n) {
          if (!refusal.empty()) return;
          const int j = kind_of(n);
          int v = -1;
          // Every value first, loads and constants too (a complex64 operand loaded as a real
          // gave norm(z, 1) zeros and garbage in its interpreted first run on the H200).
          if ((n->dtype == DType::Complex64 || n->dtype == DType::Complex128) && j != -2) return refuse(unsupported(n));
          if (j == -2) {
            v = red_value(em.red_of.at(row_ctx ? n->inputs[0].get() : n));
          } else if (n->k() == NodeKind::Scalar) {
            v = emit(kConst, -1, -1, -1, em.scalar_of.at(n));
          } else if (j >= 0) {
            if (em.accs[j].kind != red::Acc::Mem || opnd_of_acc[j] < 0)
              return refuse(em.accs[j].kind == red::Acc::Gen ? "a generator (arange, linspace, random) computed inline"
                                                             : "an index-remapping view");
            v = emit(load_code(n->dtype), -1, -1, -1, opnd_of_acc[j]);
          } else if (std::string why = unsupported(n); !why.empty()) {
            return refuse(why);
          } else if (n->k() != NodeKind::Elementwise || n->inputs.size() > 3) {
            return refuse(fmt::format("a {} node", kind_name(n->k())));
          } else {
            int in[3] = {-1, -1, -1};
            for (size_t k = 0; k < n->inputs.size(); ++k) in[k] = val.at(n->inputs[k].get());
            v = op(n, in);
          }
          val[n] = v;
        });
    return refusal.empty() ? val.at(root) : -1;
  }

  void section(int kind) {
    sec_begin.push_back(static_cast<int>(code.size()));
    sec_kind.push_back(kind);
    val.clear();
  }

  void build() {
    for (const auto& r : em.reds) {
      const int k = red_kind(r.op);
      if (k < 0) return refuse(fmt::format("a {} reduction", reduce_name(r.op)));
      if (r.in == DType::Complex64 || r.in == DType::Complex128)
        return refuse(fmt::format("a {} value (the interpreter's registers are real)", name(r.in)));
      kinds.push_back(k);
      accs.push_back(acc_reg(k, r.in));
      if (!has_acc(k, accs.back()))
        return refuse(fmt::format("a {} reduction of {}", reduce_name(r.op), name(r.in)));
    }
    for (const auto& a : em.accs) {
      if (a.kind != red::Acc::Mem) return refuse(a.kind == red::Acc::Gen ? "a generator (arange, linspace, random) computed inline"
                                                                         : "an index-remapping view");
      opnd_of_acc.push_back(static_cast<int>(opnd_of_acc.size()));
    }
    // A section per phase: each reduction's prologue and its accumulate.
    for (int ph = 0; ph < em.sh.phases; ++ph) {
      section(0);
      for (size_t k = 0; k < em.reds.size(); ++k) {
        if (em.reds[k].phase != ph) continue;
        const DType in = em.reds[k].in;
        int v = value(em.reds[k].node->inputs[0].get(), true);
        if (!refusal.empty()) return;
        const RegType from = reg_of(in);
        if (accs[k] == RBool) v = convert(v, in, DType::Bool);
        else if (accs[k] != from) v = emit(convert_code(from, accs[k]), v);
        put(acc_code(RedKind(kinds[k]), accs[k]), v, static_cast<int>(k));
      }
    }
    // The epilogue: reduced values and what is computed from them, once per row.
    const size_t nacc = em.accs.size();
    bool epilogue = false, rows = false;
    for (const auto& o : sp.outputs) (o.kind == OutKind::Row ? rows : epilogue) = true;
    // In each section every value first, then the stores: a write in place into an array the
    // section also reads (v[...] = f(row max) beside w = v ^ row max) must not be seen by that
    // read (fuzz seed 728327525901 on the device: the store came first, w read the new v).
    std::vector<std::pair<int, size_t>> stores;  // (register, output)
    const auto flush = [&] {
      for (const auto& [v, i] : stores) put(store_code(sp.outputs[i].node->dtype), v, static_cast<int>(nacc + i));
      stores.clear();
    };
    if (epilogue) {
      section(1);
      for (size_t i = 0; i < sp.outputs.size(); ++i) {
        const RedOutput& o = sp.outputs[i];
        if (o.kind == OutKind::Row) continue;
        const int v = o.kind == OutKind::Value ? red_value(em.red_of.at(o.node.get())) : value(o.node.get(), false);
        if (!refusal.empty()) return;
        stores.emplace_back(v, i);
      }
      flush();
    }
    if (rows) {  // row-shaped outputs: softmax's, layernorm's
      section(0);
      for (size_t i = 0; i < sp.outputs.size(); ++i) {
        const RedOutput& o = sp.outputs[i];
        if (o.kind != OutKind::Row) continue;
        if (em.red_of.count(o.node.get())) return refuse("a reduction written over its rows");
        const int v = value(o.node.get(), true);
        if (!refusal.empty()) return;
        stores.emplace_back(v, i);
      }
      flush();
    }
  }
};

}  // namespace

LaunchDims interp_row_dims(int64_t rows, int64_t row_len, int n_regs, bool splittable) {
  LaunchDims d;
  auto smem = [&](int nthr) {
    return static_cast<int64_t>(std::max(1, n_regs)) * CFI_TILE * nthr * 8 + int64_t(nthr) * 16 + CFI_MAX_REDS * 16 +
           CFI_MAX_OPERANDS * 8;
  };
  int nthr = CFI_ROW_THREADS;
  while (nthr > 32 && smem(nthr) > CFI_SMEM_BYTES) nthr /= 2;
  d.grid[0] = static_cast<unsigned>(std::clamp<int64_t>(rows, 1, 65535));
  d.block[0] = static_cast<unsigned>(nthr);
  d.shared_bytes = static_cast<unsigned>(smem(nthr));
  // Few long rows split over gridDim.y blocks, as the reduction kernel chooses for a row a block
  // (reduction_emitter.cpp: fewer than 1024 row blocks, rows of 8192 or more): about 24 blocks
  // an SM over all the rows (CUFUSE_SPLIT_BLOCKS), each at least 16 tiles of the row.
  if (splittable && rows >= 1 && rows < 1024 && row_len >= 8192) {
    const int64_t want = (red::split_blocks(24) + rows - 1) / rows;
    const int64_t most = std::max<int64_t>(1, row_len / (int64_t(nthr) * CFI_TILE * 16));
    d.grid[1] = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(want, std::min<int64_t>(most, 65535))));
  }
  return d;
}

BytecodeProgram compile_reduction_bytecode(const ReductionSpec& spec, const LeafBinding& bind) {
  BytecodeProgram out;
  red::RedEmitter em(spec, bind);
  try {
    em.analyse();
  } catch (const Error& e) {
    out.refusal = e.what();
    return out;
  }
  const red::RedShape& sh = em.sh;
  RowBuilder b(spec, bind, em);
  // One phase and its epilogue can split a row over blocks (interp_row_dims); a later phase
  // reads the earlier ones' row values, and row outputs read them per element, which a split
  // row would need a launch each for (or a grid-wide wait).
  const bool row_outputs = std::any_of(spec.outputs.begin(), spec.outputs.end(), [](const RedOutput& o) { return o.kind == OutKind::Row; });
  const bool splittable = sh.phases == 1 && !row_outputs;
  if (sh.rows <= 0 || sh.row_len <= 0) b.refuse("an empty row or no rows");
  else if (!splittable && sh.rows < 32 && sh.row_len > (int64_t(1) << 20))
    b.refuse(fmt::format("{} row(s) of {} elements with {}: the interpreter gives such a row one block (a row split over "
                         "blocks runs one phase and its epilogue)",
                         sh.rows, sh.row_len, sh.phases > 1 ? fmt::format("{} phases", sh.phases) : std::string("row outputs")));
  if (b.refusal.empty()) b.build();
  const size_t nopnd = em.accs.size() + spec.outputs.size();
  const size_t nsec = b.sec_begin.size();
  // Registers per section: values never cross one.
  int nregs = 0;
  std::vector<VInstr> code;
  std::vector<int> sec_at(nsec, 0);  // each section's first instruction once fused
  if (b.refusal.empty()) {
    for (size_t s = 0; s < nsec; ++s) {
      sec_at[s] = static_cast<int>(code.size());
      const size_t lo = static_cast<size_t>(b.sec_begin[s]), hi = s + 1 < nsec ? static_cast<size_t>(b.sec_begin[s + 1]) : b.code.size();
      std::vector<VInstr> part(b.code.begin() + static_cast<std::ptrdiff_t>(lo), b.code.begin() + static_cast<std::ptrdiff_t>(hi));
      fuse_superinstructions(part, b.nvals);
      nregs = std::max(nregs, allocate(part, b.nvals));
      code.insert(code.end(), part.begin(), part.end());
    }
  }
  if (!b.refusal.empty()) out.refusal = b.refusal;
  else if (sh.kept_shape.ndim() > CFI_MAX_DIMS || sh.red_shape.ndim() > CFI_MAX_DIMS)
    out.refusal = fmt::format("program limits: {} kept and {} reduced dims, at most {} each", sh.kept_shape.ndim(),
                              sh.red_shape.ndim(), CFI_MAX_DIMS);
  else if (em.reds.size() > CFI_MAX_REDS)
    out.refusal = fmt::format("program limits: {} reductions, at most {}", em.reds.size(), CFI_MAX_REDS);
  else if (nsec > CFI_MAX_SECTIONS)
    out.refusal = fmt::format("program limits: {} sections, at most {}", nsec, CFI_MAX_SECTIONS);
  else if (nopnd > CFI_MAX_OPERANDS)
    out.refusal = fmt::format("program limits: {} arrays read or written, at most {}", nopnd, CFI_MAX_OPERANDS);
  else if (em.scalars.size() > CFI_MAX_CONSTS)
    out.refusal = fmt::format("program limits: {} scalars, at most {}", em.scalars.size(), CFI_MAX_CONSTS);
  else if (code.size() > CFI_MAX_INSTRS)
    out.refusal = fmt::format("program limits: {} instructions, at most {}", code.size(), CFI_MAX_INSTRS);
  else if (nregs > CFI_MAX_REGS)
    out.refusal = fmt::format("program limits: {} registers, at most {}", nregs, CFI_MAX_REGS);
  if (!out.refusal.empty()) return out;

  CfiProgram p;
  std::memset(&p, 0, sizeof p);
  p.numel = sh.row_len;
  p.rows = sh.rows;
  p.ndim = sh.red_shape.ndim();
  p.kdim = sh.kept_shape.ndim();
  for (int d = 0; d < p.ndim; ++d) p.shape[d] = sh.red_shape[d];
  for (int d = 0; d < p.kdim; ++d) p.kshape[d] = sh.kept_shape[d];
  p.n_instrs = static_cast<int>(code.size());
  p.n_regs = nregs;
  p.n_operands = static_cast<int>(nopnd);
  p.n_sections = static_cast<int>(nsec);
  for (size_t s = 0; s < nsec && s < CFI_MAX_SECTIONS; ++s) {  // (limits checked above)
    p.sec[s] = sec_at[s];
    p.sec_kind[s] = static_cast<unsigned char>(b.sec_kind[s]);
  }
  p.sec[nsec] = p.n_instrs;
  p.n_reds = static_cast<int>(em.reds.size());
  for (size_t k = 0; k < em.reds.size() && k < CFI_MAX_REDS; ++k) {
    p.red_code[k] = acc_code(RedKind(b.kinds[k]), b.accs[k]);
    p.red_sec[k] = static_cast<unsigned char>(em.reds[k].phase);
  }
  KernelSpec& ks = out.spec;
  auto strides = [&](CfiOperand& o, const Strides& kst, const Strides& st) {
    for (size_t d = 0; d < kst.size() && d < CFI_MAX_DIMS; ++d) o.kst[d] = kst[d];
    for (size_t d = 0; d < st.size() && d < CFI_MAX_DIMS; ++d) o.st[d] = st[d];
  };
  for (size_t j = 0; j < em.accs.size(); ++j) {
    const red::Acc& a = em.accs[j];
    strides(p.opnd[j], a.ks, a.row_ctx ? a.rs : Strides{});
    ks.patches.push_back(operand_patch(offsetof(CfiProgram, opnd) + j * sizeof(CfiOperand), a.node, -1, bind));
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    const size_t a = em.accs.size() + i;
    strides(p.opnd[a], em.out_ks[i], spec.outputs[i].kind == OutKind::Row ? em.out_rs[i] : Strides{});
    ks.patches.push_back(operand_patch(offsetof(CfiProgram, opnd) + a * sizeof(CfiOperand), nullptr, spec.outputs[i].buffer, bind));
  }
  for (size_t c = 0; c < em.scalars.size(); ++c)
    ks.patches.push_back(Patch{static_cast<uint32_t>(offsetof(CfiProgram, consts) + c * 8), PatchSrc::ScalarValue,
                               em.scalars[c]->dtype, static_cast<uint32_t>(bind.leaf_index(em.scalars[c]))});
  write_code(p, 0, code);
  ks.name = kInterpRowsKernelName;
  ks.numel = sh.rows * sh.row_len;
  ks.dims = interp_row_dims(sh.rows, sh.row_len, nregs, splittable);
  p.splits = static_cast<int>(ks.dims.grid[1]);
  if (p.splits > 1) {  // the tickets (zeroed at each launch, as the reduction kernel's), then the partials
    ks.workspace_zero_bytes = static_cast<size_t>(sh.rows) * 4;
    ks.workspace_bytes = (ks.workspace_zero_bytes + 15) / 16 * 16 + static_cast<size_t>(p.n_reds) * sh.rows * p.splits * 16;
    ks.patches.push_back(Patch{static_cast<uint32_t>(offsetof(CfiProgram, ws)), PatchSrc::Workspace, DType::UInt32, 0});
  }
  ks.params.resize(sizeof(CfiProgram));
  std::memcpy(ks.params.data(), &p, sizeof p);
  ks.summary = fmt::format("bytecode interpreter, rows: {} row(s) x {} element(s), {} reduction(s) in {} section(s), "
                           "{} instructions, {} registers, {} threads a row{}",
                           sh.rows, sh.row_len, p.n_reds, p.n_sections, p.n_instrs, nregs, ks.dims.block[0],
                           p.splits > 1 ? fmt::format(", split over {} blocks a row", p.splits) : "");
  return out;
}

}  // namespace cufuse::detail
