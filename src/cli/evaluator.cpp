// src/cli/evaluator.cpp: the program's syntax tree to cufuse calls (see evaluator.hpp), and
// the --arg spec parser.
#include "cli/evaluator.hpp"

#include <cctype>
#include <limits>
#include <numbers>

#include <fmt/format.h>

#include "cli/eval_support.hpp"
#include "cli/numbers.hpp"
#include "cli/registry.hpp"
#include "core/node.hpp"
#include "core/op_table.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/ops.hpp"

namespace cufuse::cli {

// ------------------------------------------------------------------ values
std::string Value::type_name() const {
  switch (kind) {
    case Kind::None: return "NoneType";
    case Kind::Number:
      switch (number.kind()) {
        case Scalar::Kind::Bool: return "bool";
        case Scalar::Kind::Float: return "float";
        case Scalar::Kind::Complex: return "complex";
        default: return "int";
      }
    case Kind::String: return "str";
    case Kind::Array: return "array";
    case Kind::Tuple: return "tuple";
    case Kind::List: return "list";
    case Kind::Slice: return "slice";
    case Kind::Ellipsis: return "ellipsis";
    case Kind::DType: return "dtype";
    case Kind::Function: return "function";
    case Kind::Module: return "module";
  }
  return "?";
}

std::string Value::describe() const {
  switch (kind) {
    case Kind::None: return "None";
    case Kind::Number:
      if (number.kind() == Scalar::Kind::Bool) return number.to_bool() ? "True" : "False";
      return number.str();
    case Kind::String: return fmt::format("'{}'", text);
    case Kind::Array: return fmt::format("array {} {}", name(array.dtype()), to_string(array.shape()));
    case Kind::Tuple:
    case Kind::List: {
      std::string s = kind == Kind::Tuple ? "(" : "[";
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i].describe();
      if (kind == Kind::Tuple && items.size() == 1) s += ",";
      return s + (kind == Kind::Tuple ? ")" : "]");
    }
    case Kind::Slice: return "slice";
    case Kind::Ellipsis: return "...";
    case Kind::DType: return std::string(name(dtype));
    case Kind::Function: return fmt::format("function {}", function ? function->name : "?");
    case Kind::Module: return fmt::format("module {}", text);
  }
  return "?";
}

std::string binary_function(std::string_view op) {
  if (op == "@") return "matmul";
  for (int i = 0; i < detail::kNumOps; ++i) {
    const auto& r = detail::op_row(static_cast<detail::Op>(i));
    if (r.arity == 2 && op == r.symbol) return r.name;
  }
  return "";
}

