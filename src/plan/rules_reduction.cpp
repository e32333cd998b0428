// src/plan/rules_reduction.cpp: the reduction rules. prologue (a reduction's elementwise
// producers are computed inside it), siblings (reductions over one domain share a kernel),
// rows (a reduction broadcast back over its rows and reduced or mapped again joins the
// kernel as a later phase, row-shaped results too), multi-pass (rows too long for one block,
// or read across threads: each reduction on its own), epilogue (consumers over the reduced
// shape computed after it), scan (a cumulative op is its own kernel).
#include <algorithm>

#include <fmt/format.h>

#include "core/node_names.hpp"
#include "core/reduce_attrs.hpp"
#include "plan/planner_state.hpp"

namespace cufuse::detail::planning {

namespace {
// The kept shape of a reduction domain, without size-1 dims.
Shape squeezed_kept(const Domain& d) {
  Shape s;
  for (int i = 0; i < d.S.ndim(); ++i)
    if (std::find(d.axes.begin(), d.axes.end(), i) == d.axes.end() && d.S[i] != 1) s.push_back(d.S[i]);
  return s;
}
Shape squeezed(const Shape& x) {
  Shape s;
  for (auto v : x)
    if (v != 1) s.push_back(v);
  return s;
}

// Rule rows, an exception. A row kernel gives each row to one thread when its reads run
// along the kept axes rather than along the rows (consecutive threads then read
// consecutive addresses). With phases, or a row-shaped result, such a kernel cannot split a
// row over blocks, so too few rows leave most of the GPU idle (softmax over axis 0 of
// f32[8192,8192]: 8192 threads, 4.5 ms), and a result written along its rows costs 32
// lines per warp store (softmax(x.T): 8.3 ms). There, each reduction runs as its own
// kernel (split over blocks like sum(x, 0)) and the row-shaped result as an elementwise
// kernel reading them (tiled or rows mode): ~0.4 ms. True when fewer than kAcrossRows rows
// of at least kAcrossMinRow elements (shorter ones cost little walked by one thread) over
// the domain's shape read some memory leaf under x at stride 1 along a kept axis and not
// along the innermost reduced one.
constexpr int64_t kAcrossRows = int64_t(1) << 18, kAcrossMinRow = 1024;
}  // namespace

bool Planner::rows_across_threads(const Node* x, const Domain& d) {
  const int nd = d.S.ndim();
  int last = -1;
  for (int a : d.axes)
    if (d.S[a] != 1) last = std::max(last, a);
  const int64_t n = row_length(d.S, d.axes);
  if (last < 0 || n < kAcrossMinRow || numel(d.S) / n >= kAcrossRows) return false;
  std::vector<const Node*> stack{x};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->k() == NodeKind::Elementwise) {
      for (const auto& in : n->inputs) stack.push_back(in.get());
      continue;
    }
    if (n->k() == NodeKind::Reduce) {
      stack.push_back(n->inputs[0].get());
      continue;
    }
    if (n->k() != NodeKind::Buffer || !(n->shape() == d.S)) continue;
    const Strides& st = n->layout.strides;
    if (st[last] == 1 || st[last] == -1) continue;
    for (int k = 0; k < nd; ++k)
      if (d.S[k] != 1 && std::find(d.axes.begin(), d.axes.end(), k) == d.axes.end() && (st[k] == 1 || st[k] == -1))
        return true;
  }
  return false;
}

