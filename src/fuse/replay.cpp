// src/fuse/replay.cpp: a fused call (include/cufuse/fuse.hpp). The hot path: match the
// arguments against the most recently used entries (dtype, shape, strides, alignment,
// device; scalar kinds), then the one run path of an executable (exec/run_path.hpp) with a
// ReplaySite: one block per buffer from the stream-ordered pool, each kernel's parameter
// template copied and patched with what depends on the call (argument addresses and
// scalars, buffers, workspace), one CUDA graph launch for a plan of kernels only
// (runtime/kernel_chain.hpp; FuseOptions::cuda_graph) or one launch per kernel, cross-stream
// use recorded, and each result wrapped in a Buffer node built directly (its hash
// precomputed at trace time). No expression graph, no planning.
// Entries for the host reference run the traced graph, arguments substituted, on the host.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "core/counters.hpp"
#include "cufuse/backend.hpp"
#include "exec/binding.hpp"
#include "exec/run_path.hpp"
#include "exec/tiered.hpp"
#include "fuse/engine.hpp"
#include "graph/realize.hpp"
#include "reference/evaluator.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/log.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

Entry::~Entry() = default;

// A result: a contiguous Buffer leaf on new memory, made without finish_node.
static NodePtr result_node(const Entry& en, int r, std::shared_ptr<Storage> st) {
  auto n = new_node(NodeKind::Buffer);
  const Node& root = *en.roots[r];
  n->dtype = root.dtype;
  n->layout = en.root_layout[r];
  n->hash = en.root_hash[r];
  n->pins.add(st.get(), st->nbytes);
  n->device = static_cast<int16_t>(st->device);
  n->storage = std::move(st);
  return n;
}

void deliver(const Entry& en, std::shared_ptr<Storage>* stor, Array* out) {
  const size_t nout = en.out_root.size();
  for (size_t k = 0; k < nout; ++k) {
    const int r = en.out_root[k];
    bool dup = false;
    for (size_t j = 0; j < k && !dup; ++j)
      if (en.out_root[j] == r) {
        out[k] = out[j];  // the function returned one array twice: one array, twice
        dup = true;
      }
    if (!dup) out[k] = Array(result_node(en, r, std::move(stor[r])));
  }
}

void note_entry_uses(const Entry& en, const FuseArg* args, void* stream, int device) {
  for (size_t i = 0; i < en.sig.size(); ++i)
    if (en.sig[i].is_array) note_stream_use(*args[i].array->node()->storage, stream, device);
  for (const auto& c : en.captured) note_stream_use(*c, stream, device);
}

namespace {

class ReplaySource final : public LeafSource {
 public:
  ReplaySource(const Entry& en, const FuseArg* args, const char* const* data) : en_(en), args_(args), data_(data) {}
  const Node& node(int leaf) const override { return *en_.leaves[leaf]; }
  const char* data(int leaf) const override {
    const LeafBind& b = en_.binds[leaf];
    return b.kind == LeafBind::Kind::ArgData ? data_[b.slot] + b.delta_bytes : b.fixed;
  }
  Scalar scalar(int leaf) const override {
    const LeafBind& b = en_.binds[leaf];
    if (b.kind == LeafBind::Kind::ArgScalar) return Scalar::typed(args_[b.slot].scalar, en_.leaves[leaf]->dtype);
    return en_.leaves[leaf]->scalar;
  }

