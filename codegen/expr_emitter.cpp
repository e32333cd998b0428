// codegen/expr_emitter.cpp: shared emission of node values (see expr_emitter.hpp).
#include "codegen/expr_emitter.hpp"
#include "plan/scalar_forms.hpp"

#include <fmt/format.h>

#include "codegen/user_kernel.hpp"
#include "core/op_table.hpp"
#include "cufuse/error.hpp"
#include "graph/gather.hpp"
#include "graph/index_map.hpp"

namespace cufuse::detail {

bool reads_memory(const Node* n, const LeafBinding& bind) {
  return n->k() == NodeKind::Buffer || (bind.buffer_of && bind.buffer_of(n) >= 0);
}

Layout memory_layout(const Node* n, const LeafBinding& bind) {
  if (n->k() == NodeKind::Buffer) return n->layout;
  return contiguous_layout(n->shape());
}

bool strided_memory_view(const Node* view, const LeafBinding& bind, Strides& strides) {
  if (view->k() != NodeKind::View || has_attrs(view->attrs) || view->layout.offset != 0) return false;
  const Node* x = view->inputs[0].get();
  if (!reads_memory(x, bind)) return false;
  int64_t scale;
  if (x->k() != NodeKind::Buffer) scale = 1;                  // contiguous: the position itself
  else if (x->ndim() == 1) scale = x->layout.strides[0];      // the leaf's pointer holds its offset
  else if (x->ndim() == 0) scale = 0;
  else return false;
  strides = view->layout.strides;
  for (auto& st : strides) st *= scale;
  return true;
}

std::string storage_type(DType t) { return std::string(info(t).cuda_type); }
std::string reg_type(DType t) { return compute_ctype(t); }
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
int64_t span_of(const Shape& s, const Strides& st, int64_t off) {
  // In 128 bits and saturated: |INT64_MIN| and products past int64 mean "needs 64 bits".
  using i128 = __int128;
  auto mag = [](int64_t v) { return v < 0 ? -i128(v) : i128(v); };
  i128 m = mag(off);
  for (int i = 0; i < s.ndim() && m <= INT64_MAX; ++i) m += i128(s[i] > 0 ? s[i] - 1 : 0) * mag(st[i]);
  return m > INT64_MAX ? INT64_MAX : int64_t(m);
}

void ExprEmitter::add_patch(size_t off, PatchSrc src, DType t, int index) {
  patches.push_back(Patch{static_cast<uint32_t>(off), src, t, static_cast<uint32_t>(index)});
}

void ExprEmitter::add_idx(const std::string& name, int64_t v) {
  size_t off = pl.add(I, idx_size(), name);
  if (i64_) pl.set<long long>(off, v);
  else pl.set<int>(off, static_cast<int>(v));
}

void ExprEmitter::add_idx_array(const std::string& name, const SmallVec<int64_t, 8>& v) {
  if (v.empty()) return;
  size_t off = pl.add(I, idx_size(), name, static_cast<int>(v.size()));
  for (size_t k = 0; k < v.size(); ++k) {
    if (i64_) pl.set<long long>(off + k * 8, v[k]);
    else pl.set<int>(off + k * 4, static_cast<int>(v[k]));
  }
}

void ExprEmitter::add_memory_ptr(const std::string& name, const Node* n, bool restrict_ptr) {
  const std::string ct = fmt::format("const {}*{}", storage_type(n->dtype), restrict_ptr ? " __restrict__" : "");
  size_t off = pl.add(ct, 8, name);
  const int b = bind.buffer_of ? bind.buffer_of(n) : -1;
  if (n->k() != NodeKind::Buffer && b >= 0) add_patch(off, PatchSrc::BufferPtr, n->dtype, b);
  else add_patch(off, PatchSrc::LeafPtr, n->dtype, bind.leaf_index(n));
}

void ExprEmitter::add_scalar(const std::string& name, const Node* s) {
  add_patch(pl.add(reg_type(s->dtype), compute_size(s->dtype), name), PatchSrc::ScalarValue, s->dtype,
            bind.leaf_index(s));
}

void ExprEmitter::add_gen_params(const std::string& pfx, const Node* g) {
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
      break;
    case GenKind::RandomIntegers:
      add_patch(pl.add("long long", 8, pfx + "_a"), PatchSrc::GenA, DType::Int64, leaf);
      add_patch(pl.add("unsigned long long", 8, pfx + "_b"), PatchSrc::GenB, DType::UInt64, leaf);
      break;
    case GenKind::RandomExponential:
      add_patch(pl.add(T, compute_size(t), pfx + "_a"), PatchSrc::GenA, t, leaf);
      break;
    case GenKind::RandomPoisson:
      add_patch(pl.add("double", 8, pfx + "_a"), PatchSrc::GenA, DType::Float64, leaf);
      break;
    case GenKind::RandomPermutation:
      add_patch(pl.add("long long", 8, pfx + "_a"), PatchSrc::GenA, DType::Int64, leaf);
      break;
  }
  if (static_cast<GenKind>(g->op) >= GenKind::RandomUniform) {
    add_patch(pl.add("unsigned long long", 8, pfx + "_seed"), PatchSrc::GenSeed, DType::UInt64, leaf);
    add_patch(pl.add("unsigned long long", 8, pfx + "_ctr"), PatchSrc::GenCounter, DType::UInt64, leaf);
  }
}

