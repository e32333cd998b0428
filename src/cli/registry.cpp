// src/cli/registry.cpp: the machinery behind the function table (see registry.hpp):
// parameter lists, Python's argument binding, argument conversions, lookups.
#include "cli/registry.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"

namespace cufuse::cli {

namespace {

struct Param {
  std::string name;
  std::optional<Value> def;  // absent: required
  bool variadic = false;     // *name
  bool keyword_only = false;
};

// A default's literal text as a value.
Value literal(std::string_view text) {
  auto toks = tokenize(text);
  bool neg = false;
  size_t k = 0;
  if (toks[k].kind == Tok::Op && toks[k].text == "-") {
    neg = true;
    ++k;
  }
  const Token& t = toks[k];
  switch (t.kind) {
    case Tok::Int:
    case Tok::Float:  // (one ternary over double and int64 would make -1 a float)
      if (!neg) return Value::of(t.number);
      if (t.number.kind() == Scalar::Kind::Complex) return Value::of(Scalar(-t.number.to_complex()));
      if (t.kind == Tok::Float) return Value::of(Scalar(-t.number.to_double()));
      return Value::of(Scalar(-t.number.to_int64()));
    case Tok::String: return Value::string(t.text);
    case Tok::Name:
      if (t.text == "True" || t.text == "False") return Value::of(Scalar(t.text == "True"));
      if (t.text == "None") return Value::none();
      break;
    default: break;
  }
  throw InternalError(fmt::format("cufuse-dump-kernels: bad default '{}' in the function table", text));
}

std::vector<Param> parse_params(const FunctionRow& row) {
  std::vector<Param> out;
  std::string_view s = row.params;
  bool kwonly = false;
  while (!s.empty()) {
    size_t comma = s.find(',');
    std::string_view p = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
    while (!p.empty() && p.back() == ' ') p.remove_suffix(1);
    if (p.empty()) continue;
    Param q;
    if (p.front() == '*') {
      q.variadic = true;
      p.remove_prefix(1);
    }
    size_t eq = p.find('=');
    q.name = std::string(p.substr(0, eq));
    if (eq != std::string_view::npos) q.def = literal(p.substr(eq + 1));
    q.keyword_only = kwonly;
    if (q.variadic) kwonly = true;
    out.push_back(std::move(q));
  }
  return out;
}

const std::vector<Param>& params_of(const FunctionRow& row) {
  static std::mutex mu;
  static std::map<const FunctionRow*, std::vector<Param>> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto it = cache.find(&row);
  if (it == cache.end()) it = cache.emplace(&row, parse_params(row)).first;
  return it->second;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

// ------------------------------------------------------------------ Args
int Args::index(std::string_view param) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == param) return static_cast<int>(i);
  throw InternalError(fmt::format("cufuse-dump-kernels: {}() has no parameter '{}'", row_.name, param));
}

const Arg& Args::arg(std::string_view param) const {
  const auto& b = bound_[static_cast<size_t>(index(param))];
  return b ? *b : call_;
}

const Value& Args::get(std::string_view param) const {
  static const Value none;
  const auto& b = bound_[static_cast<size_t>(index(param))];
  return b ? b->value : none;
}

bool Args::given(std::string_view param) const { return !get(param).is_none(); }

void Args::fail(std::string_view param, const std::string& message) const {
  const Arg& a = arg(param);
  throw ProgramError(ProgramError::Kind::Semantic, fmt::format("{}(): {}", row_.name, message), a.loc, a.length);
}

cufuse::Array Args::array(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_array()) return v.array;
  if (v.is_number()) return cufuse::full({}, v.number);
  fail(param, fmt::format("argument '{}' must be an array, not {}", param, v.type_name()));
}

cufuse::Operand Args::operand(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_array())
    return v.temporary ? cufuse::Operand(cufuse::Array(v.array), cufuse::detail::Transient{}) : cufuse::Operand(v.array);
  if (v.is_number()) return cufuse::Operand(v.number);
  fail(param, fmt::format("argument '{}' must be an array or a number, not {}", param, v.type_name()));
}

Scalar Args::number(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_number()) return v.number;
  fail(param, fmt::format("argument '{}' must be a number, not {}", param, v.type_name()));
}

int64_t Args::integer(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_int()) return v.number.to_int64();
  fail(param, fmt::format("argument '{}' must be an int, not {}", param, v.type_name()));
}

double Args::real(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_number() && v.number.kind() != Scalar::Kind::Bool) return v.number.to_double();
  fail(param, fmt::format("argument '{}' must be a number, not {}", param, v.type_name()));
}

bool Args::boolean(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_number()) return v.number.to_bool();
  fail(param, fmt::format("argument '{}' must be True or False, not {}", param, v.type_name()));
}

std::string Args::string(std::string_view param) const {
  const Value& v = get(param);
  if (v.kind == Value::Kind::String) return v.text;
  fail(param, fmt::format("argument '{}' must be a string, not {}", param, v.type_name()));
}

Shape Args::shape(std::string_view param) const {
  const Value& v = get(param);
  Shape s;
  if (v.is_int()) {
    s.push_back(v.number.to_int64());
    return s;
  }
  if (v.is_sequence()) {
    for (const auto& it : v.items) {
      if (!it.is_int())
        fail(param, fmt::format("argument '{}' must be an int or a tuple of ints, but it holds {}", param,
                                it.type_name()));
      s.push_back(it.number.to_int64());
    }
    return s;
  }
  fail(param, fmt::format("argument '{}' must be an int or a tuple of ints, not {}", param, v.type_name()));
}

