// src/library/host_math.hpp: float64 (and complex double) views of the reference evaluator's
// HostArrays for the host references of src/library (GEMM loops, LU, QR, Jacobi SVD/eigh).
#pragma once
#include <complex>
#include <cstring>
#include <type_traits>
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

// Complex double values of a HostArray: a complex array's pairs, any other dtype's values
// (as to_doubles reads them) with a zero imaginary part.
inline std::vector<std::complex<double>> to_complexes(const HostArray& a) {
  const int64_t n = a.size();
  std::vector<std::complex<double>> v(static_cast<size_t>(n));
  if (a.dtype == DType::Complex64) {
    const float* p = reinterpret_cast<const float*>(a.data<ref::c64_t>());
    for (int64_t i = 0; i < n; ++i) v[i] = {p[2 * i], p[2 * i + 1]};
  } else if (a.dtype == DType::Complex128) {
    const double* p = reinterpret_cast<const double*>(a.data<ref::c128_t>());
    for (int64_t i = 0; i < n; ++i) v[i] = {p[2 * i], p[2 * i + 1]};
  } else {
    for (int64_t i = 0; i < n; ++i) v[i] = a.get_double(i);
  }
  return v;
}

// Stores complex double values into a (pre-shaped) HostArray: a complex dtype rounds each
// part once; any other dtype takes the real parts (from_doubles).
inline void from_complexes(HostArray& a, const std::vector<std::complex<double>>& v) {
  const int64_t n = a.size();
  if (a.dtype == DType::Complex64) {
    float* p = reinterpret_cast<float*>(a.data<ref::c64_t>());
    for (int64_t i = 0; i < n; ++i) {
      p[2 * i] = static_cast<float>(v[i].real());
      p[2 * i + 1] = static_cast<float>(v[i].imag());
    }
  } else if (a.dtype == DType::Complex128) {
    double* p = reinterpret_cast<double*>(a.data<ref::c128_t>());
    for (int64_t i = 0; i < n; ++i) {
      p[2 * i] = v[i].real();
      p[2 * i + 1] = v[i].imag();
    }
  } else {
    std::vector<double> re(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) re[i] = v[i].real();
    from_doubles(a, re);
  }
}

// The host references' element type for a dtype's values: double, or complex double.
template <class T> inline std::vector<T> to_values(const HostArray& a) {
  if constexpr (std::is_same_v<T, double>) return to_doubles(a);
  else return to_complexes(a);
}
template <class T> inline void from_values(HostArray& a, const std::vector<T>& v) {
  if constexpr (std::is_same_v<T, double>) from_doubles(a, v);
  else from_complexes(a, v);
}

}  // namespace cufuse::detail
