// src/plan/kernel_size.hpp: rule kernel-size (plan.hpp): how many ops a generated kernel
// computes, and where the planner cuts a subgraph so that no kernel's code passes a size
// NVRTC compiles in reasonable time.
//
// A kernel computes every elementwise op and view under its results inline, each once
// (a node read by several others is one value). A long program over one iteration space
// (hundreds of statements) is one kernel; a chain of 100,000 ops would be one function of
// 100,000 statements, which NVRTC takes minutes over (its time grows faster than the code:
// the table in kernel_size.cpp). Past max_kernel_ops() ops, work is cut out and written to
// memory by a kernel of its own, as rule param-space cuts (param_budget.hpp).
//
// The count of a node is the set of ops its value computes inline (itself, and its inputs'
// sets: shared ops count once; a leaf, a library result, a reduction's result, or a node
// already cut counts none). A reduction's own set holds its prologue; the planner adds up
// the sets of a group's members (reductions, epilogues, row results) and starts another
// group where they would pass the limit. Walking the graph inputs first, a node whose set
// would pass the limit has its inputs cut, largest set first, until it fits.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// The most ops one kernel computes: CUFUSE_MAX_KERNEL_OPS (runtime/env.cpp), else kMaxKernelOps.
constexpr int64_t kMaxKernelOps = 1024;
int64_t max_kernel_ops();

// The ops a node computes inline, by their place in the planner's topological order
// (sorted, each once).
using OpSet = std::vector<int32_t>;
int64_t union_size(const OpSet& a, const OpSet& b);
void merge_into(OpSet& acc, const OpSet& s);

class OpBudget {
 public:
  // `topo`: the pending graph, inputs before their users. `keep`: nodes whose sets the
  // planner asks for later (roots, reductions, library inputs); every cut node's set is kept
  // too.
  OpBudget(const std::vector<NodePtr>& topo, const std::unordered_set<const Node*>& keep);

  // True when no kernel of this graph can pass the limit (then nothing is counted).
  bool small() const { return small_; }
  bool is_cut(const Node* n) const { return cut_.count(n) != 0; }
  bool any_cut() const { return !cuts_.empty(); }
  // The cut nodes, inputs before users.
  const std::vector<NodePtr>& cuts() const { return cuts_; }
  // The ops computing n inline puts in a kernel (a cut node too: its own kernel's set). A set
  // not kept (a node another rule cuts later: param-space) is made again from the graph.
  const OpSet& set_of(const Node* n);

 private:
  bool small_ = true;
  std::unordered_map<const Node*, int32_t> index_;  // place in the topological order
  std::unordered_map<const Node*, OpSet> sets_;
  std::unordered_set<const Node*> cut_;
  std::vector<NodePtr> cuts_;
};

}  // namespace cufuse::detail
