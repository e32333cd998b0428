// src/kernel/user_kernel.cpp: ElementwiseKernel and ReductionKernel (include/cufuse/kernel.hpp):
// parsing CuPy's parameter lists, CuPy's type rules (placeholders bound from the arguments'
// dtypes, explicit types matched exactly, scalars converted to their parameter's type), and
// the lazy nodes each call makes: user Elementwise nodes (one per output), and for a
// reduction a map node, a Reduce node with ReduceOp::User and a post-map node, which the
// planner fuses like any prologue / reduction / epilogue. The CUDA is emitted by
// codegen/user_kernel.cpp.
#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

#include "codegen/user_kernel.hpp"
#include "core/op_table.hpp"
#include "core/reduce_attrs.hpp"
#include "cufuse/kernel.hpp"
#include "cufuse/ops.hpp"
#include "exec/binding.hpp"
#include "graph/elementwise.hpp"
#include "graph/realize.hpp"

namespace cufuse {

namespace detail {

struct ParamSpec {
  std::string name;
  char placeholder = 0;  // 'T' for a type placeholder, 0 for an explicit dtype
  DType dtype = DType::Float32;
};

struct UserKernelDef {
  bool reduction = false;
  std::string name;
  std::vector<ParamSpec> in, out;
  std::string operation;                        // ElementwiseKernel
  std::string map_expr, reduce_expr, post_map_expr, identity;  // ReductionKernel
  ParamSpec reduce_type;                        // ReductionKernel: the accumulator type
};

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool is_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), is_ident_char);
}

// Does `code` use identifier `id` as a token (not part of a longer name or a member)?
bool uses_token(const std::string& code, const std::string& id) {
  for (size_t p = code.find(id); p != std::string::npos; p = code.find(id, p + 1)) {
    const bool left = p == 0 || (!is_ident_char(code[p - 1]) && code[p - 1] != '.');
    const bool right = p + id.size() >= code.size() || !is_ident_char(code[p + id.size()]);
    if (left && right) return true;
  }
  return false;
}

ParamSpec parse_type(const std::string& t, const std::string& kernel, const std::string& what) {
  ParamSpec p;
  if (t.size() == 1 && std::isalpha(static_cast<unsigned char>(t[0]))) {
    p.placeholder = t[0];
    return p;
  }
  try {
    p.dtype = parse_dtype(t);
  } catch (const Error&) {
    throw TypeError(fmt::format("{} '{}': unknown type '{}' in {} (use a dtype name such as float32, or a one-letter "
                                "type placeholder such as T)", "user kernel", kernel, t, what));
  }
  return p;
}

std::vector<ParamSpec> parse_params(const std::string& text, const std::string& kernel, const char* which) {
  std::vector<ParamSpec> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    start = end + 1;
    std::vector<std::string> tok;
    size_t i = 0;
    while (i < item.size()) {
      while (i < item.size() && std::isspace(static_cast<unsigned char>(item[i]))) ++i;
      size_t j = i;
      while (j < item.size() && !std::isspace(static_cast<unsigned char>(item[j]))) ++j;
      if (j > i) tok.push_back(item.substr(i, j - i));
      i = j;
    }
    if (tok.empty()) {
      if (end == text.size() && out.empty() && item.find_first_not_of(" \t\n") == std::string::npos) break;
      throw ValueError(fmt::format("user kernel '{}': an empty parameter in {} \"{}\"", kernel, which, text));
    }
    if (tok.size() < 2)
      throw ValueError(fmt::format("user kernel '{}': syntax error in {} parameter '{}' (expected \"TYPE NAME\")",
                                   kernel, which, item));
    for (size_t k = 0; k + 2 < tok.size(); ++k) {
      if (tok[k] == "raw")
        throw NotSupportedError(fmt::format("user kernel '{}': raw parameter '{}': whole-array access is not "
                                            "available in fused kernels (use views, or a RawKernel)", kernel, tok.back()));
      throw ValueError(fmt::format("user kernel '{}': unknown keyword '{}' in parameter '{}'", kernel, tok[k], item));
    }
    const std::string& name = tok.back();
    if (!is_identifier(name))
      throw ValueError(fmt::format("user kernel '{}': '{}' is not a valid parameter name", kernel, name));
    if (name.rfind("_cf", 0) == 0)
      throw ValueError(fmt::format("user kernel '{}': parameter names starting with _cf are reserved ('{}')", kernel, name));
    ParamSpec p = parse_type(tok[tok.size() - 2], kernel, fmt::format("parameter '{}'", name));
    p.name = name;
    out.push_back(p);
  }
  return out;
}