void Planner::place_reduction(const NodePtr& n) {
  const ReduceAttrs& at = reduce_attrs(*n);
  const Domain d{n->inputs[0]->shape(), at.axes};
  std::vector<Access> acc;
  boundary(n.get(), acc);
  const bool across = rows_across_threads(n.get(), d);
  int phase = 0, via_group = -1;
  bool multipass = false;
  std::vector<const Node*> needs;
  for (const auto& a : acc) {
    auto it = group_of.find(a.red);
    const bool same_domain = it != group_of.end() && p.groups[it->second].kind == GroupKind::Reduction &&
                             domain[it->second] == d;
    if (a.broadcast_back && same_domain && rows_allowed(d) && !across && (via_group < 0 || via_group == it->second)) {
      via_group = it->second;
      phase = std::max(phase, phase_of[a.red] + 1);
    } else {
      if (a.broadcast_back && same_domain && (!rows_allowed(d) || across)) multipass = true;
      needs.push_back(a.red);
    }
  }
  int g = -1;
  auto deps_before = [&](int grp) {
    for (const Node* x : needs) {
      auto it = group_of.find(x);
      if (it == group_of.end() || it->second >= grp) return false;
    }
    return true;
  };
  bool rows_refused = false;
  if (via_group >= 0) {
    if (deps_before(via_group) && fits(via_group, n.get(), false)) g = via_group;
    else {  // cannot join the rows it reads: read them from memory instead
      for (const auto& a : acc)
        if (a.broadcast_back) needs.push_back(a.red);
      phase = 0;
      rows_refused = true;
    }
  }
  if (g < 0) {
    for (size_t k = 0; k < p.groups.size(); ++k)
      if (p.groups[k].kind == GroupKind::Reduction && domain[k] == d && deps_before(static_cast<int>(k)) &&
          fits(static_cast<int>(k), n.get(), false)) {
        g = static_cast<int>(k);
        phase = 0;
        break;
      }
  }
  if (g < 0) {
    Group grp;
    grp.kind = GroupKind::Reduction;
    grp.iter_shape = d.S;
    grp.axes = d.axes;
    grp.rule = multipass ? Rule::MultiPass : Rule::Prologue;
    grp.multipass = multipass;
    g = new_group(std::move(grp));
    domain[g] = d;
    if (multipass)
      cut(g, Rule::MultiPass, n.get(),
          rows_allowed(d) ? "its rows are read across threads (each reduction split over blocks instead)"
                          : fmt::format("rows of {} elements, longer than the {} a row kernel keeps on chip",
                                        row_length(d.S, d.axes), kMaxRowOnChip));
  } else if (phase == 0) {
    add_rule(p.groups[g], Rule::Siblings);
  } else {
    add_rule(p.groups[g], Rule::Rows);
  }
  const std::string reader = node_summary(*n);
  for (const Node* x : needs)
    need_in_memory(x, rows_refused ? fmt::format("read broadcast back by {}, which cannot join its kernel", reader)
                                   : fmt::format("read by {}", reader));
  account(g, n.get(), false);
  p.groups[g].reductions.push_back(n);
  p.groups[g].phase.push_back(phase);
  group_of[n.get()] = g;
  phase_of[n.get()] = phase;
}

void Planner::place_scan(const NodePtr& n) {
  std::vector<Access> acc;
  boundary(n.get(), acc);
  for (const auto& a : acc) need_in_memory(a.red, fmt::format("read by {}", node_summary(*n)));
  Group grp;
  grp.kind = GroupKind::Scan;
  grp.iter_shape = n->inputs[0]->shape();
  grp.axes = reduce_attrs(*n).axes;
  grp.rule = Rule::Scan;
  grp.reductions.push_back(n);
  grp.phase.push_back(0);
  group_of[n.get()] = new_group(std::move(grp));
}

bool Planner::place_root_after_reduction(int i, const std::vector<Access>& acc) {
  const NodePtr& x = roots[i];
  int g = -1;
  bool all_bb = true, all_direct = true, one_group = true;
  for (const auto& a : acc) {
    auto it = group_of.find(a.red);
    if (it == group_of.end() || p.groups[it->second].kind != GroupKind::Reduction) {
      one_group = false;
      break;
    }
    if (g >= 0 && g != it->second) one_group = false;
    g = it->second;
    all_bb &= a.broadcast_back;
    all_direct &= a.direct;
  }
  if (!one_group || g < 0) return true;
  const Domain& d = domain[g];
  if (all_bb && x->shape() == d.S && !rows_allowed(d)) p.groups[g].multipass = true;
  const bool targeted = i < static_cast<int>(p.targets.size()) && p.targets[i];
  if (all_bb && x->shape() == d.S && rows_allowed(d) && fits(g, x.get(), true) &&
      (targeted || !rows_across_threads(x.get(), d))) {
    add_rule(p.groups[g], Rule::Rows);
    add_output(g, x, OutKind::Row, i);
    return false;
  }
  if (all_direct && squeezed(x->shape()) == squeezed_kept(d) && fits(g, x.get(), true)) {
    add_rule(p.groups[g], Rule::Epilogue);
    add_output(g, x, OutKind::Epilogue, i);
    return false;
  }
  return true;
}

}  // namespace cufuse::detail::planning
