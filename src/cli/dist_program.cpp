// src/cli/dist_program.cpp: the program over a mesh (dist_program.hpp): --mesh and --shard
// parsing, an evaluator of the syntax tree over DArrays (each elementwise call runs the
// tool's own function row on every shard's local arrays, so the per-shard kernels are the
// ones the single-GPU tool would show), and the text and JSON reports.
#include "cli/dist_program.hpp"

#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cli/report.hpp"
#include "core/node.hpp"
#include "cufuse/error.hpp"
#include "cufuse/ops.hpp"

namespace cufuse::cli {

namespace {
std::string trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}
}  // namespace

std::pair<std::vector<int>, std::vector<std::string>> parse_mesh_spec(std::string_view text) {
  std::vector<int> sizes;
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string part = trim(text.substr(start, comma - start));
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size())
      throw UsageError(fmt::format("--mesh: '{}' is not NAME=SIZE (e.g. --mesh node=2,gpu=4)", part));
    const std::string num = part.substr(eq + 1);
    if (num.find_first_not_of("0123456789") != std::string::npos || num.size() > 7)
      throw UsageError(fmt::format("--mesh: the size of '{}' is not a positive integer", part));
    names.push_back(trim(part.substr(0, eq)));
    sizes.push_back(std::stoi(num));
    start = comma + 1;
  }
  return {sizes, names};
}

std::pair<std::string, dist::Sharding> parse_shard_spec(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError(fmt::format("--shard: '{}' is not NAME=AXIS,... (one mesh axis or 'none' per dimension, "
                                 "e.g. --shard x=gpu,none)",
                                 text));
  try {
    return {trim(text.substr(0, eq)), dist::Sharding::parse(text.substr(eq + 1))};
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shard {}: {}", text, e.what()));
  }
}

// ------------------------------------------------------------------ evaluator
void DistEvaluator::declare(const ArgSpec& a, const dist::Sharding& spec) {
  for (const auto& in : inputs_)
    if (in.name == a.name) throw UsageError(fmt::format("--arg {} given twice", a.name));
  Array ph(cufuse::detail::make_placeholder(a.dtype, a.shape, static_cast<int>(inputs_.size())));
  try {
    dist::DArray d = dist::shard(ph, mesh_, spec);
    inputs_.push_back({a.name, d});
    DValue v;
    v.is_array = true;
    v.array = d;
    vars_.emplace_back(a.name, v);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--shard {}: {}", a.name, e.what()));
  }
}

const DistEvaluator::DValue* DistEvaluator::lookup(std::string_view name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it)
    if (it->first == name) return &it->second;
  return nullptr;
}

void DistEvaluator::run(const Program& p) {
  source_ = p.source;
  for (const auto& st : p.statements) {
    if (st.writes())
      throw ProgramError(ProgramError::Kind::Semantic, "in-place writes are not supported over a mesh yet",
                         st.op_loc);
    DValue v = eval(*st.value);
    if (!st.target.empty()) {
      vars_.emplace_back(st.target, v);
      last_text_ = st.target;
    } else {
      last_text_ = source_.substr(st.value->loc.offset, st.value->span());
    }
    last_ = v;
  }
}

std::vector<DistResult> DistEvaluator::results(const std::vector<std::string>& out) const {
  std::vector<DistResult> r;
  if (out.empty()) {
    if (!last_.is_array) throw UsageError("the program's last value is not an array");
    r.push_back({last_text_, last_.array});
    return r;
  }
  for (const auto& name : out) {
    const DValue* v = lookup(name);
    if (!v) throw UsageError(fmt::format("--out {}: no such variable", name));
    if (!v->is_array) throw UsageError(fmt::format("--out {}: not an array", name));
    r.push_back({name, v->array});
  }
  return r;
}