 private:
  const Entry& en_;
  const FuseArg* args_;
  const char* const* data_;
};

// ---- the host reference: the traced graph with the arguments in place of placeholders
NodePtr substitute(const Entry& en, const FuseArg* args, const NodePtr& root,
                   std::unordered_map<const Node*, NodePtr>& memo) {
  std::vector<std::pair<const Node*, size_t>> stack{{root.get(), 0}};
  std::unordered_map<const Node*, NodePtr> owner;  // const Node* -> its NodePtr (from the parent)
  owner.emplace(root.get(), root);
  while (!stack.empty()) {
    auto& [x, i] = stack.back();
    if (memo.count(x)) {
      stack.pop_back();
      continue;
    }
    if (!x->is_leaf() && i < x->inputs.size()) {
      const NodePtr& in = x->inputs[i++];
      owner.emplace(in.get(), in);
      if (!memo.count(in.get())) stack.emplace_back(in.get(), 0);
      continue;
    }
    NodePtr out;
    if (x->is_placeholder() && x->placeholder_slot >= 0) {
      const int s = x->placeholder_slot;
      const NodePtr& a = args[s].array->node();
      out = make_buffer(x->dtype, Layout{x->shape(), x->layout.strides, a->layout.offset + (x->layout.offset - en.sig[s].residue)},
                        a->storage);
    } else if (x->k() == NodeKind::Scalar) {
      out = owner.at(x);
      for (const auto& [n, slot] : en.arg_scalar_nodes)
        if (n == x) out = make_scalar(Scalar::typed(args[slot].scalar, x->dtype), x->dtype, x->shape());
    } else if (x->is_leaf()) {
      out = owner.at(x);
    } else {
      auto c = new_node(x->k());
      c->dtype = x->dtype;
      c->op = x->op;
      c->layout = x->layout;
      c->attrs = x->attrs;
      c->gen = x->gen;
      c->scalar = x->scalar;
      for (const auto& in : x->inputs) c->inputs.push_back(memo.at(in.get()));
      finish_node(*c);
      c->hash = x->hash;
      out = std::move(c);
    }
    memo.emplace(x, std::move(out));
    stack.pop_back();
  }
  return memo.at(root.get());
}

void replay_on_host(const Entry& en, const FuseArg* args, Array* out) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  std::unordered_map<const Node*, NodePtr> memo;
  std::vector<NodePtr> roots;
  for (const auto& r : en.roots) roots.push_back(substitute(en, args, r, memo));
  std::vector<HostArray> vals = reference_evaluate(roots);
  counters().kernels_launched += en.ex->steps.size();
  std::vector<std::shared_ptr<Storage>> stor;
  for (auto& v : vals) {
    auto st = allocate_host(v.bytes.size());
    if (!v.bytes.empty()) std::memcpy(st->ptr, v.bytes.data(), v.bytes.size());
    stor.push_back(std::move(st));
  }
  deliver(en, stor.data(), out);
}

}  // namespace

void bind_step(const Entry& en, size_t step, const FuseArg* args, const char* const* data, void* const* buffers,
               void* workspace, std::vector<unsigned char>& out) {
  const StepBind& sb = en.steps[step];
  out.assign(sb.params.begin(), sb.params.end());
  const ReplaySource src(en, args, data);
  apply_patches(out.data(), sb.dynamic.data(), sb.dynamic.size(), src, buffers, workspace);
}

bool matches(const Entry& en, const FuseArg* args, int nargs, const char** data) {
  if (static_cast<int>(en.sig.size()) != nargs) return false;
  bool any_array = false;
  for (int i = 0; i < nargs; ++i) {
    const ArgSig& s = en.sig[i];
    if (s.is_array != (args[i].array != nullptr)) return false;
    if (s.is_array) {
      if (!array_matches(s, *args[i].array, &data[i])) return false;
      any_array = true;
    } else {
      const Scalar& v = args[i].scalar;
      if (v.kind() != s.kind || v.weak() != s.weak || v.dtype() != s.sdtype) return false;
      if (s.by_value && !same_scalar(v, s.value)) return false;
      data[i] = nullptr;
    }
  }
  for (const auto& [slot, t] : en.fits)
    if (!args[slot].scalar.fits(t)) return false;  // re-traced: NumPy's OverflowError comes from there
  if (!any_array) {  // where it runs follows the backend and the current device
    const bool host = current_backend() == Backend::Reference;
    if (host != en.host || (!host && en.device != current_device())) return false;
  }
  return true;
}

