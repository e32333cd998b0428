// src/graph/trace_refusals.cpp: the indexing operations cufuse::fuse cannot trace, refused
// at trace time with a NotSupportedError naming the operation (graph/indexing.hpp).
//
//   - Scatters (put, add_at, maximum_at, minimum_at, x[idx] = v, x[idx] op= v, x[mask] = v,
//     x[mask] op= v) write memory when they are called; they are not nodes of the lazy graph,
//     so a trace would carry one out once, at trace time, and no replay would repeat it (and
//     an array made from the arguments has no memory to write while tracing). Every scatter
//     is refused while tracing; where(mask, v, x) is the lazy form of x[mask] = v and traces.
//   - Selections by mask (x[mask], nonzero, where(cond), argwhere, flatnonzero, extract,
//     compress) have a shape that depends on the mask's values: a replay would need the count
//     read back each call and a plan per count. One whose mask depends on an argument is
//     refused; one over captured data depends on no argument and is computed at trace time,
//     like any such work (src/fuse/trace.cpp, step 3).
#include <fmt/format.h>

#include "core/node.hpp"
#include "cufuse/error.hpp"
#include "graph/indexing.hpp"
#include "graph/tracing.hpp"

namespace cufuse::detail {

void refuse_scatter_in_trace(const char* what) {
  if (!fuse_is_tracing()) return;
  throw NotSupportedError(fmt::format(
      "{} cannot be traced by cufuse::fuse: a scatter writes memory when it is called, not lazily, so a replay "
      "would not repeat it; call it outside the fused function (for x[mask] = v, where(mask, v, x) is the "
      "lazy form, and traces)",
      what));
}

void refuse_selection_in_trace(const Array& mask, const char* what) {
  if (!fuse_is_tracing() || !mask.defined()) return;
  const auto& n = mask.node();
  if (!n->reads_placeholder && !n->is_placeholder()) return;
  throw NotSupportedError(fmt::format(
      "{} cannot be traced by cufuse::fuse: its result's shape depends on the values of the function's arguments "
      "(the count is read back from the device each time); select outside the fused function, or keep the shape "
      "static with where(mask, x, 0)",
      what));
}

}  // namespace cufuse::detail
