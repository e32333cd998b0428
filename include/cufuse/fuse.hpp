// cufuse/fuse.hpp: cufuse::fuse(f), CuPy's @cupy.fuse made for a lazy library.
//
//   auto sqdiff = cufuse::fuse([](auto x, auto y) { return (x - y) * (x - y); });
//   cufuse::Array d = sqdiff(x, y);   // first call of this signature: trace, plan, compile
//   d = sqdiff(x, y);                 // later calls: bind the inputs, one CUDA graph launch; no plan
//
// Arguments are Arrays and scalars (C++ arithmetic values, cufuse::Scalar, half, bfloat16_t);
// the callable returns one Array, or a std::tuple / std::pair / std::array / std::vector of
// Arrays. Inside it, anything lazy arrays do works (elementwise, reductions, views, user
// kernels, library calls), and arrays captured from outside are read from their memory on
// every call (they stay alive as long as the fused function).
//
// A signature is what a trace assumed about each argument: an array's dtype, shape,
// strides and address alignment (mod 16 bytes) and its device; a scalar's kind (bool, int,
// unsigned, float) and dtype. A call whose arguments differ in any of these is traced again
// (a new signature; its kernels are usually memory-cache hits). A scalar argument is a kernel
// parameter, so new values replay, provided the traced code uses it as a cufuse operand
// (x * s). Code that computes with it in C++ first (x * (s * 2)), or branches on it, makes
// that function's scalars part of the signature by value (each new value traces again).
// A scalar that no operand reads (it only steered C++ code) is part of the signature too.
// Beware a scalar that is both an operand and a branch condition: the trace sees one branch.
// Lazy arrays captured from outside are computed at the trace (they keep the values they
// had when written, as lazy arrays do); captured arrays in memory are read at every call.
// The callable runs twice at a trace when it takes scalars (to tell them apart).
//
// Each result is a new array on the current stream of the arguments' device. A plan of
// kernels only (no library call) replays as one CUDA graph launch, its kernels' parameters
// updated for the call: that costs the host about half of one plain kernel launch, so this
// is on by default, for one kernel too (FuseOptions::cuda_graph = false, or CUFUSE_GRAPHS=0
// for the whole process, launches each kernel on its own instead).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

struct FuseOptions {
  bool cuda_graph = true;    // replay a plan of kernels as one CUDA graph launch (see above)
  int max_signatures = 64;   // signatures kept per function (least recently used goes first)
  std::string name = "fused function";  // in messages
};

struct FuseStats {
  uint64_t traces = 0;      // signatures traced (the callable ran)
  uint64_t replays = 0;     // calls served by a trace (including each trace's first call)
  uint64_t signatures = 0;  // signatures held now
  uint64_t graph_launches = 0;  // replays launched as a CUDA graph
};

