// cufuse/ops.hpp: elementwise operations by their NumPy names, and C++ operators.
// All are lazy; each broadcasts its operands (an error names both shapes) and promotes
// dtypes by NumPy 2's rules, C++ scalars being weak like Python scalars.
#pragma once
#include <string_view>
#include <type_traits>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

// Any op of the op table by NumPy name: apply("hypot", {x, y}).
Array apply(std::string_view numpy_name, const std::vector<Operand>& args);

#define CUFUSE_UNARY(fn) Array fn(const Operand& a);
#define CUFUSE_BINARY(fn) Array fn(const Operand& a, const Operand& b);
CUFUSE_BINARY(add) CUFUSE_BINARY(subtract) CUFUSE_BINARY(multiply) CUFUSE_BINARY(divide)
CUFUSE_BINARY(true_divide) CUFUSE_BINARY(floor_divide) CUFUSE_BINARY(remainder) CUFUSE_BINARY(mod)
CUFUSE_BINARY(power) CUFUSE_BINARY(maximum) CUFUSE_BINARY(minimum) CUFUSE_BINARY(fmax) CUFUSE_BINARY(fmin)
CUFUSE_BINARY(arctan2) CUFUSE_BINARY(hypot) CUFUSE_BINARY(copysign)
CUFUSE_BINARY(less) CUFUSE_BINARY(less_equal) CUFUSE_BINARY(greater) CUFUSE_BINARY(greater_equal)
CUFUSE_BINARY(equal) CUFUSE_BINARY(not_equal)
CUFUSE_BINARY(logical_and) CUFUSE_BINARY(logical_or) CUFUSE_BINARY(logical_xor)
CUFUSE_BINARY(bitwise_and) CUFUSE_BINARY(bitwise_or) CUFUSE_BINARY(bitwise_xor)
CUFUSE_BINARY(left_shift) CUFUSE_BINARY(right_shift)
CUFUSE_UNARY(negative) CUFUSE_UNARY(positive) CUFUSE_UNARY(abs) CUFUSE_UNARY(absolute) CUFUSE_UNARY(sign)
CUFUSE_UNARY(square) CUFUSE_UNARY(reciprocal) CUFUSE_UNARY(floor) CUFUSE_UNARY(ceil) CUFUSE_UNARY(trunc)
CUFUSE_UNARY(rint) CUFUSE_UNARY(logical_not) CUFUSE_UNARY(invert) CUFUSE_UNARY(bitwise_not)
CUFUSE_UNARY(isnan) CUFUSE_UNARY(isinf) CUFUSE_UNARY(isfinite)
CUFUSE_UNARY(sqrt) CUFUSE_UNARY(cbrt) CUFUSE_UNARY(exp) CUFUSE_UNARY(exp2) CUFUSE_UNARY(expm1)
CUFUSE_UNARY(log) CUFUSE_UNARY(log2) CUFUSE_UNARY(log10) CUFUSE_UNARY(log1p)
CUFUSE_UNARY(sin) CUFUSE_UNARY(cos) CUFUSE_UNARY(tan) CUFUSE_UNARY(arcsin) CUFUSE_UNARY(arccos) CUFUSE_UNARY(arctan)
CUFUSE_UNARY(sinh) CUFUSE_UNARY(cosh) CUFUSE_UNARY(tanh) CUFUSE_UNARY(arcsinh) CUFUSE_UNARY(arccosh) CUFUSE_UNARY(arctanh)
#undef CUFUSE_UNARY
#undef CUFUSE_BINARY

Array where(const Operand& condition, const Operand& x, const Operand& y);
// NumPy's clip: minimum(maximum(x, lo), hi), NaN propagating.
Array clip(const Operand& x, const Operand& lo, const Operand& hi);
Array astype(const Array& a, DType t);
// Broadcast shapes as NumPy does; ValueError naming the shapes if they do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// ------------------------------------------------------------------ operators
namespace detail {
template <class T>
inline constexpr bool is_array_v = std::is_same_v<std::remove_cvref_t<T>, Array>;
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
