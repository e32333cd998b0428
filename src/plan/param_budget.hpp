// src/plan/param_budget.hpp: what a generated kernel's parameter struct costs, and where the
// planner cuts a subgraph so that no kernel's parameters pass CUDA's limit.
//
// A kernel's parameters live in a 32,764-byte constant bank (sm_70 and later, CUDA 12.1 and
// later); past that NVRTC fails ("Formal parameter space overflowed"). Every leaf a kernel
// reads costs a pointer and strides, every scalar its value, every view its shapes and
// strides, every output a pointer and strides. A result over thousands of distinct arrays (a
// sum of 5,000 arrays, a fuse()d function of 5,000 arguments, eval() of 5,000 results of
// one shape) would need more than that in one kernel.
//
// The estimate is an upper bound: each entry counts 16 bytes per dimension where the
// emitters (codegen/elementwise_kernel, reduction_kernel, expr_emitter) write at most 8 per
// stride array, plus room for their fixed parameters. Shared leaves count once: a node's
// entries are a set (a leaf read by a thousand ops of one kernel is one pointer).
//
// Rule param-space (plan.hpp): walking the graph inputs first, a node whose kernel would
// need more than the budget has its costliest inputs cut, largest first, until it fits: a
// cut node is written to memory by a kernel of its own and read back as one pointer.
#pragma once
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// CUDA's limit on a kernel's parameters, and what the estimate of one kernel may reach.
constexpr int64_t kKernelParamLimit = 32764;
constexpr int64_t kParamBudget = kKernelParamLimit - 4096;

// One node's share of a kernel's parameters: a leaf or a node read from memory, a view's
// shapes and strides, a reduction's sizes and workspace pointers.
struct ParamEntry {
  const Node* n;
  int32_t cost;
};
// Sorted by node, each node once.
using ParamSet = std::vector<ParamEntry>;

int64_t param_cost(const ParamSet& s);
// The cost of a ∪ b, without making it.
int64_t union_cost(const ParamSet& a, const ParamSet& b);
void merge_into(ParamSet& acc, const ParamSet& s);
// An output written by a kernel: its pointer and strides.
int64_t output_param_cost(const Node& n);

class ParamBudget {
 public:
  // `topo`: the pending graph, inputs before their users. `keep`: nodes whose sets the
  // planner asks for later (roots, reductions, library inputs, other rules' cuts); every cut
  // node's set is kept too. `in_memory`: nodes another rule already writes to memory (rule
  // kernel-size's cuts): read as one pointer.
  ParamBudget(const std::vector<NodePtr>& topo, const std::unordered_set<const Node*>& keep,
              const std::function<bool(const Node*)>& in_memory = {});

  bool is_cut(const Node* n) const { return cut_.count(n) != 0; }
  bool any_cut() const { return !cuts_.empty(); }
  // The cut nodes, inputs before users.
  const std::vector<NodePtr>& cuts() const { return cuts_; }
  // What computing n inline puts in a kernel (a cut node too: its own kernel's set).
  const ParamSet& set_of(const Node* n) const;

 private:
  std::unordered_map<const Node*, ParamSet> sets_;
  std::unordered_set<const Node*> cut_;
  std::vector<NodePtr> cuts_;
};

}  // namespace cufuse::detail
