// src/graph/lazy_base.hpp: how a view of a lazy array remembers what it views.
// `view` maps the view's indices to row-major positions of `node`'s value; once `node` is
// materialized (contiguous, offset 0) the view becomes a strided Buffer leaf on its memory.
#pragma once
#include "graph/node.hpp"

namespace cufuse::detail {

struct LazyBase {
  NodePtr node;
  Layout view;
  bool read_only = false;  // seen through broadcast_to
};

}  // namespace cufuse::detail