std::string ExprEmitter::gen_value(const Node* g, const std::string& pfx, const std::string& pos) {
  if (once(pfx + "#gen")) add_gen_params(pfx, g);
  const DType t = g->dtype;
  const std::string T = reg_type(t);
  std::string v = fresh();
  switch (static_cast<GenKind>(g->op)) {
    case GenKind::Arange:
      line(fmt::format("const {} {} = {};", T, v,
                       round_half(t, fmt::format("cf_arange<{}>({}, p.{}_a, p.{}_b)", T, pos, pfx, pfx))));
      break;
    case GenKind::Linspace: {
      std::string d = fmt::format("cf_linspace({}, p.{}_a, p.{}_b, p.{}_c, p.{}_last)", pos, pfx, pfx, pfx, pfx);
      std::string e;
      if (is_half(t)) e = round_half(t, d);
      else if (is_float(t)) e = fmt::format("({}){}", T, d);
      else e = fmt::format("cf_cast<{}>(floor({}))", T, d);
      line(fmt::format("const {} {} = {};", T, v, e));
      break;
    }
    case GenKind::RandomUniform:
    case GenKind::RandomNormal: {
      const char* f = static_cast<GenKind>(g->op) == GenKind::RandomUniform ? "cf_random_uniform" : "cf_random_normal";
      line(fmt::format("const {} {} = {};", T, v,
                       round_half(t, fmt::format("{}<{}>(p.{}_seed, (unsigned long long)({}) + p.{}_ctr, p.{}_a, p.{}_b)",
                                                 f, T, pfx, pos, pfx, pfx, pfx))));
      break;
    }
    case GenKind::RandomIntegers:
      line(fmt::format("const {} {} = cf_random_integers<{}>(p.{}_seed, (unsigned long long)({}) + p.{}_ctr, p.{}_a, p.{}_b);",
                       T, v, T, pfx, pos, pfx, pfx, pfx));
      break;
    case GenKind::RandomExponential:
      line(fmt::format("const {} {} = {};", T, v,
                       round_half(t, fmt::format("cf_random_exponential<{}>(p.{}_seed, (unsigned long long)({}) + p.{}_ctr, p.{}_a)",
                                                 T, pfx, pos, pfx, pfx))));
      break;
    case GenKind::RandomPoisson:
      line(fmt::format("const {} {} = cf_random_poisson<{}>(p.{}_seed, (unsigned long long)({}) + p.{}_ctr, p.{}_a);", T, v, T,
                       pfx, pos, pfx, pfx));
      break;
    case GenKind::RandomPermutation:
      line(fmt::format("const {} {} = ({})cf_feistel((long long)({}), p.{}_a, cf_mix64(p.{}_seed ^ cf_mix64(p.{}_ctr)));", T, v,
                       T, pos, pfx, pfx, pfx));
      break;
  }
  return v;
}

int64_t chain_span(const Node* view) {
  int64_t m = 0;
  for (const Node* v = view;;) {  // down the chain of Views (a loop: chains can be long)
    const Node* x = v->inputs[0].get();
    m = std::max(m, numel(x->shape()));
    if (x->k() == NodeKind::Buffer || x->k() == NodeKind::Generator || x->k() == NodeKind::View)
      m = std::max(m, span_of(x->shape(), x->layout.strides, x->layout.offset));
    if (x->k() != NodeKind::View) return m;
    v = x;
  }
}

