// codegen/elementwise_kernel.cpp: emits one fused elementwise kernel.
//
// The kernel walks the iteration space of its outputs. Its direct accessors (Buffer and
// Generator leaves, View nodes, outputs) each see it through strides; dimensions that are
// contiguous for every accessor are collapsed first. Then:
//   contiguous mode — rank <= 1 and every buffer and output at stride 1 (or a buffer at
//                     stride 0): each thread handles `unroll` vectors of `V` elements
//                     (16-byte loads and stores when all pointers are 16-byte aligned),
//                     loads first, then compute and store; a tail of < V elements after.
//   strided mode    — a grid-stride loop over elements, unravelling each index.
// Index arithmetic is 32-bit when every offset fits, else 64-bit. Shapes, strides, scalar
// values and generator parameters are kernel parameters, so one kernel serves all sizes.
// A View node's input (a chain of Views ending at a leaf) is read at the multi-index its
// position unravels to.
#include "codegen/elementwise_kernel.hpp"

#include <cstdlib>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/op_table.hpp"
#include "codegen/preamble.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

int elementwise_unroll() {
  static const int u = [] {
    const char* e = std::getenv("CUFUSE_EW_UNROLL");
    int v = e ? std::atoi(e) : 4;
    return v < 1 ? 1 : (v > 8 ? 8 : v);
  }();
  return u;
}

namespace {

constexpr int kBlock = 256;

std::string storage_type(DType t) { return std::string(info(t).cuda_type); }
std::string reg_type(DType t) { return compute_ctype(t); }

// Loads a storage value into its register type.
std::string load_expr(DType t, const std::string& lvalue) {
  return is_half(t) ? fmt::format("cf_ld({})", lvalue) : lvalue;
}
std::string store_expr(DType t, const std::string& v) {
  return is_half(t) ? fmt::format("cf_st<{}>({})", storage_type(t), v) : v;
}
std::string round_half(DType t, const std::string& v) {
  if (t == DType::Float16) return fmt::format("cf_round_f16({})", v);
  if (t == DType::BFloat16) return fmt::format("cf_round_bf16({})", v);
  return v;
}

int64_t span_of(const Shape& s, const Strides& st, int64_t off = 0) {
  int64_t m = off < 0 ? -off : off;
  for (int i = 0; i < s.ndim(); ++i) m += (s[i] > 0 ? s[i] - 1 : 0) * (st[i] < 0 ? -st[i] : st[i]);
  return m;
}

struct Acc {
  enum Kind { Buf, Gen, View, Out } kind;
  const Node* node = nullptr;
  Strides st;          // over the iteration dims (uncollapsed, then collapsed)
  int64_t off = 0;     // Gen, View: layout offset
  int out = -1;        // Out: output index
  bool aligned = true; // Buf, Out
};

struct Emitter {
  const Shape& S;
  const std::vector<EwOutput>& outs;
  const LeafBinding& bind;

  std::vector<Acc> accs;
  std::unordered_map<const Node*, int> acc_of;
  std::vector<const Node*> scalars;
  std::unordered_map<const Node*, int> scalar_of;

  Shape cs;
  bool contiguous = false, vectorize = false, i64 = false;
  int V = 1, U = 1;
  std::string I;

  ParamLayout pl;
  std::vector<Patch> patches;
  std::string code;
  int nval = 0;
  std::unordered_map<const Node*, std::string> vals;
  // In contiguous mode, how direct buffers are read in the current body (vector or scalar).
  bool in_vector_body = false;
  int64_t max_span = 0;

  Emitter(const Shape& s, const std::vector<EwOutput>& o, const LeafBinding& b) : S(s), outs(o), bind(b) {}

