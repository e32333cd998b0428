// src/graph/size_check.cpp: see size_check.hpp.
#include "graph/size_check.hpp"

#include <cstddef>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

void check_size(const Shape& shape, int64_t itemsize, std::string_view what) {
  int64_t n = itemsize;
  bool big = false;
  for (auto d : shape) {
    if (d < 0) throw ValueError(fmt::format("{}: negative dimensions are not allowed (shape {})", what, to_string(shape)));
    if (!big && __builtin_mul_overflow(n, d, &n)) big = true;
  }
  // a zero dimension makes any product 0 (NumPy allows (0, 2^62, 2^62))
  for (auto d : shape)
    if (d == 0) return;
  if (big || n > static_cast<int64_t>(PTRDIFF_MAX))
    throw ValueError(fmt::format("{}: array is too big; shape {} of {}-byte elements is more than {} bytes", what,
                                 to_string(shape), itemsize, static_cast<int64_t>(PTRDIFF_MAX)));
}

void check_count(int64_t count, int64_t itemsize, std::string_view what) {
  Shape s;
  s.push_back(count);
  check_size(s, itemsize, what);
}

}  // namespace cufuse::detail
