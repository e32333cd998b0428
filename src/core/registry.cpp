// src/core/registry.cpp: the list of pending roots. Plain node pointers: a node is added
// when an op makes it or an Array first holds it unrealized, leaves when it is realized or
// its last Array gives it to an op, and removes itself when it is destroyed (destroy_node),
// so an entry always points at a live node; a reference is taken from one only while its
// count is above zero, under the lock that its destruction also takes.
#include "core/registry.hpp"

#include "runtime/context.hpp"
#include "runtime/storage.hpp"

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

// Pending roots and the pending writes of ended threads: process state (runtime/context.hpp),
// never destroyed (nodes may die during exit).
struct Registry {
  SpinLock mu;
  std::vector<Node*> roots;  // each node's reg_slot is its index here
};
struct Orphans {
  std::mutex mu;
  std::vector<NodePtr> list;
  std::atomic<size_t> count{0};
};
struct NodeRegistry {
  static constexpr StateSlot kSlot = StateSlot::NodeRegistry;
  Registry roots;
  Orphans orphans;
};
Registry& registry() { return runtime().state<NodeRegistry>().roots; }

// A new reference to a live registered node, or null where its last one is being dropped.
NodePtr try_take(Node* n) {
  int32_t c = n->refs.load(std::memory_order_relaxed);
  while (c > 0 && !n->refs.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel, std::memory_order_relaxed)) {
  }
  return c > 0 ? NodePtr(n, /*add_ref=*/false) : NodePtr();
}
}  // namespace

RegistryLock::RegistryLock() { registry().mu.lock(); }
RegistryLock::~RegistryLock() { registry().mu.unlock(); }

static void add_locked(Registry& r, Node* n) {
  n->reg_slot = static_cast<int32_t>(r.roots.size());
  r.roots.push_back(n);
  n->registered.store(true, std::memory_order_relaxed);  // published by the lock and refs' release
}

void register_root(const NodePtr& n) {
  // Set only under the lock, by a thread holding a reference: a node this thread sees
  // registered stays so until it is realized, given up by its last Array, or destroyed.
  if (n->registered.load(std::memory_order_relaxed)) return;
  auto& r = registry();
  std::lock_guard<SpinLock> lk(r.mu);
  if (!n->registered.load(std::memory_order_relaxed)) add_locked(r, n.get());
}

void register_replacing(Node* fresh, Node* const* given_up, int k) {
  auto& r = registry();
  std::lock_guard<SpinLock> lk(r.mu);
  for (int i = 0; i < k; ++i) {
    Node* g = given_up[i];
    // Re-checked under the lock: an Array may have taken the node up again meanwhile.
    if (g->registered.load(std::memory_order_relaxed) && g->array_refs.load(std::memory_order_relaxed) == 0)
      unregister_root_locked(g);  // its release takes the lock-free path
  }
  if (!fresh->registered.load(std::memory_order_relaxed) && !fresh->is_leaf()) add_locked(r, fresh);
}

void unregister_root(Node* n) {
  if (!n->registered.load(std::memory_order_relaxed)) return;
  std::lock_guard<SpinLock> lk(registry().mu);
  if (n->registered.load(std::memory_order_relaxed)) unregister_root_locked(n);
}

void unregister_root_locked(Node* n) {
  auto& r = registry();
  Node* last = r.roots.back();
  r.roots[static_cast<size_t>(n->reg_slot)] = last;
  last->reg_slot = n->reg_slot;
  r.roots.pop_back();
  n->reg_slot = -1;
  // Off the list first: a release that reads false takes the lock-free path, safely now.
  n->registered.store(false, std::memory_order_relaxed);
}

size_t registered_roots() {
  std::lock_guard<SpinLock> lk(registry().mu);
  return registry().roots.size();
}


static bool reads(const Node* root, const Storage* s, std::unordered_set<const Node*>& seen) {
  std::vector<const Node*> stack{root};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->k() == NodeKind::Buffer) {
      if (n->storage.get() == s) return true;
      continue;
    }
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return false;
}

