// src/graph/print_format.hpp: NumPy's text forms of array elements, on host values read back
// from an array: the per-array element formatters of numpy/_core/arrayprint.py (FloatingFormat,
// IntegerFormat, BoolFormat; ml_dtypes' %g for bfloat16) and the str() of one scalar.
// print.cpp lays the formatted elements out; testing.cpp uses the scalar forms in its messages.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cufuse/dtype.hpp"

namespace cufuse::detail {

// Host values of one array, row-major, as read back: floats widened to double (exact for every
// float dtype), integers to int64/uint64, bool as 0/1.
struct HostValues {
  DType dtype = DType::Float64;
  std::vector<double> f;   // floats; a complex value's real part
  std::vector<double> fi;  // a complex value's imaginary part
  std::vector<int64_t> i;
  std::vector<uint64_t> u;
  int64_t size() const;
  void resize(int64_t n);
  // Element k of raw storage `bytes` of dtype `dtype` into slot `at`.
  void set_from_raw(int64_t at, const unsigned char* bytes, int64_t k);
};

// The element formatter NumPy picks for these values (all of them: NumPy decides on the shown
// elements only), given the precision; returns a function formatting element k.
std::function<std::string(int64_t)> element_formatter(const HostValues& v, int precision, bool zero_d);

// str() of element k as a NumPy scalar prints it: 5.0, 1e-05, nan, 3, True (bfloat16: %g).
std::string scalar_str(const HostValues& v, int64_t k);

}  // namespace cufuse::detail
