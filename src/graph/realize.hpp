// src/graph/realize.hpp: the materialization points the graph layer calls, and the hooks
// through which the executor, a layer above (src/exec/executor.cpp), answers them.
#pragma once
#include <vector>

#include "core/node.hpp"

namespace cufuse::detail {

// Materializes the roots: each becomes a Buffer leaf (contiguous, in new memory) holding
// its value, or, for a pending in-place write, a leaf on the memory it writes; nodes already
// in memory are left alone. The evaluation also takes along (gather_roots in executor.cpp):
// this thread's pending writes, every node it computes that an Array handle names (written
// out, so later statements start from memory), pending roots that read what it computes or
// read memory it writes. Takes graph_mutex().
void realize(const std::vector<NodePtr>& roots);

// Computes `value` (same shape and dtype as the target) into the memory of `target`
// (a Buffer leaf with storage, any strides), without realizing `value`. First settles
// pending work that reads the target's memory, and goes through a temporary when `value`
// reads that memory other than element-for-element.
void write_into(const NodePtr& target, const NodePtr& value);

// Realizes `node` if the graph under it has grown past the budget of cufuse::Config.
void maybe_auto_eval(const NodePtr& node);

// For a Buffer leaf whose memory has a pending in-place write made through another handle
// (Storage::pending_write): carries that write out now, so the leaf is read after it.
void settle_pending_write(const NodePtr& leaf);
// Carries out this thread's pending in-place writes (at a boundary that reads memory behind
// the graph's back: a fuse() replay's captured arrays, a user's raw kernel).
void settle_pending_writes();

// The executor's implementations of the calls above. graph/ never includes src/exec: the
// executor installs these once, at static initialization, and the calls above forward to
// them (graph/realize.cpp). cufuse's link interface keeps the executor's object in a static
// link although no symbol of it is named (CMakeLists.txt, cufuse_exec_link_anchor).
struct EvalHooks {
  void (*realize)(const std::vector<NodePtr>& roots);
  void (*write_into)(const NodePtr& target, const NodePtr& value);
  void (*maybe_auto_eval)(const NodePtr& node);
  void (*settle_pending_write)(const NodePtr& leaf);
  void (*settle_pending_writes)();
};
// `hooks` must outlive every evaluation (the executor passes a constant).
void install_eval_hooks(const EvalHooks* hooks);

}  // namespace cufuse::detail
