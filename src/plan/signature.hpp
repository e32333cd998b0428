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
  std::vector<std::pair<const Node*, int>> ids;  // leaf -> index in leaves (linear search)
  // The walk's scratch: every node seen -> its id (small graphs: linear search), and the
  // roots' ids; kept here so that a scan reused per thread allocates nothing.
  std::vector<std::pair<const Node*, int>> node_ids;
  std::vector<int> root_ids;
  std::vector<Node*> nodes;  // every node of the walk, by id (the host run maps a cached plan's groups onto them)

  void clear() {
    key.clear();
    leaves.clear();
    ids.clear();
    node_ids.clear();
    root_ids.clear();
    nodes.clear();
  }
  int leaf_index(const Node* n) const;  // -1 if not a leaf of this scan
};

bool is_aligned16(const Node* buffer_leaf);
// value_forms: record the value-dependent kernel forms (src/plan/scalar_forms.hpp) in the key;
// off only where two graphs are compared for structure alone (fuse()'s scalar detection).
void scan_graph(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets, GraphScan& out,
                bool value_forms = true);

// Four independent lanes, combined at the end: a key of a hundred entries hashes in a
// quarter of the serial chain's latency (this runs on every evaluation).
struct KeyHash {
  size_t operator()(const std::vector<int64_t>& k) const noexcept {
    uint64_t h[4] = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull, 0x9ce484222325cbf2ull, 0x2325cbf29ce48422ull};
    const size_t n = k.size(), n4 = n & ~size_t(3);
    for (size_t i = 0; i < n4; i += 4)
      for (int l = 0; l < 4; ++l) h[l] = hash_mix(h[l], static_cast<uint64_t>(k[i + l]));
    for (size_t i = n4; i < n; ++i) h[0] = hash_mix(h[0], static_cast<uint64_t>(k[i]));
    return static_cast<size_t>(hash_mix(hash_mix(hash_mix(hash_mix(n, h[0]), h[1]), h[2]), h[3]));
  }
};

}  // namespace cufuse::detail
