// src/exec/realize.hpp: the materialization points the graph layer calls.
#pragma once
#include <vector>

#include "graph/node.hpp"

namespace cufuse::detail {

// Materializes the roots: each becomes a Buffer leaf (contiguous, in new memory) holding
// its value; nodes already in memory are left alone. Takes graph_mutex().
void realize(const std::vector<NodePtr>& roots);

// Computes `value` (same shape and dtype as the target) into the memory of `target`
// (a Buffer leaf with storage, any strides), without realizing `value`. First settles
// pending work that reads the target's memory, and goes through a temporary when `value`
// reads that memory other than element-for-element.
void write_into(const NodePtr& target, const NodePtr& value);

// Realizes `node` if the graph under it has grown past the budget of cufuse::Config.
void maybe_auto_eval(const NodePtr& node);

}  // namespace cufuse::detail
