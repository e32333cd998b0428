// src/plan/planner.cpp: the fusion planner.
//
// Rules (by name; see rule_doc):
//   output          — every elementwise, view, broadcast, scalar and generator node pending
//                     under a result is computed inside the kernel that writes that result;
//                     a node read by several consumers is computed once per kernel.
//   iteration-space — results that share a shape share one kernel (multi-output); results of
//                     different shapes get one kernel each.
#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "plan/plan.hpp"

namespace cufuse::detail {

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::Output: return "output";
    case Rule::IterationSpace: return "iteration-space";
  }
  return "?";
}

const char* rule_doc(Rule r) {
  switch (r) {
    case Rule::Output:
      return "elementwise, view, scalar and generator work under a result fuses into the kernel writing it";
    case Rule::IterationSpace:
      return "results over different shapes are computed by different kernels";
  }
  return "";
}

static void check_no_placeholder(const NodePtr& n) {
  if (n->reads_placeholder || n->is_placeholder())
    throw ValueError(fmt::format("cannot evaluate an expression that reads a placeholder (result {} {}); "
                                 "placeholders are for planning and dumping kernels only",
                                 name(n->dtype), to_string(n->shape())));
}

Plan make_plan(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets) {
  Plan p;
  p.roots = roots;
  p.targets = targets;
  for (size_t i = 0; i < roots.size(); ++i) {
    const auto& r = roots[i];
    Group* g = nullptr;
    for (auto& existing : p.groups)
      if (existing.iter_shape == r->shape()) g = &existing;
    if (!g) {
      p.groups.push_back(Group{});
      g = &p.groups.back();
      g->iter_shape = r->shape();
      g->rule = p.groups.size() > 1 ? Rule::IterationSpace : Rule::Output;
    }
    g->outputs.push_back(r);
    g->output_root.push_back(static_cast<int>(i));
  }
  if (p.groups.size() > 1)
    for (auto& g : p.groups) g.rule = Rule::IterationSpace;
  return p;
}

// Planning on graphs that read placeholders is allowed (dump tools); executing is not.
void check_executable(const Plan& p) {
  for (const auto& r : p.roots) check_no_placeholder(r);
}

}  // namespace cufuse::detail
