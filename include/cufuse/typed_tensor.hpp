// cufuse/typed_tensor.hpp: cufuse::Tensor<T, N> (cufuse/typed.hpp), a typed handle over an
// Array: its dtype (the C++ type T) and rank N are static, its shape and strides dynamic.
// The same size as an Array and the same semantics (a copy is the same array). Made by
// tensor_cast<T, N>(array) (checked at run time) or from an expression (evaluated);
// .array() and an implicit conversion give the Array back. Views (transpose, reshape<M>,
// indexing with integers, slices and newaxis) return Tensors of the rank they leave;
// in-place operators are the dynamic API's lazy writes.
#pragma once
#include <string>
#include <vector>

#include "cufuse/typed_expr.hpp"

namespace cufuse::typed {

// The rank an index list leaves: an integer takes an axis away, newaxis adds one.
template <class I>
constexpr int index_delta() {
  using D = std::remove_cvref_t<I>;
  if constexpr (std::is_integral_v<D>) return -1;
  else if constexpr (std::is_same_v<D, NewAxis>) return 1;
  else return 0;
}
template <class I>
constexpr bool index_takes_axis() {
  using D = std::remove_cvref_t<I>;
  return std::is_integral_v<D> || std::is_same_v<D, Slice>;
}
template <class I>
constexpr bool index_ok() {
  using D = std::remove_cvref_t<I>;
  return std::is_integral_v<D> || std::is_same_v<D, Slice> || std::is_same_v<D, NewAxis>;
}

template <class Target, DType From, int FromRank>
struct assign_check {  // Tensor<T, N> = expression: the same dtype and rank
  static constexpr bool ok = Target::dtype == From && Target::rank == FromRank;
  static_assert(Target::dtype == From, "cufuse typed: assigning an expression of another dtype to a Tensor (see "
                                       "assign_check<Tensor<T, N>, dtype, rank> in this message; use astype<T>)");
  static_assert(Target::rank == FromRank, "cufuse typed: assigning an expression of another rank to a Tensor (see "
                                          "assign_check<Tensor<T, N>, dtype, rank> in this message)");
};
template <class Target, class Op, DType Result, int ValueRank>
struct inplace_check {  // Tensor<T, N> op= value: NumPy's same_kind casting, no broadcast of the target
  static constexpr bool ok = can_cast_same_kind_c(Result, Target::dtype) && ValueRank <= Target::rank;
  static_assert(can_cast_same_kind_c(Result, Target::dtype),
                "cufuse typed: an in-place op whose result cannot be cast to the Tensor's dtype by 'same_kind' "
                "(see inplace_check<Tensor<T, N>, op, result dtype, rank> in this message)");
  static_assert(ValueRank <= Target::rank, "cufuse typed: an in-place op whose value has more axes than the "
                                           "Tensor (see inplace_check<Tensor<T, N>, op, result dtype, rank>)");
};

template <class T, int N>
class Tensor {
  static_assert(has_dtype_v<T>, "cufuse typed: Tensor<T, N> needs a C++ type with a cufuse dtype");
  static_assert(N >= 0, "cufuse typed: Tensor<T, N> needs a rank N >= 0");

 public:
  using value_type = T;
  static constexpr DType dtype = dtype_of<T>();
  static constexpr int rank = N;

  Tensor() = default;
  // Evaluates the expression (typed_eval.hpp): one replay of its cached plan.
  template <class E>
    requires Expr<E>
  Tensor(const E& e);  // NOLINT: `Tensor<float, 1> y = x * 2;`
  template <class E>
    requires Expr<E>
  Tensor& operator=(const E& e) {
    return *this = Tensor(e);
  }

  const Array& array() const& { return a_; }
  Array array() && { return std::move(a_); }
  operator const Array&() const { return a_; }  // NOLINT: a Tensor is usable as an Array

  const Shape& shape() const { return a_.shape(); }
  int64_t shape(int axis) const { return a_.shape(axis); }
  int64_t size() const { return a_.size(); }
  static constexpr int ndim() { return N; }
  bool is_lazy() const { return a_.is_lazy(); }
  bool defined() const { return a_.defined(); }
  Tensor& eval() {
    a_.eval();
    return *this;
  }
  T item() const { return a_.item<T>(); }
  std::vector<T> to_host() const { return a_.to_host<T>(); }