void check_unique(const UserKernelDef& d) {
  std::vector<std::string> names;
  for (const auto& p : d.in) names.push_back(p.name);
  for (const auto& p : d.out) names.push_back(p.name);
  std::sort(names.begin(), names.end());
  for (size_t i = 1; i < names.size(); ++i)
    if (names[i] == names[i - 1])
      throw ValueError(fmt::format("user kernel '{}': parameter '{}' appears twice", d.name, names[i]));
}

void reject_index(const std::string& code, const std::string& kernel) {
  for (const char* id : {"i", "_ind"})
    if (uses_token(code, id))
      throw NotSupportedError(fmt::format(
          "user kernel '{}': the element index `{}` is not available in fused kernels (an element a fused kernel "
          "visits is not the kernel's own); pass an index array (cufuse::arange) as an input instead, or rename a "
          "local variable called {}", kernel, id, id));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

// CuPy's rule: explicit types match exactly; a placeholder is bound by the first array of
// that placeholder; scalars do not bind (they take their parameter's type).
struct Binding {
  std::map<char, DType> t;
  const UserKernelDef& d;

  void bind(const ParamSpec& p, DType a) {
    if (!p.placeholder) {
      if (a != p.dtype)
        throw TypeError(fmt::format("user kernel '{}': type is mismatched: parameter '{}' is {} but the argument is {}",
                                    d.name, p.name, name(p.dtype), name(a)));
      return;
    }
    auto it = t.find(p.placeholder);
    if (it == t.end()) t.emplace(p.placeholder, a);
    else if (it->second != a)
      throw TypeError(fmt::format("user kernel '{}': type is mismatched: parameter '{}' is {} but {} is already {}",
                                  d.name, p.name, name(a), std::string(1, p.placeholder), name(it->second)));
  }
  DType of(const ParamSpec& p) const {
    if (!p.placeholder) return p.dtype;
    auto it = t.find(p.placeholder);
    if (it == t.end())
      throw TypeError(fmt::format("user kernel '{}': cannot determine type {} of parameter '{}' (no array argument "
                                  "of type {})", d.name, std::string(1, p.placeholder), p.name,
                                  std::string(1, p.placeholder)));
    return it->second;
  }
  std::string typedefs() const {
    std::string s;
    for (const auto& [c, dt] : t) s += fmt::format("typedef {} {}; ", compute_ctype(dt), std::string(1, c));
    return s;
  }
};

// The arguments split into inputs and (optional) outputs, with the broadcast shape.
struct Args {
  std::vector<const Operand*> in;
  std::vector<const Array*> out;
  Shape shape;
};

Args split_args(const UserKernelDef& d, const std::vector<Operand>& args, bool out_shape_is_result) {
  const size_t nin = d.in.size(), nout = d.out.size();
  if (args.size() != nin && args.size() != nin + nout)
    throw ValueError(fmt::format("user kernel '{}' takes {} input(s){}; got {} argument(s)", d.name, nin,
                                 fmt::format(" (and optionally {} output array(s))", nout), args.size()));
  Args a;
  std::vector<const NodePtr*> nodes;  // the arguments' nodes (the Arrays outlive the call)
  for (size_t i = 0; i < args.size(); ++i) {
    if (i < nin) {
      a.in.push_back(&args[i]);
      if (args[i].is_array()) {
        if (!args[i].array().defined())
          throw ValueError(fmt::format("user kernel '{}': argument {} is an empty Array handle", d.name, i));
        nodes.push_back(&args[i].array().node());
        a.shape = broadcast_shapes(a.shape, args[i].array().shape());
      }
    } else {
      if (!args[i].is_array() || !args[i].array().defined())
        throw TypeError(fmt::format("user kernel '{}': output argument '{}' must be an Array", d.name,
                                    d.out[i - nin].name));
      a.out.push_back(&args[i].array());
      nodes.push_back(&args[i].array().node());
    }
  }
  check_same_device(nodes.data(), static_cast<int>(nodes.size()), d.name.c_str());
  if (out_shape_is_result)
    for (size_t k = 0; k < a.out.size(); ++k) {
      const Shape s = broadcast_shapes(a.shape, a.out[k]->shape());
      if (s != a.out[k]->shape())
        throw ValueError(fmt::format("user kernel '{}': output '{}' has shape {} but the inputs broadcast to {}",
                                     d.name, d.out[k].name, to_string(a.out[k]->shape()), to_string(s)));
      a.shape = s;
    }
  return a;
}

NodePtr input_node(const Operand& o, DType t, const Shape& shape) {
  if (o.is_array()) return broadcast_node(o.array().node(), shape);
  return make_scalar(o.scalar(), t, shape);
}

NodePtr user_elementwise_node(UserOp op, DType result, const Shape& shape, InputVec ins) {
  const uint16_t id = intern_user_op(op);
  auto n = make_elementwise(id, result, shape, std::move(ins));
  maybe_auto_eval(n);
  return n;
}


}  // namespace
}  // namespace detail

