// src/fuse/trace.cpp: tracing a fused function into an Entry (src/fuse/engine.hpp).
//
// 1. Each array argument becomes a placeholder leaf with the argument's dtype, shape and
//    strides, its slot, and (as its offset) its address mod 16 in elements, so the plan
//    knows the argument's alignment. Scalars are passed as the caller's values.
// 2. The callable runs on them. With scalar arguments it runs a second time with other
//    values: Scalar leaves that changed, each equal to one argument (converted to the leaf's
//    dtype) in both runs, are bound to that argument; any other difference (C++ arithmetic on
//    a scalar, a branch on it, a changed graph) makes the scalars part of the signature.
// 3. Work that depends on no argument (captured lazy arrays, constants built inside) is
//    computed now; results that are not computed by a kernel (an argument or captured array
//    returned as it is) are copied, so every call returns new arrays.
// 4. The graph is scanned and planned once (build_executable); each leaf gets its binding
//    (argument data + offset, argument scalar, or fixed), each kernel its parameter template
//    with every fixed patch applied and the list of patches a call applies.
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "core/op_table.hpp"
#include "cufuse/backend.hpp"
#include "exec/binding.hpp"
#include "exec/precompile.hpp"
#include "exec/tiered.hpp"
#include "fuse/engine.hpp"
#include "graph/realize.hpp"
#include "graph/tracing.hpp"
#include "plan/signature.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/kernel_chain.hpp"
#include "runtime/storage.hpp"

namespace cufuse::detail {

namespace {

// A value of the same kind, weak-ness and dtype as v, distinct from v and from the other
// arguments' sentinels, exact in every dtype it may become, small enough to fit int8.
Scalar sentinel(const Scalar& v, int i) {
  Scalar s;
  switch (v.kind()) {
    case Scalar::Kind::Bool: s = Scalar(!v.to_bool()); break;
    case Scalar::Kind::Int: {
      int64_t c = 3 + 4 * int64_t(i);
      s = Scalar(c == v.to_int64() ? c + 2 : c);
      break;
    }
    case Scalar::Kind::UInt: {
      uint64_t c = 3 + 4 * uint64_t(i);
      s = Scalar(c == v.to_uint64() ? c + 2 : c);
      break;
    }
    case Scalar::Kind::Float: {  // far from v, so that no dtype rounds the two together
      double c = 0.375 + 0.25 * i;
      const double x = v.to_double();
      s = Scalar(std::isnan(x) || std::fabs(x - c) < 0.5 ? c + 1000 : c);
      break;
    }
  }
  return v.weak() ? s : Scalar::typed(s, v.dtype());
}

[[noreturn]] void rethrow_in(const Error& e, const std::string& fn) {
  std::string m = fmt::format("{} (while tracing {}", e.what(), fn);
  const std::string w = e.what();
  if (w.find("placeholder") != std::string::npos)
    m += ": inside a fused function array values are not known; move item()/to_host()/eval() out of it";
  m += ")";
  switch (e.kind()) {
    case ErrorKind::Value: throw ValueError(m);
    case ErrorKind::Type: throw TypeError(m);
    case ErrorKind::Index: throw IndexError(m);
    case ErrorKind::Overflow: throw OverflowError(m);
    case ErrorKind::OutOfMemory: throw OutOfMemoryError(m);
    case ErrorKind::NoDevice: throw NoDeviceError(m);
    case ErrorKind::Cuda: throw CudaError(m);
    case ErrorKind::NotSupported: throw NotSupportedError(m);
    case ErrorKind::Assertion: throw AssertionError(m);
    default: throw InternalError(m);
  }
}

void run_thunk(const FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, std::vector<Array>& out) {
  try {
    thunk(fn, args, out);
  } catch (const CompileError&) {
    throw;
  } catch (const Error& err) {
    rethrow_in(err, e.opt.name);
  }
}

// Nodes that depend on an argument: placeholder leaves of a slot, or bound Scalar leaves.
class DepWalk {
 public:
  explicit DepWalk(const std::unordered_set<const Node*>& arg_scalars) : arg_scalars_(arg_scalars) {}
  bool dep(const Node* n) {
    auto it = memo_.find(n);
    if (it != memo_.end()) return it->second;
    std::vector<std::pair<const Node*, size_t>> stack{{n, 0}};
    while (!stack.empty()) {
      auto& [x, i] = stack.back();
      if (x->is_leaf() || i >= x->inputs.size()) {
        bool d = x->is_leaf() ? (x->is_placeholder() && x->placeholder_slot >= 0) || arg_scalars_.count(x) > 0 : false;
        if (!x->is_leaf())
          for (const auto& in : x->inputs) d = d || memo_.at(in.get());
        memo_[x] = d;
        stack.pop_back();
        continue;
      }
      const Node* next = x->inputs[i++].get();
      if (!memo_.count(next)) stack.emplace_back(next, 0);
    }
    return memo_.at(n);
  }
  // Lazy arrays captured from outside (held by an Array other than the results) that depend
  // on no argument: computed now, so that they keep the values they had when written, as
  // the lazy path guarantees. Everything else stays in the plan and runs at every call
  // (captured memory is read as it is then).
  void independent(const std::vector<NodePtr>& roots, std::vector<NodePtr>& out) {
    auto held_by_results = [&](const Node* n) {
      int c = 0;
      for (const auto& r : roots) c += r.get() == n;
      return c;
    };
    auto fixed = [&](const Node* n) {
      return !n->is_leaf() && !dep(n) && n->array_refs.load() > held_by_results(n);
    };
    std::unordered_set<const Node*> seen;
    std::vector<NodePtr> stack(roots.begin(), roots.end());
    for (const auto& r : roots)
      if (fixed(r.get())) out.push_back(r);
    while (!stack.empty()) {
      NodePtr x = stack.back();
      stack.pop_back();
      if (!seen.insert(x.get()).second || x->is_leaf() || fixed(x.get())) continue;
      for (const auto& in : x->inputs) {
        if (fixed(in.get())) {
          bool have = false;
          for (const auto& o : out) have |= o.get() == in.get();
          if (!have) out.push_back(in);
        }
        stack.push_back(in);
      }
    }
  }

