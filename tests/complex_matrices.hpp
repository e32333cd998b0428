// tests/complex_matrices.hpp: row-major complex double matrices on the host for the complex
// linalg tests (tests/test_complex_linalg.cpp, tests/gpu/test_complex_linalg_gpu.cpp): product,
// conjugate transpose, identity, largest difference, a slice.
#pragma once
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

namespace complex_matrices {

using c128 = std::complex<double>;
using CVec = std::vector<c128>;

// (r x k) @ (k x c) of the matrices starting at oa / ob.
inline CVec mm(const CVec& a, const CVec& b, int64_t r, int64_t k, int64_t c, int64_t oa = 0, int64_t ob = 0) {
  CVec o(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < c; ++j) o[i * c + j] += a[oa + i * k + l] * b[ob + l * c + j];
  return o;
}
// The conjugate transpose of the (r x c) matrix at off.
inline CVec ht(const CVec& a, int64_t r, int64_t c, int64_t off = 0) {
  CVec o(static_cast<size_t>(r * c));
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) o[j * r + i] = std::conj(a[off + i * c + j]);
  return o;
}
inline CVec eye(int64_t n) {
  CVec o(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) o[i * n + i] = 1;
  return o;
}
inline double max_diff(const CVec& a, const CVec& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}
inline CVec part(const CVec& v, int64_t off, int64_t n) { return CVec(v.begin() + off, v.begin() + off + n); }

}  // namespace complex_matrices