using detail::UserOp;
using detail::UserVar;

// ------------------------------------------------------------------ ElementwiseKernel
ElementwiseKernel::ElementwiseKernel(const std::string& in_params, const std::string& out_params,
                                     const std::string& operation, const std::string& name) {
  auto d = std::make_shared<detail::UserKernelDef>();
  d->name = name;
  d->in = detail::parse_params(in_params, name, "in_params");
  d->out = detail::parse_params(out_params, name, "out_params");
  if (d->out.empty()) throw ValueError(fmt::format("ElementwiseKernel '{}': out_params names no output", name));
  detail::check_unique(*d);
  detail::reject_index(operation, name);
  d->operation = operation;
  def_ = std::move(d);
}

int ElementwiseKernel::nin() const { return static_cast<int>(def_->in.size()); }
int ElementwiseKernel::nout() const { return static_cast<int>(def_->out.size()); }
const std::string& ElementwiseKernel::name() const { return def_->name; }

Array ElementwiseKernel::single(std::vector<Array> r) const {
  if (r.size() != 1)
    throw ValueError(fmt::format("ElementwiseKernel '{}' has {} outputs: use call(), which returns them all",
                                 def_->name, r.size()));
  return std::move(r[0]);
}

std::vector<Array> ElementwiseKernel::call(const std::vector<Operand>& args) const {
  const auto& d = *def_;
  detail::Args a = detail::split_args(d, args, true);
  detail::Binding b{{}, d};
  for (size_t k = 0; k < a.out.size(); ++k) b.bind(d.out[k], a.out[k]->dtype());
  for (size_t k = 0; k < a.in.size(); ++k)
    if (a.in[k]->is_array()) b.bind(d.in[k], a.in[k]->array().dtype());

  UserOp op;
  op.kind = UserOp::Kind::Elementwise;
  op.name = d.name;
  op.typedefs = b.typedefs();
  op.code = d.operation;
  detail::InputVec ins;
  for (size_t k = 0; k < d.in.size(); ++k) {
    const DType t = b.of(d.in[k]);
    op.vars.push_back(UserVar{d.in[k].name, t, -1});
    ins.push_back(detail::input_node(*a.in[k], t, a.shape));
  }
  for (size_t k = 0; k < d.out.size(); ++k) {
    int init = -1;
    if (!a.out.empty()) {  // the output's current value is its initial value
      init = static_cast<int>(ins.size());
      ins.push_back(detail::broadcast_node(a.out[k]->node(), a.shape));
    }
    op.outs.push_back(UserVar{d.out[k].name, b.of(d.out[k]), init});
  }
  std::vector<Array> results;
  for (size_t k = 0; k < d.out.size(); ++k) {
    op.result = static_cast<int>(k);
    results.emplace_back(detail::user_elementwise_node(op, op.outs[k].dtype, a.shape, ins));
  }
  if (a.out.empty()) return results;
  // Written into the given outputs: every result is computed before any output changes.
  if (results.size() > 1) eval_all(results);
  std::vector<Array> outs;
  for (size_t k = 0; k < a.out.size(); ++k) {
    // Through the caller's own handle (writes are lazy: the handle moves to the new version).
    Array& o = const_cast<Array&>(*a.out[k]);
    o.assign(results[k]);
    outs.push_back(o);
  }
  return outs;
}

// ------------------------------------------------------------------ ReductionKernel
ReductionKernel::ReductionKernel(const std::string& in_params, const std::string& out_params,
                                 const std::string& map_expr, const std::string& reduce_expr,
                                 const std::string& post_map_expr, const std::string& identity,
                                 const std::string& name, const std::string& reduce_type) {
  auto d = std::make_shared<detail::UserKernelDef>();
  d->reduction = true;
  d->name = name;
  d->in = detail::parse_params(in_params, name, "in_params");
  d->out = detail::parse_params(out_params, name, "out_params");
  if (d->out.size() != 1)
    throw NotSupportedError(fmt::format("ReductionKernel '{}': exactly one output parameter is supported (got {})",
                                        name, d->out.size()));
  detail::check_unique(*d);
  if (identity.find_first_not_of(" \t\n") == std::string::npos)
    throw ValueError(fmt::format("ReductionKernel '{}': an identity is required (the value an empty reduction gives)", name));
  for (const auto* code : {&map_expr, &reduce_expr, &post_map_expr}) detail::reject_index(
      detail::replace_all(detail::replace_all(*code, "_in_ind.size()", "0"), "_out_ind.size()", "0"), name);
  if (reduce_expr.find("_in_ind") != std::string::npos || reduce_expr.find("_out_ind") != std::string::npos)
    throw NotSupportedError(fmt::format("ReductionKernel '{}': _in_ind / _out_ind are available in map_expr and "
                                        "post_map_expr only", name));
  d->map_expr = map_expr;
  d->reduce_expr = reduce_expr;
  d->post_map_expr = post_map_expr;
  d->identity = identity;
  d->reduce_type = reduce_type.empty() ? d->out[0] : detail::parse_type(reduce_type, name, "reduce_type");
  def_ = std::move(d);
}

