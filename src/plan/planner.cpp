// src/plan/planner.cpp: the fusion planner's drive. It cuts the pending graph into groups:
//   reduction groups — one per (input shape, reduced axes) "domain": the reductions of that
//       domain (rule siblings), their elementwise producers (prologue), elementwise
//       consumers over the reduced shape (epilogue), and, when a reduction is broadcast
//       back over the rows it reduced and reduced or mapped again, the later reductions
//       (phases) and the row-shaped results (rule rows) — while a row fits on chip; past
//       that each reduction is its own kernel (multi-pass).
//   scan groups — one per cumsum/cumprod, prologue fused.
//   library groups — one per call (rule library), inputs it cannot read laid out first.
//   elementwise groups — one per result shape (rule iteration-space); everything
//       elementwise, view, scalar and generator under a result is computed inside
//       (rule output), a node with several consumers once per kernel.
// A reduction result that anything else reads (another domain, a reshape, a library call)
// is written to memory (rule materialize) and read back as a buffer by later groups.
// The rules are the files named in planner_state.hpp; this file runs them in order.
#include <algorithm>

#include <fmt/format.h>

#include "core/library_call.hpp"
#include "core/node_names.hpp"
#include "core/reduce_attrs.hpp"
#include "cufuse/error.hpp"
#include "graph/gather.hpp"
#include "plan/planner_state.hpp"

namespace cufuse::detail {

std::string rule_limit(Rule r) {
  switch (r) {
    case Rule::ParamSpace: return fmt::format("limit {} bytes of parameters a kernel", kKernelParamLimit);
    case Rule::KernelSize: return fmt::format("limit {} ops a kernel", max_kernel_ops());
    default: return "";
  }
}

std::string describe_cut(const Cut& c) {
  const std::string limit = rule_limit(c.rule);
  return fmt::format("cut at {}{}: {}{}{}", c.index >= 0 ? fmt::format("n{} ", c.index) : "", c.what, rule_name(c.rule),
                     limit.empty() ? "" : " (" + limit + ")", c.why.empty() ? "" : ", " + c.why);
}

int Plan::buffer_of(const Node* n) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].get() == n) return static_cast<int>(i);
  return -1;
}

void Plan::forget_graph() {
  roots.clear();
  targets.clear();
  buffers.clear();
  for (auto& g : groups) {
    g.outputs.clear();
    g.reductions.clear();
    g.lib_inputs.clear();
    for (auto& c : g.cuts) c.node = nullptr;
  }
}

static bool is_plain_reduce(const Node* n) {
  return n->k() == NodeKind::Reduce && !is_scan(reduce_attrs(*n).op);
}

bool is_broadcast_back(const Node* v, const Node* r) {
  if (v->k() != NodeKind::View || has_attrs(v->attrs) || v->inputs.empty() || v->inputs[0].get() != r || !is_plain_reduce(r))
    return false;  // (a mapped view, graph/index_map.hpp, is no broadcast)
  const Shape& S = r->inputs[0]->shape();
  if (v->shape() != S || v->layout.offset != 0) return false;
  const Axes& axes = reduce_attrs(*r).axes;
  int64_t expect = 1;
  for (int d = S.ndim() - 1; d >= 0; --d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (S[d] == 1) continue;
    if (reduced) {
      if (v->layout.strides[d] != 0) return false;
    } else {
      if (v->layout.strides[d] != expect) return false;
      expect *= S[d];
    }
  }
  return true;
}

namespace planning {

int64_t row_length(const Shape& S, const Axes& axes) {
  int64_t n = 1;
  for (int a : axes) n *= S[a];
  return n;
}

void boundary(const Node* root, std::vector<Access>& out) {
  std::vector<const Node*> stack{root};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    switch (x->k()) {
      case NodeKind::Buffer:
      case NodeKind::Scalar:
      case NodeKind::Generator: break;
      case NodeKind::Elementwise:
        for (const auto& in : x->inputs) stack.push_back(in.get());
        break;
      case NodeKind::View: {
        const Node* in = x->inputs[0].get();
        if (is_gather(*x))  // its index nodes are computed where it is; its source is read
          for (int d = 0; d < gather_rank(*x); ++d) stack.push_back(x->inputs[1 + d].get());
        if (in->k() == NodeKind::Reduce || in->k() == NodeKind::Library)
          out.push_back(Access{in, is_broadcast_back(x, in), false});
        else
          stack.push_back(in);
        break;
      }
      case NodeKind::Reduce:
      case NodeKind::Library:
        if (x != root) out.push_back(Access{x, false, true});
        else
          for (const auto& in : x->inputs) stack.push_back(in.get());
        break;
    }
  }
}