namespace {

[[noreturn]] void mesh_fail_at(const Expr& e, const std::string& msg) {
  throw ProgramError(ProgramError::Kind::Semantic, msg, e.loc, e.span());
}

int64_t int_of(const Expr& e) {
  if (e.kind == ExprKind::Number && e.number.kind() == Scalar::Kind::Int) return e.number.to_int64();
  if (e.kind == ExprKind::Unary && e.text == "-" && e.items[0]->kind == ExprKind::Number &&
      e.items[0]->number.kind() == Scalar::Kind::Int)
    return -e.items[0]->number.to_int64();
  mesh_fail_at(e, "expected an int");
}

Axes axes_of(const Expr& e) {
  Axes ax;
  if (e.kind == ExprKind::Tuple || e.kind == ExprKind::List) {
    for (const auto& it : e.items) ax.push_back(static_cast<int>(int_of(*it)));
    return ax;
  }
  if (e.kind == ExprKind::None) return ax;
  ax.push_back(static_cast<int>(int_of(e)));
  return ax;
}

const char* binary_op_name(const std::string& op) {
  static const std::pair<const char*, const char*> table[] = {
      {"+", "add"},    {"-", "subtract"},   {"*", "multiply"}, {"/", "true_divide"}, {"//", "floor_divide"},
      {"%", "remainder"}, {"**", "power"},  {"<", "less"},     {"<=", "less_equal"}, {">", "greater"},
      {">=", "greater_equal"}, {"==", "equal"}, {"!=", "not_equal"}, {"&", "bitwise_and"}, {"|", "bitwise_or"},
      {"^", "bitwise_xor"}};
  for (const auto& [s, n] : table)
    if (op == s) return n;
  return nullptr;
}

}  // namespace

DistEvaluator::DValue DistEvaluator::binary(const Expr& e, const std::string& op, const DValue& a, const DValue& b) {
  DValue r;
  if (op == "@") {
    if (!a.is_array || !b.is_array) mesh_fail_at(e, "matmul: both operands must be arrays");
    r.is_array = true;
    r.array = dist::matmul(a.array, b.array);
    return r;
  }
  const char* name = binary_op_name(op);
  if (!name) mesh_fail_at(e, fmt::format("operator {} is not supported over a mesh", op));
  if (!a.is_array && !b.is_array) mesh_fail_at(e, "arithmetic on two numbers is not supported over a mesh");
  std::vector<dist::DArray> ds;
  if (a.is_array) ds.push_back(a.array);
  if (b.is_array) ds.push_back(b.array);
  const Scalar sa = a.number, sb = b.number;
  const bool aa = a.is_array, ba = b.is_array;
  r.is_array = true;
  r.array = dist::map(
      [=](const std::vector<Array>& x) {
        size_t i = 0;
        Operand l = aa ? Operand(x[i++]) : Operand(sa);
        Operand rr = ba ? Operand(x[i++]) : Operand(sb);
        return cufuse::apply(name, {l, rr});
      },
      ds, name);
  return r;
}

DistEvaluator::DValue DistEvaluator::eval(const Expr& e) {
  try {
    switch (e.kind) {
      case ExprKind::Name: {
        const DValue* v = lookup(e.text);
        if (!v) mesh_fail_at(e, fmt::format("name '{}' is not defined", e.text));
        return *v;
      }
      case ExprKind::Number: {
        DValue v;
        v.number = e.number;
        return v;
      }
      case ExprKind::Unary: {
        DValue a = eval(*e.items[0]);
        if (e.text == "+") return a;
        if (e.text != "-") mesh_fail_at(e, fmt::format("unary {} is not supported over a mesh", e.text));
        if (!a.is_array) {
          a.number = a.number.kind() == Scalar::Kind::Float ? Scalar(-a.number.to_double()) : Scalar(-a.number.to_int64());
          return a;
        }
        a.array = -a.array;
        return a;
      }
      case ExprKind::Binary: return binary(e, e.text, eval(*e.items[0]), eval(*e.items[1]));
      case ExprKind::Call: return eval_call(e);
      default: mesh_fail_at(e, "this expression is not supported over a mesh (names, numbers, operators and calls are)");
    }
  } catch (const ProgramError&) {
    throw;
  } catch (const Error& err) {
    throw ProgramError(ProgramError::Kind::Semantic, fmt::format("{}: {}", error_kind_name(err.kind()), err.what()),
                       e.op_loc.offset ? e.op_loc : e.loc, e.span());
  }
}