// The chain walks nodes by their coordinates: `m` holds the coordinates of x in x's shape.
// A plain View turns them into its input's row-major position and unravels that over its
// input's shape; a mapped view (graph/index_map.hpp) maps them axis by axis to its input's
// coordinates directly (same rank, no unravelling); memory and generators end the chain.
std::string ExprEmitter::chain_value(const Node* view, const std::string& pfx, const std::string& pos_in, int level,
                                     const std::vector<std::string>* coords) {
  // Coordinates in the kernel's index type: with 32-bit indexing every position of the chain
  // fits (chain_span), and 32-bit division is several times cheaper than 64-bit.
  auto unravel = [&](const std::string& pos, const Node* x, const std::string& lp) {
    if (once(lp + "#sh")) add_idx_array(lp + "_sh", x->shape());
    const int r = x->ndim();
    std::string rem = fresh();
    line(fmt::format("{} {} = ({})({});", I, rem, I, pos));
    std::vector<std::string> m(static_cast<size_t>(r));
    for (int k = r - 1; k >= 0; --k) {
      m[k] = fresh();
      if (k == 0) {
        line(fmt::format("const {} {} = {};", I, m[k], rem));
      } else {
        line(fmt::format("const {} {} = {} % p.{}_sh[{}];", I, m[k], rem, lp, k));
        line(fmt::format("{} /= p.{}_sh[{}];", rem, lp, k));
      }
    }
    return m;
  };
  auto dot = [&](const std::vector<std::string>& m, const std::string& st) {
    std::string s;
    for (size_t k = 0; k < m.size(); ++k) s += fmt::format("{}{} * p.{}[{}]", k ? " + " : "", m[k], st, k);
    return s.empty() ? std::string("0") : s;
  };
  const Node* x = view->inputs[0].get();
  std::vector<std::string> m = coords ? *coords : unravel(pos_in, x, fmt::format("{}_{}", pfx, level));
  for (;;) {  // one node of the chain per turn (a loop: chains can be long)
    const std::string lp = fmt::format("{}_{}", pfx, level);
    if (reads_memory(x, bind)) {
      if (once(lp + "#mem")) {
        add_memory_ptr(lp + "_p", x, false);
        add_idx_array(lp + "_st", memory_layout(x, bind).strides);
      }
      std::string v = fresh();
      line(fmt::format("const {} {} = {};", reg_type(x->dtype), v,
                       load_expr(x->dtype, fmt::format("p.{}_p[{}]", lp, dot(m, lp + "_st")))));
      return v;
    }
    if (x->k() == NodeKind::View && is_gather(*x))  // its index nodes would go unread: graph/ pushes views through gathers
      throw InternalError(fmt::format("a View over an unmaterialized gather of shape {} reached code generation",
                                      to_string(x->shape())));
    if (x->k() == NodeKind::Generator || x->k() == NodeKind::View) {
      if (once(lp + "#lay")) {
        add_idx(lp + "_off", x->layout.offset);
        add_idx_array(lp + "_st", x->layout.strides);
      }
    } else {
      throw InternalError(fmt::format("a View over a {} node reached code generation", kind_name(x->k())));
    }
    if (x->k() == NodeKind::Generator) return gen_value(x, lp, fmt::format("(long long)p.{}_off + {}", lp, dot(m, lp + "_st")));
    if (const IndexMap* map = index_map_of(*x)) {
      m = map_coordinates(*map, m, lp);
      x = x->inputs[0].get();
      ++level;
      continue;
    }
    const std::string pos = fmt::format("(long long)p.{}_off + {}", lp, dot(m, lp + "_st"));
    x = x->inputs[0].get();
    ++level;
    m = unravel(pos, x, fmt::format("{}_{}", pfx, level));
  }
}

bool ExprEmitter::identity_view(const Node* view) {
  if (view->k() != NodeKind::View || has_attrs(view->attrs) || view->layout.offset != 0) return false;
  const Node* x = view->inputs[0].get();
  return x->shape() == view->shape() && view->layout.strides == contiguous_strides(view->shape());
}

