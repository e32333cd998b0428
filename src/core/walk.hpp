// src/core/walk.hpp: the depth-first walk of the node graph that every pass recursing over
// inputs shares, with an explicit stack: a chain as deep as a user makes it (a loop of
// 100,000 ops) costs heap memory, not call stack.
#pragma once
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

namespace walk_impl {
// A node as the walk holds it: a plain pointer, or the NodePtr that holds it (in the
// caller's root, or in its user's inputs) for callbacks that need a reference of their own.
inline const Node* node_of(const Node* n) { return n; }
inline const Node* node_of(const NodePtr* n) { return n->get(); }
inline const Node* arg_of(const Node* n) { return n; }
inline const NodePtr& arg_of(const NodePtr* n) { return *n; }
inline const Node* input_of(const Node*, const Node* user, size_t k) { return user->inputs[k].get(); }
inline const NodePtr* input_of(const NodePtr*, const Node* user, size_t k) { return &user->inputs[k]; }

// The inputs a walk visits: all of them where expand(n) is a bool that holds, or the range
// [first, end) where it is an InputRange (a gather's index inputs, not its source).
struct InputRange {
  uint32_t first = 0, end = 0;
};
inline InputRange range_of(const Node* n, bool e) { return InputRange{0, e ? static_cast<uint32_t>(n->inputs.size()) : 0u}; }
inline InputRange range_of(const Node*, InputRange r) { return r; }

template <class Ref, class Done, class Expand, class Post>
void post_order(Ref root, Done& done, Expand& expand, Post& post) {
  if (done(arg_of(root))) return;
  struct Frame {
    Ref n;
    uint32_t next, end;
  };
  std::vector<Frame> stack;
  auto frame = [&](Ref r) {
    const InputRange ir = range_of(node_of(r), expand(arg_of(r)));
    return Frame{r, ir.first, ir.end};
  };
  stack.push_back(frame(root));
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Node* n = node_of(f.n);
    if (f.next < f.end && f.next < n->inputs.size()) {
      const Ref in = input_of(f.n, n, f.next++);
      if (!done(arg_of(in))) stack.push_back(frame(in));  // f is stale now
      continue;
    }
    const Ref r = f.n;
    stack.pop_back();
    post(arg_of(r));
  }
}
}  // namespace walk_impl
using walk_impl::InputRange;

// Calls post(n) for `root` and the nodes below it, in the order of the recursive walk
//   visit(n) { if (done(n)) return; if (expand(n)) for (in : n->inputs) visit(in); post(n); }
// (inputs first, in input order, each node once): post(n) must make done(n) true. expand(n)
// says whether a node's inputs are walked (an elementwise op's are; a leaf's, or a node read
// from memory, are not), or, returning an InputRange, which of its inputs are. The callbacks
// take a `const Node*`.
template <class Done, class Expand, class Post>
void walk_post_order(const Node* root, Done&& done, Expand&& expand, Post&& post) {
  walk_impl::post_order(root, done, expand, post);
}
// The same walk where the callbacks take the `const NodePtr&` holding each node (post can
// then build nodes over it). No node's inputs may change during the walk.
template <class Done, class Expand, class Post>
void walk_post_order(const NodePtr& root, Done&& done, Expand&& expand, Post&& post) {
  walk_impl::post_order(&root, done, expand, post);
}

// The nodes (or node-and-flag keys, or storages) a walk has seen: a linear search over its
// first 32 entries, so a small graph's walk allocates nothing, and a hash set past them, so a
// large one's stays linear.
class VisitedSet {
 public:
  bool insert(uintptr_t key) {  // false if seen before
    if (big_.empty()) {
      for (size_t i = 0; i < n_; ++i)
        if (small_[i] == key) return false;
      if (n_ < kSmall) {
        small_[n_++] = key;
        return true;
      }
      big_.insert(small_, small_ + n_);
    }
    return big_.insert(key).second;
  }
  bool insert(const void* p) { return insert(reinterpret_cast<uintptr_t>(p)); }
  bool contains(uintptr_t key) const {
    if (big_.empty()) {
      for (size_t i = 0; i < n_; ++i)
        if (small_[i] == key) return true;
      return false;
    }
    return big_.count(key) > 0;
  }
  bool contains(const void* p) const { return contains(reinterpret_cast<uintptr_t>(p)); }
  void clear() {
    n_ = 0;
    big_.clear();
  }

 private:
  static constexpr size_t kSmall = 32;
  uintptr_t small_[kSmall];
  size_t n_ = 0;
  std::unordered_set<uintptr_t> big_;
};

}  // namespace cufuse::detail
