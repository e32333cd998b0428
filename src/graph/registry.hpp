// src/graph/registry.hpp: the pending roots: unrealized nodes that an Array handle holds.
// A write into memory settles the pending roots that read it, so every lazy expression
// sees the values its inputs had when it was written.
#pragma once
#include <vector>

#include "graph/node.hpp"

namespace cufuse::detail {

void register_root(const NodePtr& n);  // called when an Array first holds an unrealized node
// Live, unrealized roots held by an Array whose graph reads `storage`.
std::vector<NodePtr> pending_roots_reading(const Storage* storage);

}  // namespace cufuse::detail