// A mapped view's coordinates of its input: each axis through its cf_imap_* formula, with
// the map's numbers as long long parameters `lp_m<k>` (shift, n, r) and `lp_k<k>` (seed).
std::vector<std::string> ExprEmitter::map_coordinates(const IndexMap& map, const std::vector<std::string>& m,
                                                      const std::string& lp) {
  std::vector<std::string> out(m.size());
  for (size_t k = 0; k < m.size(); ++k) {
    const AxisMap& a = map.axes[k];
    if (a.kind == AxisMapKind::Identity) {
      out[k] = m[k];
      continue;
    }
    const std::string mk = fmt::format("{}_m{}", lp, k);
    if (once(mk)) {
      const size_t off = pl.add("long long", 8, mk, 3);
      pl.set<long long>(off, a.shift);
      pl.set<long long>(off + 8, a.n);
      pl.set<long long>(off + 16, a.r);
      if (a.kind == AxisMapKind::Feistel) pl.set<unsigned long long>(pl.add("unsigned long long", 8, lp + "_k" + std::to_string(k)), a.seed);
    }
    std::string e;
    switch (a.kind) {
      case AxisMapKind::Clamp: e = fmt::format("cf_imap_clamp<{}>({}, p.{}[0], p.{}[1])", I, m[k], mk, mk); break;
      case AxisMapKind::Wrap: e = fmt::format("cf_imap_wrap<{}>({}, p.{}[0], p.{}[1])", I, m[k], mk, mk); break;
      case AxisMapKind::Div: e = fmt::format("{} / ({})p.{}[2]", m[k], I, mk); break;
      case AxisMapKind::Reflect: e = fmt::format("cf_imap_reflect<{}>({}, p.{}[0], p.{}[1])", I, m[k], mk, mk); break;
      case AxisMapKind::Symmetric: e = fmt::format("cf_imap_symmetric<{}>({}, p.{}[0], p.{}[1])", I, m[k], mk, mk); break;
      case AxisMapKind::Feistel: e = fmt::format("cf_feistel({}, p.{}[1], p.{}_k{})", m[k], mk, lp, k); break;
      case AxisMapKind::Identity: break;
    }
    out[k] = fresh();
    line(fmt::format("const {} {} = ({})({});", I, out[k], I, e));
  }
  return out;
}

std::string ExprEmitter::checked_indices(const std::string& pfx, const std::vector<std::string>& e,
                                         const SmallVec<int64_t, 8>& size, const SmallVec<int64_t, 8>& axis,
                                         const Node* err) {
  bool any = false;
  for (auto n : size) any |= n >= 0;
  if (once(pfx + "#idx")) {
    if (any) {
      size_t off = pl.add("long long", 8, pfx + "_n", static_cast<int>(size.size()));
      for (size_t d = 0; d < size.size(); ++d) pl.set<long long>(off + d * 8, size[d]);
    }
    if (err) add_memory_ptr(pfx + "_err", err, false);
  }
  const std::string ok = fresh();
  line(fmt::format("bool {} = true;", ok));
  for (size_t d = 0; d < e.size(); ++d) {
    const std::string i = fmt::format("{}_i{}", ok, d);
    if (size[d] < 0) {
      line(fmt::format("const long long {} = (long long)({});", i, e[d]));
      continue;
    }
    line(fmt::format("long long {} = (long long)({});", i, e[d]));
    line(fmt::format("if ({0} < 0) {0} += p.{1}_n[{2}];", i, pfx, d));
    std::string rec;
    if (err)
      rec = fmt::format(" if ({4}atomicCAS((unsigned long long*)p.{0}_err, 0ull, 1ull) == 0ull) {{ "
                        "((long long*)p.{0}_err)[1] = (long long)({1}); ((long long*)p.{0}_err)[2] = {2}LL; "
                        "((long long*)p.{0}_err)[3] = p.{0}_n[{3}]; }}",
                        pfx, e[d], axis[d], d, index_guard.empty() ? std::string() : index_guard + " && ");
    line(fmt::format("if ({0} < 0 || {0} >= p.{1}_n[{2}]) {{ {3} = false; {0} = 0;{4} }}", i, pfx, d, ok, rec));
  }
  return ok;
}

