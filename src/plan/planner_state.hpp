// src/plan/planner_state.hpp: the planner's working state, shared by the files of its rule
// families (private to src/plan). planner.cpp drives a plan: collect the graph, place
// reductions, scans and calls, place the results, materialize what other groups read,
// order the groups. Each rule family is a file:
//   rules_library.cpp     library, library-input, a GEMM's cuBLASLt epilogue
//   rules_reduction.cpp   prologue, siblings, rows, multi-pass, epilogue, scan
//   rules_elementwise.cpp output, iteration-space, param-space, kernel-size
//   group_order.cpp       which group reads which, and the order they run in
// Every cut a rule makes is recorded on the group at its boundary (Group::cuts).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "plan/kernel_size.hpp"
#include "plan/param_budget.hpp"
#include "plan/plan.hpp"

namespace cufuse::detail::planning {

// Longest row (reduced elements) a row kernel with phases keeps on chip.
inline constexpr int64_t kMaxRowOnChip = 32768;

int64_t row_length(const Shape& S, const Axes& axes);

struct Domain {
  Shape S;
  Axes axes;
  bool operator==(const Domain& o) const { return S == o.S && axes == o.axes; }
};

struct Access {
  const Node* red;  // a Reduce (or Scan) node reached
  bool broadcast_back;
  bool direct;  // reached as an elementwise input (same shape), not through a View
};

// The reductions (and other non-elementwise nodes) an elementwise subgraph reads, and how.
void boundary(const Node* root, std::vector<Access>& out);
// The gather views an elementwise subgraph computes (planner.cpp says why they matter).
void gathers_under(const Node* root, std::vector<const Node*>& out);

struct Planner {
  const std::vector<NodePtr>& roots;
  Plan p;
  std::unordered_map<const Node*, int> group_of;  // Reduce/Scan/Library node -> group
  std::unordered_map<const Node*, int> phase_of;
  std::vector<Domain> domain;                     // per group (reduction groups)
  std::vector<NodePtr> topo;
  std::unordered_map<const Node*, int> index;     // topo position: the dump's n<index>
  // Rule materialize: nodes other groups read from memory, each with why (the first reason).
  std::unordered_map<const Node*, std::string> materialize;
  // Rule param-space: the cuts, and per group the parameters its members need so far.
  std::unique_ptr<ParamBudget> budget;
  std::vector<ParamSet> gset;
  std::vector<int64_t> gout;
  std::unordered_set<int> cut_groups;  // groups writing a cut node: nothing else joins them
  // Rule kernel-size: the cuts, and per group the ops its members compute so far.
  std::unique_ptr<OpBudget> ops;
  std::vector<OpSet> gops;
  std::vector<int> plain;                                 // roots left to elementwise groups
  std::unordered_map<const LibraryCall*, int> call_group;
  std::vector<NodePtr> prep;                              // library inputs to write contiguously first

  explicit Planner(const std::vector<NodePtr>& r) : roots(r) {}

  // planner.cpp: the drive, and what every rule uses
  void run(const std::vector<const Target*>& targets);
  void collect();
  void grow_gsets();
  bool fits(int g, const Node* x, bool output, Rule* why = nullptr);
  void account(int g, const Node* x, bool output);
  bool add_output(int g, const NodePtr& n, OutKind k, int root);
  void undo_add_output(int g, int root);
  int root_index(const Node* n) const;
  int new_group(Group grp);
  static void add_rule(Group& g, Rule r);
  // Records that rule r cut the graph at n, at group g's boundary.
  void cut(int g, Rule r, const Node* n, std::string why);
  // Rule materialize: n is written to memory by its group (the first reason is kept).
  void need_in_memory(const Node* n, std::string why);
  void materialize_results();

  // rules_library.cpp
  void place_library(const NodePtr& n);
  void fuse_gemm_epilogues(const std::vector<const Target*>& targets, std::vector<bool>& fused_root,
                           std::unordered_set<const Node*>& absorbed);
  void library_outputs(const std::unordered_set<const Node*>& absorbed);

  // rules_reduction.cpp
  static bool rows_allowed(const Domain& d) { return row_length(d.S, d.axes) <= kMaxRowOnChip; }
  static bool rows_across_threads(const Node* x, const Domain& d);
  void place_reduction(const NodePtr& n);
  void place_scan(const NodePtr& n);
  // A root over reductions: into its reduction group (rows or epilogue), or true if it is left
  // to the elementwise groups.
  bool place_root_after_reduction(int i, const std::vector<Access>& acc);

  // rules_elementwise.cpp
  void place_root(int i);
  void place_elementwise(std::vector<std::pair<NodePtr, int>>& ew_out);

  // group_order.cpp
  // Per group, the nodes other groups produce that it reads, each with its producer. With
  // `reuse` false, see group_deps.
  std::vector<std::vector<std::pair<const Node*, size_t>>> group_reads(bool reuse = true) const;
  std::vector<std::vector<size_t>> group_deps(bool reuse = true) const;
  static std::vector<size_t> run_order(const std::vector<std::vector<size_t>>& deps);
  void order_groups();
  void count_readers();
};

}  // namespace cufuse::detail::planning
