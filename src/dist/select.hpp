// src/dist/select.hpp: NumPy's basic indexing (integers, slices, newaxis, ellipsis) resolved
// against a global shape, and where each device's shard holds part of a selection: per
// sharded dimension the local strided slice and the positions of the selection it covers.
// Shared by the views (views.cpp) and the writes (writes.cpp) of DArrays.
#pragma once
#include <vector>

#include "cufuse/dist.hpp"

namespace cufuse::dist::detail {

// One input dimension's selection: elements start + step * j for j < len; `dropped`: an
// integer index (len 1, the dimension leaves the result).
struct DimSel {
  int64_t start = 0, step = 1, len = 0;
  bool dropped = false;
  bool whole(int64_t n) const { return !dropped && start == 0 && step == 1 && len == n; }
};
struct Selection {
  std::vector<DimSel> dims;      // per input dimension
  std::vector<int> out_of;       // per output dimension: its input dimension, or -1 (newaxis)
  Shape out_shape;               // the selection's shape (NumPy's x[idx].shape)
};
// IndexError / ValueError as NumPy; NotSupportedError for integer or bool arrays.
Selection resolve(const Shape& shape, const std::vector<Index>& idx, const char* what);

// The part of a dimension's selection in the block [lo, lo + n) of a shard: the positions
// j in [j0, j1) of the selection, at local indices first, first + step, ... .
struct LocalPart {
  int64_t j0 = 0, j1 = 0, first = 0;
  int64_t count() const { return j1 - j0; }
};
LocalPart local_part(const DimSel& s, int64_t lo, int64_t n);
// The local slice (step s.step) of a part; an empty slice when the part is empty.
Slice local_slice(const DimSel& s, const LocalPart& p);
// Whether a sharded dimension's selection falls shard by shard on its k shards of n/k:
// kept (not an integer), len divisible by k, and part r of the selection in shard r.
bool aligned(const DimSel& s, int64_t n, int k);

}  // namespace cufuse::dist::detail
