// cufuse/typed_expr.hpp: the typed layer's expression nodes (cufuse/typed.hpp).
//
// An expression is a value whose type is its op tree: Node<Op, Children...> over leaves
// (Ref: a named Tensor, by address; Val: a temporary Tensor, held; ScalarLeaf: a weak C++
// scalar). Building one allocates nothing and makes no graph node. Each type knows at
// compile time its dtype (typed_rules.hpp), rank, how many leaves and run-time parameters it
// has; at run time it lists its leaves into fuse() arguments (collect) and rebuilds itself as
// a lazy DAG over those arguments (build): typed_eval.hpp traces that once per expression
// type and replays it, and `Array(expr)` builds it over the Tensors themselves (mixing).
#pragma once
#include <array>
#include <cstdint>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cufuse/array.hpp"
#include "cufuse/fuse.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/typed_rules.hpp"

namespace cufuse::typed {

template <class T, int N>
class Tensor;

// ---- what evaluation passes around
// Lists the leaves of an expression (tree order) as fuse() arguments: array leaves naming
// one Array share an argument; each scalar is one. slot[leaf] = its argument. `args` may be
// raw storage (ArgStorage): each argument is constructed when listed.
struct Collect {
  detail::FuseArg* args;
  int8_t* slot;
  int64_t* params;
  int nargs = 0, leaf = 0, nparams = 0;
  void array(const Array* a) {
    for (int j = 0; j < nargs; ++j)
      if (args[j].array == a) {
        slot[leaf++] = static_cast<int8_t>(j);
        return;
      }
    ::new (static_cast<void*>(&args[nargs])) detail::FuseArg{a, Scalar()};  // raw storage: constructed here
    slot[leaf++] = static_cast<int8_t>(nargs++);
  }
  void scalar(const Scalar& s) {
    ::new (static_cast<void*>(&args[nargs])) detail::FuseArg{nullptr, s};
    slot[leaf++] = static_cast<int8_t>(nargs++);
  }
  void param(int64_t v) { params[nparams++] = v; }
};
template <int N>
struct ArgStorage {  // room for N fuse() arguments, none constructed (FuseArg destroys trivially)
  alignas(detail::FuseArg) unsigned char raw[sizeof(detail::FuseArg) * N];
  detail::FuseArg* get() { return reinterpret_cast<detail::FuseArg*>(raw); }
};
static_assert(std::is_trivially_destructible_v<detail::FuseArg>);
// Rebuilds an expression as a lazy DAG over fuse() arguments (placeholders while tracing).
struct Build {
  const detail::FuseArg* args;
  const int8_t* slot;
  int leaf = 0;
  const detail::FuseArg& next() { return args[slot[leaf++]]; }
};

// ---- leaves
template <class T, int N>
struct Ref {  // a named Tensor (an lvalue): by address, valid for the full expression
  static constexpr bool is_typed_expr = true, is_leaf = true;
  static constexpr DType dtype = dtype_of<T>();
  static constexpr int rank = N, n_leaves = 1, n_params = 0;
  static constexpr ArgType arg_type() { return {dtype, false}; }
  const Array* a;
  void collect(Collect& k) const { k.array(a); }
  Operand operand(Build& b) const { return Operand(*b.next().array); }
};
template <class T, int N>
struct Val {  // a temporary Tensor, held
  static constexpr bool is_typed_expr = true, is_leaf = true;
  static constexpr DType dtype = dtype_of<T>();
  static constexpr int rank = N, n_leaves = 1, n_params = 0;
  static constexpr ArgType arg_type() { return {dtype, false}; }
  Array a;
  void collect(Collect& k) const { k.array(&a); }
  Operand operand(Build& b) const { return Operand(*b.next().array); }
};
template <class S>
struct ScalarLeaf {  // a weak C++ scalar (a kernel parameter: new values replay)
  static constexpr bool is_typed_expr = false, is_leaf = true;
  static constexpr DType dtype = std::is_same_v<S, bool> ? DType::Bool
                                 : !std::is_arithmetic_v<S> || std::is_floating_point_v<S> ? DType::Float64
                                 : std::is_signed_v<S> ? DType::Int64 : DType::UInt64;
  static constexpr int rank = 0, n_leaves = 1, n_params = 0;
  static constexpr ArgType arg_type() { return {dtype, true}; }
  S v;
  void collect(Collect& k) const { k.scalar(Scalar(v)); }
  Operand operand(Build& b) const { return Operand(b.next().scalar); }
};

// ---- traits
template <class X>
inline constexpr bool is_tensor_v = false;
template <class T, int N>
inline constexpr bool is_tensor_v<Tensor<T, N>> = true;
template <class X>
concept Expr = requires { X::is_typed_expr; } && X::is_typed_expr && !is_tensor_v<X>;
template <class X>
inline constexpr bool is_scalar_v = std::is_arithmetic_v<X> || std::is_same_v<X, half> || std::is_same_v<X, bfloat16_t>;
// A typed operand: a Tensor or an expression.
template <class X>
concept Typed = is_tensor_v<std::remove_cvref_t<X>> || Expr<std::remove_cvref_t<X>>;
// Operands of a typed op: typed ones and weak C++ scalars, at least one typed.
template <class... X>
concept TypedOperands = (Typed<X> || ...) && ((Typed<X> || is_scalar_v<std::remove_cvref_t<X>>) && ...);

// A Tensor, expression or scalar as a child node.
template <class X>
auto leaf(X&& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (is_tensor_v<D>) {
    if constexpr (std::is_lvalue_reference_v<X>) return Ref<typename D::value_type, D::rank>{&x.array()};
    else return Val<typename D::value_type, D::rank>{std::move(x).array()};
  } else if constexpr (Expr<D>) {
    return D(std::forward<X>(x));
  } else {
    return ScalarLeaf<D>{x};
  }
}
template <class X>
using leaf_t = decltype(leaf(std::declval<X>()));

// ---- a node: an op over children
template <class Op, class... C>
struct Node {
  static constexpr bool is_typed_expr = true, is_leaf = false;
  static constexpr DType dtype = Op::template result<C...>();
  static constexpr int rank = Op::template rank_of<C...>();
  static constexpr int n_leaves = (C::n_leaves + ...);
  static constexpr int n_params = Op::n_params + (C::n_params + ...);
  static constexpr ArgType arg_type() { return {dtype, false}; }
  using value_type = cpp_type<dtype>;