  // ---------------------------------------------------------------- analysis
  void collect(const Node* n) {
    if (acc_of.count(n) || scalar_of.count(n)) return;
    switch (n->k()) {
      case NodeKind::Buffer: {
        Acc a{Acc::Buf, n, n->layout.strides, 0, -1, bind.is_aligned16(n)};
        acc_of[n] = static_cast<int>(accs.size());
        accs.push_back(a);
        break;
      }
      case NodeKind::Generator: {
        Acc a{Acc::Gen, n, n->layout.strides, n->layout.offset, -1, true};
        acc_of[n] = static_cast<int>(accs.size());
        accs.push_back(a);
        break;
      }
      case NodeKind::View: {
        Acc a{Acc::View, n, n->layout.strides, n->layout.offset, -1, true};
        acc_of[n] = static_cast<int>(accs.size());
        accs.push_back(a);
        break;
      }
      case NodeKind::Scalar:
        scalar_of[n] = static_cast<int>(scalars.size());
        scalars.push_back(n);
        break;
      case NodeKind::Elementwise:
        acc_of[n] = -1;  // visited marker
        for (const auto& in : n->inputs) collect(in.get());
        break;
      default:
        throw InternalError(fmt::format("elementwise codegen met a {} node", kind_name(n->k())));
    }
  }

  void analyse() {
    for (const auto& o : outs) collect(o.node.get());
    for (size_t i = 0; i < outs.size(); ++i) {
      Acc a{Acc::Out, outs[i].node.get(), outs[i].layout.strides, 0, static_cast<int>(i), outs[i].aligned16};
      accs.push_back(a);
    }
    // Collapse: drop size-1 dims, merge dims contiguous for every accessor.
    const int64_t n = numel(S);
    std::vector<int> dims;
    for (int d = 0; d < S.ndim(); ++d)
      if (S[d] != 1) dims.push_back(d);
    cs.clear();
    std::vector<Strides> cst(accs.size());
    for (int d : dims) {
      bool merge = !cs.empty();
      for (size_t a = 0; merge && a < accs.size(); ++a) merge = cst[a].back() == accs[a].st[d] * S[d];
      if (merge) {
        cs.back() *= S[d];
        for (size_t a = 0; a < accs.size(); ++a) cst[a].back() = accs[a].st[d];
      } else {
        cs.push_back(S[d]);
        for (size_t a = 0; a < accs.size(); ++a) cst[a].push_back(accs[a].st[d]);
      }
    }
    for (size_t a = 0; a < accs.size(); ++a) accs[a].st = cst[a];

    contiguous = cs.ndim() <= 1;
    for (const auto& a : accs) {
      if (!contiguous) break;
      if (cs.ndim() == 1 && (a.kind == Acc::Buf || a.kind == Acc::Out)) {
        int64_t s = a.st[0];
        contiguous = s == 1 || (s == 0 && a.kind == Acc::Buf);
      }
    }
    // Vector width: every stride-1 buffer and output aligned to 16 bytes.
    vectorize = contiguous && cs.ndim() == 1;
    int maxsz = 1;
    for (const auto& a : accs) {
      if (a.kind != Acc::Buf && a.kind != Acc::Out) continue;
      if (a.kind == Acc::Buf && a.st[0] == 0) continue;
      if (!a.aligned) vectorize = false;
      maxsz = std::max(maxsz, itemsize(a.node->dtype));
    }
    if (vectorize) {
      V = std::min(16 / maxsz, 16);
      U = std::max(1, std::min(elementwise_unroll(), 16 / V));
    } else {
      V = 1;
      U = contiguous ? elementwise_unroll() : 1;
    }
    // Index width.
    max_span = n;
    Shape csh = cs;
    for (const auto& a : accs) {
      max_span = std::max(max_span, span_of(csh, a.st, a.off));
      if (a.kind == Acc::View) max_span = std::max(max_span, chain_span(a.node));
    }
    i64 = max_span + int64_t(kBlock) * U * V * 2 >= (int64_t(1) << 31);
    I = i64 ? "long long" : "int";
  }