// The gather views an elementwise subgraph computes (walked through elementwise nodes and
// gathers' index nodes). Reduction and scan kernels read them from memory: their emitters
// compute a View from a position, and a gather's index nodes need the element's own values.
void gathers_under(const Node* root, std::vector<const Node*>& out) {
  std::vector<const Node*> stack{root};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (x->k() == NodeKind::Elementwise) {
      for (const auto& in : x->inputs) stack.push_back(in.get());
    } else if (is_gather(*x)) {
      out.push_back(x);
    }
  }
}

void Planner::grow_gsets() {
  if (gset.size() < p.groups.size()) {
    gset.resize(p.groups.size());
    gout.resize(p.groups.size(), 0);
    gops.resize(p.groups.size());
  }
}

// Would group g's kernel still fit CUDA's parameter limit, and the kernel-size limit, with
// x computed in it (and written out, if `output`)? `why`: the rule of the limit it passes.
bool Planner::fits(int g, const Node* x, bool output, Rule* why) {
  grow_gsets();
  const int64_t out = gout[g] + (output ? output_param_cost(*x) : 0);
  if (union_cost(gset[g], budget->set_of(x)) + out > kParamBudget) {
    if (why) *why = Rule::ParamSpace;
    return false;
  }
  if (!ops->small() && union_size(gops[g], ops->set_of(x)) > max_kernel_ops()) {
    if (why) *why = Rule::KernelSize;
    return false;
  }
  return true;
}

void Planner::account(int g, const Node* x, bool output) {
  grow_gsets();
  merge_into(gset[g], budget->set_of(x));
  if (output) gout[g] += output_param_cost(*x);
  if (!ops->small()) merge_into(gops[g], ops->set_of(x));
}

void Planner::collect() {
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<NodePtr, size_t>> stack;
  for (const auto& r : roots) stack.emplace_back(r, 0);
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (i == 0 && seen.count(n.get())) {
      stack.pop_back();
      continue;
    }
    if (n->is_leaf() || i >= n->inputs.size()) {
      if (seen.insert(n.get()).second) {
        index.emplace(n.get(), static_cast<int>(topo.size()));
        topo.push_back(n);
      }
      stack.pop_back();
      continue;
    }
    NodePtr next = n->inputs[i++];
    if (!seen.count(next.get())) stack.emplace_back(next, 0);
  }
}

void Planner::add_rule(Group& g, Rule r) {
  if (std::find(g.fused.begin(), g.fused.end(), r) == g.fused.end()) g.fused.push_back(r);
}

void Planner::cut(int g, Rule r, const Node* n, std::string why) {
  auto& cuts = p.groups[g].cuts;
  for (const auto& c : cuts)
    if (c.rule == r && c.node == n) return;
  auto it = index.find(n);
  cuts.push_back(Cut{r, n, it == index.end() ? -1 : it->second, node_summary(*n), std::move(why)});
}

void Planner::need_in_memory(const Node* n, std::string why) { materialize.emplace(n, std::move(why)); }

int Planner::new_group(Group grp) {
  p.groups.push_back(std::move(grp));
  domain.resize(p.groups.size());
  return static_cast<int>(p.groups.size() - 1);
}

// Adds n to group g's outputs; false if it was one already.
bool Planner::add_output(int g, const NodePtr& n, OutKind k, int root) {
  Group& grp = p.groups[g];
  for (size_t i = 0; i < grp.outputs.size(); ++i)
    if (grp.outputs[i].get() == n.get()) return false;
  if (grp.kind != GroupKind::Library) account(g, n.get(), true);
  grp.outputs.push_back(n);
  grp.out_kinds.push_back(k);
  grp.output_root.push_back(root);
  int b = root;
  if (b < 0) {
    b = static_cast<int>(p.buffers.size());
    p.buffers.push_back(n);
  }
  grp.output_buffer.push_back(b);
  return true;
}

// Takes back the output add_output just added to group g (root: as given there).
void Planner::undo_add_output(int g, int root) {
  Group& grp = p.groups[g];
  grp.outputs.pop_back();
  grp.out_kinds.pop_back();
  grp.output_root.pop_back();
  grp.output_buffer.pop_back();
  if (root < 0) p.buffers.pop_back();
}

int Planner::root_index(const Node* n) const {
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i].get() == n) return static_cast<int>(i);
  return -1;
}

// Rule materialize: results read from memory by other groups.
void Planner::materialize_results() {
  for (const auto& n : topo) {
    auto m = materialize.find(n.get());
    if (m == materialize.end()) continue;
    auto it = group_of.find(n.get());
    if (it == group_of.end() || p.groups[it->second].kind == GroupKind::Library) continue;
    add_output(it->second, n, OutKind::Value, -1);
    add_rule(p.groups[it->second], Rule::Materialize);
    cut(it->second, Rule::Materialize, n.get(), m->second);
  }
}