namespace {
// A fused call on the one run path (exec/run_path.hpp): each kernel step's parameters from
// the entry's template, patched from the call's arguments; results as new Arrays. While a
// step is tiered (Entry::tier_pending), the call takes its kernel once, as lazy runs do
// (exec/executor.cpp, LazySite): the compiled one if its background compile has landed (the
// first such call counts the swap), else the interpreter with its own template.
class ReplaySite final : public RunSite {
 public:
  ReplaySite(const Entry& en, const FuseArg* args, const char* const* data, Array* out)
      : en_(en), args_(args), data_(data), out_(out), src_(en, args, data),
        pending_(en.tier_pending.load(std::memory_order_acquire)) {
    if (!pending_) return;
    for (size_t s = 0; s < en.steps.size(); ++s) {
      const Step& st = en.ex->steps[s];
      void* k = en.steps[s].kernel;
      bool interp = false;
      if (st.tier && st.spec.numel > 0) {
        const CompiledKernel* ck = kernel_for_run(st, en.device);
        k = ck ? ck->kernel_for(en.device) : nullptr;
        interp = !ck;
      }
      kernels_.push_back(k);
      interp_.push_back(interp);
      interpreted_ = interpreted_ || interp;
    }
  }
  // A step runs on the interpreter in this call (no chain then).
  bool interpreted() const { return interpreted_; }
  // The entry still had tiered steps when this call began.
  bool pending() const { return pending_; }
  const LeafSource& source() const override { return src_; }
  void bind(size_t s, void* const* buffers, void* workspace, std::vector<unsigned char>& out) const override {
    if (!pending_ || !interp_[s]) return bind_step(en_, s, args_, data_, buffers, workspace, out);
    const StepBind& sb = en_.steps[s];
    out.assign(sb.interp_params.begin(), sb.interp_params.end());
    apply_patches(out.data(), sb.interp_dynamic.data(), sb.interp_dynamic.size(), src_, buffers, workspace);
  }
  void* kernel(size_t s) const override {
    if (!pending_) return en_.steps[s].kernel;
    if (!interp_[s]) return kernels_[s];
    counters().interpreted_launches++;
    return interpreter_kernel(en_.device, en_.ex->steps[s].tier->interp.name);
  }
  const LaunchDims& dims(size_t s, const Step& st) const override { return launched(s, st).dims; }
  const KernelSpec& launched(size_t s, const Step& st) const override {
    return pending_ && interp_[s] ? st.tier->interp : st.spec;
  }
  void note_uses(void* stream, int device) const override { note_entry_uses(en_, args_, stream, device); }
  void realize(std::shared_ptr<Storage>* storage) override { deliver(en_, storage, out_); }
  // Every step compiled now: their kernels into the entry, its chain made, pending cleared.
  void settle(Entry& en) const {
    std::lock_guard<std::mutex> lk(en.chain_mu);
    if (!en.tier_pending.load(std::memory_order_relaxed)) return;  // another call settled it
    for (size_t s = 0; s < en.steps.size(); ++s)
      if (!en.steps[s].kernel) en.steps[s].kernel = kernels_[s];
    if (en.wants_chain) make_entry_chain(en);
    en.tier_pending.store(false, std::memory_order_release);
  }

 private:
  const Entry& en_;
  const FuseArg* args_;
  const char* const* data_;
  Array* out_;
  const ReplaySource src_;
  bool pending_ = false, interpreted_ = false;
  SmallVec<void*, 8> kernels_;  // per step while pending: the kernel this call launches
  SmallVec<bool, 8> interp_;    // per step while pending: on the interpreter
};
}  // namespace

void replay_entry(FuseEngine& e, Entry& en, const FuseArg* args, const char* const* data, Array* out) {
  if (en.host) {
    replay_on_host(en, args, out);
    return;
  }
  DeviceGuard on(en.device);
  const size_t nb = en.ex->buffers.size();
  std::shared_ptr<Storage> small[8];
  std::vector<std::shared_ptr<Storage>> big(nb > 8 ? nb : 0);
  ReplaySite site(en, args, data, out);
  // A tiered entry whose last interpreted step has compiled: its chain from this call on
  // (runtime/kernel_chain.hpp holds only compiled kernels).
  if (site.pending() && !site.interpreted()) site.settle(en);
  KernelChain* chain = site.pending() ? (site.interpreted() ? nullptr : en.chain.get()) : en.chain.get();
  const RunOutcome o = run_executable(*en.ex, site, chain, current_stream(), en.device, nb > 8 ? big.data() : small);
  if (o.graph) e.graph_launches++;
}