DistEvaluator::DValue DistEvaluator::eval_call(const Expr& e) {
  const Expr& callee = *e.items[0];
  std::string name;
  if (callee.kind == ExprKind::Name) name = callee.text;
  else if (callee.kind == ExprKind::Attribute && callee.items[0]->kind == ExprKind::Name &&
           (callee.items[0]->text == "np" || callee.items[0]->text == "numpy"))
    name = callee.text;
  else mesh_fail_at(callee, "only functions by name (or np.NAME) are supported over a mesh");
  DValue r;
  r.is_array = true;
  static const char* const reductions[] = {"sum", "mean", "max", "min", "prod", "amax", "amin"};
  for (const char* red : reductions) {
    if (name != red) continue;
    if (e.items.size() < 2) mesh_fail_at(e, fmt::format("{}: missing the array", name));
    DValue a = eval(*e.items[1]);
    if (!a.is_array) mesh_fail_at(*e.items[1], fmt::format("{}: expected an array", name));
    Axes axes;
    if (e.items.size() > 2) axes = axes_of(*e.items[2]);
    for (const auto& kw : e.keywords) {
      if (kw.name != "axis") mesh_fail_at(*kw.value, fmt::format("{}: only axis= is supported over a mesh", name));
      axes = axes_of(*kw.value);
    }
    if (name == "sum") r.array = dist::sum(a.array, axes);
    else if (name == "mean") r.array = dist::mean(a.array, axes);
    else if (name == "prod") r.array = dist::prod(a.array, axes);
    else if (name == "max" || name == "amax") r.array = dist::max(a.array, axes);
    else r.array = dist::min(a.array, axes);
    return r;
  }
  if (name == "matmul") {
    if (e.items.size() != 3) mesh_fail_at(e, "matmul takes two arrays");
    return binary(e, "@", eval(*e.items[1]), eval(*e.items[2]));
  }
  const FunctionRow* row = find_function(name);
  if (!row || !row->op)
    mesh_fail_at(callee, fmt::format("{} is not supported over a mesh yet (elementwise functions, sum/mean/max/min/prod "
                                "with axis, matmul and operators are)",
                                name));
  // Positional and keyword arguments: arrays are the DArrays' local shards, numbers as given.
  std::vector<dist::DArray> ds;
  std::vector<std::pair<int, DValue>> pos;  // index into ds, or -1 and the number
  for (size_t i = 1; i < e.items.size(); ++i) {
    DValue v = eval(*e.items[i]);
    pos.emplace_back(v.is_array ? static_cast<int>(ds.size()) : -1, v);
    if (v.is_array) ds.push_back(v.array);
  }
  std::vector<std::pair<std::string, DValue>> kws;
  for (const auto& kw : e.keywords) {
    DValue v = eval(*kw.value);
    if (v.is_array) mesh_fail_at(*kw.value, "array keyword arguments are not supported over a mesh");
    kws.emplace_back(kw.name, v);
  }
  if (ds.empty()) mesh_fail_at(e, fmt::format("{}: no array argument", name));
  const Loc loc = e.loc;
  const size_t span = e.span();
  r.array = dist::map(
      [row, pos, kws, loc, span](const std::vector<Array>& x) {
        std::vector<Arg> args;
        for (const auto& [i, v] : pos) args.push_back(Arg{i >= 0 ? Value::of(x[static_cast<size_t>(i)]) : Value::of(v.number), loc, span});
        std::vector<std::pair<std::string, Arg>> k;
        for (const auto& [n, v] : kws) k.emplace_back(n, Arg{Value::of(v.number), loc, span});
        Value out = call_function(*row, args, k, Arg{Value::none(), loc, span});
        if (!out.is_array()) throw ValueError(fmt::format("{} did not give an array", row->name));
        return out.array;
      },
      ds, name);
  return r;
}