std::string ExprEmitter::gather_value(const Node* g, const std::string& pfx, const std::vector<std::string>& e) {
  const GatherAttrs& at = gather_attrs(*g);
  const Node* x = g->inputs[0].get();
  const bool mem = reads_memory(x, bind);
  if (once(pfx)) {
    if (mem) {
      add_memory_ptr(pfx + "_p", x, false);
      add_idx_array(pfx + "_st", memory_layout(x, bind).strides);
    } else if (x->k() == NodeKind::Generator || (x->k() == NodeKind::View && !is_gather(*x))) {
      add_idx(pfx + "_off", x->layout.offset);
      add_idx_array(pfx + "_st", x->layout.strides);
    } else {
      throw InternalError(fmt::format("a gather over a {} node reached code generation", kind_name(x->k())));
    }
  }
  const std::string ok = checked_indices(pfx, e, at.size, at.axis, gather_err(*g));
  std::string dot;
  for (size_t d = 0; d < e.size(); ++d) dot += fmt::format("{}{}_i{} * (long long)p.{}_st[{}]", d ? " + " : "", ok, d, pfx, d);
  if (dot.empty()) dot = "0";
  const std::string R = reg_type(g->dtype);
  if (mem) {
    std::string v = fresh();
    line(fmt::format("const {} {} = {} ? {} : static_cast<{}>(0);", R, v, ok,
                     load_expr(x->dtype, fmt::format("p.{}_p[{}]", pfx, dot)), R));
    return v;
  }
  const std::string pos = fmt::format("(long long)p.{}_off + {}", pfx, dot);
  if (x->k() == NodeKind::Generator) return gen_value(x, pfx + "g", pos);
  return chain_value(x, pfx + "c", pos);
}

static std::string convert(const std::string& v, DType from, DType to) {
  if (from == to) return v;
  if (to == DType::Bool) return fmt::format("({} != 0)", v);
  return fmt::format("({})({})", reg_type(to), v);
}

std::string ExprEmitter::op_value(const Node* n, const std::string* in_v) {
  if (is_user_op(n->op)) return user_op_value(*this, n, in_v);  // ElementwiseKernel code (user_kernel.hpp)
  const OpRow& row = op_row(n->op);
  DType in_dt[3];
  for (int k = 0; k < row.arity; ++k) in_dt[k] = n->inputs[k]->dtype;
  OpTyping ty = type_op(row.id, in_dt, row.arity, n->dtype);
  const std::string R = reg_type(n->dtype);
  std::string v = fresh();
  if (row.id == Op::Cast) {
    std::string e;
    if (is_half(n->dtype))
      e = round_half(n->dtype, in_dt[0] == DType::Float64 ? in_v[0] : fmt::format("cf_cast<float>({})", in_v[0]));
    else
      e = fmt::format("cf_cast<{}>({})", R, in_v[0]);
    line(fmt::format("const {} {} = {};", R, v, e));
    return v;
  }
  const std::string T = reg_type(ty.compute[row.arity > 1 ? 1 : 0]);
  std::string decl = fmt::format("{} {}; {{ using T = {}; using R = {}; ", R, v, T, R);
  static const char* names[3] = {"a", "b", "c"};
  for (int k = 0; k < row.arity; ++k)
    decl += fmt::format("const {} {} = {}; ", reg_type(ty.compute[k]), names[k], convert(in_v[k], in_dt[k], ty.compute[k]));
  std::string expr = row.expr;
  if (float_is_operator(row.id) && is_float(ty.compute[0]) && is_float(ty.compute[1]))
    expr = fmt::format("a {} b", row.symbol);
  if (row.id == Op::TrueDivide && divides_by_exact_reciprocal(n)) {  // a * (1/b), exact (scalar_forms.hpp)
    const Node* d = n->inputs[1].get();
    const std::string name = fmt::format("rcp{}", bind.leaf_index(d));
    if (once(name)) add_patch(pl.add(T, compute_size(ty.compute[1]), name), PatchSrc::ScalarReciprocal, ty.compute[1], bind.leaf_index(d));
    expr = "a * p." + name;
  } else if (row.id == Op::TrueDivide && divides_one(n)) {  // rcp.rn, the same bits (scalar_forms.hpp)
    expr = "T(1) / b";
  }
  decl += fmt::format("{} = static_cast<R>({}); }}", v, expr);
  line(decl);
  if (is_half(n->dtype)) line(fmt::format("{} = {};", v, round_half(n->dtype, v)));
  return v;
}

}  // namespace cufuse::detail