void Planner::run(const std::vector<const Target*>& targets) {
  p.roots = roots;
  p.targets = targets;
  p.buffers = roots;
  collect();
  {
    std::unordered_set<const Node*> keep;
    for (const auto& r : roots) keep.insert(r.get());
    for (const auto& n : topo) {
      if (n->k() == NodeKind::Reduce) {
        keep.insert(n.get());
        std::vector<const Node*> gathers;  // written by kernels of their own (see gathers_under)
        gathers_under(n->inputs[0].get(), gathers);
        for (const Node* g : gathers) keep.insert(g);
      }
      if (n->k() == NodeKind::Library)
        for (const auto& in : n->inputs) keep.insert(in.get());
    }
    ops = std::make_unique<OpBudget>(topo, keep);
    for (const auto& c : ops->cuts()) keep.insert(c.get());  // computed by kernels of their own
    budget = std::make_unique<ParamBudget>(topo, keep, [&](const Node* n) { return ops->is_cut(n); });
  }
  for (const auto& n : topo) {
    if (n->k() == NodeKind::Reduce) {
      if (is_scan(reduce_attrs(*n).op)) place_scan(n);
      else place_reduction(n);
    } else if (n->k() == NodeKind::Library) {
      place_library(n);
    }
  }
  std::unordered_set<const Node*> absorbed;
  std::vector<bool> fused_root(roots.size(), false);
  fuse_gemm_epilogues(targets, fused_root, absorbed);
  library_outputs(absorbed);
  for (int i = 0; i < static_cast<int>(roots.size()); ++i)
    if (roots[i]->k() != NodeKind::Library && !fused_root[i]) place_root(i);
  // Plain elementwise groups, one per shape: results, and library inputs to lay out.
  std::vector<std::pair<NodePtr, int>> ew_out;
  for (int i : plain) ew_out.emplace_back(roots[i], i);
  for (const auto& x : prep) {
    bool have = false;
    for (const auto& [n, r] : ew_out) have |= n.get() == x.get();
    if (!have) ew_out.emplace_back(x, root_index(x.get()));
    std::vector<Access> acc;
    if (!x->is_leaf()) boundary(x.get(), acc);
    for (const auto& a : acc) need_in_memory(a.red, "read by a library input laid out for its call");
  }
  // Rules param-space and kernel-size: cut reductions are written to memory; cut
  // elementwise work and views get kernels of their own (rules_elementwise.cpp).
  std::vector<NodePtr> cuts = budget->cuts();
  cuts.insert(cuts.end(), ops->cuts().begin(), ops->cuts().end());
  for (const auto& c : cuts) {
    if (c->k() == NodeKind::Reduce) {
      need_in_memory(c.get(), budget->is_cut(c.get()) ? "cut by param-space" : "cut by kernel-size");
      continue;
    }
    bool have = false;
    for (const auto& [n, r] : ew_out) have |= n.get() == c.get();
    if (!have) ew_out.emplace_back(c, root_index(c.get()));
    std::vector<Access> acc;
    boundary(c.get(), acc);
    for (const auto& a : acc) need_in_memory(a.red, "read by work cut into a kernel of its own");
  }
  // A gather under a reduction or scan is written to memory by an elementwise kernel
  // first (rule materialize; see gathers_under).
  for (const auto& n : topo) {
    if (n->k() != NodeKind::Reduce) continue;
    std::vector<const Node*> gathers;
    gathers_under(n->inputs[0].get(), gathers);
    for (const Node* gv : gathers) {
      bool have = false;
      for (const auto& [e, r] : ew_out) have |= e.get() == gv;
      if (have) continue;
      ew_out.emplace_back(NodePtr(const_cast<Node*>(gv)), root_index(gv));
      std::vector<Access> acc;
      boundary(gv, acc);
      for (const auto& a : acc) need_in_memory(a.red, "read by a gather written to memory for a reduction");
    }
  }
  materialize_results();
  place_elementwise(ew_out);
  // Groups that write nothing (their reductions only fed groups that moved away) go.
  std::vector<Group> kept;
  for (auto& g : p.groups)
    if (!g.outputs.empty()) kept.push_back(std::move(g));
  p.groups = std::move(kept);
  order_groups();
  count_readers();
}

}  // namespace planning

Plan make_plan(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets) {
  planning::Planner pl(roots);
  pl.run(targets);
  return std::move(pl.p);
}

}  // namespace cufuse::detail
