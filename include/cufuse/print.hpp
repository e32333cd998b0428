// cufuse/print.hpp: printing arrays as NumPy's repr does.
//
//   std::cout << cf::array({{1.f, 2.f}, {3.f, 4.f}});
//   array([[1., 2.],
//          [3., 4.]], dtype=float32)
//
// NumPy 2's rules (numpy/_core/arrayprint.py, default options): floats in the shortest form
// that round-trips in their own dtype, at most `precision` (8) fractional digits, aligned on
// the decimal point, trailing zeros dropped; scientific notation when a non-zero magnitude is
// below 1e-4 or at least 1e8, or the largest is more than 1000 times the smallest; nan and
// inf; lines wrapped at 75 columns; past `threshold` (1000) elements only `edgeitems` (3) at
// each end of every axis, with "..." and a shape=(...) note; dtype= unless the dtype is
// float64, int64 or bool (and always for an empty array). bfloat16 prints as ml_dtypes'
// does (each value as C's %g). Printing materializes the array and reads back only what is
// shown (the edges of a summarised one).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

#include "cufuse/array.hpp"

namespace cufuse {

struct PrintOptions {
  int precision = 8;          // at most this many fractional digits
  int64_t threshold = 1000;   // summarise past this many elements
  int64_t edgeitems = 3;      // elements shown at each end of a summarised axis
  int linewidth = 75;
};

// NumPy's repr(a) (array_repr) and str(a) (array_str: no "array(" and no dtype).
std::string array_repr(const Array& a, const PrintOptions& opt = {});
std::string array_str(const Array& a, const PrintOptions& opt = {});
std::string to_string(const Array& a);  // array_repr
std::ostream& operator<<(std::ostream& os, const Array& a);  // array_repr

}  // namespace cufuse

// fmt::format("{}", a) gives array_repr(a) where {fmt} is available (define
// CUFUSE_NO_FMT_FORMATTER to leave it out).
#if !defined(CUFUSE_NO_FMT_FORMATTER) && defined(__has_include)
#if __has_include(<fmt/format.h>)
#include <fmt/format.h>
template <>
struct fmt::formatter<cufuse::Array> : fmt::formatter<fmt::string_view> {
  template <class FormatContext>
  auto format(const cufuse::Array& a, FormatContext& ctx) const {
    const std::string s = cufuse::array_repr(a);
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s), ctx);
  }
};
#endif
#endif
