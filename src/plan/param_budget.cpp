// src/plan/param_budget.cpp: parameter-cost sets per node and the param-space cuts (see the
// header for what is counted and why).
#include "plan/param_budget.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cufuse/error.hpp"

namespace cufuse::detail {

namespace {

int32_t dims(const Node& n) { return static_cast<int32_t>(n.ndim()); }

// A leaf, or a node read from memory: its pointer (or value) and strides.
int32_t read_cost(const Node& n) {
  switch (n.k()) {
    case NodeKind::Scalar: return 16;  // its value, and a reciprocal a division may add
    case NodeKind::Generator: return 48 + 16 * dims(n);
    default: return 16 + 16 * dims(n);
  }
}

// A node computed inside a kernel: a view's shapes and strides (and its input's), a
// reduction's sizes and workspace pointers. Elementwise ops add code, not parameters.
int32_t inline_cost(const Node& n) {
  switch (n.k()) {
    case NodeKind::View: return 32 + 16 * (dims(n) + dims(*n.inputs[0])) + (has_attrs(n.attrs) ? 40 * dims(n) : 0);  // + maps
    case NodeKind::Reduce: return 64 + 16 * dims(*n.inputs[0]);
    default: return 0;
  }
}

bool cuttable(const Node& n) {
  const NodeKind k = n.k();
  return k == NodeKind::Elementwise || k == NodeKind::View || k == NodeKind::Reduce;
}

}  // namespace

int64_t param_cost(const ParamSet& s) {
  int64_t c = 0;
  for (const auto& e : s) c += e.cost;
  return c;
}

int64_t union_cost(const ParamSet& a, const ParamSet& b) {
  int64_t c = 0;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].n < b[j].n)) c += a[i++].cost;
    else if (i == a.size() || b[j].n < a[i].n) c += b[j++].cost;
    else {
      c += std::max(a[i].cost, b[j].cost);
      ++i, ++j;
    }
  }
  return c;
}

void merge_into(ParamSet& acc, const ParamSet& s) {
  if (s.empty()) return;
  if (s.size() == 1) {  // the common case: one leaf
    auto it = std::lower_bound(acc.begin(), acc.end(), s[0].n, [](const ParamEntry& e, const Node* n) { return e.n < n; });
    if (it != acc.end() && it->n == s[0].n) it->cost = std::max(it->cost, s[0].cost);
    else acc.insert(it, s[0]);
    return;
  }
  ParamSet out;
  out.reserve(acc.size() + s.size());
  size_t i = 0, j = 0;
  while (i < acc.size() || j < s.size()) {
    if (j == s.size() || (i < acc.size() && acc[i].n < s[j].n)) out.push_back(acc[i++]);
    else if (i == acc.size() || s[j].n < acc[i].n) out.push_back(s[j++]);
    else {
      out.push_back(ParamEntry{acc[i].n, std::max(acc[i].cost, s[j].cost)});
      ++i, ++j;
    }
  }
  acc = std::move(out);
}

int64_t output_param_cost(const Node& n) { return 16 + 16 * static_cast<int64_t>(n.ndim()); }

ParamBudget::ParamBudget(const std::vector<NodePtr>& topo, const std::unordered_set<const Node*>& keep,
                         const std::function<bool(const Node*)>& in_memory) {
  auto written = [&](const Node* c) { return cut_.count(c) || (in_memory && in_memory(c)); };
  // Edges still to read each node's set: a set goes once its last user is done (a chain of
  // 5,000 ops keeps two sets, not 5,000).
  std::unordered_map<const Node*, int> users;
  for (const auto& n : topo)
    for (const auto& in : n->inputs) ++users[in.get()];
  ParamSet single(1);  // a node read as one entry (valid until the next call)
  auto contribution = [&](const Node* c) -> const ParamSet& {
    if (c->is_leaf() || c->k() == NodeKind::Library || written(c)) {
      single[0] = ParamEntry{c, read_cost(*c)};
      return single;
    }
    auto it = sets_.find(c);
    if (it == sets_.end()) throw InternalError(fmt::format("param budget: no set for a {} input", kind_name(c->k())));
    return it->second;
  };
  for (const NodePtr& np : topo) {
    const Node* n = np.get();
    ParamSet s;
    if (n->is_leaf() || n->k() == NodeKind::Library) {
      s.push_back(ParamEntry{n, read_cost(*n)});
    } else {
      auto build = [&] {
        s.clear();
        if (int32_t own = inline_cost(*n)) s.push_back(ParamEntry{n, own});
        for (const auto& in : n->inputs) merge_into(s, contribution(in.get()));
      };
      build();
      while (param_cost(s) > kParamBudget) {
        // Cut the input whose inline work costs the most: it becomes one pointer here.
        const NodePtr* pick = nullptr;
        int64_t best = -1;
        for (const auto& in : n->inputs) {
          if (!cuttable(*in) || written(in.get())) continue;
          const int64_t c = param_cost(contribution(in.get()));
          if (c > best) best = c, pick = &in;
        }
        if (!pick)
          throw InternalError(fmt::format("param budget: a {} node needs {} bytes of kernel parameters with every input cut",
                                          kind_name(n->k()), param_cost(s)));
        cut_.insert(pick->get());
        cuts_.push_back(*pick);
        build();
      }
    }
    sets_[n] = std::move(s);
    for (const auto& in : n->inputs) {
      const Node* c = in.get();
      if (--users[c] == 0 && !keep.count(c) && !cut_.count(c)) sets_.erase(c);
    }
  }
}

const ParamSet& ParamBudget::set_of(const Node* n) const {
  auto it = sets_.find(n);
  if (it == sets_.end()) throw InternalError(fmt::format("param budget: no set kept for a {} node", kind_name(n->k())));
  return it->second;
}

}  // namespace cufuse::detail
