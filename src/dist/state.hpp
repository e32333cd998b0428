// src/dist/state.hpp: what a DArray is inside (its mesh, sharding, global shape and dtype,
// one local lazy Array per mesh device, a pending partial reduction) and the history of
// steps that made it (per-shard kernels and collectives), which plan() lists.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cufuse/dist.hpp"

namespace cufuse::dist::detail {

// A recorded step and the steps it came after (a DAG: an op of two DArrays joins two histories).
struct History {
  Step step;
  std::vector<std::shared_ptr<const History>> prev;
};
using HistoryPtr = std::shared_ptr<const History>;

// Shards whose values still need a combine over mesh axes (a reduction over sharded dims),
// then a multiplication by `scale` (mean: 1 / the reduced count) where it is not 1.
struct Partial {
  PartialOp op = PartialOp::Sum;
  std::vector<std::string> axes;  // mesh axes, in mesh order
  double scale = 1.0;
};

struct DArrayState {
  Mesh mesh;
  Sharding spec;
  Shape shape;
  DType dtype = DType::Float64;
  std::vector<Array> shards;  // by mesh device number
  std::optional<Partial> partial;
  std::vector<HistoryPtr> history;  // the steps before the shards' pending work
};

DArray make_darray(const Mesh& mesh, const Sharding& spec, const Shape& shape, DType dtype, std::vector<Array> shards,
                   std::vector<HistoryPtr> history, std::optional<Partial> partial = std::nullopt);
// The histories of several operands, merged (each once).
std::vector<HistoryPtr> join_histories(const std::vector<DArray>& ds);
// A step after the given ones.
HistoryPtr record(Step step, std::vector<HistoryPtr> prev);
// The per-shard plan of the shards' pending work (shard 0 and each other local shape: SPMD,
// every shard of one shape runs the same kernels): a "kernels" step, or nullopt when nothing
// is pending.
std::optional<Step> pending_kernels(const std::vector<Array>& shards, std::string why, bool with_source = false);

}  // namespace cufuse::dist::detail
