// src/graph/statistics_support.hpp: what the statistics functions (cufuse/statistics.hpp;
// src/graph/statistics_*.cpp, histogram*.cpp) share: NumPy's asanyarray of an operand and a
// slice along one axis.
#pragma once
#include "cufuse/array.hpp"

namespace cufuse::detail {

// np.asanyarray: an array as is, a scalar as a 0-d array of its dtype (a C++ integer int64,
// a floating-point number float64, as NumPy makes Python's).
Array as_array(const Operand& o);
// a[..., s, ...] with the slice s at `axis` (a normalized axis) and ':' elsewhere.
Array along(const Array& a, int axis, Slice s);

}  // namespace cufuse::detail