  // ---- views
  Tensor transpose() const { return Tensor(a_.transpose()); }
  Tensor transpose(const std::array<int, N>& axes) const { return Tensor(a_.transpose(Axes(axes.begin(), axes.end()))); }
  template <int M>
  Tensor<T, M> reshape(const Shape& s) const {
    if (static_cast<int>(s.size()) != M)
      throw ValueError("Tensor::reshape<" + std::to_string(M) + ">: the shape " + to_string(s) + " has " +
                       std::to_string(s.size()) + " axes");
    return Tensor<T, M>(a_.reshape(s), 0);
  }
  // x(1, cf::_, cf::slice(0, 4), cf::newaxis): integers take an axis away, newaxis adds one.
  template <class... I>
  auto operator()(I... idx) const {
    static_assert((index_ok<I>() && ...), "cufuse typed: a Tensor is indexed by integers, slices and newaxis");
    constexpr int taken = (0 + ... + int(index_takes_axis<I>()));
    static_assert(taken <= N, "cufuse typed: more indices than the Tensor has axes");
    constexpr int M = N + (0 + ... + index_delta<I>());
    return Tensor<T, M>(a_.index({Index(idx)...}), 0);
  }
  Tensor<T, N - 1> operator[](int64_t i) const {
    static_assert(N >= 1, "cufuse typed: indexing a rank-0 Tensor");
    return Tensor<T, N - 1>(a_[i], 0);
  }
  Tensor copy() const { return Tensor(a_.copy()); }

  // ---- in-place: lazy writes, as the dynamic API's
#define CUFUSE_TYPED_INPLACE(sym, fn)                                                              \
  template <class X>                                                                               \
    requires TypedOperands<X>                                                                      \
  Tensor& operator sym(X&& x) {                                                                    \
    using V = leaf_t<X>;                                                                           \
    static_assert(inplace_check<Tensor, op::fn, Ew<op::fn>::template result<Ref<T, N>, V>(), V::rank>::ok); \
    if constexpr (V::is_typed_expr) a_ sym inplace_value(std::forward<X>(x));                      \
    else a_ sym x;                                                                                 \
    return *this;                                                                                  \
  }                                                                                                \
  template <class X>                                                                               \
    requires(is_scalar_v<std::remove_cvref_t<X>>)                                                  \
  Tensor& operator sym(X x) {                                                                      \
    static_assert(inplace_check<Tensor, op::fn, Ew<op::fn>::template result<Ref<T, N>, ScalarLeaf<X>>(), 0>::ok); \
    a_ sym x;                                                                                      \
    return *this;                                                                                  \
  }
  CUFUSE_TYPED_INPLACE(+=, add)
  CUFUSE_TYPED_INPLACE(-=, subtract)
  CUFUSE_TYPED_INPLACE(*=, multiply)
  CUFUSE_TYPED_INPLACE(/=, true_divide)
  CUFUSE_TYPED_INPLACE(%=, remainder)
  CUFUSE_TYPED_INPLACE(&=, bitwise_and)
  CUFUSE_TYPED_INPLACE(|=, bitwise_or)
  CUFUSE_TYPED_INPLACE(^=, bitwise_xor)
#undef CUFUSE_TYPED_INPLACE

  // internals: an Array already checked (views, evaluation)
  Tensor(Array a, int) : a_(std::move(a)) {}

 private:
  explicit Tensor(Array a) : a_(std::move(a)) {}
  template <class X>
  static Array inplace_value(X&& x) {
    using D = std::remove_cvref_t<X>;
    if constexpr (is_tensor_v<D>) return x.array();
    else return x.lazy();
  }
  template <class U, int M>
  friend Tensor<U, M> tensor_cast(const Array& a);
  Array a_;
};

// A typed handle on a dynamic array: TypeError for another dtype, ValueError for another rank.
template <class T, int N>
Tensor<T, N> tensor_cast(const Array& a) {
  if (!a.defined()) throw ValueError("tensor_cast: an empty Array handle");
  const std::string what = "tensor_cast<" + std::string(name(dtype_of<T>())) + ", " + std::to_string(N) + ">: ";
  if (a.dtype() != dtype_of<T>()) throw TypeError(what + "the array is " + std::string(name(a.dtype())));
  if (a.ndim() != N)
    throw ValueError(what + "the array has " + std::to_string(a.ndim()) + " axes (shape " + to_string(a.shape()) + ")");
  return Tensor<T, N>(a, 0);
}

}  // namespace cufuse::typed