  int64_t chain_span(const Node* view) {
    const Node* x = view->inputs[0].get();
    int64_t m = numel(x->shape());
    if (x->k() == NodeKind::View) m = std::max(m, chain_span(x));
    if (x->k() != NodeKind::Scalar) m = std::max(m, span_of(x->shape(), x->layout.strides, x->layout.offset));
    return m;
  }

  // ---------------------------------------------------------------- params
  size_t idx_size() const { return i64 ? 8 : 4; }
  void add_patch(size_t off, PatchSrc src, DType t, int index) {
    patches.push_back(Patch{static_cast<uint32_t>(off), src, t, static_cast<uint32_t>(index)});
  }
  void set_idx(size_t off, int64_t v) {
    if (i64) pl.set<long long>(off, v);
    else pl.set<int>(off, static_cast<int>(v));
  }
  void add_idx_array(const std::string& name, const SmallVec<int64_t, 8>& v) {
    if (v.empty()) return;
    size_t off = pl.add(I, idx_size(), name, static_cast<int>(v.size()));
    for (size_t k = 0; k < v.size(); ++k) set_idx(off + k * idx_size(), v[k]);
  }
  void add_idx(const std::string& name, int64_t v) { set_idx(pl.add(I, idx_size(), name), v); }

  void add_gen_params(const std::string& pfx, const Node* g) {
    const DType t = g->dtype;
    const std::string T = reg_type(t);
    const int leaf = bind.leaf_index(g);
    switch (static_cast<GenKind>(g->op)) {
      case GenKind::Arange:
        add_patch(pl.add(T, compute_size(t), pfx + "_a"), PatchSrc::GenA, t, leaf);
        add_patch(pl.add(T, compute_size(t), pfx + "_b"), PatchSrc::GenB, t, leaf);
        break;
      case GenKind::Linspace: {
        add_patch(pl.add("double", 8, pfx + "_a"), PatchSrc::GenA, DType::Float64, leaf);
        add_patch(pl.add("double", 8, pfx + "_b"), PatchSrc::GenB, DType::Float64, leaf);
        add_patch(pl.add("double", 8, pfx + "_c"), PatchSrc::GenC, DType::Float64, leaf);
        size_t off = pl.add("long long", 8, pfx + "_last");
        pl.set<long long>(off, (g->gen.endpoint && g->gen.num > 1) ? g->gen.num - 1 : -1);
        break;
      }
      case GenKind::RandomUniform:
      case GenKind::RandomNormal:
        add_patch(pl.add(T, compute_size(t), pfx + "_a"), PatchSrc::GenA, t, leaf);
        add_patch(pl.add(T, compute_size(t), pfx + "_b"), PatchSrc::GenB, t, leaf);
        add_patch(pl.add("unsigned long long", 8, pfx + "_seed"), PatchSrc::GenSeed, DType::UInt64, leaf);
        add_patch(pl.add("unsigned long long", 8, pfx + "_ctr"), PatchSrc::GenCounter, DType::UInt64, leaf);
        break;
    }
  }

  // The params a chain under a View needs, level by level (names vJ_L_*).
  void add_chain_params(const std::string& pfx, const Node* view, int level) {
    const Node* x = view->inputs[0].get();
    const std::string lp = fmt::format("{}_{}", pfx, level);
    add_idx_array(lp + "_sh", x->shape());
    switch (x->k()) {
      case NodeKind::Buffer:
        add_patch(pl.add(fmt::format("const {}*", storage_type(x->dtype)), 8, lp + "_p"), PatchSrc::LeafPtr,
                  x->dtype, bind.leaf_index(x));
        add_idx_array(lp + "_st", x->layout.strides);
        break;
      case NodeKind::Generator:
        add_idx(lp + "_off", x->layout.offset);
        add_idx_array(lp + "_st", x->layout.strides);
        add_gen_params(lp, x);
        break;
      case NodeKind::View:
        add_idx(lp + "_off", x->layout.offset);
        add_idx_array(lp + "_st", x->layout.strides);
        add_chain_params(pfx, x, level + 1);
        break;
      default:
        throw InternalError(fmt::format("a View over a {} node reached elementwise codegen", kind_name(x->k())));
    }
  }

