// src/graph/registry.cpp: the list of pending roots (weak references, pruned as they die).
#include "graph/registry.hpp"

#include <atomic>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace cufuse::detail {

namespace {
// A test-and-test-and-set lock: every op that makes an Array takes it once, for a push, so
// an uncontended take must cost one exchange (a std::mutex costs two atomic operations and
// two calls); contenders yield.
class SpinLock {
 public:
  void lock() {
    while (busy_.exchange(true, std::memory_order_acquire))
      while (busy_.load(std::memory_order_relaxed)) std::this_thread::yield();
  }
  void unlock() { busy_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> busy_{false};
};

struct Registry {
  SpinLock mu;
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
  std::lock_guard<SpinLock> lk(r.mu);
  r.roots.push_back(n);
  if (r.roots.size() >= r.prune_at) {
    // Compacted in place. Most entries are temporaries, dead by now: expired() needs no lock().
    size_t kept = 0;
    for (auto& w : r.roots) {
      if (w.expired()) continue;
      if (auto p = w.lock(); p && still_pending(*p)) {
        if (&r.roots[kept] != &w) r.roots[kept] = std::move(w);
        ++kept;
      }
    }
    r.roots.resize(kept);
    r.prune_at = std::max<size_t>(64, kept * 2);
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
    std::lock_guard<SpinLock> lk(r.mu);
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
