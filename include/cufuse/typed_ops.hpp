// cufuse/typed_ops.hpp: the typed layer's operators and functions (cufuse/typed.hpp): every
// kernel row and alias of the op table by its NumPy name (generated from cufuse/op_rows.hpp),
// C++ operators, where, astype<T>, and the reductions sum/prod/max/min/mean/var/std/any/all
// over static axes (sum<1>(x)), all axes (sum(x)) or axes given at run time (sum(x, 1),
// sum(x, std::array{0, 1})), with cufuse::keepdims. Each returns an expression node
// (typed_expr.hpp); a Tensor or expression operand picks these templates over the dynamic
// functions of the same name.
#pragma once
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
#define CUFUSE_TYPED_CAST(fn, tag)  // astype<T>, below
#define CUFUSE_TYPED_KERNEL(id, fn, sym, sig, ...) CUFUSE_TYPED_##sig(fn, typed::op::fn)
#define CUFUSE_TYPED_ALIAS(fn, id, sig) CUFUSE_TYPED_##sig(fn, typed::op_id::id)
CUFUSE_ELEMENTWISE_OPS(CUFUSE_TYPED_KERNEL)
CUFUSE_OP_ALIASES(CUFUSE_TYPED_ALIAS)
#undef CUFUSE_TYPED_KERNEL
#undef CUFUSE_TYPED_ALIAS
#undef CUFUSE_TYPED_UNARY
#undef CUFUSE_TYPED_BINARY
#undef CUFUSE_TYPED_WHERE
#undef CUFUSE_TYPED_CAST

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