namespace detail {

struct FuseEngine;

// One argument of a fused call: an array, or a scalar (the caller's C++ value as a Scalar).
struct FuseArg {
  const Array* array = nullptr;
  Scalar scalar;
};

// Runs the callable on traced arguments and appends its results to `out`.
using TraceThunk = void (*)(const void* fn, const FuseArg* args, std::vector<Array>& out);

std::shared_ptr<FuseEngine> new_fuse_engine(const FuseOptions& opt);
// Replays, tracing first when the signature is new. nout: the results the caller expects
// (-1: any number, returned in `dynamic`).
void fuse_call(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs, Array* out, int nout,
               std::vector<Array>* dynamic);
FuseStats fuse_stats(const FuseEngine& e);
void fuse_clear(FuseEngine& e);

template <class T>
inline constexpr bool fuse_scalar_v =
    std::is_arithmetic_v<T> || std::is_same_v<T, Scalar> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>;

template <class A>
FuseArg to_fuse_arg(const A& a) {
  using T = std::remove_cvref_t<A>;
  static_assert(std::is_same_v<T, Array> || fuse_scalar_v<T>,
                "cufuse::fuse: arguments must be cufuse::Array or scalars (arithmetic, Scalar, half, bfloat16_t)");
  FuseArg f;
  if constexpr (std::is_same_v<T, Array>) f.array = &a;
  else f.scalar = Scalar(a);
  return f;
}

// What the callable is given for an argument of type A while tracing.
template <class A>
decltype(auto) traced_arg(const FuseArg& f) {
  using T = std::remove_cvref_t<A>;
  if constexpr (std::is_same_v<T, Array>) {
    return static_cast<const Array&>(*f.array);
  } else if constexpr (std::is_same_v<T, Scalar>) {
    return Scalar(f.scalar);
  } else if constexpr (std::is_same_v<T, bool>) {
    return f.scalar.to_bool();
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(f.scalar.to_double());
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>) {
    return T(f.scalar.to_double());
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(f.scalar.to_int64());
  } else {
    return static_cast<T>(f.scalar.to_uint64());
  }
}
template <class A>
using traced_t = decltype(traced_arg<A>(std::declval<const FuseArg&>()));

// Results: Array, tuple / pair / array of Arrays, vector of Arrays.
template <class R>
struct fuse_result {
  static constexpr bool ok = false;
};
template <>
struct fuse_result<Array> {
  static constexpr bool ok = true;
  static constexpr int n = 1;
  static void collect(const Array& r, std::vector<Array>& out) { out.push_back(r); }
  static Array make(Array* a) { return std::move(a[0]); }
};
template <class... T>
struct fuse_result<std::tuple<T...>> {
  static constexpr bool ok = (std::is_same_v<std::remove_cvref_t<T>, Array> && ...);
  static constexpr int n = static_cast<int>(sizeof...(T));
  static void collect(const std::tuple<T...>& r, std::vector<Array>& out) {
    std::apply([&](const auto&... a) { (out.push_back(a), ...); }, r);
  }
  template <size_t... I>
  static std::tuple<T...> make_impl(Array* a, std::index_sequence<I...>) { return std::tuple<T...>(std::move(a[I])...); }
  static std::tuple<T...> make(Array* a) { return make_impl(a, std::index_sequence_for<T...>{}); }
};
template <>
struct fuse_result<std::pair<Array, Array>> {
  static constexpr bool ok = true;
  static constexpr int n = 2;
  static void collect(const std::pair<Array, Array>& r, std::vector<Array>& out) {
    out.push_back(r.first);
    out.push_back(r.second);
  }
  static std::pair<Array, Array> make(Array* a) { return {std::move(a[0]), std::move(a[1])}; }
};
template <size_t N>
struct fuse_result<std::array<Array, N>> {
  static constexpr bool ok = true;
  static constexpr int n = static_cast<int>(N);
  static void collect(const std::array<Array, N>& r, std::vector<Array>& out) { out.insert(out.end(), r.begin(), r.end()); }
  static std::array<Array, N> make(Array* a) {
    std::array<Array, N> r;
    for (size_t i = 0; i < N; ++i) r[i] = std::move(a[i]);
    return r;
  }
};
template <>
struct fuse_result<std::vector<Array>> {
  static constexpr bool ok = true;
  static constexpr int n = -1;
  static void collect(const std::vector<Array>& r, std::vector<Array>& out) { out.insert(out.end(), r.begin(), r.end()); }
};

template <class F, class... A>
struct fuse_call_types {
  using R = std::remove_cvref_t<std::invoke_result_t<const F&, traced_t<A>...>>;
  static_assert(fuse_result<R>::ok,
                "cufuse::fuse: the function must return a cufuse::Array, or a std::tuple / std::pair / std::array / "
                "std::vector of cufuse::Array");

  template <size_t... I>
  static void thunk_impl(const void* fn, const FuseArg* args, std::vector<Array>& out, std::index_sequence<I...>) {
    const F& f = *static_cast<const F*>(fn);
    fuse_result<R>::collect(f(traced_arg<A>(args[I])...), out);
  }
  static void thunk(const void* fn, const FuseArg* args, std::vector<Array>& out) {
    thunk_impl(fn, args, out, std::index_sequence_for<A...>{});
  }
};

}  // namespace detail

template <class F>
class Fused {
 public:
  // Copies of a Fused share its traces.
  explicit Fused(F f, FuseOptions opt = {})
      : f_(std::make_shared<F>(std::move(f))), opt_(std::move(opt)), engine_(detail::new_fuse_engine(opt_)) {}

  template <class... A>
  auto operator()(const A&... args) const {
    using Types = detail::fuse_call_types<F, A...>;
    using R = typename Types::R;
    constexpr int nargs = static_cast<int>(sizeof...(A));
    const detail::FuseArg fargs[nargs > 0 ? nargs : 1] = {detail::to_fuse_arg(args)...};
    detail::FuseEngine& e = *engine_;
    if constexpr (detail::fuse_result<R>::n < 0) {
      std::vector<Array> out;
      detail::fuse_call(e, f_.get(), &Types::thunk, fargs, nargs, nullptr, -1, &out);
      return out;
    } else {
      constexpr int n = detail::fuse_result<R>::n;
      Array out[n > 0 ? n : 1];
      detail::fuse_call(e, f_.get(), &Types::thunk, fargs, nargs, out, n, nullptr);
      return detail::fuse_result<R>::make(out);
    }
  }

  FuseStats stats() const { return detail::fuse_stats(*engine_); }
  // Drops every trace (the next call traces again).
  void clear() const { detail::fuse_clear(*engine_); }
  const FuseOptions& options() const { return opt_; }
  // internals (cufuse's own tests)
  const std::shared_ptr<detail::FuseEngine>& engine() const { return engine_; }
  const F& callable() const { return *f_; }  // cufuse::precompile (cufuse/precompile.hpp)

 private:
  std::shared_ptr<F> f_;
  FuseOptions opt_;
  std::shared_ptr<detail::FuseEngine> engine_;
};

template <class F>
Fused<std::decay_t<F>> fuse(F&& f, FuseOptions opt = {}) {
  return Fused<std::decay_t<F>>(std::forward<F>(f), std::move(opt));
}

}  // namespace cufuse
