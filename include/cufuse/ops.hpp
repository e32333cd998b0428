// cufuse/ops.hpp: elementwise operations by their NumPy names, and C++ operators.
// All are lazy; each broadcasts its operands (an error names both shapes) and promotes
// dtypes by NumPy 2's rules, C++ scalars being weak like Python scalars.
#pragma once
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/op_rows.hpp"

namespace cufuse {

// Every op of the op table (cufuse/op_rows.hpp), declared from its row: kernel rows,
// composites and aliases, with NumPy's parameter names and defaults.
#define CUFUSE_DECLARE_UNARY(fn) Array fn(const Operand& x);
#define CUFUSE_DECLARE_BINARY(fn) Array fn(const Operand& x1, const Operand& x2);
#define CUFUSE_DECLARE_WHERE(fn) Array fn(const Operand& condition, const Operand& x, const Operand& y);
// fma(x, y, z): x * y + z rounded once (C's fma; floating dtypes only). `a * b + c` in float32
// or float64 builds the same node unless Config::contract_fma is off (CUFUSE_FMA=0).
#define CUFUSE_DECLARE_TERNARY(fn) Array fn(const Operand& x, const Operand& y, const Operand& z);
#define CUFUSE_DECLARE_CAST(fn)  // astype, below
// Round half to even; integers come back unchanged (a copy) for decimals >= 0.
#define CUFUSE_DECLARE_ROUND(fn) Array fn(const Operand& a, int decimals = 0);
// posinf/neginf default to the dtype's largest/lowest finite value; integers and bool come
// back unchanged (a copy). NumPy's copy=False (in place) has no meaning for lazy arrays.
#define CUFUSE_DECLARE_NAN_TO_NUM(fn) \
  Array fn(const Operand& x, double nan = 0.0, std::optional<double> posinf = {}, std::optional<double> neginf = {});
#define CUFUSE_DECLARE_ISCLOSE(fn) \
  Array fn(const Operand& a, const Operand& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false);
#define CUFUSE_DECLARE_KERNEL(id, fn, sym, sig, ...) CUFUSE_DECLARE_##sig(fn)
#define CUFUSE_DECLARE_COMPOSITE(fn, sig, ...) CUFUSE_DECLARE_##sig(fn)
#define CUFUSE_DECLARE_ALIAS(fn, id, sig) CUFUSE_DECLARE_##sig(fn)
CUFUSE_ELEMENTWISE_OPS(CUFUSE_DECLARE_KERNEL)
CUFUSE_COMPOSITE_OPS(CUFUSE_DECLARE_COMPOSITE)
CUFUSE_OP_ALIASES(CUFUSE_DECLARE_ALIAS)
#undef CUFUSE_DECLARE_KERNEL
#undef CUFUSE_DECLARE_COMPOSITE
#undef CUFUSE_DECLARE_ALIAS
#undef CUFUSE_DECLARE_UNARY
#undef CUFUSE_DECLARE_BINARY
#undef CUFUSE_DECLARE_WHERE
#undef CUFUSE_DECLARE_TERNARY
#undef CUFUSE_DECLARE_CAST
#undef CUFUSE_DECLARE_ROUND
#undef CUFUSE_DECLARE_NAN_TO_NUM
#undef CUFUSE_DECLARE_ISCLOSE

// A parameter of an op called by name (apply): {"rtol", 1e-3}, {"equal_nan", true}.
struct OpParam {
  std::string_view name;
  Scalar value;
};
// Any op of the op table by NumPy name, aliases and composites included: apply("hypot", {x, y}),
// apply("isclose", {a, b}, {{"atol", 0.0}}). A parameter left out takes NumPy's default.
// ValueError for an unknown name or the wrong number of operands, TypeError for a parameter
// the op does not have.
Array apply(std::string_view numpy_name, const std::vector<Operand>& args, const std::vector<OpParam>& params = {});

// NumPy 2's permute_dims: the axes in the given order (transpose).
inline Array permute_dims(const Array& a, const Axes& axes) { return a.transpose(axes); }
// NumPy's clip: minimum(maximum(x, lo), hi), NaN propagating.
Array clip(const Operand& x, const Operand& lo, const Operand& hi);
Array astype(const Array& a, DType t);
// Broadcast shapes as NumPy does; ValueError naming the shapes if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// ------------------------------------------------------------------ operators
namespace detail {
template <class T>
inline constexpr bool is_array_v =
    std::is_same_v<std::remove_cvref_t<T>, Array> || std::is_same_v<std::remove_cvref_t<T>, Subscript>;
template <class T>
inline constexpr bool is_operand_v = is_array_v<T> || std::is_arithmetic_v<std::remove_cvref_t<T>> ||
                                     std::is_same_v<std::remove_cvref_t<T>, Scalar> ||
                                     std::is_same_v<std::remove_cvref_t<T>, half> ||
                                     std::is_same_v<std::remove_cvref_t<T>, bfloat16_t>;
template <class A, class B>
concept ArrayOperands = (is_array_v<A> || is_array_v<B>) && is_operand_v<A> && is_operand_v<B>;
}  // namespace detail

namespace detail {
// An operator's operand: a temporary Array becomes a transient Operand (the op may take its
// node: nothing else can see that Operand); anything else converts as usual.
template <class T>
Operand operator_operand(T&& v) {
  if constexpr (std::is_same_v<std::remove_cvref_t<T>, Array> && !std::is_lvalue_reference_v<T>)
    return Operand(std::move(v), Transient{});
  else if constexpr (std::is_same_v<std::remove_cvref_t<T>, Subscript>)
    return Operand(v.value(), Transient{});
  else
    return Operand(std::forward<T>(v));
}
}  // namespace detail

#define CUFUSE_BINOP(sym, fn)                                                         \
  template <class A, class B>                                                         \
    requires detail::ArrayOperands<A, B>                                              \
  Array operator sym(A&& a, B&& b) {                                                  \
    return fn(detail::operator_operand(std::forward<A>(a)), detail::operator_operand(std::forward<B>(b))); \
  }
CUFUSE_BINOP(+, add)
CUFUSE_BINOP(-, subtract)
CUFUSE_BINOP(*, multiply)
CUFUSE_BINOP(/, true_divide)
CUFUSE_BINOP(%, remainder)
CUFUSE_BINOP(&, bitwise_and)
CUFUSE_BINOP(|, bitwise_or)
CUFUSE_BINOP(^, bitwise_xor)
CUFUSE_BINOP(<<, left_shift)
CUFUSE_BINOP(>>, right_shift)
CUFUSE_BINOP(<, less)
CUFUSE_BINOP(<=, less_equal)
CUFUSE_BINOP(>, greater)
CUFUSE_BINOP(>=, greater_equal)
CUFUSE_BINOP(==, equal)
CUFUSE_BINOP(!=, not_equal)
#undef CUFUSE_BINOP
inline Array operator-(const Array& a) { return negative(a); }
inline Array operator+(const Array& a) { return positive(a); }
inline Array operator~(const Array& a) { return invert(a); }

}  // namespace cufuse
