// src/core/slice_bounds.hpp: basic indexing's shared rules, one copy for Array::index
// (graph/array.cpp) and the DArray views (dist/select.cpp): how many dimensions an index
// consumes (IndexError for two ellipses or too many indices), and a Slice (start:stop:step)
// resolved against an axis of n elements as Python's PySlice_AdjustIndices: the first index,
// the step and the number of elements (ValueError for a zero step).
#pragma once
#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "cufuse/array.hpp"
#include "cufuse/error.hpp"

namespace cufuse::detail {

// The dimensions `idx` consumes (integers and slices) of an array of nd dimensions.
inline int consumed_dims(const std::vector<Index>& idx, int nd) {
  int consumed = 0, ellipses = 0;
  for (const auto& i : idx) {
    const auto& v = i.get();
    if (std::holds_alternative<int64_t>(v) || std::holds_alternative<Slice>(v)) ++consumed;
    if (std::holds_alternative<EllipsisT>(v)) ++ellipses;
  }
  if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
  if (consumed > nd)
    throw IndexError(fmt::format("too many indices for array: array is {}-dimensional, but {} were indexed", nd,
                                 consumed));
  return consumed;
}

struct SliceBounds {
  int64_t start = 0, step = 1, len = 0;
};

inline SliceBounds slice_bounds(const Slice& s, int64_t n) {
  if (s.step == 0) throw ValueError("slice step cannot be zero");
  const int64_t step = s.step;
  int64_t start, stop;
  if (!s.start) start = step < 0 ? n - 1 : 0;
  else {
    start = *s.start;
    if (start < 0) start = std::max<int64_t>(start + n, step < 0 ? -1 : 0);
    else if (start >= n) start = step < 0 ? n - 1 : n;
  }
  if (!s.stop) stop = step < 0 ? -1 : n;
  else {
    stop = *s.stop;
    if (stop < 0) stop = std::max<int64_t>(stop + n, step < 0 ? -1 : 0);
    else if (stop >= n) stop = step < 0 ? n - 1 : n;
  }
  int64_t len = 0;
  if (step < 0) {
    // |step| as unsigned: step may be INT64_MIN (x[::-2**63]), whose negation overflows.
    if (stop < start) len = int64_t(uint64_t(start - stop - 1) / (0 - uint64_t(step)) + 1);
  } else if (start < stop) {
    len = (stop - start - 1) / step + 1;
  }
  return SliceBounds{start, step, len};
}

}  // namespace cufuse::detail
