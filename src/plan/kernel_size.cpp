// src/plan/kernel_size.cpp: op sets per node and the kernel-size cuts (see the header for
// what is counted and why), and the limit, with the measurements that chose it.
#include "plan/kernel_size.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "runtime/context.hpp"

namespace cufuse::detail {

// The limit. NVRTC's time for one kernel grows faster than its code (sm_90, CUDA 13, CPU
// seconds of the compiling thread on the 2-core development machine; elementwise chains over
// f64, each op reading the one before):
//
//   ops                                   512    600   1024   2048   4096   8192
//   mul/add only, straight-line form        -   0.16   0.25   0.58      -      -
//   1/3 exp, log, sqrt, div: straight-line 1.4      -    4.0    9.4     22     68
//   the same, 16-byte vectors 2 x 2 (10M)  9.9      -     25     44      -      -
//   mul/add only, vectors 2 x 2 (10M)        -   0.47   0.95      -      -      -
//
// (Black-Scholes, ~80 ops: 0.13 s straight-line, 0.41 s with vectors.) 1,024 keeps a program
// of 600 statements one kernel and the costliest kernel it allows at seconds, not minutes; a
// cut costs one write and one read of the iteration space, small next to such a kernel.
int64_t max_kernel_ops() {
  const int64_t v = settings().max_kernel_ops;  // CUFUSE_MAX_KERNEL_OPS (0: unset)
  return v >= 1 ? v : kMaxKernelOps;
}

namespace {

// Counted: computed inline by a kernel (a reduction: its loop, in its own group's kernel).
bool is_op(const Node& n) {
  const NodeKind k = n.k();
  return k == NodeKind::Elementwise || k == NodeKind::View || k == NodeKind::Reduce;
}
// Computed inline by the kernels of the nodes reading it (a reduction never is: its group
// computes it, and the planner counts that group's members together).
bool is_inline(const Node& n) {
  const NodeKind k = n.k();
  return k == NodeKind::Elementwise || k == NodeKind::View;
}

const OpSet kNone;

}  // namespace

int64_t union_size(const OpSet& a, const OpSet& b) {
  int64_t c = 0;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) ++i;
    else if (b[j] < a[i]) ++j;
    else ++i, ++j;
    ++c;
  }
  return c + static_cast<int64_t>(a.size() - i + b.size() - j);
}

void merge_into(OpSet& acc, const OpSet& s) {
  if (s.empty()) return;
  if (acc.empty() || s.front() > acc.back()) {  // all later: a chain's common case
    acc.insert(acc.end(), s.begin(), s.end());
    return;
  }
  OpSet out;
  out.reserve(acc.size() + s.size());
  std::set_union(acc.begin(), acc.end(), s.begin(), s.end(), std::back_inserter(out));
  acc = std::move(out);
}

OpBudget::OpBudget(const std::vector<NodePtr>& topo, const std::unordered_set<const Node*>& keep) {
  const int64_t limit = max_kernel_ops();
  int64_t ops = 0;
  for (const auto& n : topo) ops += is_op(*n);
  if (ops <= limit) return;  // no kernel can pass the limit: nothing to count
  small_ = false;

  std::unordered_map<const Node*, int32_t>& index = index_;
  std::unordered_map<const Node*, int> users;  // edges still to read each node's set
  index.reserve(topo.size());
  for (size_t i = 0; i < topo.size(); ++i) {
    index[topo[i].get()] = static_cast<int32_t>(i);
    for (const auto& in : topo[i]->inputs) ++users[in.get()];
  }
  auto contribution = [&](const Node* c) -> const OpSet& {
    if (!is_inline(*c) || cut_.count(c)) return kNone;
    auto it = sets_.find(c);
    if (it == sets_.end()) throw InternalError(fmt::format("kernel size: no op set for a {} input", kind_name(c->k())));
    return it->second;
  };
  std::vector<const Node*> from;  // n's distinct inputs with ops under them
  OpSet merged;
  for (const NodePtr& np : topo) {
    const Node* n = np.get();
    if (!is_op(*n)) continue;
    // The union of the inputs' sets, and n: while it passes the limit, the input whose set
    // is largest is cut (it becomes a read of memory here).
    int64_t size = 0;
    auto measure = [&] {
      from.clear();
      for (const auto& in : n->inputs)
        if (!contribution(in.get()).empty() && std::find(from.begin(), from.end(), in.get()) == from.end())
          from.push_back(in.get());
      merged.clear();
      if (from.size() == 1) {
        size = static_cast<int64_t>(contribution(from[0]).size()) + 1;
        return;
      }
      for (const Node* c : from) merge_into(merged, contribution(c));
      size = static_cast<int64_t>(merged.size()) + 1;
    };
    measure();
    while (size > limit) {
      const Node* pick = nullptr;
      for (const Node* c : from)
        if (!pick || contribution(c).size() > contribution(pick).size()) pick = c;
      if (!pick)
        throw InternalError(fmt::format("kernel size: a {} node passes {} ops with every input cut", kind_name(n->k()), limit));
      cut_.insert(pick);
      for (const auto& in : n->inputs)
        if (in.get() == pick) {
          cuts_.push_back(in);
          break;
        }
      measure();
    }
    OpSet s;
    if (from.size() == 1) {
      const Node* c = from[0];
      int edges = 0;
      for (const auto& in : n->inputs) edges += in.get() == c;
      // The last reader of a set nobody asks for later takes it (a chain moves one set along).
      if (users[c] == edges && !keep.count(c)) s = std::move(sets_.at(c));
      else s = contribution(c);
    } else {
      s = std::move(merged);
      merged = OpSet();
    }
    s.push_back(index.at(n));  // after every input in topological order: still sorted
    sets_[n] = std::move(s);
    for (const auto& in : n->inputs) {
      const Node* c = in.get();
      if (--users[c] == 0 && !keep.count(c) && !cut_.count(c)) sets_.erase(c);
    }
  }
}

const OpSet& OpBudget::set_of(const Node* n) {
  if (small_ || !is_op(*n)) return kNone;
  auto it = sets_.find(n);
  if (it != sets_.end()) return it->second;
  // Not kept: n and the inline ops under it, down to the cuts.
  OpSet s;
  std::vector<const Node*> stack{n};
  std::unordered_set<const Node*> seen{n};
  while (!stack.empty()) {
    const Node* x = stack.back();
    stack.pop_back();
    auto ix = index_.find(x);
    if (ix == index_.end()) throw InternalError(fmt::format("kernel size: a {} node outside the graph", kind_name(x->k())));
    s.push_back(ix->second);
    for (const auto& in : x->inputs) {
      const Node* c = in.get();
      if (is_inline(*c) && !cut_.count(c) && seen.insert(c).second) stack.push_back(c);
    }
  }
  std::sort(s.begin(), s.end());
  return sets_[n] = std::move(s);
}

}  // namespace cufuse::detail
