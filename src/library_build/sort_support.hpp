// src/library_build/sort_support.hpp: what sorting.cpp, sets.cpp and quantiles.cpp share: one
// sort node along an axis (library/sort_call.hpp) and the argument checks with NumPy's messages.
#pragma once
#include <optional>

#include "cufuse/array.hpp"

namespace cufuse::detail {

struct Sorted {
  Array values, indices;  // those asked for, a's shape (indices int64)
};
// Sorts `a` along `axis` (already normalized): the axis is moved last and the rest flattened
// into rows for one sort node; the results are seen back in a's layout.
Sorted sort_along(const Array& a, int axis, bool values, bool indices, const char* what);
// NumPy's axis handling of sort-like functions: std::nullopt flattens a; else the axis is
// normalized (IndexError "axis 2 is out of bounds for array of dimension 2").
std::pair<Array, int> sort_axis(const Array& a, std::optional<int> axis, const char* what);
// Throws ValueError when the handle is empty.
void require_defined(const Array& a, const char* what);

}  // namespace cufuse::detail