  void build_params() {
    pl.add("long long", 8, "n");
    pl.set<long long>(0, numel(S));
    if (!contiguous) add_idx_array("shape", cs);
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      const std::string J = std::to_string(j);
      switch (a.kind) {
        case Acc::Buf:
          add_patch(pl.add(fmt::format("const {}* __restrict__", storage_type(a.node->dtype)), 8, "a" + J),
                    PatchSrc::LeafPtr, a.node->dtype, bind.leaf_index(a.node));
          if (!contiguous) add_idx_array("a" + J + "s", a.st);
          break;
        case Acc::Gen:
          add_idx("g" + J + "_off", a.off);
          add_idx_array("g" + J + "_s", a.st);
          add_gen_params("g" + J, a.node);
          break;
        case Acc::View:
          add_idx("v" + J + "_off", a.off);
          add_idx_array("v" + J + "_s", a.st);
          add_chain_params("v" + J, a.node, 0);
          break;
        case Acc::Out:
          add_patch(pl.add(fmt::format("{}*", storage_type(a.node->dtype)), 8, "o" + J), PatchSrc::BufferPtr,
                    a.node->dtype, outs[a.out].buffer);
          if (!contiguous) add_idx_array("o" + J + "s", a.st);
          break;
      }
    }
    for (size_t k = 0; k < scalars.size(); ++k) {
      const Node* s = scalars[k];
      add_patch(pl.add(reg_type(s->dtype), compute_size(s->dtype), "s" + std::to_string(k)), PatchSrc::ScalarValue,
                s->dtype, bind.leaf_index(s));
    }
  }

  // ---------------------------------------------------------------- emission
  std::string fresh() { return "v" + std::to_string(nval++); }
  void line(const std::string& l) { code += "      " + l + "\n"; }

  // Offset of a direct accessor at the current element ("i" in contiguous mode, c0.. else).
  std::string direct_offset(const Acc& a, const std::string& J, const char* stride_name) {
    if (contiguous) {
      if (cs.ndim() == 0) return "0";
      return a.st[0] == 0 ? "0" : (a.st[0] == 1 ? "i" : fmt::format("i * p.{}[0]", stride_name));
    }
    std::string s;
    for (int d = 0; d < cs.ndim(); ++d) s += fmt::format("{}c{} * p.{}[{}]", d ? " + " : "", d, stride_name, d);
    return s.empty() ? "0" : s;
  }
  std::string direct_pos(const Acc& a, const std::string& pfx) {
    std::string s = fmt::format("(long long)p.{}_off", pfx);
    if (contiguous) {
      if (cs.ndim() == 1) s += fmt::format(" + (long long)i * p.{}_s[0]", pfx);
      return s;
    }
    for (int d = 0; d < cs.ndim(); ++d) s += fmt::format(" + (long long)c{} * p.{}_s[{}]", d, pfx, d);
    return s;
  }

