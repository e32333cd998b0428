// src/plan/signature.hpp: the structural key of a pending graph, computed at a
// materialization point by one walk: op, dtype, shape, strides and alignment of every node,
// the DAG's sharing, the roots and write targets; and its leaves in walk order. Two graphs
// with equal keys get the same plan and kernels, so the executor caches plans by key and
// only binds the new leaves' pointers and values on a hit.
#pragma once
#include <cstdint>
#include <vector>

#include "plan/plan.hpp"

namespace cufuse::detail {

struct GraphScan {
  std::vector<int64_t> key;
  std::vector<Node*> leaves;          // Buffer, Scalar and Generator leaves, in walk order
  std::vector<std::pair<const Node*, int>> ids;  // node -> id (small graphs: linear search)

  void clear() {
    key.clear();
    leaves.clear();
    ids.clear();
  }
  int leaf_index(const Node* n) const;  // -1 if not a leaf of this scan
};

bool is_aligned16(const Node* buffer_leaf);
void scan_graph(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets, GraphScan& out);

struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const noexcept {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t v : k) h = hash_mix(h, static_cast<uint64_t>(v));
    return static_cast<size_t>(h);
  }
};

}  // namespace cufuse::detail
