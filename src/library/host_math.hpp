// src/library/host_math.hpp: float64 views of the reference evaluator's HostArrays for the
// host references of src/library (GEMM loops, LU, QR, Jacobi SVD/eigh).
#pragma once
#include <cstring>
#include <vector>

#include "reference/evaluator.hpp"
#include "reference/host_data.hpp"

namespace cufuse::detail {

inline std::vector<double> to_doubles(const HostArray& a) {
  std::vector<double> v(static_cast<size_t>(a.size()));
  for (int64_t i = 0; i < a.size(); ++i) v[i] = a.get_double(i);
  return v;
}

// Stores float64 values into a (pre-shaped) HostArray of any dtype: rounded once to a half
// type, converted as C does to an integer type.
inline void from_doubles(HostArray& a, const std::vector<double>& v) {
  const int64_t n = a.size();
  if (a.dtype == DType::Float16 || a.dtype == DType::BFloat16) {
    ref::f64_to_half_storage(a.dtype, v.data(), a.data<uint16_t>(), n);
    return;
  }
  ref::with_storage_type(a.dtype, [&](auto tg) {
    using S = typename decltype(tg)::type;
    S* out = a.data<S>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_same_v<S, uint8_t>) {
        if (a.dtype == DType::Bool) { out[i] = v[i] != 0; continue; }
      }
      out[i] = static_cast<S>(v[i]);
    }
  });
}

}  // namespace cufuse::detail
