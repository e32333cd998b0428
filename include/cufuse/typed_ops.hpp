// cufuse/typed_ops.hpp: the typed layer's operators and functions (cufuse/typed.hpp): every
// kernel row and alias of the op table by its NumPy name (generated from cufuse/op_rows.hpp),
// the composites sinc, round, nan_to_num and isclose,
// C++ operators, where, astype<T>, and the reductions sum/prod/max/min/mean/var/std/any/all
// over static axes (sum<1>(x)), all axes (sum(x)) or axes given at run time (sum(x, 1),
// sum(x, std::array{0, 1})), with cufuse::keepdims. Each returns an expression node
// (typed_expr.hpp); a Tensor or expression operand picks these templates over the dynamic
// functions of the same name.
#pragma once
#include <bit>
#include <optional>

#include "cufuse/typed_expr.hpp"

namespace cufuse::typed {

// The public function of each kernel row; aliases reach their row's tag by id.
template <class Tag>
struct ew_fn;
#define CUFUSE_TYPED_FN(id, fn, ...)             \
  template <>                                    \
  struct ew_fn<op::fn> {                         \
    template <class... O>                        \
    static Array call(const O&... o) {           \
      return ::cufuse::fn(o...);                 \
    }                                            \
  };
CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_FN)
#undef CUFUSE_TYPED_FN
namespace op_id {
#define CUFUSE_TYPED_ID(id, fn, ...) using id = op::fn;
CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_ID)
#undef CUFUSE_TYPED_ID
}  // namespace op_id

template <class Tag>
template <class... O>
Array Ew<Tag>::apply(const O&... o) const {
  return ew_fn<Tag>::call(o...);
}

inline Array reduce_call(RedKind r, const Array& a, const AxisArg& axes, bool keep) {
  switch (r) {
    case RedKind::Sum: return ::cufuse::sum(a, axes, keep);
    case RedKind::Prod: return ::cufuse::prod(a, axes, keep);
    case RedKind::Max: return ::cufuse::max(a, axes, keep);
    case RedKind::Min: return ::cufuse::min(a, axes, keep);
    case RedKind::Mean: return ::cufuse::mean(a, axes, keep);
    case RedKind::Var: return ::cufuse::var(a, axes, 0, keep);
    case RedKind::Std: return ::cufuse::std(a, axes, 0, keep);
    case RedKind::Any: return ::cufuse::any(a, axes, keep);
    case RedKind::All: return ::cufuse::all(a, axes, keep);
  }
  return {};
}

// ---- the composite rows (src/graph/composites.cpp builds them from other ops); their
// parameters are run-time values, part of the cache key (a new value plans again).
struct SincOp {
  static constexpr int n_params = 0;
  template <class C>
  static constexpr DType result() { return is_float_dt(C::dtype) ? C::dtype : DType::Float64; }
  template <class C>
  static constexpr int rank_of() { return C::rank; }
  void params(Collect&) const {}
  Array apply(const Operand& o) const { return ::cufuse::sinc(o); }
};
struct RoundOp {
  static constexpr int n_params = 1;
  int decimals;
  template <class C>
  static constexpr DType result() {
    static_assert(C::dtype != DType::Bool, "cufuse typed: round of a bool expression (NumPy has no loop): cast it");
    return C::dtype;
  }
  template <class C>
  static constexpr int rank_of() { return C::rank; }
  void params(Collect& k) const { k.param(decimals); }
  Array apply(const Operand& o) const { return ::cufuse::round(o, decimals); }
};
struct NanToNumOp {
  static constexpr int n_params = 5;
  double nan;
  std::optional<double> posinf, neginf;
  template <class C>
  static constexpr DType result() { return C::dtype; }
  template <class C>
  static constexpr int rank_of() { return C::rank; }
  void params(Collect& k) const {
    k.param(std::bit_cast<int64_t>(nan));
    k.param(posinf.has_value());
    k.param(std::bit_cast<int64_t>(posinf.value_or(0.0)));
    k.param(neginf.has_value());
    k.param(std::bit_cast<int64_t>(neginf.value_or(0.0)));
  }
  Array apply(const Operand& o) const { return ::cufuse::nan_to_num(o, nan, posinf, neginf); }
};
struct IscloseOp {
  static constexpr int n_params = 3;
  double rtol, atol;
  bool equal_nan;
  template <class A, class B>
  static constexpr DType result() { return DType::Bool; }
  template <class A, class B>
  static constexpr int rank_of() { return A::rank > B::rank ? A::rank : B::rank; }
  void params(Collect& k) const {
    k.param(std::bit_cast<int64_t>(rtol));
    k.param(std::bit_cast<int64_t>(atol));
    k.param(equal_nan);
  }
  Array apply(const Operand& a, const Operand& b) const { return ::cufuse::isclose(a, b, rtol, atol, equal_nan); }
};

