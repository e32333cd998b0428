// src/plan/rules_elementwise.cpp: the elementwise rules. output (elementwise, view, scalar
// and generator work under a result fuses into the kernel writing it), iteration-space (one
// kernel per result shape; a result that would close a cycle between groups starts its own),
// param-space and kernel-size (a kernel's parameters fit CUDA's 32 KB and it computes at most
// max_kernel_ops() ops: a cut node is computed by a kernel of its own, and no result joins a
// kernel it would push past either limit; plan/param_budget.hpp, plan/kernel_size.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "core/node_names.hpp"
#include "graph/gather.hpp"
#include "plan/planner_state.hpp"

namespace cufuse::detail::planning {

void Planner::place_root(int i) {
  const NodePtr& x = roots[i];
  if (x->k() == NodeKind::Reduce) {
    add_output(group_of.at(x.get()), x, OutKind::Value, i);
    return;
  }
  std::vector<Access> acc;
  if (!x->is_leaf()) boundary(x.get(), acc);
  std::vector<const Node*> gathers;  // a root over gathers is not a reduction's epilogue or row output
  if (!acc.empty() && x->k() == NodeKind::Elementwise) gathers_under(x.get(), gathers);
  if (!acc.empty() && x->k() == NodeKind::Elementwise && gathers.empty() && !is_scatter(*x) &&
      !place_root_after_reduction(i, acc))
    return;
  if (!acc.empty()) {
    const std::string why = fmt::format("read by result {}", node_summary(*x));
    for (const auto& a : acc) need_in_memory(a.red, why);
  }
  plain.push_back(i);
}

void Planner::place_elementwise(std::vector<std::pair<NodePtr, int>>& ew_out) {
  std::vector<int> ew_groups;
  // Rule iteration-space: one kernel per shape, except where a result joining a kernel
  // would make groups depend on each other in a cycle: x and f(sum(x)) (the reduction runs
  // after x and before f), a library input and a result computed from that call's output.
  // Such a result starts a kernel of its own. (Only reduction and library groups can close
  // a cycle: with none, nothing needs checking.)
  // Rules param-space and kernel-size: a cut node is computed by a kernel of its own (a
  // kernel computing its users too would compute it inline, reading everything under it
  // again), and no result joins a kernel it would push past either limit.
  bool boundaries = budget->any_cut() || ops->any_cut();
  for (const auto& grp : p.groups) boundaries = boundaries || grp.kind != GroupKind::Elementwise;
  for (const auto& [x, i] : ew_out) {
    const bool scatter = is_scatter(*x);  // a scatter's kernel is its own (graph/gather.hpp)
    const bool param_cut = budget->is_cut(x.get()), cut_here = param_cut || ops->is_cut(x.get()) || scatter;
    int g = -1;
    bool over = false, cycle = false;
    Rule over_rule = Rule::ParamSpace;
    for (size_t k = 0; k < ew_groups.size() && g < 0 && !cut_here; ++k) {
      const int gk = ew_groups[k];
      if (!(p.groups[gk].iter_shape == x->shape()) || cut_groups.count(gk)) continue;
      Rule why = Rule::ParamSpace;
      if (!fits(gk, x.get(), true, &why)) {
        if (!over || why == Rule::ParamSpace) over_rule = why;
        over = true;
        continue;
      }
      if (!boundaries) {  // no cycle possible: nothing to take back
        add_output(gk, x, OutKind::Plain, i);
        g = gk;
        continue;
      }
      const ParamSet saved_set = gset[gk];
      const int64_t saved_out = gout[gk];
      if (!add_output(gk, x, OutKind::Plain, i) || run_order(group_deps()).size() == p.groups.size()) {
        g = gk;
      } else {
        undo_add_output(gk, i);
        gset[gk] = saved_set;
        gout[gk] = saved_out;
        cycle = true;
      }
    }
    if (g < 0) {
      const bool others = !ew_groups.empty();
      Group grp;
      grp.kind = GroupKind::Elementwise;
      // A scatter's kernel walks its updates, writing the array they go into in place.
      grp.iter_shape = scatter ? scatter_attrs(*x).iter : x->shape();
      grp.rule = scatter    ? Rule::Output
                 : param_cut  ? Rule::ParamSpace
                 : cut_here ? Rule::KernelSize
                 : over     ? over_rule
                 : i < 0    ? Rule::LibraryInput
                            : Rule::Output;
      g = new_group(std::move(grp));
      ew_groups.push_back(g);
      if (cut_here) cut_groups.insert(g);
      add_output(g, x, OutKind::Plain, i);
      if (scatter)
        cut(g, Rule::Output, x.get(), "a scatter: a kernel of its own over its updates, writing in place");
      else if (cut_here)
        cut(g, p.groups[g].rule, x.get(), "computed once, by a kernel of its own, and read from memory by its users");
      else if (over)
        cut(g, over_rule, x.get(), fmt::format("joining the kernel over {} would pass the limit", to_string(x->shape())));
      else if (cycle)
        cut(g, Rule::IterationSpace, x.get(),
            fmt::format("joining the kernel over {} would make groups depend on each other in a cycle",
                        to_string(x->shape())));
      else if (others && i >= 0)
        cut(g, Rule::IterationSpace, x.get(), "a result over a shape no other kernel iterates over");
    }
    if (i < 0 && !cut_here) {
      add_rule(p.groups[g], Rule::LibraryInput);
      cut(g, Rule::LibraryInput, x.get(), "a library input in a layout its call cannot read, written contiguously");
    }
  }
  if (ew_groups.size() - std::count_if(ew_groups.begin(), ew_groups.end(), [&](int k) {
        return p.groups[k].rule == Rule::ParamSpace || p.groups[k].rule == Rule::KernelSize;
      }) > 1)
    for (int k : ew_groups)
      if (p.groups[k].rule == Rule::Output) p.groups[k].rule = Rule::IterationSpace;
}

}  // namespace cufuse::detail::planning