  [[no_unique_address]] Op op;
  std::tuple<C...> c;

  void collect(Collect& k) const {
    op.params(k);
    std::apply([&](const auto&... x) { (x.collect(k), ...); }, c);
  }
  Array build(Build& b) const {
    return std::apply(
        [&](const auto&... x) {
          Operand ops[] = {x.operand(b)...};  // a braced list: left to right, as collect
          return call(ops, std::index_sequence_for<C...>{});
        },
        c);
  }
  Operand operand(Build& b) const { return Operand(build(b), detail::Transient{}); }

  // Mixing: the expression as a lazy Array over the Tensors it reads (it fuses with the
  // lazy program around it).
  Array lazy() const;
  operator Array() const { return lazy(); }  // NOLINT: a typed expression is usable as an Array
  // Evaluation (typed_eval.hpp): a Tensor of the result; its value; its elements.
  Tensor<value_type, rank> eval() const;
  template <class T = value_type>
  T item() const;
  std::vector<value_type> to_host() const;

 private:
  template <size_t... I>
  Array call(const Operand* ops, std::index_sequence<I...>) const {
    return op.apply(ops[I]...);
  }
};

template <class Op, class... X>
auto make_node(X&&... x) {
  return Node<Op, leaf_t<X>...>{Op{}, {leaf(std::forward<X>(x))...}};
}
template <class Op, class... X>
auto make_node_with(Op op, X&&... x) {
  return Node<Op, leaf_t<X>...>{std::move(op), {leaf(std::forward<X>(x))...}};
}

// ---- compile-time errors: each names the op and the dtypes in its template arguments
template <class D, bool Weak>
struct operand;  // cufuse::typed::operand<dt::float32, false>: an array of float32; true: a weak scalar
template <class Op, class... Operands>
struct op_dtype_check {
  static constexpr bool ok = false;
};
template <class Op, class... D, bool... W>
struct op_dtype_check<Op, operand<D, W>...> {
  static constexpr ArgType a[] = {ArgType{dtype_of_tag<D>(), W}...};
  static constexpr bool ok = type_args(rule_of<Op>, a, static_cast<int>(sizeof...(D))).ok;
  static_assert(ok,
                "cufuse typed: NumPy has no loop of this ufunc for these operand dtypes (see "
                "op_dtype_check<op::NAME, operand<dtype, weak>...> in this message)");
};
template <class Op, class... C>
constexpr bool check_op() {
  return op_dtype_check<Op, operand<dtype_tag<C::dtype>, C::arg_type().weak>...>::ok;
}
template <class Op, class... C>
constexpr int broadcast_rank() {
  int r = 0;
  ((r = C::rank > r ? C::rank : r), ...);
  return r;
}

// ---- ops
// An elementwise kernel row, called through its public function (ew_call below).
template <class Tag>
struct Ew {
  static constexpr int n_params = 0;
  template <class... C>
  static constexpr DType result() {
    static_assert((C::is_typed_expr || ...), "cufuse typed: an op needs a Tensor or expression operand");
    constexpr ArgType a[] = {C::arg_type()...};
    if constexpr (check_op<Tag, C...>()) return type_args(rule_of<Tag>, a, sizeof...(C)).result;
    else return DType::Bool;
  }
  template <class... C>
  static constexpr int rank_of() { return broadcast_rank<Tag, C...>(); }
  void params(Collect&) const {}
  template <class... O>
  Array apply(const O&... o) const;
};
// astype<T>(x): NumPy's unsafe casting, as Array::astype.
template <class T>
struct CastTo {
  static constexpr int n_params = 0;
  template <class C>
  static constexpr DType result() { return dtype_of<T>(); }
  template <class C>
  static constexpr int rank_of() { return C::rank; }
  void params(Collect&) const {}
  Array apply(const Operand& o) const { return o.array().astype(dtype_of<T>()); }
};

// Reductions. Axes checked at compile time (static) or run time (dynamic).
template <int Rank, int... Ax>
struct axes_check {
  static constexpr bool in_range = ((Ax >= -Rank && Ax < Rank) && ... && true);
  static_assert(in_range, "cufuse typed: a reduction axis is out of range for the operand's rank (see "
                          "axes_check<rank, axes...> in this message)");
  static constexpr int norm(int a) { return a < 0 ? a + Rank : a; }
  static constexpr bool distinct() {
    constexpr int v[] = {norm(Ax)..., -1};
    for (size_t i = 0; i < sizeof...(Ax); ++i)
      for (size_t j = i + 1; j < sizeof...(Ax); ++j)
        if (v[i] == v[j]) return false;
    return true;
  }
  static_assert(!in_range || distinct(), "cufuse typed: a reduction names an axis twice (see axes_check<rank, "
                                         "axes...> in this message)");
  static constexpr bool ok = in_range && distinct();
};
Array reduce_call(RedKind r, const Array& a, const AxisArg& axes, bool keep);
template <RedKind R, bool Keep, int... Ax>
struct Red {  // static axes (none: all of them)
  static constexpr int n_params = 0;
  template <class C>
  static constexpr DType result() {
    static_assert(!(R == RedKind::Sum || R == RedKind::Prod || R == RedKind::Mean || R == RedKind::Var ||
                    R == RedKind::Std) || C::dtype != DType::Bool || R == RedKind::Sum || R == RedKind::Prod,
                  "cufuse typed: mean/var/std of a bool expression: cast it first");
    return reduce_result(R, C::dtype);
  }
  template <class C>
  static constexpr int rank_of() {
    static_assert(axes_check<C::rank, Ax...>::ok);
    return Keep ? C::rank : (sizeof...(Ax) == 0 ? 0 : C::rank - static_cast<int>(sizeof...(Ax)));
  }
  void params(Collect&) const {}
  Array apply(const Operand& o) const {
    if constexpr (sizeof...(Ax) == 0) return reduce_call(R, o.array(), AxisArg{}, Keep);
    else return reduce_call(R, o.array(), AxisArg{Axes{Ax...}}, Keep);
  }
};
template <RedKind R, bool Keep, int K>
struct RedDyn {  // K axes given at run time (a parameter of the cache key)
  static constexpr int n_params = K;
  std::array<int, K> axes;
  template <class C>
  static constexpr DType result() { return reduce_result(R, C::dtype); }
  template <class C>
  static constexpr int rank_of() {
    static_assert(K <= C::rank, "cufuse typed: more reduction axes than the operand has");
    return Keep ? C::rank : C::rank - K;
  }
  void params(Collect& k) const {
    for (int a : axes) k.param(a);
  }
  Array apply(const Operand& o) const {
    return reduce_call(R, o.array(), AxisArg{Axes(axes.begin(), axes.end())}, Keep);
  }
};

}  // namespace cufuse::typed
