// src/dist/collectives.hpp: the collectives a plan inserts, over the groups of a mesh axis
// (or axes): each takes the shards (by mesh device number) and returns the new shards,
// recording the step (NCCL's name, the axis, bytes per rank) after the shards' pending
// kernels. A collective along a dimension other than 0 is its dimension-0 form between two
// lazy rearrangements (reshape and moveaxis), so NCCL always moves contiguous buffers. The
// dimension-0 forms run on NCCL (Gpus world, nccl.hpp), on the host (Host world: the bytes
// combined by the host), or not at all (Plan world: the results are placeholders).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dist/state.hpp"

namespace cufuse::dist::detail {

struct Shards {
  std::vector<Array> arrays;         // by mesh device number
  std::vector<HistoryPtr> history;   // the steps before (the result's history replaces it)
};

// Combined over the groups of `axes`: every member gets the group's combination.
Shards allreduce(const Mesh& mesh, Shards in, const std::vector<std::string>& axes, PartialOp op, std::string why);
// The group's shards joined along `dim` (each member gets all of it).
Shards allgather(const Mesh& mesh, Shards in, const std::string& axis, int dim, std::string why);
// Combined over the group, then member r keeps part r of `dim`.
Shards reducescatter(const Mesh& mesh, Shards in, const std::string& axis, PartialOp op, int dim, std::string why);
// Member r sends part s of `split_dim` to member s and joins what it gets along `concat_dim`:
// a dimension sharded over `axis` (concat_dim) becomes whole and split_dim becomes sharded.
Shards alltoall(const Mesh& mesh, Shards in, const std::string& axis, int split_dim, int concat_dim, std::string why);

// acc = acc (op) x, element by element, as NCCL combines (halves in float, rounded; NaN
// propagating max and min): the host world's collectives and gather's host combine. Every real
// dtype and bool; a complex one is NotSupportedError.
void combine_on_host(DType t, PartialOp op, std::vector<uint8_t>& acc, const std::vector<uint8_t>& x);

}  // namespace cufuse::dist::detail
