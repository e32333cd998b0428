// src/reference/op_reference.cpp: the host reference of each op (see op_reference.hpp): the
// row's expression compiled on the host with the helpers of codegen/device_helpers.inc
// (through codegen/host_helpers.hpp), so sin(a) on a float calls the float function, as in CUDA.
#include "reference/op_reference.hpp"

#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "codegen/bytecode_ops.hpp"
#include "codegen/host_helpers.hpp"
#include "cufuse/error.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail {

// The helpers, compiled for the host (sin(a) on a float calls the float function, as in CUDA).
namespace kern = ref_kern;
// The compute types each row is instantiated for, as the interpreter's (codegen/bytecode_ops.hpp).
using bc::bool_result;
using bc::compute_mask;

namespace {

template <class T>
constexpr uint8_t kind_bit() {
  if constexpr (std::is_same_v<T, bool>) return kKB;
  else if constexpr (ref::is_cplx_v<T>) return kKC;
  else if constexpr (std::is_floating_point_v<T>) return kKF;
  else if constexpr (std::is_signed_v<T>) return kKI;
  else return kKU;
}

constexpr bool real_result(TypeRule r) { return r == TypeRule::Real || r == TypeRule::FloatReal; }

template <class L, TypeRule Rule, uint8_t CMask, int Arity>
void ref_impl(DType compute, DType result, const void* const* in, void* out, int64_t n) {
  bool done = false;
  ref::with_compute_type(compute, [&](auto tg) {
    using T = typename decltype(tg)::type;
    if constexpr ((CMask & kind_bit<T>()) != 0) {
      using R = std::conditional_t<bool_result(Rule), bool, std::conditional_t<real_result(Rule), ref::real_of_t<T>, T>>;
      using A = std::conditional_t<Rule == TypeRule::Where, bool, T>;
      const A* a = static_cast<const A*>(in[0]);
      const T* b = static_cast<const T*>(Arity > 1 ? in[1] : in[0]);
      const T* c = static_cast<const T*>(Arity > 2 ? in[2] : in[0]);
      R* o = static_cast<R*>(out);
      L f{};
      for (int64_t i = 0; i < n; ++i) o[i] = f.template operator()<R, A, T>(a[i], b[i], c[i]);
      done = true;
    }
  });
  if (!done) throw InternalError(fmt::format("reference: op has no {} loop", name(compute)));
}

void ref_cast(DType compute, DType result, const void* const* in, void* out, int64_t n) {
  ref::with_compute_type(compute, [&](auto tf) {
    using F = typename decltype(tf)::type;
    ref::with_compute_type(result, [&](auto tt) {
      using R = typename decltype(tt)::type;
      const F* a = static_cast<const F*>(in[0]);
      R* o = static_cast<R*>(out);
      for (int64_t i = 0; i < n; ++i) o[i] = kern::cf_cast<R>(a[i]);
    });
  });
}

// The expression's lambda: a, b, c as the row's types, R the result type.
#define CUFUSE_LAMBDA(...)                                                          \
  decltype([]<class R, class A, class T>(A a, [[maybe_unused]] T b, [[maybe_unused]] T c) { \
    using namespace kern;                                                           \
    return static_cast<R>(__VA_ARGS__);                                             \
  })

#define CUFUSE_REF(id, nm, sym, sig, rule, acc, b8, prec, ...)                                    \
  TypeRule::rule == TypeRule::Cast                                                                \
      ? &ref_cast                                                                                 \
      : &ref_impl<CUFUSE_LAMBDA(__VA_ARGS__), TypeRule::rule, compute_mask(TypeRule::rule, acc, b8), \
                  sig_arity(Sig::sig)>,

// (Cast's row also instantiates ref_impl, with R = T; only ref_cast is used for it.)
const RefFn kRefs[] = {CUFUSE_ELEMENTWISE_OPS(CUFUSE_REF)};

}  // namespace

RefFn op_reference(Op op) { return kRefs[static_cast<int>(op)]; }

}  // namespace cufuse::detail
