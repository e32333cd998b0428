// src/typed/typed_call.cpp: one evaluation of typed expressions (include/cufuse/typed_eval.hpp),
// the typed layer's run site over fuse()'s traces.
//
// A TypedCache belongs to one tuple of expression types and shape key. Its first call of a
// signature goes through fuse_call (src/fuse: the expression rebuilt over placeholders,
// traced, planned once, replayed); the entry it made is then prepared (prepared.hpp). Later
// calls: match the arguments against the last prepared entry (fuse's matches: dtype, shape,
// strides, alignment, device), then the one run path (exec/run_path.hpp) with a TypedSite,
// whose bind copies the prepared template and writes the pointers (scalar parameters are
// rebound only where a value changed: a literal, x * 3, costs a compare, not a conversion).
// No lock, no list rotation, no counter on the hot path.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "cufuse/backend.hpp"
#include "cufuse/typed_eval.hpp"
#include "exec/run_path.hpp"
#include "fuse/engine.hpp"
#include "core/walk.hpp"
#include "graph/realize.hpp"
#include "plan/cse.hpp"
#include "typed/prepared.hpp"
#include "graph/tracing.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

class TypedSite final : public RunSite {
 public:
  TypedSite(const Prepared& p, const FuseArg* args, const char* const* data, bool scalars_same, Array* out)
      : p_(p), en_(*p.en), args_(args), data_(data), same_(scalars_same), out_(out) {}
  const LeafSource& source() const override { throw InternalError("typed run site: a library step"); }
  void bind(size_t s, void* const* buffers, void* workspace, std::vector<unsigned char>& out) const override {
    bind_prepared(p_, s, args_, data_, same_, buffers, workspace, out);
  }
  void* kernel(size_t s) const override { return en_.steps[s].kernel; }
  void note_uses(void* stream, int device) const override { note_entry_uses(en_, args_, stream, device); }
  void realize(std::shared_ptr<Storage>* storage) override { deliver(en_, storage, out_); }

 private:
  const Prepared& p_;
  const Entry& en_;
  const FuseArg* args_;
  const char* const* data_;
  bool same_;
  Array* out_;
};

}  // namespace

namespace {
// The trace of an expression with its common subexpressions merged: a subexpression written
// once and used twice (`auto e = exp(x - m); e / sum(e)`) is two copies in the expression's
// type, so its rebuilt DAG holds it twice; the lazy path merges such copies before planning
// (plan/cse.hpp), and so does this. Scalar leaves are kept apart while merging: each one is
// a fuse() argument, and two that hold one value in this call may not in the next.
struct CseTrace {
  const void* fn;
  TraceThunk thunk;
  static void run(const void* ctx, const FuseArg* args, std::vector<Array>& out) {
    const CseTrace& t = *static_cast<const CseTrace*>(ctx);
    t.thunk(t.fn, args, out);
    if (!cse_enabled() || out.empty()) return;
    std::lock_guard<std::recursive_mutex> lk(graph_mutex());
    std::vector<NodePtr> roots;
    for (const Array& a : out) {
      bool have = false;
      for (const auto& r : roots) have = have || r.get() == a.node().get();
      if (!have) roots.push_back(a.node());
    }
    std::vector<Node*> scalars;
    VisitedSet seen;
    for (const auto& r : roots)
      walk_post_order(
          r.get(), [&](const Node* n) { return seen.contains(n); }, [](const Node* n) { return !n->is_leaf(); },
          [&](const Node* n) {
            seen.insert(n);
            if (n->k() == NodeKind::Scalar && !n->varies) scalars.push_back(const_cast<Node*>(n));
          });
    for (Node* n : scalars) n->varies = true;
    eliminate_common_subexpressions(roots);
    for (Node* n : scalars) n->varies = false;
  }
};
}  // namespace

TypedCache* new_typed_cache() {
  auto* c = new TypedCache;  // one per expression type and shape key, for the process
  FuseOptions opt;
  opt.name = "typed expression";
  c->engine = new_fuse_engine(opt);
  return c;
}

namespace {
constexpr size_t kMaxPrepared = 64;  // signatures beyond: fuse_call's own look-up

bool run_prepared(const Prepared& p, const FuseArg* args, const char* const* data, Array* out) {
  const Entry& en = *p.en;
  if (p.library) return false;
  const bool same = same_scalars(p, args);
  DeviceGuard on(en.device);
  const size_t nb = en.ex->buffers.size();
  std::shared_ptr<Storage> small[8];
  std::vector<std::shared_ptr<Storage>> big(nb > 8 ? nb : 0);
  TypedSite site(p, args, data, same, out);
  run_executable(*en.ex, site, en.chain.get(), current_stream(), en.device, nb > 8 ? big.data() : small);
  return true;
}
}  // namespace

bool typed_call(TypedCache& c, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs, Array* out,
                int nout) {
  if (fuse_is_tracing()) {  // inside a fused function's trace: the expression joins its graph
    fuse_call(*c.engine, fn, thunk, args, nargs, out, nout, nullptr);
    return true;
  }
  settle_pending_writes();
  const char* small[16];
  std::vector<const char*> big(nargs > 16 ? static_cast<size_t>(nargs) : 0);
  const char** data = nargs > 16 ? big.data() : small;
  // the hot path: the signature of the last call
  if (Prepared* p = c.last.load(std::memory_order_acquire); p && prepared_matches(*p, args, nargs, data)) [[likely]]
    if (run_prepared(*p, args, data, out)) return true;
  for (int i = 0; i < nargs; ++i)  // a leaf not in memory: the caller evaluates it lazily
    if (args[i].array && args[i].array->is_lazy()) return false;
  Prepared* found = nullptr;
  {
    std::lock_guard<std::mutex> lk(c.mu);
    for (auto& q : c.prepared)
      if (prepared_matches(*q, args, nargs, data)) {
        found = q.get();
        c.last.store(found, std::memory_order_release);
        break;
      }
  }
  if (found && run_prepared(*found, args, data, out)) return true;
  // A new signature, a library step or the host reference: fuse() traces the call or finds
  // its entry, and runs it.
  const CseTrace trace{fn, thunk};
  fuse_call(*c.engine, &trace, &CseTrace::run, args, nargs, out, nout, nullptr);
  if (found || current_backend() == Backend::Reference) return true;  // host entries replay through fuse
  std::shared_ptr<Entry> en;
  {
    std::lock_guard<std::mutex> lk(c.engine->mu);
    if (!c.engine->entries.empty()) en = c.engine->entries.front();  // the one just used
  }
  // (an entry with a step still on the interpreter replays through fuse until its compiled
  // kernels land: fuse/replay.cpp swaps them in; it is prepared at the next call after)
  if (!en || en->host || en->tier_pending.load(std::memory_order_acquire) || !matches(*en, args, nargs, data))
    return true;
  std::lock_guard<std::mutex> lk(c.mu);
  if (c.prepared.size() >= kMaxPrepared) return true;
  c.prepared.push_back(prepare(std::move(en), args, data));
  c.last.store(c.prepared.back().get(), std::memory_order_release);
  return true;
}

}  // namespace cufuse::detail
