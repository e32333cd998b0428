// src/plan/group_order.cpp: which group reads which, and the order groups run in: each after
// the groups whose results it reads; the readers of each materialized result, for the cut
// reasons the dump prints.
#include <algorithm>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "plan/planner_state.hpp"

namespace cufuse::detail::planning {

// With `reuse` false, an elementwise or view result of another group is not read from memory
// by a reduction, scan or elementwise group: run before its producer, such a group computes
// it inline (the executor reads a node from memory only once its group has run), so only
// what that result itself reads counts. A library call reads every input from memory.
std::vector<std::vector<std::pair<const Node*, size_t>>> Planner::group_reads(bool reuse) const {
  const size_t ng = p.groups.size();
  std::unordered_map<const Node*, size_t> produced;
  for (size_t g = 0; g < ng; ++g)
    for (const auto& o : p.groups[g].outputs) produced[o.get()] = g;
  std::vector<std::vector<std::pair<const Node*, size_t>>> reads(ng);
  for (size_t g = 0; g < ng; ++g) {
    const Group& grp = p.groups[g];
    std::unordered_set<const Node*> own(grp.outputs.size() + grp.reductions.size());
    for (const auto& r : grp.reductions) own.insert(r.get());
    std::vector<const Node*> stack;
    std::unordered_set<const Node*> seen;
    if (grp.kind == GroupKind::Library) {
      for (const auto& x : grp.lib_inputs) stack.push_back(x.get());
    } else {
      for (const auto& r : grp.reductions) stack.push_back(r->inputs[0].get());
      for (size_t k = 0; k < grp.outputs.size(); ++k)
        if (grp.kind == GroupKind::Elementwise || grp.out_kinds[k] != OutKind::Value)
          for (const auto& in : grp.outputs[k]->inputs) stack.push_back(in.get());
      if (grp.kind == GroupKind::Elementwise)
        for (const auto& o : grp.outputs) if (o->is_leaf()) stack.push_back(o.get());
    }
    while (!stack.empty()) {
      const Node* x = stack.back();
      stack.pop_back();
      if (!seen.insert(x).second) continue;
      auto it = produced.find(x);
      // A generator (arange, linspace) that another group writes out is still generated
      // inline here (the executor's binding never reads one back): no dependency, and the
      // plan, so the bits, do not depend on whether the generator is also a result.
      if (it != produced.end() && it->second != g && x->k() == NodeKind::Generator && grp.kind != GroupKind::Library)
        continue;
      if (it != produced.end() && it->second != g) {
        const bool recomputable = x->k() == NodeKind::Elementwise || x->k() == NodeKind::View;
        if (reuse || !recomputable || grp.kind == GroupKind::Library) {
          reads[g].emplace_back(x, it->second);
          continue;
        }
      }
      if (own.count(x) && grp.kind != GroupKind::Elementwise) continue;
      for (const auto& in : x->inputs) stack.push_back(in.get());
    }
  }
  return reads;
}

// Per group, the groups whose results it reads (group_reads' producers).
std::vector<std::vector<size_t>> Planner::group_deps(bool reuse) const {
  auto reads = group_reads(reuse);
  std::vector<std::vector<size_t>> deps(reads.size());
  for (size_t g = 0; g < reads.size(); ++g)
    for (const auto& [x, from] : reads[g]) deps[g].push_back(from);
  return deps;
}

// The groups in an order where each runs after the groups whose results it reads (the
// first ready one each time, so the planner's order is kept where it can be); empty when
// they depend on each other in a cycle.
std::vector<size_t> Planner::run_order(const std::vector<std::vector<size_t>>& deps) {
  std::vector<size_t> order;
  std::vector<bool> done(deps.size(), false);
  for (size_t step = 0; step < deps.size(); ++step) {
    size_t pick = deps.size();
    for (size_t g = 0; g < deps.size() && pick == deps.size(); ++g) {
      if (done[g]) continue;
      bool ready = true;
      for (size_t d : deps[g]) ready = ready && done[d];
      if (ready) pick = g;
    }
    if (pick == deps.size()) return {};
    done[pick] = true;
    order.push_back(pick);
  }
  return order;
}

// Groups in an order where each runs after the groups whose results it reads; where
// reading every result from memory closes a cycle (a reduction's row kernel reads an
// elementwise result that itself reads that kernel's first phase: x = f(y, mean(z)),
// then min(x) beside mean(z)), the groups run in an order where such a result is
// computed inline by the groups that come before its own.
void Planner::order_groups() {
  std::vector<size_t> order = run_order(group_deps());
  if (order.size() != p.groups.size()) order = run_order(group_deps(/*reuse=*/false));
  if (order.size() != p.groups.size()) throw InternalError("planner: groups depend on each other in a cycle");
  std::vector<Group> ordered;
  for (size_t g : order) ordered.push_back(std::move(p.groups[g]));
  p.groups = std::move(ordered);
}

// Each materialize cut says how many groups read the result it wrote.
void Planner::count_readers() {
  bool any = false;
  for (const auto& g : p.groups)
    for (const auto& c : g.cuts) any = any || c.rule == Rule::Materialize;
  if (!any) return;
  std::unordered_map<const Node*, int> readers;
  for (const auto& r : group_reads())
    for (const auto& [x, from] : r) readers[x]++;
  for (auto& g : p.groups)
    for (auto& c : g.cuts) {
      if (c.rule != Rule::Materialize) continue;
      const int n = readers.count(c.node) ? readers[c.node] : 0;
      c.why = fmt::format("read by {} group{} ({})", n, n == 1 ? "" : "s", c.why);
    }
}

}  // namespace cufuse::detail::planning