  std::string gen_value(const Node* g, const std::string& pfx, const std::string& pos) {
    const DType t = g->dtype;
    const std::string T = reg_type(t);
    std::string v = fresh();
    switch (static_cast<GenKind>(g->op)) {
      case GenKind::Arange:
        line(fmt::format("{} {} = {};", T, v, round_half(t, fmt::format("cf_arange<{}>({}, p.{}_a, p.{}_b)", T, pos, pfx, pfx))));
        break;
      case GenKind::Linspace: {
        std::string d = fmt::format("cf_linspace({}, p.{}_a, p.{}_b, p.{}_c, p.{}_last)", pos, pfx, pfx, pfx, pfx);
        std::string e;
        if (is_half(t)) e = round_half(t, d);
        else if (is_float(t)) e = fmt::format("({}){}", T, d);
        else e = fmt::format("cf_cast<{}>(floor({}))", T, d);
        line(fmt::format("{} {} = {};", T, v, e));
        break;
      }
      case GenKind::RandomUniform:
      case GenKind::RandomNormal: {
        const char* f = static_cast<GenKind>(g->op) == GenKind::RandomUniform ? "cf_random_uniform" : "cf_random_normal";
        line(fmt::format("{} {} = {};", T, v,
                         round_half(t, fmt::format("{}<{}>(p.{}_seed, (unsigned long long)({}) + p.{}_ctr, p.{}_a, p.{}_b)",
                                                   f, T, pfx, pos, pfx, pfx, pfx))));
        break;
      }
    }
    return v;
  }

  // Value of the node under View `view` (level `level` of accessor prefix pfx) at the
  // row-major position `pos` of its input.
  std::string chain_value(const Node* view, const std::string& pfx, int level, const std::string& pos) {
    const Node* x = view->inputs[0].get();
    const std::string lp = fmt::format("{}_{}", pfx, level);
    const int r = x->ndim();
    // unravel pos over x's shape
    std::string rem = fresh();
    line(fmt::format("long long {} = {};", rem, pos));
    std::vector<std::string> m(static_cast<size_t>(r));
    for (int k = r - 1; k >= 0; --k) {
      m[k] = fresh();
      if (k == 0) line(fmt::format("const long long {} = {};", m[k], rem));
      else {
        line(fmt::format("const long long {} = {} % p.{}_sh[{}];", m[k], rem, lp, k));
        line(fmt::format("{} /= p.{}_sh[{}];", rem, lp, k));
      }
    }
    auto dot = [&](const std::string& st) {
      std::string s;
      for (int k = 0; k < r; ++k) s += fmt::format("{}{} * p.{}[{}]", k ? " + " : "", m[k], st, k);
      return s.empty() ? std::string("0") : s;
    };
    switch (x->k()) {
      case NodeKind::Buffer: {
        std::string v = fresh();
        line(fmt::format("const {} {} = {};", reg_type(x->dtype), v,
                         load_expr(x->dtype, fmt::format("p.{}_p[{}]", lp, dot(lp + "_st")))));
        return v;
      }
      case NodeKind::Generator:
        return gen_value(x, lp, fmt::format("(long long)p.{}_off + {}", lp, dot(lp + "_st")));
      default:  // View
        return chain_value(x, pfx, level + 1, fmt::format("(long long)p.{}_off + {}", lp, dot(lp + "_st")));
    }
  }

  std::string convert(const std::string& v, DType from, DType to) {
    if (from == to) return v;
    if (to == DType::Bool) return fmt::format("({} != 0)", v);
    return fmt::format("({})({})", reg_type(to), v);
  }

