// cufuse/precompile.hpp: compiling a function's kernels ahead of time (issue 35), so that a
// service can ship a warm kernel cache and its first calls find every kernel on disk.
//
//   auto f = cufuse::fuse([](const cufuse::Array& x, const cufuse::Array& b) { return cufuse::exp(x + b); });
//   cufuse::precompile(f, cufuse::signature(cufuse::ArgType{cufuse::f32, {4096, 4096}},
//                                           cufuse::ArgType{cufuse::f32, {4096}}));
//   auto g = [](const cufuse::Array& x) { return x / cufuse::sum(x, 1, true); };   // a lazy function
//   cufuse::precompile(g, cufuse::signature(cufuse::ArgType{cufuse::f32, {512, 1000}}));
//
// Each signature is one call's argument types: an array as ArgType (dtype and shape; the
// call's array is then contiguous and 16-byte aligned, as new arrays are), a scalar as the
// C++ value the call passes (its kind and dtype are the signature; the value is the one
// traced). precompile runs the function on placeholders (nothing is computed: no device is
// needed), plans its evaluation as the call would, and compiles every kernel of the plan
// for the arch (CUFUSE_ARCH, else the current device's, else sm_90) into the memory and
// disk caches (CUFUSE_CACHE_DIR) without running it. A fuse()'d function also keeps the
// trace, so its first call with arguments of that signature replays without tracing.
// A lazy function is planned as one evaluation of its results: work the real call adds to
// that evaluation (pending writes, other live arrays) makes another plan. Kernels that
// library calls generate at run time (convolve2d, sort) are not precompiled.
// `cufuse-dump-kernels --precompile FILE` does the same for programs in the CLI's syntax.
#pragma once
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "cufuse/array.hpp"
#include "cufuse/fuse.hpp"

namespace cufuse {

// An array argument of a precompile signature.
struct ArgType {
  DType dtype = DType::Float32;
  Shape shape;
};

// One call's argument types (ArgType for arrays, C++ scalars for scalars).
template <class... A>
struct Signature {
  std::tuple<A...> args;
};
template <class... A>
Signature<std::decay_t<A>...> signature(A&&... a) {
  return Signature<std::decay_t<A>...>{std::tuple<std::decay_t<A>...>(std::forward<A>(a)...)};
}

struct PrecompileStats {
  uint64_t signatures = 0;  // signatures planned
  uint64_t kernels = 0;     // kernels their plans launch
  uint64_t compiled = 0;    // of those, compiled by NVRTC now (and stored in the disk cache)
  uint64_t cached = 0;      // already in the memory or the disk cache
  PrecompileStats& operator+=(const PrecompileStats& o) {
    signatures += o.signatures;
    kernels += o.kernels;
    compiled += o.compiled;
    cached += o.cached;
    return *this;
  }
};

namespace detail {

PrecompileStats precompile_fused(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs,
                                 int nout);
PrecompileStats precompile_lazy(const void* fn, TraceThunk thunk, const FuseArg* args, int nargs);
Array precompile_placeholder(const ArgType& t);

// What the callable receives for a signature element: an Array for ArgType, the scalar else.
template <class S>
struct precompile_arg {
  using type = S;
  static FuseArg make(const S& s, Array&) { return to_fuse_arg(s); }
};
template <>
struct precompile_arg<ArgType> {
  using type = Array;
  static FuseArg make(const ArgType& t, Array& hold) {
    hold = precompile_placeholder(t);
    FuseArg f;
    f.array = &hold;
    return f;
  }
};

template <class T>
struct is_fused : std::false_type {};
template <class F>
struct is_fused<Fused<F>> : std::true_type {};

template <class Fn, class F, class... S>
PrecompileStats precompile_one(const Fn& fn, const F& callable, const ::cufuse::Signature<S...>& sig) {
  using Types = fuse_call_types<F, typename precompile_arg<S>::type...>;
  constexpr int nargs = static_cast<int>(sizeof...(S));
  Array hold[nargs > 0 ? nargs : 1];
  FuseArg fargs[nargs > 0 ? nargs : 1];
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((fargs[I] = precompile_arg<S>::make(std::get<I>(sig.args), hold[I])), ...);
  }(std::index_sequence_for<S...>{});
  if constexpr (is_fused<Fn>::value)
    return precompile_fused(*fn.engine(), &callable, &Types::thunk, fargs, nargs, fuse_result<typename Types::R>::n);
  else
    return precompile_lazy(&callable, &Types::thunk, fargs, nargs);
}

}  // namespace detail

// Compiles the kernels `fn` (a cufuse::fuse()'d function or a lazy function of Arrays) runs
// for each signature into the kernel caches, without running them. Errors are the ones a
// call would raise (a ValueError for shapes that do not broadcast ...); a kernel NVRTC
// rejects is a CompileError.
template <class Fn, class... Sigs>
PrecompileStats precompile(const Fn& fn, const Sigs&... sigs) {
  PrecompileStats total;
  if constexpr (std::is_function_v<Fn>) {  // a plain function: through its pointer
    Fn* const p = &fn;
    return precompile(p, sigs...);
  } else if constexpr (detail::is_fused<Fn>::value)
    ((total += detail::precompile_one(fn, fn.callable(), sigs)), ...);
  else
    ((total += detail::precompile_one(fn, fn, sigs)), ...);
  return total;
}

}  // namespace cufuse