 private:
  const std::unordered_set<const Node*>& arg_scalars_;
  std::unordered_map<const Node*, bool> memo_;
};

// Runs the callable on placeholders and the given scalar values.
std::vector<Array> run_traced(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs,
                              const std::vector<Array>& ph, const std::vector<Scalar>& scalars) {
  std::vector<FuseArg> targs(static_cast<size_t>(nargs));
  for (int i = 0; i < nargs; ++i) {
    if (args[i].array) targs[i].array = &ph[i];
    else targs[i].scalar = scalars[i];
  }
  std::vector<Array> outs;
  TracingScope ts;
  run_thunk(e, fn, thunk, targs.data(), outs);
  return outs;
}

class TraceSource final : public LeafSource {
 public:
  explicit TraceSource(const Entry& en) : en_(en) {}
  const Node& node(int leaf) const override { return *en_.leaves[leaf]; }
  const char* data(int leaf) const override { return en_.binds[leaf].fixed; }
  Scalar scalar(int leaf) const override { return en_.leaves[leaf]->scalar; }

 private:
  const Entry& en_;
};

}  // namespace

void make_entry_chain(Entry& en) {
  std::vector<ChainNode> nodes;
  for (size_t s = 0; s < en.steps.size(); ++s) {
    const Step& st = en.ex->steps[s];
    if (st.spec.numel > 0) nodes.push_back({en.steps[s].kernel, st.spec.dims, st.spec.params.size()});
  }
  if (!nodes.empty()) en.chain = std::make_shared<KernelChain>(std::move(nodes), en.device);
}

std::shared_ptr<Entry> trace_entry(FuseEngine& e, const void* fn, TraceThunk thunk, const FuseArg* args, int nargs,
                                   int nout, PrecompileStats* precompile) {
  auto en = std::make_shared<Entry>();
  en->sig.resize(static_cast<size_t>(nargs));
  // ---- 1. the signature and the placeholders
  std::vector<Array> ph(static_cast<size_t>(nargs));
  std::vector<Scalar> values(static_cast<size_t>(nargs));
  int device = -2;
  bool any_scalar = false;
  for (int i = 0; i < nargs; ++i) {
    ArgSig& s = en->sig[i];
    if (!args[i].array) {
      any_scalar = true;
      const Scalar& v = args[i].scalar;
      s.kind = v.kind();
      s.weak = v.weak();
      s.sdtype = v.dtype();
      s.value = v;
      values[i] = v;
      continue;
    }
    const NodePtr& n = args[i].array->node();
    s.is_array = true;
    s.dtype = n->dtype;
    s.shape = n->shape();
    s.strides = n->layout.strides;
    // A placeholder stands for an argument only when precompiling: contiguous and aligned, on
    // the current device (the host on the reference backend or without a device).
    if (!n->storage && !precompile) throw InternalError(fmt::format("{}: argument {} has no memory", e.opt.name, i));
    const bool on_host = n->storage ? false : current_backend() == Backend::Reference || !precompile_has_device();
    s.device = static_cast<int16_t>(n->storage ? n->storage->device : on_host ? -1 : current_device());
    const int isz = itemsize(n->dtype);
    const auto addr = n->storage ? reinterpret_cast<uintptr_t>(n->storage->ptr) + static_cast<uintptr_t>(n->layout.offset * isz)
                                 : uintptr_t{0};
    s.mod16 = static_cast<uint8_t>(addr % 16);
    s.residue = static_cast<int64_t>(s.mod16 / isz);
    if (device == -2) device = s.device;
    else if (device != s.device)
      throw ValueError(fmt::format("{}: argument {} is on {} but an earlier argument is on {}; a fused call takes "
                                   "arrays of one device (copy with to_device)", e.opt.name, i,
                                   s.device < 0 ? std::string("the host") : fmt::format("device {}", s.device),
                                   device < 0 ? std::string("the host") : fmt::format("device {}", device)));
    auto p = make_buffer(n->dtype, Layout{s.shape, s.strides, s.residue}, nullptr);
    p->placeholder_slot = i;
    p->read_only = n->read_only;
    ph[i] = Array(std::move(p));
  }
  en->host = device == -1 || (device == -2 && current_backend() == Backend::Reference);
  en->device = en->host ? -1 : (device >= 0 ? device : current_device());
  DeviceGuard on(en->host ? -1 : en->device);

  // ---- 2. run it; tell argument scalars from constants
  std::vector<Array> outs = run_traced(e, fn, thunk, args, nargs, ph, values);
  e.traces++;
  if (nout >= 0 && static_cast<int>(outs.size()) != nout)
    throw InternalError(fmt::format("{}: {} results where {} were expected", e.opt.name, outs.size(), nout));
  for (size_t k = 0; k < outs.size(); ++k)
    if (!outs[k].defined()) throw ValueError(fmt::format("{}: result {} is an empty Array handle", e.opt.name, k));
  std::unordered_set<const Node*> arg_scalars;
  if (any_scalar) {
    bool by_value = e.scalars_by_value;
    std::vector<std::pair<const Node*, int>> found;
    if (!by_value) {
      std::vector<Scalar> other(values);
      for (int i = 0; i < nargs; ++i)
        if (!args[i].array) other[i] = sentinel(values[i], i);
      std::vector<NodePtr> r1, r2;
      for (const auto& o : outs) r1.push_back(o.node());
      try {
        std::vector<Array> outs2 = run_traced(e, fn, thunk, args, nargs, ph, other);
        for (const auto& o : outs2) r2.push_back(o.node());
      } catch (const Error&) {
        by_value = true;  // the other values broke the code: it depends on them
      }
      GraphScan s1, s2;
      if (!by_value) {
        scan_graph(r1, {}, s1, false);  // the sentinels must not change a value-dependent form
        scan_graph(r2, {}, s2, false);
        by_value = s1.key != s2.key || r1.size() != r2.size();
      }
      for (size_t j = 0; !by_value && j < s1.leaves.size(); ++j) {
        const Node* a = s1.leaves[j];
        const Node* b = s2.leaves[j];
        if (a->k() != NodeKind::Scalar || same_scalar(a->scalar, b->scalar)) continue;
        int slot = -1;
        for (int i = 0; i < nargs && slot < 0; ++i)
          if (!args[i].array && same_scalar(a->scalar, Scalar::typed(values[i], a->dtype)) &&
              same_scalar(b->scalar, Scalar::typed(other[i], b->dtype)))
            slot = i;
        if (slot < 0) by_value = true;  // computed from a scalar in C++: not a parameter
        else found.emplace_back(a, slot);
      }
    }
    if (by_value) {
      e.scalars_by_value = true;
      for (int i = 0; i < nargs; ++i)
        if (!args[i].array) en->sig[i].by_value = true;
    } else {
      en->arg_scalar_nodes = found;
      for (const auto& [n, slot] : found) {
        arg_scalars.insert(n);
        const_cast<Node*>(n)->varies = true;  // its value changes under one plan
      }
      // A scalar no operand reads can only have steered C++ code (a branch): its value is
      // part of the signature.
      for (int i = 0; i < nargs; ++i) {
        if (args[i].array) continue;
        bool used = false;
        for (const auto& [n, slot] : found) used |= slot == i;
        en->sig[i].by_value = !used;
      }
    }
  }

  std::lock_guard<std::recursive_mutex> glk(graph_mutex());
  // ---- 3. argument-free work now; results not made by a kernel are copied
  DepWalk walk(arg_scalars);
  std::vector<NodePtr> roots0;
  for (const auto& o : outs) roots0.push_back(o.node());
  std::vector<NodePtr> fixed;
  walk.independent(roots0, fixed);
  if (!fixed.empty()) realize(fixed);
  std::vector<std::pair<const Node*, NodePtr>> wrapped;  // one copy per leaf returned
  for (size_t k = 0; k < outs.size(); ++k) {
    NodePtr n = outs[k].node();
    for (const auto& [from, to] : wrapped)
      if (from == n.get()) n = to;
    if (n->is_leaf()) {
      const Node* from = n.get();
      InputVec ins;
      ins.push_back(n);
      n = make_elementwise(static_cast<uint16_t>(Op::Cast), n->dtype, n->shape(), std::move(ins));
      wrapped.emplace_back(from, n);
    }
    int r = -1;
    for (size_t j = 0; j < en->roots.size(); ++j)
      if (en->roots[j].get() == n.get()) r = static_cast<int>(j);
    if (r < 0) {
      r = static_cast<int>(en->roots.size());
      en->roots.push_back(n);
    }
    en->out_root.push_back(r);
  }

  // ---- 4. plan once; bind each leaf
  GraphScan scan;
  scan_graph(en->roots, {}, scan);
  if (precompile) {  // every kernel compiled now, into the caches (exec/precompile.hpp)
    en->ex = build_executable(en->roots, {}, scan, false, default_arch());
    precompile_steps(*en->ex, default_arch(), *precompile);
  } else {
    // Device entries are tiered as lazy evaluation is (exec/tiered.hpp): a step whose kernel
    // is in neither cache starts on the interpreter; replay swaps the compiled one in.
    const ReferenceCompile rc = settings().reference_compile;
    en->ex = build_executable(en->roots, {}, scan, en->host ? rc == ReferenceCompile::Cubin : true, default_arch(),
                              nullptr, /*tiered=*/!en->host);
    if (en->host && rc == ReferenceCompile::Ptx) check_step_sources(*en->ex, default_arch());
  }
  en->leaves.assign(scan.leaves.begin(), scan.leaves.end());
  en->binds.resize(scan.leaves.size());
  for (size_t j = 0; j < scan.leaves.size(); ++j) {
    const Node* l = scan.leaves[j];
    LeafBind& b = en->binds[j];
    if (l->k() == NodeKind::Buffer) {
      if (l->is_placeholder()) {
        if (l->placeholder_slot < 0 || l->placeholder_slot >= nargs || !args[l->placeholder_slot].array)
          throw ValueError(fmt::format("{}: the function reads a cufuse::placeholder that is not one of its arguments "
                                       "({} {})", e.opt.name, name(l->dtype), to_string(l->shape())));
        b.kind = LeafBind::Kind::ArgData;
        b.slot = l->placeholder_slot;
        b.delta_bytes = (l->layout.offset - en->sig[b.slot].residue) * itemsize(l->dtype);
      } else {
        b.fixed = static_cast<const char*>(l->storage->ptr) + l->layout.offset * itemsize(l->dtype);
        bool have = false;
        for (const auto& c : en->captured) have |= c.get() == l->storage.get();
        if (!have) en->captured.push_back(l->storage);
        if (!en->host && l->storage->device != en->device)
          throw ValueError(fmt::format("{}: a captured array lives on {} but the arguments on device {}", e.opt.name,
                                       l->storage->device < 0 ? std::string("the host") :
                                       fmt::format("device {}", l->storage->device), en->device));
      }
    } else if (l->k() == NodeKind::Scalar) {
      for (const auto& [n, slot] : en->arg_scalar_nodes)
        if (n == l) {
          b.kind = LeafBind::Kind::ArgScalar;
          b.slot = slot;
          const ArgSig& s = en->sig[slot];
          if (s.weak && (s.kind == Scalar::Kind::Int || s.kind == Scalar::Kind::UInt) && is_integer(l->dtype))
            en->fits.emplace_back(slot, l->dtype);  // NumPy 2: a Python int must fit the array's dtype
        }
    }
  }
  const TraceSource fixed_src(*en);
  // A kernel's parameter template with every fixed patch applied, and the patches a call applies.
  auto split = [&](const KernelSpec& spec, std::vector<unsigned char>& params, std::vector<Patch>& dynamic) {
    params = spec.params;
    std::vector<Patch> fixed_patches;
    for (const Patch& p : spec.patches) {
      bool dyn = p.src == PatchSrc::BufferPtr || p.src == PatchSrc::Workspace ||
                 ((p.src == PatchSrc::LeafPtr || p.src == PatchSrc::ScalarValue || p.src == PatchSrc::ScalarReciprocal) &&
                  en->binds[p.index].kind != LeafBind::Kind::Fixed);
      (dyn ? dynamic : fixed_patches).push_back(p);
    }
    apply_patches(params.data(), fixed_patches.data(), fixed_patches.size(), fixed_src, nullptr, nullptr);
  };
  bool tiered = false;
  for (const auto& st : en->ex->steps) {
    StepBind sb;
    if (!st.call) {
      ++en->kernel_steps;
      split(st.spec, sb.params, sb.dynamic);
      if (st.tier) {  // on the interpreter until its compile lands (fuse/replay.cpp swaps)
        split(st.tier->interp, sb.interp_params, sb.interp_dynamic);
        tiered = true;
      } else if (!en->host && st.spec.numel > 0) {
        sb.kernel = st.kernel->kernel_for(en->device);
      }
    }
    en->steps.push_back(std::move(sb));
  }
  bool kernels_only = true;
  for (const auto& st : en->ex->steps) kernels_only &= !st.call;
  en->wants_chain = e.opt.cuda_graph && !en->host && kernels_only && chains_enabled();
  en->tier_pending.store(tiered, std::memory_order_release);
  if (en->wants_chain && !tiered) make_entry_chain(*en);
  for (const auto& r : en->roots) {
    en->root_layout.push_back(contiguous_layout(r->shape()));
    en->root_hash.push_back(make_buffer(r->dtype, en->root_layout.back(), nullptr)->hash);
  }
  return en;
}

}  // namespace cufuse::detail