  std::string value(const Node* n) {
    auto it = vals.find(n);
    if (it != vals.end()) return it->second;
    std::string v;
    switch (n->k()) {
      case NodeKind::Scalar: v = "p.s" + std::to_string(scalar_of.at(n)); break;
      case NodeKind::Buffer: {
        const int j = acc_of.at(n);
        const std::string J = std::to_string(j);
        v = fresh();
        std::string src;
        if (in_vector_body && cs.ndim() == 1 && accs[j].st[0] != 0) src = fmt::format("l{}[u].v[k]", J);
        else src = fmt::format("p.a{}[{}]", J, direct_offset(accs[j], J, ("a" + J + "s").c_str()));
        line(fmt::format("const {} {} = {};", reg_type(n->dtype), v, load_expr(n->dtype, src)));
        break;
      }
      case NodeKind::Generator: {
        const int j = acc_of.at(n);
        const std::string pfx = "g" + std::to_string(j);
        v = gen_value(n, pfx, direct_pos(accs[j], pfx));
        break;
      }
      case NodeKind::View: {
        const int j = acc_of.at(n);
        const std::string pfx = "v" + std::to_string(j);
        v = chain_value(n, pfx, 0, direct_pos(accs[j], pfx));
        break;
      }
      case NodeKind::Elementwise: {
        const OpRow& row = op_row(n->op);
        DType in_dt[3];
        std::string in_v[3];
        for (int k = 0; k < row.arity; ++k) {
          in_dt[k] = n->inputs[k]->dtype;
          in_v[k] = value(n->inputs[k].get());
        }
        OpTyping ty = type_op(row.id, in_dt, row.arity, n->dtype);
        const std::string R = reg_type(n->dtype);
        v = fresh();
        if (row.id == Op::Cast) {
          std::string e;
          if (is_half(n->dtype))
            e = round_half(n->dtype, in_dt[0] == DType::Float64 ? in_v[0] : fmt::format("cf_cast<float>({})", in_v[0]));
          else
            e = fmt::format("cf_cast<{}>({})", R, in_v[0]);
          line(fmt::format("const {} {} = {};", R, v, e));
        } else {
          const std::string T = reg_type(ty.compute[row.arity > 1 ? 1 : 0]);
          std::string decl = fmt::format("{} {}; {{ using T = {}; using R = {}; ", R, v, T, R);
          static const char* names[3] = {"a", "b", "c"};
          for (int k = 0; k < row.arity; ++k)
            decl += fmt::format("const {} {} = {}; ", reg_type(ty.compute[k]), names[k],
                                convert(in_v[k], in_dt[k], ty.compute[k]));
          decl += fmt::format("{} = static_cast<R>({}); }}", v, row.expr);
          line(decl);
          if (is_half(n->dtype)) line(fmt::format("{} = {};", v, round_half(n->dtype, v)));
        }
        break;
      }
      default: throw InternalError("unexpected node in elementwise codegen");
    }
    vals[n] = v;
    return v;
  }

  // One element's work: compute every output's value and store it.
  void emit_element(bool vector_body) {
    in_vector_body = vector_body;
    vals.clear();
    for (size_t j = 0; j < accs.size(); ++j) {
      const Acc& a = accs[j];
      if (a.kind != Acc::Out) continue;
      const std::string J = std::to_string(j);
      const DType t = a.node->dtype;
      std::string v = value(a.node);
      if (vector_body) line(fmt::format("o{}.v[k] = {};", J, store_expr(t, v)));
      else line(fmt::format("p.o{}[{}] = {};", J, direct_offset(a, J, ("o" + J + "s").c_str()), store_expr(t, v)));
    }
  }

