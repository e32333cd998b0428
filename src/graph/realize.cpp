// src/graph/realize.cpp: the materialization points of graph/realize.hpp, forwarded to the
// hooks the executor installs (src/exec/executor.cpp, at static initialization). graph/ sits
// below the executor, so it reaches evaluation through these and never includes src/exec.
#include "graph/realize.hpp"

#include <atomic>

#include "cufuse/error.hpp"

namespace cufuse::detail {

namespace {
// Set once, before main (the executor's static initializer), read on every op built: an
// atomic pointer to an immutable table, as runtime/device.cpp's stream-boundary hook.
std::atomic<const EvalHooks*> g_hooks{nullptr};

const EvalHooks& hooks() {
  const EvalHooks* h = g_hooks.load(std::memory_order_acquire);
  if (!h) [[unlikely]]
    throw InternalError("no evaluator installed: src/exec/executor.cpp is not linked in (link cufuse's "
                        "interface options, which keep it)");
  return *h;
}
}  // namespace

void install_eval_hooks(const EvalHooks* h) { g_hooks.store(h, std::memory_order_release); }

void realize(const std::vector<NodePtr>& roots) { hooks().realize(roots); }
void write_into(const NodePtr& target, const NodePtr& value) { hooks().write_into(target, value); }
void maybe_auto_eval(const NodePtr& node) { hooks().maybe_auto_eval(node); }
void settle_pending_write(const NodePtr& leaf) { hooks().settle_pending_write(leaf); }
void settle_pending_writes() { hooks().settle_pending_writes(); }

}  // namespace cufuse::detail