std::vector<NodePtr> pending_roots_reading(const Storage* storage) {
  std::vector<NodePtr> live = live_pending_roots();
  // Released outside the lock (a last reference dropped here unregisters its node).
  std::vector<NodePtr> out;
  std::unordered_set<const Node*> seen;
  for (auto& p : live) {
    seen.clear();
    if (p->array_refs.load() > 0 && reads(p.get(), storage, seen)) out.push_back(p);
  }
  return out;
}

std::vector<NodePtr> live_pending_roots() {
  std::vector<NodePtr> live;
  auto& r = registry();
  std::lock_guard<SpinLock> lk(r.mu);
  for (Node* n : r.roots)
    if (!n->is_leaf() && n->array_refs.load() > 0)
      if (NodePtr p = try_take(n)) live.push_back(std::move(p));
  return live;
}

namespace {
// Pending writes live in their thread's list; a thread that ends hands what is still pending
// to the orphans, which the next materialization point of any thread carries out (running
// an evaluation while the thread's other thread_local state is being destroyed is not safe).
Orphans& orphans() { return runtime().state<NodeRegistry>().orphans; }
// A pending write that nothing could ever read: no handle names it, and every reference to
// its memory is its own (its WriteDest and leaves of its own graph that no handle names). Writing it would only
// cost time (a temporary view written into and dropped with its array).
bool unobservable(const Node& w) {
  if (w.array_refs.load(std::memory_order_relaxed) > 0) return false;
  const Storage* s = w.dest->storage.get();
  if (s->release) return false;  // foreign memory (DLPack, from_device_pointer): its owner reads it
  long own = 1;
  std::vector<const Node*> stack{&w};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n->k() == NodeKind::Buffer) {
      if (n->storage.get() != s) continue;
      // A leaf on the memory that a handle names can read the write later.
      if (n->array_refs.load(std::memory_order_relaxed) > 0 || n->lazy_views.load(std::memory_order_relaxed) > 0)
        return false;
      ++own;
      continue;
    }
    for (const auto& in : n->inputs) stack.push_back(in.get());
  }
  return w.dest->storage.use_count() <= own;
}
void prune(std::vector<NodePtr>& list) {
  size_t k = 0;
  for (auto& w : list) {
    if (!w->dest || w->is_materialized()) continue;
    if (unobservable(*w)) {
      void* self = w.get();
      w->dest->storage->pending_write.compare_exchange_strong(self, nullptr);
      w->dest.reset();
      continue;
    }
    list[k++] = std::move(w);
  }
  list.resize(k);
}
struct PendingWrites {
  std::vector<NodePtr> list;
  ~PendingWrites() {
    prune(list);
    if (list.empty()) return;
    auto& o = orphans();
    std::lock_guard<std::mutex> lk(o.mu);
    for (auto& w : list) o.list.push_back(std::move(w));
    o.count.store(o.list.size());
  }
};
PendingWrites& thread_writes() {
  thread_local PendingWrites w;
  return w;
}
}  // namespace

void add_pending_write(const NodePtr& w) {
  auto& pw = thread_writes();
  if (pw.list.size() >= 16) prune(pw.list);
  pw.list.push_back(w);
}

std::vector<NodePtr> pending_writes() {
  auto& pw = thread_writes();
  prune(pw.list);
  std::vector<NodePtr> out = pw.list;
  auto& o = orphans();
  if (o.count.load() > 0) {
    std::lock_guard<std::mutex> lk(o.mu);
    prune(o.list);
    o.count.store(o.list.size());
    out.insert(out.end(), o.list.begin(), o.list.end());
  }
  return out;
}

size_t pending_write_count() {  // an upper bound (no pruning: callers need not hold graph_mutex())
  return thread_writes().list.size() + orphans().count.load();
}

}  // namespace cufuse::detail