const std::string& ReductionKernel::name() const { return def_->name; }

Array ReductionKernel::call(const std::vector<Operand>& args, AxisArg axis, bool keepdims) const {
  const auto& d = *def_;
  detail::Args a = detail::split_args(d, args, false);
  detail::Binding b{{}, d};
  if (!a.out.empty()) b.bind(d.out[0], a.out[0]->dtype());
  for (size_t k = 0; k < a.in.size(); ++k)
    if (a.in[k]->is_array()) b.bind(d.in[k], a.in[k]->array().dtype());
  const DType rt = b.of(d.reduce_type), ot = b.of(d.out[0]);
  const std::string typedefs = b.typedefs() + fmt::format("typedef {} _type_reduce; ", detail::compute_ctype(rt));
  const Shape& S = a.shape;
  const Axes axes = detail::normalize_axes(axis, S.ndim(), "ReductionKernel '" + d.name + "'");
  Shape out_shape;
  for (int i = 0, k = 0; i < S.ndim(); ++i) {
    if (k < axes.ndim() && axes[k] == i) {
      ++k;
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(S[i]);
    }
  }
  // _in_ind.size() / _out_ind.size(): kernel parameters (int64 scalars), not source text.
  auto sized = [&](const std::string& code, UserOp& op, detail::InputVec& ins, const Shape& at) {
    std::string c = code;
    if (c.find("_in_ind.size()") != std::string::npos) {
      c = detail::replace_all(c, "_in_ind.size()", "_cf_in_size");
      op.vars.push_back(UserVar{"_cf_in_size", DType::Int64, -1});
      ins.push_back(detail::make_scalar(Scalar(numel(S)), DType::Int64, at));
    }
    if (c.find("_out_ind.size()") != std::string::npos) {
      c = detail::replace_all(c, "_out_ind.size()", "_cf_out_size");
      op.vars.push_back(UserVar{"_cf_out_size", DType::Int64, -1});
      ins.push_back(detail::make_scalar(Scalar(numel(out_shape)), DType::Int64, at));
    }
    if (c.find("_in_ind") != std::string::npos || c.find("_out_ind") != std::string::npos)
      throw NotSupportedError(fmt::format("ReductionKernel '{}': only _in_ind.size() and _out_ind.size() are "
                                          "available", d.name));
    return c;
  };

  UserOp map;
  map.kind = UserOp::Kind::Map;
  map.name = d.name;
  map.typedefs = typedefs;
  detail::InputVec map_in;
  for (size_t k = 0; k < d.in.size(); ++k) {
    const DType t = b.of(d.in[k]);
    map.vars.push_back(UserVar{d.in[k].name, t, -1});
    map_in.push_back(detail::input_node(*a.in[k], t, S));
  }
  map.code = sized(d.map_expr, map, map_in, S);
  detail::NodePtr mapped = detail::user_elementwise_node(map, rt, S, std::move(map_in));

  UserOp red;
  red.kind = UserOp::Kind::Reduce;
  red.name = d.name;
  red.typedefs = typedefs;
  red.code = d.reduce_expr;
  red.identity = d.identity;
  red.reduce_type = rt;
  auto r = detail::new_node(detail::NodeKind::Reduce);
  r->op = detail::intern_user_op(red);
  r->dtype = rt;
  r->layout.shape = out_shape;
  r->inputs.push_back(std::move(mapped));
  r->attrs = detail::ReduceAttrs{detail::ReduceOp::User, axes, keepdims};
  detail::finish_node(*r);
  for (int ax : axes) r->hash = detail::hash_mix(r->hash, static_cast<uint64_t>(ax) + 1000);  // as make_reduce
  r->hash = detail::hash_mix(r->hash, keepdims ? 7 : 3);
  detail::maybe_auto_eval(r);

  UserOp post;
  post.kind = UserOp::Kind::PostMap;
  post.name = d.name;
  post.typedefs = typedefs;
  post.vars.push_back(UserVar{"a", rt, -1});
  detail::InputVec post_in;
  post_in.push_back(r);
  post.code = sized(d.post_map_expr, post, post_in, out_shape);
  post.outs.push_back(UserVar{d.out[0].name, ot, -1});
  Array result(detail::user_elementwise_node(post, ot, out_shape, std::move(post_in)));
  if (a.out.empty()) return result;
  Array o = *a.out[0];
  o.assign(result);
  return o;
}

}  // namespace cufuse
