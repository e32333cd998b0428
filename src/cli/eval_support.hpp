// src/cli/eval_support.hpp: what the evaluator's files share (evaluator.cpp, writes.cpp):
// errors at a place in the program, cufuse errors turned into them, arguments as written,
// and the function an operator calls.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cli/syntax.hpp"
#include "cli/value.hpp"
#include "cufuse/error.hpp"

namespace cufuse::cli {

[[noreturn]] inline void fail_at(Loc loc, size_t len, const std::string& msg) {
  throw ProgramError(ProgramError::Kind::Semantic, msg, loc, len);
}
[[noreturn]] inline void fail_at(const Expr& e, const std::string& msg) { fail_at(e.loc, e.span(), msg); }

// Runs f; a cufuse error becomes a ProgramError over [loc, loc + len).
template <class F>
auto guarded(Loc loc, size_t len, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const cufuse::Error& err) {
    fail_at(loc, len, fmt::format("{}: {}", error_kind_name(err.kind()), err.what()));
  }
}
// ... over the whole expression.
template <class F>
auto guarded(const Expr& e, F&& f) -> decltype(f()) {
  return guarded(e.loc, e.span(), std::forward<F>(f));
}

inline Arg arg_of(const Expr& e, Value v) {
  v.temporary = v.is_array() && (e.kind == ExprKind::Binary || e.kind == ExprKind::Unary || e.kind == ExprKind::Call);
  return Arg{std::move(v), e.loc, e.span()};
}

// An array's subscripts (evaluated, a tuple flattened) as cufuse indices; a ProgramError
// at the offending item for what cufuse cannot index with.
std::vector<Index> array_indices(const std::vector<std::pair<Value, const Expr*>>& idx);

// The function a binary operator calls, by the op table's spelling ("+" -> add, "@" ->
// matmul); "" when none does.
std::string binary_function(std::string_view op);

}  // namespace cufuse::cli
