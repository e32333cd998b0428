// src/graph/manip_support.hpp: what the joining and rearranging functions share
// (src/graph/manipulation.cpp, manipulation_maps.cpp): axis checks with NumPy's messages,
// the coordinate iota, and an array seen through an index map.
#pragma once
#include <memory>

#include "cufuse/array.hpp"
#include "graph/index_map.hpp"

namespace cufuse::detail {

// NumPy's normalize_axis_index: IndexError "axis 2 is out of bounds for array of dimension 2"
// (NumPy's AxisError is an IndexError and a ValueError; cufuse raises IndexError).
int manip_axis(int axis, int ndim, const char* what);
// The index along `axis` of each element of `shape` (an int64 arange seen with stride 1 along
// that axis and 0 along the others: no memory, computed in the kernel). Its generator carries
// kJoinCoordinateSeed (an Arange has no use for a seed), so that only the comparisons of the
// joins and pads made here take the part-bound form (plan/scalar_forms.hpp, rule
// block-partitioned-parts): a user's `where(arange(n) < i, a, b)` in a loop over i keeps one
// plan for every i, its bound a kernel parameter.
Array coordinate(const Shape& shape, int axis);
inline constexpr uint64_t kJoinCoordinateSeed = 0x6a6f696e2d636f6fULL;  // "join-coo"
// True for the generator coordinate() makes (or a view of one that kept its parameters).
bool is_join_coordinate(const Node& n);
// The array's node as a view of it would take it (a view of a lazy base rebound, a pending
// strided write carried out first).
NodePtr node_for_view(const Array& a);
// `a` seen through `map` as an array of shape `out` (src/graph/index_map.hpp).
Array mapped(const Array& a, const Shape& out, const IndexMap& map);
// A map of rank nd, every axis Identity with n = the extent of `in`.
IndexMap identity_map(const Shape& in);
// A lazy array of `shape` filled with zeros of dtype t (for empty results).
Array empty_result(const Shape& shape, DType t);

}  // namespace cufuse::detail
