// src/reference/eval_generators.cpp: Generator leaves (arange, linspace, random) on the host,
// through the same codegen/device_helpers.inc functions the kernels call.
//
// Each element's position is pos = layout.offset + sum(idx * strides), and its value is
// the formula at pos, as src/core/node.hpp's GenParams comment defines it:
//
//   Arange: first = start (float dtypes) or istart (integer and bool dtypes), second = step
//       or istep_second: the FIRST and SECOND values, already values of the dtype (the graph
//       converted them as NumPy's arange does). cf_arange<C>(pos, C(first), C(second)) in
//       the compute type C (float for float16/bfloat16, as NumPy's HALF_fill and
//       ml_dtypes' fill compute in float), then rounded to the dtype.
//   Linspace: v = cf_linspace(pos, start, step, stop, last) in float64, last = num - 1 when
//       endpoint and num > 1, else -1 (no point pinned to stop). Integer dtypes take
//       floor(v) (NumPy 2's linspace floors), then the saturating cast; bool takes v != 0;
//       float dtypes take v rounded once from double (NumPy's y.astype(dtype)).
//   RandomUniform: cf_random_uniform<C>(seed, pos + counter, low = start, high = stop).
//   RandomNormal:  cf_random_normal<C>(seed, pos + counter, mean = start, sd = stop).
//       C = float for float16/bfloat16/float32 (rounded to the half type after), double
//       for float64. Random generators of non-float dtypes are refused (NotSupportedError).
#include <cmath>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "codegen/host_helpers.hpp"
#include "reference/eval_nodes.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail::ref {

namespace {

// Fills out (t's storage) with f(pos) computed in t's compute type.
template <class F>
void fill_by_position(const Node& n, HostArray& out, F&& f) {
  with_compute_type(n.dtype, [&](auto tc) {
    using C = typename decltype(tc)::type;
    using Held = std::conditional_t<std::is_same_v<C, bool>, uint8_t, C>;  // no vector<bool>
    std::vector<Held> vals(static_cast<size_t>(out.size()));
    for_each_run(n.layout, [&](int64_t i, int64_t pos, int64_t stride, int64_t len) {
      for (int64_t k = 0; k < len; ++k) vals[i + k] = static_cast<Held>(f(tag<C>{}, pos + k * stride));
    });
    if constexpr (std::is_same_v<C, bool>)
      std::memcpy(out.bytes.data(), vals.data(), vals.size());  // 0/1 bytes
    else
      compute_to_storage(n.dtype, vals.data(), out.bytes.data(), out.size());
  });
}

void fill_arange(const Node& n, HostArray& out) {
  const GenParams& g = n.gen;
  if (is_float(n.dtype)) {
    fill_by_position(n, out, [&](auto tc, int64_t pos) {
      using C = typename decltype(tc)::type;
      return ref_kern::cf_arange<C>(pos, static_cast<C>(g.start), static_cast<C>(g.step));
    });
  } else {
    const long long first = g.istart, second = g.istep_second;
    fill_by_position(n, out, [&](auto tc, int64_t pos) {
      using C = typename decltype(tc)::type;
      return ref_kern::cf_arange<C>(pos, ref_kern::cf_cast<C>(first), ref_kern::cf_cast<C>(second));
    });
  }
}

void fill_linspace(const Node& n, HostArray& out) {
  const GenParams& g = n.gen;
  const long long last = (g.endpoint && g.num > 1) ? g.num - 1 : -1;
  std::vector<double> vals(static_cast<size_t>(out.size()));
  for_each_run(n.layout, [&](int64_t i, int64_t pos, int64_t stride, int64_t len) {
    for (int64_t k = 0; k < len; ++k) vals[i + k] = ref_kern::cf_linspace(pos + k * stride, g.start, g.step, g.stop, last);
  });
  if (is_half(n.dtype)) {
    f64_to_half_storage(n.dtype, vals.data(), out.data<uint16_t>(), out.size());
    return;
  }
  if (is_integer(n.dtype))
    for (auto& v : vals) v = std::floor(v);
  // Compute and storage representations agree for the other dtypes (bool's too: 0/1).
  to_compute(DType::Float64, vals.data(), n.dtype, out.bytes.data(), out.size());
}

template <bool Normal>
void fill_random(const Node& n, HostArray& out) {
  if (!is_float(n.dtype))
    throw NotSupportedError(fmt::format("reference evaluator: random {} generators make float dtypes; got {}",
                                        Normal ? "normal" : "uniform", name(n.dtype)));
  const GenParams& g = n.gen;
  fill_by_position(n, out, [&](auto tc, int64_t pos) {
    using C = typename decltype(tc)::type;
    if constexpr (std::is_floating_point_v<C>) {
      const unsigned long long ctr = static_cast<unsigned long long>(pos) + g.counter;
      if constexpr (Normal)
        return ref_kern::cf_random_normal<C>(g.seed, ctr, static_cast<C>(g.start), static_cast<C>(g.stop));
      else
        return ref_kern::cf_random_uniform<C>(g.seed, ctr, static_cast<C>(g.start), static_cast<C>(g.stop));
    } else {
      return C{};
    }
  });
}

// integers, poisson and permutation: integer values, computed in the dtype's compute type.
void fill_random_int(const Node& n, HostArray& out) {
  const GenParams& g = n.gen;
  const auto kind = static_cast<GenKind>(n.op);
  if (is_float(n.dtype) && kind != GenKind::RandomExponential)
    throw NotSupportedError(fmt::format("reference evaluator: random {} makes integers; got {}", gen_name(kind), name(n.dtype)));
  fill_by_position(n, out, [&](auto tc, int64_t pos) {
    using C = typename decltype(tc)::type;
    const unsigned long long ctr = static_cast<unsigned long long>(pos) + g.counter;
    if constexpr (std::is_floating_point_v<C>) {
      return ref_kern::cf_random_exponential<C>(g.seed, ctr, static_cast<C>(g.start));
    } else {
      switch (kind) {
        case GenKind::RandomIntegers:
          return ref_kern::cf_random_integers<C>(g.seed, ctr, g.istart, static_cast<unsigned long long>(g.istep_second));
        case GenKind::RandomPoisson: return ref_kern::cf_random_poisson<C>(g.seed, ctr, g.start);
        default:
          return static_cast<C>(ref_kern::cf_feistel(pos, g.num, ref_kern::cf_mix64(g.seed ^ ref_kern::cf_mix64(g.counter))));
      }
    }
  });
}

}  // namespace

HostArray eval_generator(const Node& n) {
  HostArray out = make_host_array(n.dtype, n.shape());
  if (out.size() == 0) return out;
  switch (static_cast<GenKind>(n.op)) {
    case GenKind::Arange: fill_arange(n, out); break;
    case GenKind::Linspace: fill_linspace(n, out); break;
    case GenKind::RandomUniform: fill_random<false>(n, out); break;
    case GenKind::RandomNormal: fill_random<true>(n, out); break;
    case GenKind::RandomIntegers:
    case GenKind::RandomExponential:
    case GenKind::RandomPoisson:
    case GenKind::RandomPermutation: fill_random_int(n, out); break;
    default:
      throw InternalError(fmt::format("reference evaluator: unknown generator kind {}", n.op));
  }
  return out;
}

}  // namespace cufuse::detail::ref