// ------------------------------------------------------------------ the entry point
std::shared_ptr<FuseEngine> new_fuse_engine(const FuseOptions& opt) {
  auto e = std::make_shared<FuseEngine>();
  e->opt = opt;
  if (e->opt.max_signatures < 1) e->opt.max_signatures = 1;
  return e;
}

FuseStats fuse_stats(const FuseEngine& e) {
  FuseStats s;
  s.traces = e.traces.load();
  s.replays = e.replays.load();
  s.graph_launches = e.graph_launches.load();
  std::lock_guard<std::mutex> lk(const_cast<FuseEngine&>(e).mu);
  s.signatures = e.entries.size();
  return s;
}

void fuse_clear(FuseEngine& e) {
  std::lock_guard<std::mutex> lk(e.mu);
  e.entries.clear();
  e.scalars_by_value = false;
}

namespace {
std::shared_ptr<Entry> find_entry(FuseEngine& e, const FuseArg* args, int nargs, const char** data) {
  std::lock_guard<std::mutex> lk(e.mu);
  for (size_t i = 0; i < e.entries.size(); ++i) {
    if (!matches(*e.entries[i], args, nargs, data)) continue;
    if (i > 0) std::rotate(e.entries.begin(), e.entries.begin() + static_cast<std::ptrdiff_t>(i),
                           e.entries.begin() + static_cast<std::ptrdiff_t>(i) + 1);  // most recent first
    return e.entries[0];
  }
  return nullptr;
}
}  // namespace

void fuse_call(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs, Array* out, int nout,
               std::vector<Array>* dynamic) {
  if (fuse_is_tracing()) {  // inside another fused function's trace: its ops join that graph
    std::vector<Array> r;
    thunk(fn, args, r);
    if (nout < 0) *dynamic = std::move(r);
    else
      for (int k = 0; k < nout; ++k) out[k] = std::move(r[static_cast<size_t>(k)]);
    return;
  }
  // Captured arrays are read from their memory: pending writes into them go first.
  settle_pending_writes();
  const char* small[16];
  std::vector<const char*> big(nargs > 16 ? static_cast<size_t>(nargs) : 0);
  const char** data = nargs > 16 ? big.data() : small;
  std::shared_ptr<Entry> en = find_entry(e, args, nargs, data);
  if (!en) {
    for (int i = 0; i < nargs; ++i) {  // arrays in memory first (a lazy argument is computed now)
      if (!args[i].array) continue;
      const Array& a = *args[i].array;
      if (!a.defined())
        throw ValueError(fmt::format("{}: argument {} is an empty Array handle; expected an array with data",
                                     e.opt.name, i));
      if (a.node()->reads_placeholder || a.node()->is_placeholder())
        throw ValueError(fmt::format("{}: argument {} is a placeholder ({} {}); expected an array with data "
                                     "(placeholders are for planning and dumping kernels)", e.opt.name, i,
                                     name(a.dtype()), to_string(a.shape())));
      a.eval();
    }
    en = find_entry(e, args, nargs, data);
  }
  if (!en) {
    en = trace_entry(e, fn, thunk, args, nargs, nout);
    if (!matches(*en, args, nargs, data))
      throw InternalError(fmt::format("{}: a fresh trace does not match the call it was traced from", e.opt.name));
    std::lock_guard<std::mutex> lk(e.mu);
    e.entries.insert(e.entries.begin(), en);
    if (static_cast<int>(e.entries.size()) > e.opt.max_signatures) e.entries.pop_back();
  }
  e.replays++;
  if (nout < 0) {
    std::vector<Array> r(en->out_root.size());
    replay_entry(e, *en, args, data, r.data());
    *dynamic = std::move(r);
  } else {
    replay_entry(e, *en, args, data, out);
  }
}

}  // namespace cufuse::detail