// ------------------------------------------------------------------ reports
namespace {

std::string sharding_json(const dist::Sharding& s) {
  std::string out = "[";
  for (int d = 0; d < s.ndim(); ++d) out += (d ? ", " : "") + (s.sharded(d) ? json_string(s[d]) : std::string("null"));
  return out + "]";
}

std::string shape_json(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", s[i]);
  return out + "]";
}

std::string array_json(const std::string& name, const dist::DArray& d) {
  std::string partial = "null";
  if (d.is_partial()) {
    std::string axes = "[";
    const auto pa = d.partial_axes();
    for (size_t i = 0; i < pa.size(); ++i) axes += (i ? ", " : "") + json_string(pa[i]);
    partial = fmt::format("{{\"op\": {}, \"axes\": {}]}}", json_string(dist::partial_op_name(*d.partial_op())), axes);
  }
  return fmt::format("\"name\": {}, \"dtype\": {}, \"shape\": {}, \"sharding\": {}, \"local_shape\": {}, \"partial\": {}",
                     json_string(name), json_string(cufuse::name(d.dtype())), shape_json(d.shape()),
                     sharding_json(d.sharding()), shape_json(d.local_shape()), partial);
}

std::string step_json(const dist::Step& s) {
  if (s.kind == "collective")
    return fmt::format("{{\"kind\": \"collective\", \"collective\": {}, \"op\": {}, \"mesh_axis\": {}, \"ranks\": {}, "
                       "\"groups\": {}, \"bytes\": {}, \"why\": {}}}",
                       json_string(s.collective), s.op.empty() ? "null" : json_string(s.op), json_string(s.mesh_axis),
                       s.ranks, s.groups, s.bytes, json_string(s.why));
  if (s.kind == "kernels")
    return fmt::format("{{\"kind\": \"kernels\", \"kernels_per_shard\": {}, \"why\": {}, \"plan\": {}}}", s.kernels,
                       json_string(s.why), json_string(s.detail));
  return fmt::format("{{\"kind\": {}, \"why\": {}}}", json_string(s.kind), json_string(s.why));
}

// The dump without each kernel's preamble of shared helpers (one line says where it went).
std::string strip_preambles(const std::string& text) {
  std::string out;
  bool in = false;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    const std::string_view line(text.data() + start, nl - start);
    if (!in && line.find("#define CF_FN") != std::string_view::npos) {
      in = true;
      out += "    // (the preamble of helpers every kernel shares: --full-source shows it)\n";
    } else if (in && line.find("---- end of the cufuse preamble ----") != std::string_view::npos) {
      in = false;
    } else if (!in) {
      out.append(line);
      out += '\n';
    }
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::string render_dist_text(const DistEvaluator& ev, const std::vector<DistResult>& results, bool with_source,
                             bool full_source) {
  std::string out = fmt::format("mesh: {} ({} devices)\n", ev.mesh().str(), ev.mesh().size());
  for (const auto& in : ev.inputs())
    out += fmt::format("input {}: {} {} sharded {}: each shard {}\n", in.name, cufuse::name(in.value.dtype()),
                       to_string(in.value.shape()), in.value.sharding().str(), to_string(in.value.local_shape()));
  for (const auto& r : results) {
    out += fmt::format("\nresult {}: {}\n", r.name, r.value.str());
    const std::string dump = dist::plan_dump(r.value, with_source);
    out += with_source && !full_source ? strip_preambles(dump) : dump;
    int kernels = 0, colls = 0;
    int64_t bytes = 0;
    for (const auto& s : dist::plan(r.value)) {
      kernels += s.kind == "kernels" ? s.kernels : 0;
      colls += s.kind == "collective" ? 1 : 0;
      bytes += s.kind == "collective" ? s.bytes : 0;
    }
    out += fmt::format("total: {} kernel{} per shard, {} collective{} ({} bytes per rank)\n", kernels,
                       kernels == 1 ? "" : "s", colls, colls == 1 ? "" : "s", bytes);
  }
  return out;
}

std::string render_dist_json(const DistEvaluator& ev, const std::vector<DistResult>& results, bool with_source) {
  std::string out = "{\"mesh\": {\"axes\": [";
  const auto& m = ev.mesh();
  for (int i = 0; i < m.ndim(); ++i)
    out += fmt::format("{}{{\"name\": {}, \"size\": {}}}", i ? ", " : "", json_string(m.names()[i]), m.sizes()[i]);
  out += fmt::format("], \"devices\": {}}}, \"inputs\": [", m.size());
  for (size_t i = 0; i < ev.inputs().size(); ++i)
    out += fmt::format("{}{{{}}}", i ? ", " : "", array_json(ev.inputs()[i].name, ev.inputs()[i].value));
  out += "], \"results\": [";
  std::string all;
  for (size_t i = 0; i < results.size(); ++i) {
    out += fmt::format("{}{{{}, \"steps\": [", i ? ", " : "", array_json(results[i].name, results[i].value));
    const auto steps = dist::plan(results[i].value);
    for (size_t j = 0; j < steps.size(); ++j) {
      out += (j ? ", " : "") + step_json(steps[j]);
      if (steps[j].kind == "collective") all += (all.empty() ? "" : ", ") + step_json(steps[j]);
    }
    out += "]}";
  }
  return out + "], \"collectives\": [" + all + "]}\n";
}

}  // namespace cufuse::cli