// ---- C++ operators (found by argument-dependent lookup on Tensors and expressions)
#define CUFUSE_TYPED_BINOP(sym, fn)                                     \
  template <class A, class B>                                           \
    requires TypedOperands<A, B>                                        \
  auto operator sym(A&& a, B&& b) {                                     \
    return make_node<Ew<op::fn>>(std::forward<A>(a), std::forward<B>(b)); \
  }
CUFUSE_TYPED_BINOP(+, add)
CUFUSE_TYPED_BINOP(-, subtract)
CUFUSE_TYPED_BINOP(*, multiply)
CUFUSE_TYPED_BINOP(/, true_divide)
CUFUSE_TYPED_BINOP(%, remainder)
CUFUSE_TYPED_BINOP(&, bitwise_and)
CUFUSE_TYPED_BINOP(|, bitwise_or)
CUFUSE_TYPED_BINOP(^, bitwise_xor)
CUFUSE_TYPED_BINOP(<<, left_shift)
CUFUSE_TYPED_BINOP(>>, right_shift)
CUFUSE_TYPED_BINOP(<, less)
CUFUSE_TYPED_BINOP(<=, less_equal)
CUFUSE_TYPED_BINOP(>, greater)
CUFUSE_TYPED_BINOP(>=, greater_equal)
CUFUSE_TYPED_BINOP(==, equal)
CUFUSE_TYPED_BINOP(!=, not_equal)
#undef CUFUSE_TYPED_BINOP
template <class A>
  requires Typed<A>
auto operator-(A&& a) {
  return make_node<Ew<op::negative>>(std::forward<A>(a));
}
template <class A>
  requires Typed<A>
auto operator+(A&& a) {
  return make_node<Ew<op::positive>>(std::forward<A>(a));
}
template <class A>
  requires Typed<A>
auto operator~(A&& a) {
  return make_node<Ew<op::invert>>(std::forward<A>(a));
}

}  // namespace cufuse::typed

namespace cufuse {

// ---- every kernel row and alias by its NumPy name
#define CUFUSE_TYPED_UNARY(fn, tag)                                       \
  template <class X>                                                      \
    requires typed::TypedOperands<X>                                      \
  auto fn(X&& x) {                                                        \
    return typed::make_node<typed::Ew<tag>>(std::forward<X>(x));          \
  }
#define CUFUSE_TYPED_BINARY(fn, tag)                                                      \
  template <class A, class B>                                                             \
    requires typed::TypedOperands<A, B>                                                   \
  auto fn(A&& a, B&& b) {                                                                 \
    return typed::make_node<typed::Ew<tag>>(std::forward<A>(a), std::forward<B>(b));      \
  }
#define CUFUSE_TYPED_WHERE(fn, tag)                                                                          \
  template <class C, class A, class B>                                                                       \
    requires typed::TypedOperands<C, A, B>                                                                   \
  auto fn(C&& c, A&& a, B&& b) {                                                                             \
    return typed::make_node<typed::Ew<tag>>(std::forward<C>(c), std::forward<A>(a), std::forward<B>(b));     \
  }
#define CUFUSE_TYPED_TERNARY(fn, tag) CUFUSE_TYPED_WHERE(fn, tag)
#define CUFUSE_TYPED_CAST(fn, tag)  // astype<T>, below
#define CUFUSE_TYPED_KERNEL(id, fn, sym, sig, ...) CUFUSE_TYPED_##sig(fn, typed::op::fn)
#define CUFUSE_TYPED_ALIAS(fn, id, sig) CUFUSE_TYPED_##sig(fn, typed::op_id::id)
CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_KERNEL)
CUFUSE_OP_ALIASES(CUFUSE_TYPED_ALIAS)
#undef CUFUSE_TYPED_KERNEL
#undef CUFUSE_TYPED_ALIAS
#undef CUFUSE_TYPED_UNARY
#undef CUFUSE_TYPED_BINARY
#undef CUFUSE_TYPED_TERNARY
#undef CUFUSE_TYPED_WHERE
#undef CUFUSE_TYPED_CAST

