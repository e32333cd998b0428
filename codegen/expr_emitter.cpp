// codegen/expr_emitter.cpp: shared emission of node values (see expr_emitter.hpp).
#include "codegen/expr_emitter.hpp"
#include "codegen/scalar_forms.hpp"

#include <fmt/format.h>

#include "codegen/op_table.hpp"
#include "codegen/user_kernel.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

bool reads_memory(const Node* n, const LeafBinding& bind) {
  return n->k() == NodeKind::Buffer || (bind.buffer_of && bind.buffer_of(n) >= 0);
}

Layout memory_layout(const Node* n, const LeafBinding& bind) {
  if (n->k() == NodeKind::Buffer) return n->layout;
  return contiguous_layout(n->shape());
}

bool strided_memory_view(const Node* view, const LeafBinding& bind, Strides& strides) {
  if (view->k() != NodeKind::View || view->layout.offset != 0) return false;
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
      add_patch(pl.add("unsigned long long", 8, pfx + "_seed"), PatchSrc::GenSeed, DType::UInt64, leaf);
      add_patch(pl.add("unsigned long long", 8, pfx + "_ctr"), PatchSrc::GenCounter, DType::UInt64, leaf);
      break;
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

std::string ExprEmitter::chain_value(const Node* view, const std::string& pfx, const std::string& pos_in, int level) {
  std::string pos = pos_in;
  for (;; ++level) {  // one level of the chain of Views per turn (a loop: chains can be long)
    const Node* x = view->inputs[0].get();
    const std::string lp = fmt::format("{}_{}", pfx, level);
    const bool mem = reads_memory(x, bind);
    if (once(lp)) {
      add_idx_array(lp + "_sh", x->shape());
      if (mem) {
        add_memory_ptr(lp + "_p", x, false);
        add_idx_array(lp + "_st", memory_layout(x, bind).strides);
      } else if (x->k() == NodeKind::Generator || x->k() == NodeKind::View) {
        add_idx(lp + "_off", x->layout.offset);
        add_idx_array(lp + "_st", x->layout.strides);
      } else {
        throw InternalError(fmt::format("a View over a {} node reached code generation", kind_name(x->k())));
      }
    }
    const int r = x->ndim();
    std::string rem = fresh();
    line(fmt::format("long long {} = {};", rem, pos));
    std::vector<std::string> m(static_cast<size_t>(r));
    for (int k = r - 1; k >= 0; --k) {
      m[k] = fresh();
      if (k == 0) {
        line(fmt::format("const long long {} = {};", m[k], rem));
      } else {
        line(fmt::format("const long long {} = {} % p.{}_sh[{}];", m[k], rem, lp, k));
        line(fmt::format("{} /= p.{}_sh[{}];", rem, lp, k));
      }
    }
    auto dot = [&](const std::string& st) {
      std::string s;
      for (int k = 0; k < r; ++k) s += fmt::format("{}{} * p.{}[{}]", k ? " + " : "", m[k], st, k);
      return s.empty() ? std::string("0") : s;
    };
    if (mem) {
      std::string v = fresh();
      line(fmt::format("const {} {} = {};", reg_type(x->dtype), v,
                       load_expr(x->dtype, fmt::format("p.{}_p[{}]", lp, dot(lp + "_st")))));
      return v;
    }
    if (x->k() == NodeKind::Generator) return gen_value(x, lp, fmt::format("(long long)p.{}_off + {}", lp, dot(lp + "_st")));
    pos = fmt::format("(long long)p.{}_off + {}", lp, dot(lp + "_st"));
    view = x;
  }
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
