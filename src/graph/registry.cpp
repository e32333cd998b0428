// src/graph/registry.cpp: the list of pending roots (weak references, pruned as they die).
#include "graph/registry.hpp"

#include <mutex>
#include <unordered_set>

namespace cufuse::detail {

namespace {
struct Registry {
  std::mutex mu;
  std::vector<std::weak_ptr<Node>> roots;
  size_t prune_at = 64;
};
Registry& registry() {
  static Registry r;
  return r;
}
bool still_pending(const Node& n) { return !n.is_leaf() && n.array_refs.load() > 0; }
}  // namespace

void register_root(const NodePtr& n) {
  auto& r = registry();
  std::lock_guard<std::mutex> lk(r.mu);
  r.roots.push_back(n);
  if (r.roots.size() >= r.prune_at) {
    std::vector<std::weak_ptr<Node>> keep;
    for (auto& w : r.roots) {
      if (w.expired()) continue;  // most are temporaries, dead by now: no lock() needed
      if (auto p = w.lock(); p && still_pending(*p)) keep.push_back(std::move(w));
    }
    r.roots = std::move(keep);
    r.prune_at = std::max<size_t>(64, r.roots.size() * 2);
  }
}

static bool reads(const Node* n, const Storage* s, std::unordered_set<const Node*>& seen) {
  if (!seen.insert(n).second) return false;
  if (n->k() == NodeKind::Buffer) return n->storage.get() == s;
  for (const auto& in : n->inputs)
    if (reads(in.get(), s, seen)) return true;
  return false;
}

std::vector<NodePtr> pending_roots_reading(const Storage* storage) {
  std::vector<NodePtr> live;
  {
    auto& r = registry();
    std::lock_guard<std::mutex> lk(r.mu);
    for (auto& w : r.roots)
      if (auto p = w.lock(); p && still_pending(*p)) live.push_back(std::move(p));
  }
  std::vector<NodePtr> out;
  std::unordered_set<const Node*> seen;
  for (auto& p : live) {
    seen.clear();
    if (reads(p.get(), storage, seen)) out.push_back(p);
  }
  return out;
}

}  // namespace cufuse::detail
