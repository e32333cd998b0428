// tests/sorting_test_values.hpp: what the sorting tests share (tests/test_sorting*.cpp): a float64
// array from a list, and equality of float results as NumPy's sorted values compare (NaN equal
// to NaN, -0.0 to 0.0, within `tol`).
#pragma once
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <cufuse/cufuse.hpp>

namespace sorting_test_values {

inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

inline cufuse::Array darr(std::vector<double> v, std::optional<cufuse::Shape> s = std::nullopt) {
  return cufuse::from_host(v, s);
}

inline bool same_values(const std::vector<double>& a, const std::vector<double>& b, double tol = 0) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || std::fabs(a[i] - b[i]) <= tol || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace sorting_test_values