Axes Args::axes(std::string_view param) const {
  Shape s = shape(param);
  Axes a;
  for (auto d : s) a.push_back(static_cast<int>(d));
  return a;
}

std::optional<DType> Args::dtype(std::string_view param) const {
  const Value& v = get(param);
  if (v.is_none()) return std::nullopt;
  if (v.kind == Value::Kind::DType) return v.dtype;
  if (v.kind == Value::Kind::String) {
    try {
      return parse_dtype(v.text);
    } catch (const cufuse::Error& e) {
      fail(param, e.what());
    }
  }
  fail(param, fmt::format("argument '{}' must be a dtype or a dtype name such as 'f32', not {}", param,
                          v.type_name()));
}

// ------------------------------------------------------------------ binding
Value call_function(const FunctionRow& row, std::vector<Arg> positional,
                    std::vector<std::pair<std::string, Arg>> keywords, const Arg& call) {
  const auto& ps = params_of(row);
  std::vector<std::optional<Arg>> bound(ps.size());
  std::vector<std::string> names;
  for (const auto& p : ps) names.push_back(p.name);
  auto fail_at = [&](const Arg& a, const std::string& msg) -> void {
    throw ProgramError(ProgramError::Kind::Semantic, fmt::format("{}(): {}", row.name, msg), a.loc, a.length);
  };

  size_t pi = 0;
  size_t max_positional = 0;
  for (const auto& p : ps)
    if (!p.keyword_only && !p.variadic) ++max_positional;
  for (size_t k = 0; k < positional.size(); ++k) {
    while (pi < ps.size() && ps[pi].keyword_only) ++pi;
    if (pi >= ps.size()) {
      fail_at(positional[k], fmt::format("takes {} positional argument{} but {} {} given", max_positional,
                                         max_positional == 1 ? "" : "s", positional.size(),
                                         positional.size() == 1 ? "was" : "were"));
    }
    if (ps[pi].variadic) {
      Arg rest{Value::tuple({}), positional[k].loc, 0};
      const size_t begin = positional[k].loc.offset;
      size_t end = begin;
      for (; k < positional.size(); ++k) {
        rest.value.items.push_back(positional[k].value);
        end = positional[k].loc.offset + positional[k].length;
      }
      rest.length = end - begin;
      bound[pi++] = std::move(rest);
      break;
    }
    bound[pi++] = std::move(positional[k]);
  }
  for (auto& [name, a] : keywords) {
    auto it = std::find_if(ps.begin(), ps.end(), [&](const Param& p) { return p.name == name; });
    if (it == ps.end()) {
      std::vector<std::string> cands;
      for (const auto& p : ps) cands.push_back(p.name);
      std::string hint;
      for (const auto& c : cands)
        if (edit_distance(c, name) <= 2) hint = fmt::format(" (did you mean '{}'?)", c);
      fail_at(a, fmt::format("got an unexpected keyword argument '{}'{}", name, hint));
    }
    const size_t i = static_cast<size_t>(it - ps.begin());
    if (bound[i] && !(ps[i].variadic && bound[i]->value.items.empty()))
      fail_at(a, fmt::format("got multiple values for argument '{}'", name));
    bound[i] = std::move(a);
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    if (bound[i]) continue;
    if (ps[i].def) {
      bound[i] = Arg{*ps[i].def, call.loc, call.length};
    } else if (ps[i].variadic) {
      bound[i] = Arg{Value::tuple({}), call.loc, call.length};
    } else {
      fail_at(call, fmt::format("missing required argument '{}' (signature: {})", ps[i].name, signature(row)));
    }
  }
  Args args(row, std::move(names), std::move(bound), call);
  return row.impl(args);
}

std::string signature(const FunctionRow& row) { return fmt::format("{}({})", row.name, row.params); }

// ------------------------------------------------------------------ lookups
const FunctionRow* find_function(std::string_view name) {
  static const std::map<std::string_view, const FunctionRow*> index = [] {
    std::map<std::string_view, const FunctionRow*> m;
    for (const auto& r : function_table()) m.emplace(r.name, &r);  // the first row of a name wins
    return m;
  }();
  auto it = index.find(name);
  return it == index.end() ? nullptr : it->second;
}

std::optional<std::string> not_available_yet(std::string_view name) {
  // Library functions that later work brings to the tool (each then becomes a row).
  static constexpr std::string_view planned[] = {"kron", "linalg.vector_norm"};
  if (find_function(name)) return std::nullopt;
  for (auto p : planned)
    if (p == name) return fmt::format("{} is not available yet", name);
  return std::nullopt;
}

std::vector<std::string> similar_names(std::string_view name, const std::vector<std::string>& extra) {
  std::vector<std::pair<size_t, std::string>> scored;
  auto consider = [&](std::string_view c) {
    const size_t d = edit_distance(name, c);
    const size_t limit = name.size() <= 3 ? 1 : 2;
    if (d <= limit) scored.emplace_back(d, std::string(c));
  };
  for (const auto& r : function_table()) consider(r.name);
  for (const auto& e : extra) consider(e);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, n] : scored)
    if (out.size() < 3 && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

}  // namespace cufuse::cli
