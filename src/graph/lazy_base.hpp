// src/graph/lazy_base.hpp: how a view of a lazy array remembers what it views.
// `view` maps the view's indices to row-major positions of `node`'s value; once `node` is
// materialized (contiguous, offset 0) the view becomes a strided Buffer leaf on its memory.
#pragma once
#include "core/node.hpp"

namespace cufuse::detail {

struct LazyBase {
  NodePtr node;
  Layout view;
  bool read_only = false;  // seen through broadcast_to

  // Counted on the node: an in-place write into a lazy array that a view names goes to
  // memory (the view must see it), not just to a new lazy node (src/graph/array.cpp).
  LazyBase(NodePtr n, Layout v, bool ro) : node(std::move(n)), view(std::move(v)), read_only(ro) {
    node->lazy_views.fetch_add(1, std::memory_order_relaxed);
  }
  ~LazyBase() { node->lazy_views.fetch_sub(1, std::memory_order_relaxed); }
  LazyBase(const LazyBase&) = delete;
  LazyBase& operator=(const LazyBase&) = delete;
};

}  // namespace cufuse::detail