namespace {

std::string unary_function(std::string_view op) {
  if (op == "-") return "negative";
  if (op == "+") return "positive";
  for (int i = 0; i < detail::kNumOps; ++i) {
    const auto& r = detail::op_row(static_cast<detail::Op>(i));
    if (r.arity == 1 && op == r.symbol) return r.name;  // "~" -> invert
  }
  return "";
}

// Names every program starts with (its own names shadow them).
struct Builtin {
  const char* name;
  Value value;
};
std::vector<Builtin> builtins() {
  std::vector<Builtin> b;
  for (const char* m : {"np", "numpy", "cp", "cupy", "cf", "cufuse", "linalg", "scipy", "cupyx", "signal", "random"}) b.push_back({m, Value::module(m)});
  for (int i = 0; i < kNumDTypes; ++i) {
    const auto t = static_cast<DType>(i);
    b.push_back({info(t).name.data(), Value::of_dtype(t)});
  }
  b.push_back({"bool_", Value::of_dtype(DType::Bool)});
  b.push_back({"half", Value::of_dtype(DType::Float16)});
  b.push_back({"single", Value::of_dtype(DType::Float32)});
  b.push_back({"double", Value::of_dtype(DType::Float64)});
  // Python's types as dtypes mean NumPy's defaults: float64, int64, bool.
  b.push_back({"float", Value::of_dtype(DType::Float64)});
  b.push_back({"int", Value::of_dtype(DType::Int64)});
  b.push_back({"newaxis", Value::none()});
  b.push_back({"pi", Value::of(Scalar(std::numbers::pi))});
  b.push_back({"e", Value::of(Scalar(std::numbers::e))});
  b.push_back({"inf", Value::of(Scalar(std::numeric_limits<double>::infinity()))});
  b.push_back({"nan", Value::of(Scalar(std::numeric_limits<double>::quiet_NaN()))});
  return b;
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace

// ------------------------------------------------------------------ --arg specs
ArgSpec parse_arg_spec(std::string_view spec) {
  ArgSpec a;
  auto at = [&](size_t off) {
    Loc l;
    l.offset = off;
    l.column = static_cast<int>(off) + 1;
    return l;
  };
  auto fail = [&](size_t off, size_t len, const std::string& msg) {
    throw ProgramError(ProgramError::Kind::Syntax, msg, at(off), len);
  };
  const size_t eq = spec.find('=');
  if (eq == std::string_view::npos) fail(0, spec.size(), "expected NAME=DTYPE[SHAPE], e.g. x=f32[4096,4096]");
  a.name = std::string(spec.substr(0, eq));
  if (!is_identifier(a.name)) fail(0, eq ? eq : 1, "the name must be an identifier (letters, digits, _)");
  size_t i = eq + 1;
  const size_t dt_begin = i;
  while (i < spec.size() && spec[i] != '[' && spec[i] != '(') ++i;
  std::string_view dt = spec.substr(dt_begin, i - dt_begin);
  while (!dt.empty() && dt.back() == ' ') dt.remove_suffix(1);
  if (dt.empty()) fail(dt_begin, 1, "expected a dtype after '=' (f32, float32, bf16, i64, bool ...)");
  try {
    a.dtype = parse_dtype(dt);
  } catch (const cufuse::Error& e) {
    throw ProgramError(ProgramError::Kind::Semantic, e.what(), at(dt_begin), dt.size());
  }
  if (i >= spec.size()) fail(spec.size(), 1, "expected a shape after the dtype: [4096,4096], or [] for 0-d");
  const char close = spec[i] == '[' ? ']' : ')';
  ++i;
  for (;;) {
    while (i < spec.size() && spec[i] == ' ') ++i;
    if (i < spec.size() && spec[i] == close) {
      ++i;
      break;
    }
    const size_t nb = i;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) ++i;
    if (i == nb) {
      if (i < spec.size() && spec[i] == '-') fail(i, 1, "dimensions cannot be negative");
      fail(i, 1, i >= spec.size() ? fmt::format("expected '{}' to close the shape", close)
                                  : "expected a dimension (a non-negative integer)");
    }
    if (i - nb > 18) fail(nb, i - nb, "dimension too large");
    a.shape.push_back(std::stoll(std::string(spec.substr(nb, i - nb))));
    while (i < spec.size() && spec[i] == ' ') ++i;
    if (i < spec.size() && spec[i] == ',') {
      ++i;
      continue;
    }
    if (i < spec.size() && spec[i] == close) {
      ++i;
      break;
    }
    fail(i, 1, i >= spec.size() ? fmt::format("expected '{}' to close the shape", close)
                                : fmt::format("expected ',' or '{}' in the shape", close));
  }
  if (i != spec.size()) fail(i, spec.size() - i, "unexpected text after the shape");
  return a;
}

// ------------------------------------------------------------------ evaluator
Evaluator::Evaluator() {
  for (auto& b : builtins()) vars_.emplace(b.name, std::move(b.value));
}

void Evaluator::declare(const ArgSpec& a) {
  if (!is_identifier(a.name)) throw UsageError(fmt::format("--arg: '{}' is not a valid name", a.name));
  for (const auto& p : placeholders_)
    if (p == a.name) throw UsageError(fmt::format("--arg: '{}' is declared twice", a.name));
  const int slot = new_slot(a.name, a.name, static_cast<int>(placeholders_.size()), -1);
  vars_[a.name] = Value::of(Array(detail::make_placeholder(a.dtype, a.shape, slot)));
}

const Value* Evaluator::lookup(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

// The expression as written (runs of white space, new lines included, become one space).
std::string Evaluator::text_of(const Expr& e) const {
  if (!(e.loc.offset < source_.size() && e.end > e.loc.offset && e.end <= source_.size())) return unparse(e);
  std::string out;
  bool space = false;
  for (size_t i = e.loc.offset; i < e.end; ++i) {
    const char c = source_[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

std::string Evaluator::text_of(const Statement& st) const {
  Expr whole;
  whole.loc = st.loc;
  whole.end = st.end;
  return text_of(whole);
}

void Evaluator::run(const Program& p) {
  source_ = p.source;
  for (const auto& st : p.statements) run_statement(st);
  if (p.statements.empty()) throw UsageError("the program is empty: give an expression, e.g. 'sqrt(x*x + y)'");
}

void Evaluator::run_statement(const Statement& st) {
  if (!st.op.empty() && st.op != "=") return write_statement(st);  // x op= e, x[i] op= e
  if (st.subscript) return write_statement(st);                     // x[i] = e
  Value v = eval(*st.value);
  last_item_names_.clear();
  if (!st.target.empty()) {
    last_name_ = st.target;
    vars_[st.target] = v;
  } else {
    last_name_ = text_of(*st.value);
    if (st.value->kind == ExprKind::Tuple)
      for (const auto& it : st.value->items) last_item_names_.push_back(text_of(*it));
  }
  last_ = std::move(v);
}

std::vector<NamedArray> Evaluator::results(const std::vector<std::string>& out) const {
  std::vector<NamedArray> r;
  auto add = [&](const std::string& name, const Value& v, const std::vector<std::string>& item_names) {
    if (v.is_array()) {
      r.push_back(NamedArray{name, v.array});
      return;
    }
    if (v.is_sequence() && !v.items.empty()) {
      for (size_t i = 0; i < v.items.size(); ++i) {
        const std::string n = i < item_names.size() ? item_names[i] : fmt::format("{}[{}]", name, i);
        if (!v.items[i].is_array())
          throw UsageError(fmt::format("result '{}' is {} ({}), not an array", n, v.items[i].type_name(),
                                       v.items[i].describe()));
        r.push_back(NamedArray{n, v.items[i].array});
      }
      return;
    }
    throw UsageError(fmt::format("result '{}' is {} ({}), not an array", name, v.type_name(), v.describe()));
  };
  if (out.empty()) {
    add(last_name_, last_, last_item_names_);
    return r;
  }
  for (const auto& name : out) {
    const Value* v = lookup(name);
    if (!v) {
      std::vector<std::string> known;
      for (const auto& [k, val] : vars_)
        if (val.is_array()) known.push_back(k);
      throw UsageError(fmt::format("--out: '{}' is not defined by the program{}", name,
                                   known.empty() ? "" : fmt::format(" (it defines {})", fmt::join(known, ", "))));
    }
    add(name, *v, {});
  }
  return r;
}

Value Evaluator::eval(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name: return eval_name(e);
    case ExprKind::Number: return Value::of(e.number);
    case ExprKind::String: return Value::string(e.text);
    case ExprKind::None: return Value::none();
    case ExprKind::Ellipsis: return Value::ellipsis();
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<Value> items;
      for (const auto& it : e.items) items.push_back(eval(*it));
      return Value::tuple(std::move(items), e.kind == ExprKind::Tuple ? Value::Kind::Tuple : Value::Kind::List);
    }
    case ExprKind::Unary: return eval_unary(e);
    case ExprKind::Binary: return eval_binary(e);
    case ExprKind::Call: return eval_call(e);
    case ExprKind::Attribute: return eval_attribute(e);
    case ExprKind::Subscript: return eval_subscript(e);
    case ExprKind::Slice: {
      Value s;
      s.kind = Value::Kind::Slice;
      for (const auto& part : e.items) {
        Value v = part ? eval(*part) : Value::none();
        if (!v.is_none() && !v.is_int())
          fail_at(*part, fmt::format("slice indices must be integers or None, not {}", v.type_name()));
        s.items.push_back(std::move(v));
      }
      return s;
    }
  }
  fail_at(e, "unsupported expression");
}

Value Evaluator::eval_name(const Expr& e) {
  if (const Value* v = lookup(e.text)) return *v;
  if (const FunctionRow* f = find_function(e.text)) return Value::fn(f);
  if (auto msg = not_available_yet(e.text)) fail_at(e, *msg);
  std::vector<std::string> names;
  for (const auto& [k, v] : vars_) names.push_back(k);
  auto close = similar_names(e.text, names);
  fail_at(e, fmt::format("name '{}' is not defined{}", e.text,
                         close.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(close, ", "))));
}

Value Evaluator::eval_unary(const Expr& e) {
  Value v = eval(*e.items[0]);
  if (v.is_number()) return guarded(e, [&] { return Value::of(number_unary(e.text, v.number)); });
  if (v.is_array()) {
    const FunctionRow* f = find_function(unary_function(e.text));
    if (!f) fail_at(e, fmt::format("no function for unary {}", e.text));
    return guarded(e, [&] { return call_function(*f, {arg_of(*e.items[0], v)}, {}, arg_of(e, {})); });
  }
  fail_at(e, fmt::format("TypeError: bad operand type for unary {}: '{}'", e.text, v.type_name()));
}

Value Evaluator::eval_binary(const Expr& e) {
  Value a = eval(*e.items[0]);
  Value b = eval(*e.items[1]);
  return binary_values(e, *e.items[0], *e.items[1], std::move(a), std::move(b));
}

namespace {
// The most items a tuple or list may have ((1,) * n, t + t): a shape or a literal list needs
// far fewer; past it the program is an error (Python's MemoryError), never an unbounded loop.
constexpr size_t kMaxSequence = size_t(1) << 20;
void check_sequence_length(const Expr& e, size_t items) {
  if (items > kMaxSequence)
    fail_at(e, fmt::format("MemoryError: a sequence of more than {} items (the most a tuple or list may have)",
                           kMaxSequence));
}
}  // namespace

// a OP b (OP = e.text) for the operands as written at lhs and rhs; e spans the operation.
Value Evaluator::binary_values(const Expr& e, const Expr& lhs, const Expr& rhs, Value a, Value b) {
  const std::string& op = e.text;
  if (a.is_number() && b.is_number() && op != "@")
    return guarded(e, [&] { return Value::of(number_binary(op, a.number, b.number)); });
  // Shape arithmetic on tuples: x.shape + (1,), (1,) * 3.
  if (a.is_sequence() && b.is_sequence() && op == "+" && a.kind == b.kind) {
    check_sequence_length(e, a.items.size() + b.items.size());
    Value r = a;
    r.items.insert(r.items.end(), b.items.begin(), b.items.end());
    return r;
  }
  if (op == "*" && ((a.is_sequence() && b.is_int()) || (a.is_int() && b.is_sequence()))) {
    const Value& seq = a.is_sequence() ? a : b;
    const Scalar& count = (a.is_int() ? a : b).number;
    // Python's repetition: a count <= 0 gives an empty sequence; a count past int64 (a uint64
    // literal) or a result past kMaxSequence items is an error, before anything is allocated.
    const bool huge = count.kind() == Scalar::Kind::UInt && count.to_uint64() > uint64_t(std::numeric_limits<int64_t>::max());
    const int64_t n = huge ? std::numeric_limits<int64_t>::max() : count.to_int64();
    if (n > 0 && !seq.items.empty())
      check_sequence_length(e, n > int64_t(kMaxSequence) ? kMaxSequence + 1 : seq.items.size() * size_t(n));
    Value r = Value::tuple({}, seq.kind);
    if (n > 0) r.items.reserve(seq.items.size() * size_t(n));
    for (int64_t k = 0; k < n; ++k) r.items.insert(r.items.end(), seq.items.begin(), seq.items.end());
    return r;
  }
  if ((a.is_array() || a.is_number()) && (b.is_array() || b.is_number())) {
    const std::string fname = binary_function(op);
    const FunctionRow* f = find_function(fname);
    if (!f) {
      if (auto msg = not_available_yet(fname)) fail_at(e.op_loc, op.size(), *msg);
      fail_at(e.op_loc, op.size(), fmt::format("no function for operator {}", op));
    }
    return guarded(e, [&] {
      return call_function(*f, {arg_of(lhs, a), arg_of(rhs, b)}, {}, arg_of(e, {}));
    });
  }
  fail_at(e, fmt::format("TypeError: unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(),
                         b.type_name()));
}

Value Evaluator::eval_call(const Expr& e) {
  Value callee = eval(*e.items[0]);
  std::vector<Arg> pos;
  std::vector<std::pair<std::string, Arg>> kws;
  for (size_t k = 1; k < e.items.size(); ++k) pos.push_back(arg_of(*e.items[k], eval(*e.items[k])));
  for (const auto& kw : e.keywords) {
    Arg a = arg_of(*kw.value, eval(*kw.value));
    a.length = kw.value->end - kw.loc.offset;
    a.loc = kw.loc;  // errors about a keyword argument underline `name=value`
    kws.emplace_back(kw.name, std::move(a));
  }
  if (callee.kind == Value::Kind::DType) {  // float32(2): a strong scalar; float32(x): a cast
    if (pos.size() != 1 || !kws.empty())
      fail_at(e, fmt::format("{}() takes exactly one argument", name(callee.dtype)));
    const Value& v = pos[0].value;
    if (v.is_number()) return guarded(e, [&] { return Value::of(Scalar::typed(v.number, callee.dtype)); });
    if (v.is_array()) return guarded(e, [&] { return Value::of(cufuse::astype(v.array, callee.dtype)); });
    fail_at(*e.items[1], fmt::format("{}() takes a number or an array, not {}", name(callee.dtype), v.type_name()));
  }
  if (callee.kind != Value::Kind::Function)
    fail_at(*e.items[0], fmt::format("TypeError: '{}' object is not callable", callee.type_name()));
  if (callee.array.defined()) {  // a method: the array is the first argument
    const Expr& obj = e.items[0]->kind == ExprKind::Attribute ? *e.items[0]->items[0] : *e.items[0];
    pos.insert(pos.begin(), arg_of(obj, Value::of(callee.array)));
  }
  return guarded(e, [&] { return call_function(*callee.function, std::move(pos), std::move(kws), arg_of(e, {})); });
}

Value Evaluator::module_attribute(const Value& m, const Expr& e) {
  if (m.text == "linalg" || m.text == "testing" || m.text == "random" || m.text == "fft") {  // np.linalg.norm: rows named "linalg.norm"
    const std::string full = m.text + "." + e.text;
    if (const FunctionRow* f = find_function(full)) return Value::fn(f);
    if (auto msg = not_available_yet(full)) fail_at(e.op_loc, e.text.size(), *msg);
    fail_at(e.op_loc, e.text.size(), fmt::format("module '{}' has no attribute '{}'", m.text, e.text));
  }
  if (m.text == "signal") {  // scipy.signal.convolve2d: the rows convolve2d and correlate2d
    if (e.text == "convolve2d" || e.text == "correlate2d") return Value::fn(find_function(e.text));
    fail_at(e.op_loc, e.text.size(),
            fmt::format("module 'signal' has no attribute '{}' (cufuse has signal.convolve2d and signal.correlate2d)",
                        e.text));
  }
  const std::string& n = e.text;
  if (n == "linalg") return Value::module("linalg");
  if (n == "testing") return Value::module("testing");  // np.testing.assert_allclose
  if (n == "random") return Value::module("random");    // np.random.integers
  if (n == "fft") return Value::module("fft");          // np.fft.rfft2
  if (n == "signal") return Value::module("signal");
  if (const FunctionRow* f = find_function(n)) return Value::fn(f);
  static const std::vector<Builtin> b = builtins();
  for (const auto& x : b)
    if (n == x.name && x.value.kind != Value::Kind::Module) return x.value;
  if (auto msg = not_available_yet(n)) fail_at(e.op_loc, n.size(), *msg);
  auto close = similar_names(n);
  fail_at(e.op_loc, n.size(),
          fmt::format("module '{}' has no attribute '{}'{}", m.text, n,
                      close.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(close, ", "))));
}

Value Evaluator::eval_attribute(const Expr& e) {
  Value obj = eval(*e.items[0]);
  const std::string& n = e.text;
  if (obj.kind == Value::Kind::Module) return module_attribute(obj, e);
  if (obj.is_array()) {
    const Array& x = obj.array;
    return guarded(e, [&]() -> Value {
      if (n == "T") return Value::of(x.T());
      if (n == "shape") {
        std::vector<Value> dims;
        for (auto d : x.shape()) dims.push_back(Value::of(Scalar(d)));
        return Value::tuple(std::move(dims));
      }
      if (n == "ndim") return Value::of(Scalar(int64_t{x.ndim()}));
      if (n == "size") return Value::of(Scalar(x.size()));
      if (n == "itemsize") return Value::of(Scalar(x.itemsize()));
      if (n == "nbytes") return Value::of(Scalar(x.nbytes()));
      if (n == "dtype") return Value::of_dtype(x.dtype());
      const FunctionRow* f = find_function(n);
      if (f && f->method) return Value::fn(f, x);
      if (f) fail_at(e.op_loc, n.size(), fmt::format("'array' object has no attribute '{0}' (write {0}(x))", n));
      if (auto msg = not_available_yet(n)) fail_at(e.op_loc, n.size(), *msg);
      fail_at(e.op_loc, n.size(), fmt::format("'array' object has no attribute '{}'", n));
    });
  }
  fail_at(e.op_loc, n.size(), fmt::format("'{}' object has no attribute '{}'", obj.type_name(), n));
}

std::vector<std::pair<Value, const Expr*>> Evaluator::subscript_items(const Expr& e) {
  std::vector<std::pair<Value, const Expr*>> idx;
  for (size_t k = 1; k < e.items.size(); ++k) idx.emplace_back(eval(*e.items[k]), e.items[k].get());
  if (idx.size() == 1 && idx[0].first.kind == Value::Kind::Tuple) {  // x[(1, 2)] is x[1, 2]
    const Expr* where = idx[0].second;
    std::vector<Value> items = idx[0].first.items;
    idx.clear();
    for (auto& v : items) idx.emplace_back(std::move(v), where);
  }
  return idx;
}

std::vector<Index> array_indices(const std::vector<std::pair<Value, const Expr*>>& idx) {
  std::vector<Index> ix;
  for (const auto& [v, where] : idx) {
    switch (v.kind) {
      case Value::Kind::Number:
        if (!v.is_int())
          fail_at(*where, v.number.kind() == Scalar::Kind::Bool
                              ? "boolean indexing is not supported"
                              : "IndexError: only integers, slices (':'), ellipsis ('...') and None are valid indices");
        ix.emplace_back(v.number.to_int64());
        break;
      case Value::Kind::Slice: {
        Slice s;
        if (!v.items[0].is_none()) s.start = v.items[0].number.to_int64();
        if (!v.items[1].is_none()) s.stop = v.items[1].number.to_int64();
        if (!v.items[2].is_none()) s.step = v.items[2].number.to_int64();
        ix.emplace_back(s);
        break;
      }
      case Value::Kind::None: ix.emplace_back(newaxis); break;
      case Value::Kind::Ellipsis: ix.emplace_back(ellipsis); break;
      case Value::Kind::Array:  // advanced indexing: an integer array gathers, a bool array selects
        ix.emplace_back(v.array);
        break;
      case Value::Kind::List:
        fail_at(*where, "indexing with a list is not supported: index with an array (x[array([0, 2])], x[mask])");
      default:
        fail_at(*where, fmt::format("IndexError: only integers, slices (':'), ellipsis ('...') and None are valid "
                                    "indices, not {}", v.type_name()));
    }
  }
  return ix;
}

Value Evaluator::eval_subscript(const Expr& e) {
  Value obj = eval(*e.items[0]);
  std::vector<std::pair<Value, const Expr*>> idx = subscript_items(e);
  if (obj.is_sequence()) {  // x.shape[0], x.shape[-2:]
    if (idx.size() != 1) fail_at(e, "tuple indices must be a single int or slice");
    const Value& i = idx[0].first;
    const int64_t n = static_cast<int64_t>(obj.items.size());
    if (i.is_int()) {
      int64_t k = i.number.to_int64();
      if (k < -n || k >= n) fail_at(*idx[0].second, "IndexError: tuple index out of range");
      return obj.items[static_cast<size_t>(k < 0 ? k + n : k)];
    }
    if (i.kind == Value::Kind::Slice) {
      const int64_t step = i.items[2].is_none() ? 1 : i.items[2].number.to_int64();
      if (step == 0) fail_at(*idx[0].second, "ValueError: slice step cannot be zero");
      auto clampi = [&](const Value& v, int64_t dflt) {
        if (v.is_none()) return dflt;
        int64_t k = v.number.to_int64();
        if (k < 0) k = std::max<int64_t>(k + n, step < 0 ? -1 : 0);
        else k = std::min<int64_t>(k, step < 0 ? n - 1 : n);
        return k;
      };
      int64_t start = clampi(i.items[0], step < 0 ? n - 1 : 0), stop = clampi(i.items[1], step < 0 ? -1 : n);
      Value r = Value::tuple({}, obj.kind);
      for (int64_t k = start; step > 0 ? k < stop : k > stop; k += step) r.items.push_back(obj.items[static_cast<size_t>(k)]);
      return r;
    }
    fail_at(*idx[0].second, fmt::format("tuple indices must be integers or slices, not {}", i.type_name()));
  }
  if (!obj.is_array()) fail_at(*e.items[0], fmt::format("TypeError: '{}' object is not subscriptable", obj.type_name()));
  const std::vector<Index> ix = array_indices(idx);
  return guarded(e, [&] { return Value::of(obj.array.index(ix)); });
}

}  // namespace cufuse::cli
