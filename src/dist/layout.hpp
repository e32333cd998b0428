// src/dist/layout.hpp: where each mesh device's shard sits in the global array (even
// shards: a sharded dimension divides by its axis), slicing a global or replicated array to
// a shard, and the groups of devices a collective over some mesh axes runs in.
#pragma once
#include <string_view>
#include <utility>
#include <vector>

#include "cufuse/dist.hpp"

namespace cufuse::dist::detail {

// ValueError: a spec of another rank, an axis the mesh does not have or named twice, a
// dimension its axis does not divide. `what` names the caller.
void check_spec(const Mesh& mesh, const Sharding& spec, const Shape& shape, std::string_view what);
Shape local_shape(const Mesh& mesh, const Sharding& spec, const Shape& shape);
// Per dimension, [start, stop) of the global array that the device's shard holds.
std::vector<std::pair<int64_t, int64_t>> local_range(const Mesh& mesh, const Sharding& spec, const Shape& shape,
                                                     int device);
// a (whose dims `ranges` index) cut to the ranges: a view, no copy.
Array slice_to(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& ranges);
// Devices grouped for a collective over the mesh axes `axes`: one group per coordinate of the
// other axes, each ordered row-major over `axes` (its rank order).
std::vector<std::vector<int>> groups_over(const Mesh& mesh, const std::vector<std::string>& axes);
// The product of the axes' sizes.
int ranks_over(const Mesh& mesh, const std::vector<std::string>& axes);

}  // namespace cufuse::dist::detail