  std::string kernel_body() {
    std::string b;
    b += fmt::format("  using I = {};\n  const I n = (I)p.n;\n", I);
    if (contiguous) {
      b += fmt::format("  constexpr int V = {}, U = {};\n", V, U);
      b += "  const I nvec = n / V;\n";
      b += fmt::format("  const I t0 = (I)blockIdx.x * ({} * U) + (I)threadIdx.x;\n", kBlock);
      std::string loads, stores_decl, stores;
      for (size_t j = 0; j < accs.size(); ++j) {
        const Acc& a = accs[j];
        const std::string J = std::to_string(j);
        if (a.kind == Acc::Buf && cs.ndim() == 1 && a.st[0] == 1) {
          b += fmt::format("  cf_vec<{}, V> l{}[U];\n", storage_type(a.node->dtype), J);
          loads += fmt::format("      l{}[u] = *reinterpret_cast<const cf_vec<{}, V>*>(p.a{} + iv * V);\n", J,
                               storage_type(a.node->dtype), J);
        }
        if (a.kind == Acc::Out) {
          stores_decl += fmt::format("      cf_vec<{}, V> o{};\n", storage_type(a.node->dtype), J);
          stores += fmt::format("      *reinterpret_cast<cf_vec<{}, V>*>(p.o{} + iv * V) = o{};\n",
                                storage_type(a.node->dtype), J, J);
        }
      }
      if (!loads.empty())
        b += fmt::format("#pragma unroll\n  for (int u = 0; u < U; ++u) {{\n    const I iv = t0 + u * {};\n"
                         "    if (iv < nvec) {{\n{}    }}\n  }}\n", kBlock, loads);
      code.clear();
      emit_element(true);
      b += fmt::format("#pragma unroll\n  for (int u = 0; u < U; ++u) {{\n    const I iv = t0 + u * {};\n"
                       "    if (iv < nvec) {{\n{}#pragma unroll\n      for (int k = 0; k < V; ++k) {{\n"
                       "      const I i = iv * V + k;\n{}      }}\n{}    }}\n  }}\n",
                       kBlock, stores_decl, code, stores);
      code.clear();
      emit_element(false);
      b += fmt::format("  if (V > 1 && blockIdx.x == 0) {{\n    const I i = nvec * V + (I)threadIdx.x;\n"
                       "    if (i < n) {{\n{}    }}\n  }}\n", code);
    } else {
      code.clear();
      emit_element(false);
      std::string unravel = "      I r = i;\n";
      for (int d = cs.ndim() - 1; d >= 0; --d) {
        if (d == 0) unravel += "      const I c0 = r;\n";
        else unravel += fmt::format("      const I c{} = r % p.shape[{}]; r /= p.shape[{}];\n", d, d, d);
      }
      b += fmt::format("  for (I i = (I)blockIdx.x * {} + (I)threadIdx.x; i < n; i += (I)gridDim.x * {}) {{\n{}{}  }}\n",
                       kBlock, kBlock, unravel, code);
    }
    return b;
  }

  KernelSpec emit() {
    analyse();
    build_params();
    std::string body = kernel_body();
    std::string types;
    for (const auto& o : outs) types += std::string(info(o.node->dtype).short_name);
    const uint64_t h = std::hash<std::string>{}(pl.decl() + body);
    KernelSpec k;
    k.name = fmt::format("cf_ew_{}_{:016x}", types, h);
    k.source = kernel_preamble() +
               fmt::format("\nstruct {}_params {{\n{}}};\n\nextern \"C\" __global__ void __launch_bounds__({}) "
                           "{}(const {}_params p) {{\n{}}}\n",
                           k.name, pl.decl(), kBlock, k.name, k.name, body);
    k.params = pl.bytes();
    k.patches = std::move(patches);
    k.numel = numel(S);
    int64_t blocks;
    if (contiguous) {
      int64_t nvec = k.numel / V;
      blocks = std::max<int64_t>(1, (nvec + int64_t(kBlock) * U - 1) / (int64_t(kBlock) * U));
    } else {
      blocks = std::min<int64_t>(std::max<int64_t>(1, (k.numel + kBlock - 1) / kBlock), int64_t(1) << 20);
    }
    if (blocks > 0x7fffffffLL) throw NotSupportedError(fmt::format("elementwise kernel over {} elements needs too many blocks", k.numel));
    k.dims.grid[0] = static_cast<unsigned>(blocks);
    k.dims.block[0] = kBlock;
    k.summary = contiguous ? fmt::format("contiguous, {} x {} elements per thread{}, {}-bit index", U, V,
                                         vectorize ? " (16-byte vectors)" : "", i64 ? 64 : 32)
                           : fmt::format("strided rank {}, {}-bit index", cs.ndim(), i64 ? 64 : 32);
    return k;
  }
};

}  // namespace

KernelSpec emit_elementwise_kernel(const Shape& iter_shape, const std::vector<EwOutput>& outputs,
                                   const LeafBinding& bind) {
  Emitter e(iter_shape, outputs, bind);
  return e.emit();
}

}  // namespace cufuse::detail