// ---- the composite rows, with NumPy's defaults
template <class X>
  requires typed::TypedOperands<X>
auto sinc(X&& x) {
  return typed::make_node<typed::SincOp>(std::forward<X>(x));
}
template <class X>
  requires typed::TypedOperands<X>
auto round(X&& x, int decimals = 0) {
  return typed::make_node_with(typed::RoundOp{decimals}, std::forward<X>(x));
}
template <class X>
  requires typed::TypedOperands<X>
auto nan_to_num(X&& x, double nan = 0.0, std::optional<double> posinf = {}, std::optional<double> neginf = {}) {
  return typed::make_node_with(typed::NanToNumOp{nan, posinf, neginf}, std::forward<X>(x));
}
template <class A, class B>
  requires typed::TypedOperands<A, B>
auto isclose(A&& a, B&& b, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) {
  return typed::make_node_with(typed::IscloseOp{rtol, atol, equal_nan}, std::forward<A>(a), std::forward<B>(b));
}

// astype<double>(x): NumPy's unsafe casting.
template <class T, class X>
  requires typed::Typed<X>
auto astype(X&& x) {
  static_assert(has_dtype_v<T>, "cufuse typed: astype<T> needs a C++ type with a cufuse dtype");
  return typed::make_node<typed::CastTo<T>>(std::forward<X>(x));
}

// ---- reductions
struct keepdims_t {};
inline constexpr keepdims_t keepdims{};

#define CUFUSE_TYPED_REDUCTION(fn, kind)                                                                  \
  template <int... Ax, class X>                                                                           \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x) {                                                                                        \
    return typed::make_node<typed::Red<typed::RedKind::kind, false, Ax...>>(std::forward<X>(x));          \
  }                                                                                                       \
  template <int... Ax, class X>                                                                           \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x, keepdims_t) {                                                                            \
    return typed::make_node<typed::Red<typed::RedKind::kind, true, Ax...>>(std::forward<X>(x));           \
  }                                                                                                       \
  template <class X, size_t K>                                                                            \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x, const std::array<int, K>& axes) {                                                        \
    return typed::make_node_with(typed::RedDyn<typed::RedKind::kind, false, int(K)>{axes}, std::forward<X>(x)); \
  }                                                                                                       \
  template <class X, size_t K>                                                                            \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x, const std::array<int, K>& axes, keepdims_t) {                                            \
    return typed::make_node_with(typed::RedDyn<typed::RedKind::kind, true, int(K)>{axes}, std::forward<X>(x)); \
  }                                                                                                       \
  template <class X>                                                                                      \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x, int axis) {                                                                              \
    return fn(std::forward<X>(x), std::array<int, 1>{axis});                                              \
  }                                                                                                       \
  template <class X>                                                                                      \
    requires typed::Typed<X>                                                                              \
  auto fn(X&& x, int axis, keepdims_t k) {                                                                \
    return fn(std::forward<X>(x), std::array<int, 1>{axis}, k);                                           \
  }
CUFUSE_TYPED_REDUCTION(sum, Sum)
CUFUSE_TYPED_REDUCTION(prod, Prod)
CUFUSE_TYPED_REDUCTION(max, Max)
CUFUSE_TYPED_REDUCTION(min, Min)
CUFUSE_TYPED_REDUCTION(mean, Mean)
CUFUSE_TYPED_REDUCTION(var, Var)
CUFUSE_TYPED_REDUCTION(std, Std)
CUFUSE_TYPED_REDUCTION(any, Any)
CUFUSE_TYPED_REDUCTION(all, All)
#undef CUFUSE_TYPED_REDUCTION

}  // namespace cufuse
