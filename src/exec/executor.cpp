// src/exec/executor.cpp: one evaluation, start to end: scan the pending graph, find or
// build its executable (plan -> codegen -> compile), bind the leaves, launch (or run the
// reference evaluator on the reference backend), and realize the results.
#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <unordered_set>
#include <cstring>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/elementwise_kernel.hpp"
#include "graph/elementwise.hpp"
#include "codegen/reduction_kernel.hpp"
#include "compile/compiler.hpp"
#include "compile/dump.hpp"
#include "exec/tiered.hpp"
#include "core/counters.hpp"
#include "core/op_table.hpp"
#include "core/registry.hpp"
#include "core/walk.hpp"
#include "cufuse/backend.hpp"
#include "cufuse/eval.hpp"
#include "exec/binding.hpp"
#include "exec/executable.hpp"
#include "exec/precompile.hpp"
#include "exec/run_path.hpp"
#include "graph/index_map.hpp"
#include "graph/realize.hpp"
#include "plan/cse.hpp"
#include "plan/signature.hpp"
#include "reference/eval_bytecode.hpp"
#include "reference/evaluator.hpp"
#include "runtime/context.hpp"
#include "runtime/device.hpp"
#include "runtime/launch.hpp"
#include "runtime/log.hpp"
#include "runtime/runtime_internal.hpp"
#include "runtime/storage.hpp"

namespace cufuse {

namespace {
// cufuse::Config, process state (runtime/context.hpp). Read on every node built: atomics,
// not a lock.
struct GraphBudget {
  static constexpr detail::StateSlot kSlot = detail::StateSlot::GraphBudget;
  std::atomic<int32_t> max_pending{Config{}.max_pending_nodes};
  std::atomic<uint64_t> max_pinned{Config{}.max_pinned_bytes};
};
GraphBudget& graph_budget() { return detail::runtime().state<GraphBudget>(); }
}  // namespace
Config config() {
  Config c;
  c.max_pending_nodes = graph_budget().max_pending.load(std::memory_order_relaxed);
  c.max_pinned_bytes = graph_budget().max_pinned.load(std::memory_order_relaxed);
  c.contract_fma = detail::contract_fma_setting();
  return c;
}
void set_config(const Config& c) {
  graph_budget().max_pending.store(c.max_pending_nodes, std::memory_order_relaxed);
  graph_budget().max_pinned.store(c.max_pinned_bytes, std::memory_order_relaxed);
  detail::set_contract_fma(c.contract_fma);
}

namespace detail {

// ------------------------------------------------------------------ building
namespace {
// A kernel group's code generation, for build_executable and for a step whose source is made
// after its first launch (exec/tiered.hpp, "Deferred source"): the group's outputs' layouts (a
// target's view, else contiguous) and the binding of its leaves and of the buffers written by
// the groups before it. Groups are visited in order (advance_to).
class GroupEmitter {
 public:
  GroupEmitter(const Plan& plan, const GraphScan& scan, const std::vector<const Target*>& targets)
      : plan_(plan), scan_(scan), targets_(targets),
        bind_{[this](const Node* n) { return scan_.leaf_index(n); }, [](const Node* n) { return is_aligned16(n); },
              [this](const Node* n) {
                if (n->k() == NodeKind::Generator) return -1;  // cheaper generated than read (planner.cpp)
                for (const Node* w : written_)
                  if (w == n) return plan_.buffer_of(n);
                return -1;
              }} {}
  GroupEmitter(const GroupEmitter&) = delete;
  GroupEmitter& operator=(const GroupEmitter&) = delete;

  // The outputs of groups [0, gi) count as written; gi never decreases.
  void advance_to(size_t gi) {
    for (; next_ < gi; ++next_)
      for (const auto& o : plan_.groups[next_].outputs) written_.push_back(o.get());
  }
  bool was_written(const Node* n) const { return std::find(written_.begin(), written_.end(), n) != written_.end(); }
  const LeafBinding& binding() const { return bind_; }

  // Group gi's kernel (into `spec`, if given) and its bytecode program (into `prog`, if given;
  // a scan's keeps the refusal it has).
  void emit(size_t gi, KernelSpec* spec, BytecodeProgram* prog) {
    advance_to(gi);
    const Group& g = plan_.groups[gi];
    switch (g.kind) {
      case GroupKind::Elementwise: {
        std::vector<EwOutput> outs;
        for (size_t k = 0; k < g.outputs.size(); ++k) {
          bool aligned;
          Layout l = dest(g.output_buffer[k], g.outputs[k], aligned);
          outs.push_back(EwOutput{g.outputs[k], l, g.output_buffer[k], aligned});
        }
        if (spec) *spec = emit_elementwise_kernel(g.iter_shape, outs, bind_);
        if (prog) *prog = compile_elementwise_bytecode(g.iter_shape, outs, bind_);
        break;
      }
      case GroupKind::Reduction: {
        ReductionSpec rs;
        rs.S = g.iter_shape;
        rs.axes = g.axes;
        for (const auto& r : g.reductions) rs.reductions.push_back(r.get());
        rs.phase = g.phase;
        rs.multipass = g.multipass;
        for (size_t k = 0; k < g.outputs.size(); ++k) {
          bool aligned;
          Layout l = dest(g.output_buffer[k], g.outputs[k], aligned);
          rs.outputs.push_back(RedOutput{g.outputs[k], g.out_kinds[k], l, g.output_buffer[k], aligned});
        }
        if (spec) *spec = emit_reduction_kernel(rs, bind_);
        if (prog) *prog = compile_reduction_bytecode(rs, bind_);
        break;
      }
      case GroupKind::Scan: {
        bool aligned;
        Layout l = dest(g.output_buffer[0], g.outputs[0], aligned);
        if (spec) *spec = emit_scan_kernel(g.outputs[0], l, g.output_buffer[0], aligned, bind_);
        break;
      }
      case GroupKind::Library:
        throw InternalError("GroupEmitter: a library group has no kernel");
    }
  }

 private:
  Layout dest(int buffer, const NodePtr& node, bool& aligned) const {
    const Target* t = buffer < static_cast<int>(targets_.size()) ? targets_[buffer] : nullptr;
    aligned = true;
    if (t) {
      auto p = reinterpret_cast<uintptr_t>(t->storage->ptr) + static_cast<uintptr_t>(t->layout.offset * itemsize(node->dtype));
      aligned = p % 16 == 0;
      return t->layout;
    }
    return contiguous_layout(node->shape());
  }

  const Plan& plan_;
  const GraphScan& scan_;
  const std::vector<const Target*>& targets_;
  std::vector<const Node*> written_;  // outputs of the groups before next_
  size_t next_ = 0;
  LeafBinding bind_;
};
}  // namespace

std::shared_ptr<Executable> build_executable(const std::vector<NodePtr>& roots,
                                             const std::vector<const Target*>& targets, const GraphScan& scan,
                                             bool compile, int arch, const std::vector<std::string>* notes,
                                             bool tiered, bool host_programs, bool defer_source) {
  const auto started = std::chrono::steady_clock::now();
  auto ex = std::make_shared<Executable>();
  ex->host_programs = host_programs;
  // Step 0's hint is read before the plan is made, so that its kernel's module load (the
  // longest stage of a warm-cache first call: 0.1-0.25 ms on the H100 hosts) overlaps the
  // plan as well as the source. Its key needs only the scan; a plan whose step 0 is not a
  // tiered step (a library call, a scan, one through temporaries) drops it.
  const bool may_preload = defer_source && compile && tiered && settings().tiered == TieredMode::On &&
                           !log_enabled(LogChannel::Plan) && !dump_dir();
  std::shared_ptr<HintPreload> pre0;
  std::string hint0;
  if (may_preload) {
    hint0 = tier_hint_key(scan, 0, arch);
    pre0 = make_hint_preload(hint0, arch);
    if (pre0->hint().found && pre0->hint().entry) submit_hint_preload(pre0);
  }
  ex->plan = make_plan(roots, targets);
  ex->hazard = find_write_hazard(ex->plan);
  const Plan& plan = ex->plan;
  for (size_t b = 0; b < plan.buffers.size(); ++b) {
    const bool is_root = b < roots.size();
    ex->buffers.push_back(BufferSpec{plan.buffers[b]->dtype, plan.buffers[b]->numel(), is_root ? static_cast<int>(b) : -1,
                                     is_root && b < targets.size() && targets[b] != nullptr});
  }
  // Deferred source (exec/tiered.hpp): not where the plan is logged or dumped with its kernels.
  // Nor in a plan that runs through temporaries (plan/hazards.hpp): it never runs itself.
  const bool may_defer = may_preload && !ex->hazard.unsafe;
  GroupEmitter emitter(plan, scan, targets);
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    const Group& g = plan.groups[gi];
    Step st;
    st.group = static_cast<int>(gi);
    BytecodeProgram prog;  // the interpreter's program of the group, for a tiered step
    prog.refusal = g.kind == GroupKind::Reduction ? "a reduction" : "a scan";
    std::string hint;      // the step's hint key, for a tiered step (tier_hint_key)
    bool deferred = false, looked_up = false;
    if (g.kind == GroupKind::Library) {
      emitter.advance_to(gi);
      // A call whose run is one generated kernel gives it as a kernel step (its fused inputs
      // computed there: rule fused-input), bound and launched as any kernel.
      std::vector<const Node*> in_nodes;
      for (const auto& x : g.lib_inputs) in_nodes.push_back(x.get());
      std::vector<int> outb(static_cast<size_t>(g.call->num_outputs()), -1);
      for (size_t k = 0; k < g.outputs.size(); ++k) outb[g.lib_output_index[k]] = g.output_buffer[k];
      prog.refusal = "a library call's kernel";  // (the interpreter runs none: it waits for NVRTC)
      if (g.call->emit_kernel(in_nodes, outb, emitter.binding(), st.spec)) {
        st.spec.summary = g.call->describe() + "; " + st.spec.summary;
      } else {
        st.call = g.call;
        for (const auto& x : g.lib_inputs) {
          LibInput in;
          if (emitter.was_written(x.get())) in.buffer = plan.buffer_of(x.get());
          else in.leaf = scan.leaf_index(x.get());
          in.dtype = x->dtype;
          in.shape = x->shape();
          if (in.buffer < 0 && in.leaf < 0) throw InternalError("library input is neither memory nor a leaf");
          st.lib_in.push_back(in);
        }
        st.lib_out.assign(static_cast<size_t>(g.call->num_outputs()), -1);
        for (size_t k = 0; k < g.outputs.size(); ++k) st.lib_out[g.lib_output_index[k]] = g.output_buffer[k];
        st.spec.name = "library";
        st.spec.summary = g.call->describe();
        st.spec.numel = 1;
      }
    } else {
      const bool wants_prog = g.kind != GroupKind::Scan && ((tiered && compile) || host_programs);
      if (may_defer && wants_prog) {
        // The hint first (exec/tiered.hpp): found, the source is made and the kernel taken
        // (verified against that source), no bytecode made; else the bytecode, and the source
        // after the launch where the interpreter runs the step.
        // (Asking step 0's hint on the loader thread before the plan was made measured slower on
        // the H100: 0.1 ms more building with an empty cache, nothing gained with a warm one;
        // the calling thread reads it, above.)
        std::shared_ptr<HintPreload> pre;
        if (gi == 0 && pre0) {
          hint = std::move(hint0);
          pre = std::move(pre0);
        } else {
          hint = tier_hint_key(scan, gi, arch);
          pre = make_hint_preload(hint, arch);
        }
        const TierHint& found = pre->hint();
        const bool hinted = found.found;
        if (hinted) {
          if (found.entry && gi != 0) submit_hint_preload(pre);  // its kernel loads while the source is made
          emitter.emit(gi, &st.spec, nullptr);
          st.kernel = hinted_kernel(hint, *pre, st.spec, arch);
          looked_up = true;
        }
        if (!st.kernel) {
          emitter.emit(gi, nullptr, &prog);
          deferred = !hinted && prog.refusal.empty() && prog.spec.numel > 0 &&
                     interpreter_kernel(current_device(), prog.spec.name);
          if (!deferred && !hinted) emitter.emit(gi, &st.spec, nullptr);
        }
      } else {
        emitter.emit(gi, &st.spec, wants_prog ? &prog : nullptr);
      }
    }
    if (host_programs) ex->host_interp.push_back(prog.refusal.empty() ? prog.spec : KernelSpec{});
    if (deferred) defer_tier(st, std::move(prog), arch, std::move(hint));
    else if (st.kernel) {}  // its hint's
    else if (compile && !st.call && tiered && st.spec.numel > 0) choose_tier(st, std::move(prog), arch, std::move(hint), looked_up);
    else if (compile && !st.call) st.kernel = compile_kernel(st.spec.source, st.spec.name, arch);
    ex->steps.push_back(std::move(st));
  }
  if (pre0) pre0->discard();  // step 0 was not a tiered step: its module, if loaded, goes
  counters().plans_built++;
  counters().build_ns.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - started).count()),
                                std::memory_order_relaxed);
  if (log_enabled(LogChannel::Plan) || dump_dir()) {
    ex->text = describe_executable(*ex, false, notes);
    log(LogChannel::Plan, "{}", ex->text);
    if (dump_dir()) dump_file(fmt::format("plan_{:016x}.txt", KeyHash{}(scan.key)), describe_executable(*ex, true, notes));
  }
  return ex;
}

bool has_deferred_steps(const Executable& ex) {
  return std::any_of(ex.steps.begin(), ex.steps.end(), [](const Step& st) { return st.tier && st.tier->deferred; });
}

void make_deferred_sources(Executable& ex, const GraphScan& scan, const std::vector<const Target*>& targets) noexcept {
  GroupEmitter emitter(ex.plan, scan, targets);
  for (size_t si = 0; si < ex.steps.size(); ++si) {
    Step& st = ex.steps[si];
    if (!st.tier || !st.tier->deferred) continue;
    try {
      KernelSpec spec;
      emitter.emit(static_cast<size_t>(st.group), &spec, nullptr);
      st.spec = std::move(spec);
      start_deferred(st);
    } catch (const std::exception& e) {  // the step stays on the interpreter, as after a failed compile
      st.tier->deferred = false;
      try {
        st.tier->publish(nullptr, fmt::format("its kernel's source could not be generated: {}", e.what()));
        log(LogChannel::Compile, "the source of a tiered step failed ({}); it stays interpreted", e.what());
      } catch (...) {
      }
    }
  }
}

std::string describe_executable(const Executable& ex, bool with_source, const std::vector<std::string>* notes) {
  std::string s = fmt::format("plan: {} root(s), {} kernel(s)\n", ex.plan.roots.size(), ex.steps.size());
  for (size_t r = 0; r < ex.plan.roots.size(); ++r) {
    const bool target = r < ex.plan.targets.size() && ex.plan.targets[r];
    const std::string note = notes && r < notes->size() ? (*notes)[r] : std::string();
    if (!target && note.empty()) continue;
    const Node& n = *ex.plan.roots[r];
    s += fmt::format("  root {} {} {}: {}{}\n", r, name(n.dtype), to_string(n.shape()),
                     target ? "written in place into an existing array" : "", 
                     note.empty() ? "" : (target ? "; " : "") + note);
  }
  if (ex.hazard.unsafe)
    s += fmt::format("  write-hazard: {}; the results go to new memory first, then one copy kernel per shape "
                     "writes them in place\n", ex.hazard.why);
  for (const auto& st : ex.steps) {
    const Group& g = ex.plan.groups[st.group];
    std::string outs;
    for (size_t k = 0; k < g.outputs.size(); ++k)
      outs += fmt::format("{}{} {}", k ? ", " : "", name(g.outputs[k]->dtype), to_string(g.outputs[k]->shape()));
    std::string fused;
    for (Rule r : g.fused) fused += fmt::format(", {}", rule_name(r));
    const std::string limit = rule_limit(g.rule);  // a cut's limit: "limit 1024 ops a kernel"
    s += fmt::format("  {} kernel {} [rule: {}{}{}] iteration space {}{}: writes {}\n    {}\n", group_kind_name(g.kind),
                     st.spec.name, rule_name(g.rule), limit.empty() ? "" : " (" + limit + ")", fused, to_string(g.iter_shape),
                     g.kind == GroupKind::Elementwise ? std::string() : fmt::format(" over axes {}", to_string(Shape(g.axes.begin(), g.axes.end()))),
                     outs, st.spec.summary);
    for (const Cut& c : g.cuts) s += "    " + describe_cut(c) + "\n";
    if (std::string tier = describe_tier(st); !tier.empty()) s += "    " + tier + "\n";
    if (st.kernel && st.kernel->registers >= 0)
      s += fmt::format("    {} registers, {} B spill stores, {} B spill loads{}\n", st.kernel->registers,
                       st.kernel->spill_stores, st.kernel->spill_loads,
                       st.kernel->from_disk ? ", from the disk cache" : fmt::format(", compiled in {:.1f} ms", st.kernel->compile_ms));
    if (with_source) s += "\n" + st.spec.source + "\n";
  }
  return s;
}

// ------------------------------------------------------------------ binding
// apply_patches, run_library_step, the evaluation's device and cross-stream bookkeeping
// live in exec/binding.cpp, shared with fuse() replay (src/fuse).

// ------------------------------------------------------------------ running
// A node computed into `st`: a Buffer leaf on it, contiguous (or seen through `layout`: a view
// of a call's result, view_roots_to_leaves).
static void realize_node(Node& n, std::shared_ptr<Storage> st, const Layout* layout = nullptr) {
  n.storage = std::move(st);
  n.layout = layout ? *layout : contiguous_layout(n.shape());
  n.inputs.clear();
  n.attrs = std::monostate{};
  n.kind.store(NodeKind::Buffer, std::memory_order_release);
  unregister_root(&n);  // a leaf from now on, never pending again
  // pending/pins keep their values: builders account a realized input as a leaf.
  // A pending write keeps its WriteDest: the executor moves it there (realize_at_dest).
}

// A pending write, now written: a leaf on the memory of the array it wrote.
static void realize_at_dest(Node& n) {
  std::shared_ptr<WriteDest> d = std::move(n.dest);
  void* self = &n;
  d->storage->pending_write.compare_exchange_strong(self, nullptr);
  n.storage = d->storage;
  n.layout = d->layout;
  n.inputs.clear();
  n.attrs = std::monostate{};
  n.kind.store(NodeKind::Buffer, std::memory_order_release);
  unregister_root(&n);
}

static void run(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets,
                const std::vector<std::string>* notes = nullptr);

// A plan that cannot write its targets in place (plan/hazards.hpp): every result goes to new
// memory, then the written ones are copied into their arrays (one kernel per shape).
static void run_through_temporaries(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets,
                                    const std::vector<std::string>* notes) {
  run(roots, std::vector<const Target*>(roots.size(), nullptr), notes);
  std::vector<NodePtr> copies;
  std::vector<const Target*> into;
  for (size_t i = 0; i < roots.size() && i < targets.size(); ++i) {
    if (!targets[i]) continue;
    InputVec ins;
    ins.push_back(roots[i]);
    copies.push_back(make_elementwise(static_cast<uint16_t>(Op::Cast), roots[i]->dtype, roots[i]->shape(), std::move(ins)));
    into.push_back(targets[i]);
  }
  run(copies, into);
  for (size_t i = 0; i < roots.size() && i < targets.size(); ++i)
    if (targets[i] && roots[i]->dest) realize_at_dest(*roots[i]);
}

enum class Where { Device, Host };

static Where where_to_run(const GraphScan& scan) {
  bool host = false, dev = false;
  for (const Node* l : scan.leaves) {
    if (l->k() != NodeKind::Buffer || !l->storage) continue;
    (l->storage->on_host() ? host : dev) = true;
  }
  if (host && dev)
    throw ValueError("an expression mixes host arrays (reference backend) and device arrays");
  if (host) return Where::Host;
  if (dev) return Where::Device;
  return current_backend() == Backend::Reference ? Where::Host : Where::Device;
}

// Executables by graph signature: process state (runtime/context.hpp), one lock for both.
using PlanMap = std::unordered_map<std::vector<int64_t>, std::shared_ptr<Executable>, KeyHash>;
struct PlanCache {
  static constexpr StateSlot kSlot = StateSlot::PlanCache;
  std::mutex mu;
  PlanMap device;
  PlanMap host;  // plans run by the host reference evaluator (built with or without kernels: kept apart)
};
static std::mutex& plan_cache_mutex() { return runtime().state<PlanCache>().mu; }
static PlanMap& plan_cache() { return runtime().state<PlanCache>().device; }
static PlanMap& host_plan_cache() { return runtime().state<PlanCache>().host; }

// Scatters a contiguous host result into a strided host target.
static void scatter_host(const HostArray& v, const Target& t) {
  const int sz = itemsize(v.dtype);
  const Shape& s = t.layout.shape;
  const int64_t n = numel(s);
  char* base = static_cast<char*>(t.storage->ptr);
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = t.layout.offset;
    for (size_t d = 0; d < s.size(); ++d) off += idx[d] * t.layout.strides[d];
    std::memcpy(base + off * sz, v.bytes.data() + e * sz, static_cast<size_t>(sz));
    for (int d = s.ndim() - 1; d >= 0; --d) {
      if (++idx[d] < s[d]) break;
      idx[d] = 0;
    }
  }
}

// ---- realize: each new buffer becomes its root's leaf; each pending write a leaf on the
// memory it wrote.
static void realize_results(const Executable& ex, const std::vector<NodePtr>& roots,
                            const std::vector<const Target*>& targets, std::shared_ptr<Storage>* stor) {
  for (size_t b = 0; b < ex.buffers.size(); ++b)
    if (stor[b] && ex.buffers[b].root >= 0) realize_node(*roots[ex.buffers[b].root], std::move(stor[b]));
  for (size_t r = 0; r < roots.size() && r < targets.size(); ++r)
    if (targets[r] && roots[r]->dest) realize_at_dest(*roots[r]);
}

// ---- look-up: the executable of this graph's structure, from the plan cache or built now.
static std::shared_ptr<Executable> look_up(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets,
                                           const GraphScan& scan, Where where, const std::vector<std::string>* notes) {
  std::shared_ptr<Executable> ex;
  if (where == Where::Host) {
    {
      std::lock_guard<std::mutex> lk(plan_cache_mutex());
      auto it = host_plan_cache().find(scan.key);
      if (it != host_plan_cache().end()) ex = it->second;
    }
    const bool programs = settings().reference_interpret;
    if (ex && ex->host_programs == programs) {
      counters().plan_cache_hits++;
      return ex;
    }
    const ReferenceCompile rc = settings().reference_compile;
    ex = build_executable(roots, targets, scan, rc == ReferenceCompile::Cubin, default_arch(), notes, false, programs);
    if (rc == ReferenceCompile::Ptx) check_step_sources(*ex, default_arch());
    std::unordered_map<const Node*, int> id;
    for (size_t i = 0; i < scan.nodes.size(); ++i) id.emplace(scan.nodes[i], static_cast<int>(i));
    for (const auto& st : ex->steps) {
      std::vector<int> ids;
      for (const auto& o : ex->plan.groups[st.group].outputs) ids.push_back(id.at(o.get()));
      ex->output_ids.push_back(std::move(ids));
    }
    ex->plan.forget_graph();
    std::lock_guard<std::mutex> lk(plan_cache_mutex());
    if (host_plan_cache().size() > 4096) host_plan_cache().clear();
    host_plan_cache()[scan.key] = ex;
    return ex;
  }
  // The thread's last plan first (a loop evaluating one expression): no hashing, no lock.
  thread_local std::vector<int64_t> last_key;
  thread_local std::shared_ptr<Executable> last_ex;
  if (last_ex && last_key == scan.key) {
    ex = last_ex;
  } else {
    std::lock_guard<std::mutex> lk(plan_cache_mutex());
    auto it = plan_cache().find(scan.key);
    if (it != plan_cache().end()) ex = it->second;
  }
  if (ex) {
    counters().plan_cache_hits++;
  } else {
    ex = build_executable(roots, targets, scan, true, default_arch(), notes, /*tiered=*/true, false,
                          /*defer_source=*/true);
    // The cache serves later graphs: it must not hold this one's memory (a plan with deferred
    // sources holds it through its first run: run_on_device).
    if (!has_deferred_steps(*ex)) ex->plan.forget_graph();
    std::lock_guard<std::mutex> lk(plan_cache_mutex());
    if (plan_cache().size() > 4096) plan_cache().clear();
    plan_cache().emplace(scan.key, ex);
  }
  if (ex != last_ex) {
    last_key = scan.key;
    last_ex = ex;
  }
  return ex;
}

// Where a write in place of dtype `t` starts: the target's memory at its view's offset (the
// interpreter and the kernels take it from there with the view's strides).
static void* target_address(const Target& target, DType t) {
  return static_cast<char*>(target.storage->ptr) + target.layout.offset * itemsize(t);
}

// Would evaluating step `si` from the graph's leaves (the reference's way) see the plan's
// writes in place, or make one? True if it writes a target or reads a leaf on a target's memory.
static bool reference_step_sees_writes(const Executable& ex, const GraphScan& scan, size_t si,
                                       const std::vector<const Target*>& targets) {
  const Group& g = ex.plan.groups[ex.steps[si].group];
  for (int b : g.output_buffer)
    if (ex.buffers[b].is_target) return true;
  VisitedSet seen;
  bool reads = false;
  for (int id : ex.output_ids[si])
    walk_post_order(
        scan.nodes[static_cast<size_t>(id)], [&](const Node* n) { return reads || seen.contains(n); },
        [](const Node*) { return true; },
        [&](const Node* n) {
          seen.insert(n);
          if (!n->storage) return;
          for (const Target* t : targets)
            if (t && t->storage == n->storage) reads = true;
        });
  return reads;
}

// ---- the host reference: each group's outputs evaluated from the graph's leaves, so writes
// into existing memory are made after every group has read it.
static void run_on_host(const Executable& ex, const GraphScan& scan, const std::vector<NodePtr>& roots,
                        const std::vector<const Target*>& targets) {
  std::vector<std::shared_ptr<Storage>> stor(ex.buffers.size());
  std::vector<std::pair<HostArray, int>> deferred;
  std::vector<NodePtr> outs;
  // CUFUSE_REFERENCE_INTERPRET: the groups the interpreter takes run on its host build, reading
  // earlier groups' buffers, as a tiered device run's first launches do. A plan that writes into
  // existing memory does so only where the interpreter takes every group, writing the targets in
  // place in the plan's order as the device does (fuzz seed 728327525901: a row program's store
  // into its own input came before the load); else it stays on the reference (its groups read
  // the leaves, the writes deferred to the end), since the two orders cannot be mixed.
  const bool has_targets = std::any_of(targets.begin(), targets.end(), [](const Target* t) { return t; });
  bool interp = ex.host_programs;
  for (size_t si = 0; interp && has_targets && si < ex.steps.size(); ++si)
    if (ex.host_interp[si].name.empty())
      interp = !reference_step_sees_writes(ex, scan, si, targets);
  std::vector<void*> ptrs;
  const ScanSource src(scan);
  for (size_t si = 0; si < ex.steps.size(); ++si) {
    const Group& g = ex.plan.groups[ex.steps[si].group];
    if (interp && !ex.host_interp[si].name.empty()) {
      const KernelSpec& spec = ex.host_interp[si];
      for (int b : g.output_buffer)
        if (!stor[b] && !ex.buffers[b].is_target)
          stor[b] = allocate_host(std::max<size_t>(1, static_cast<size_t>(ex.buffers[b].numel) * itemsize(ex.buffers[b].dtype)));
      ptrs.assign(ex.buffers.size(), nullptr);
      for (size_t b = 0; b < stor.size(); ++b) {
        if (stor[b]) ptrs[b] = stor[b]->ptr;
        if (ex.buffers[b].is_target) ptrs[b] = target_address(*targets[b], ex.buffers[b].dtype);
      }
      if (spec.numel > 0) {
        std::vector<unsigned char> bytes;
        apply_patches(bytes, spec, src, ptrs, nullptr);
        const auto* p = reinterpret_cast<const CfiProgram*>(bytes.data());
        if (g.kind == GroupKind::Reduction) run_row_bytecode_on_host(*p, 4);
        else run_bytecode_on_host(*p);
      }
      counters().kernels_launched++;
      counters().interpreted_launches++;
      continue;
    }
    outs.clear();
    for (int id : ex.output_ids[si]) outs.emplace_back(scan.nodes[static_cast<size_t>(id)]);
    std::vector<HostArray> vals;
    try {
      vals = reference_evaluate(outs);
    } catch (const std::bad_alloc&) {  // the reference's host buffers: an Error, as on the device
      int64_t bytes = 0;
      for (const auto& o : outs) bytes += o->numel() * itemsize(o->dtype);
      throw OutOfMemoryError(fmt::format("out of host memory evaluating on the reference backend: {} of results ({})",
                                         format_bytes(static_cast<size_t>(bytes)), to_string(outs[0]->shape())));
    }
    counters().kernels_launched++;
    for (size_t k = 0; k < g.output_buffer.size(); ++k) {
      const int b = g.output_buffer[k];
      if (ex.buffers[b].is_target) {
        deferred.emplace_back(std::move(vals[k]), b);
      } else {
        stor[b] = allocate_host(vals[k].bytes.size());
        if (!vals[k].bytes.empty()) std::memcpy(stor[b]->ptr, vals[k].bytes.data(), vals[k].bytes.size());
      }
    }
  }
  for (const auto& [v, b] : deferred) scatter_host(v, *targets[b]);
  realize_results(ex, roots, targets, stor.data());
}

// ---- the device: the one run path (exec/run_path.hpp), bound to the graph's leaves.
namespace {
class LazySite final : public RunSite {
 public:
  LazySite(Executable& ex, const GraphScan& scan, const std::vector<NodePtr>& roots,
           const std::vector<const Target*>& targets, int device)
      : ex_(ex), scan_(scan), src_(scan), roots_(roots), targets_(targets), device_(device),
        deferred_(has_deferred_steps(ex) ? &ex : nullptr) {
    // Each step's tier for this whole run (exec/tiered.hpp): its compiled kernel if there is
    // one now, else the interpreter (where the device has an image for it).
    for (const Step& st : ex.steps) {
      const CompiledKernel* k = kernel_for_run(st, device);
      kernels_.push_back(k);
      interpreted_ = interpreted_ || (!k && !st.call);
    }
  }
  // True when a step of this run is interpreted (no graph launch then).
  bool interpreted() const { return interpreted_; }
  const LeafSource& source() const override { return src_; }
  void bind(size_t s, void* const* buffers, void* workspace, std::vector<unsigned char>& out) const override {
    const KernelSpec& spec = kernels_[s] ? ex_.steps[s].spec : ex_.steps[s].tier->interp;
    out.assign(spec.params.begin(), spec.params.end());
    apply_patches(out.data(), spec.patches.data(), spec.patches.size(), src_, buffers, workspace);
  }
  const LaunchDims& dims(size_t s, const Step& st) const override { return launched(s, st).dims; }
  const KernelSpec& launched(size_t s, const Step& st) const override { return kernels_[s] ? st.spec : st.tier->interp; }
  void* kernel(size_t s) const override {
    if (kernels_[s]) return kernels_[s]->kernel_for(device_);
    counters().interpreted_launches++;
    return interpreter_kernel(device_, ex_.steps[s].tier->interp.name);
  }
  bool target(size_t b, void** ptr) const override {
    if (!ex_.buffers[b].is_target) return false;
    *ptr = target_address(*targets_[b], ex_.buffers[b].dtype);
    return true;
  }
  void note_uses(void* stream, int device) const override {
    note_leaves_used(scan_, stream, device);
    for (const Target* t : targets_)
      if (t) note_stream_use(*t->storage, stream, device);
  }
  void realize(std::shared_ptr<Storage>* storage) override {
    finish_deferred();  // before the results turn the graph's nodes into leaves
    realize_results(ex_, roots_, targets_, storage);
  }
  // A new plan's deferred steps (exec/tiered.hpp): their sources, made after the launches
  // (the interpreter runs meanwhile) from the graph the plan still holds, which it then drops.
  // Also where the run failed before its results: the plan stays cached.
  void finish_deferred() noexcept {
    if (!deferred_) return;
    Executable& ex = *deferred_;
    deferred_ = nullptr;
    make_deferred_sources(ex, scan_, targets_);
    ex.plan.forget_graph();
  }

 private:
  const Executable& ex_;
  const GraphScan& scan_;
  const ScanSource src_;
  const std::vector<NodePtr>& roots_;
  const std::vector<const Target*>& targets_;
  int device_;
  // per step; null: a library call, or interpreted (inline: this is built on every lazy run)
  SmallVec<const CompiledKernel*, 8> kernels_;
  bool interpreted_ = false;
  Executable* deferred_;  // the plan, while it has steps whose source is still to be made
};
}  // namespace

static void run_on_device(Executable& ex, const GraphScan& scan, const std::vector<NodePtr>& roots,
                          const std::vector<const Target*>& targets) {
  void* stream = current_stream();
  const int dev = current_device();
  LazySite site(ex, scan, roots, targets, dev);
  // From its third run on, a plan of kernels only goes out as one graph launch (cheaper on
  // the host than one launch per kernel: runtime/kernel_chain.hpp); not while a step is
  // interpreted, so the graph holds the compiled kernels.
  const std::shared_ptr<KernelChain> chain = site.interpreted() ? nullptr : ex.chains.get(dev, 2, [&] {
    std::vector<ChainNode> nodes;
    for (const auto& st : ex.steps) {
      if (st.call) return std::vector<ChainNode>{};
      if (st.spec.numel > 0) nodes.push_back({current_kernel(st)->kernel_for(dev), st.spec.dims, st.spec.params.size()});
    }
    return nodes;
  });
  std::vector<std::shared_ptr<Storage>> stor(ex.buffers.size());
  try {
    run_executable(ex, site, chain.get(), stream, dev, stor.data());
  } catch (...) {
    site.finish_deferred();
    throw;
  }
}

// One evaluation: scan, look up, then run on the host or the device (allocate, bind,
// launch, realize).
static void run(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets,
                const std::vector<std::string>* notes) {
  counters().evaluations++;
  eliminate_common_subexpressions(roots);  // plan/cse.hpp: identical work is computed once
  thread_local GraphScan scan;
  scan_graph(roots, targets, scan);
  const Where where = where_to_run(scan);
  for (const auto& r : roots)
    if (r->reads_placeholder || r->is_placeholder())
      throw ValueError(fmt::format("cannot evaluate an expression that reads a placeholder (result {} {}); "
                                   "placeholders are for planning and dumping kernels only",
                                   name(r->dtype), to_string(r->shape())));
  if (where == Where::Device) require_device();
  // An array lives on one device: the evaluation runs where its memory is (binding.hpp),
  // and its kernels are built for that device's arch.
  DeviceGuard on_leaves_device(where == Where::Device ? leaves_device(scan, targets) : -1);
  const std::shared_ptr<Executable> ex = look_up(roots, targets, scan, where, notes);
  if (ex->hazard.unsafe) {
    counters().evaluations--;  // counted by the runs it makes
    return run_through_temporaries(roots, targets, notes);
  }
  if (where == Where::Host) run_on_host(*ex, scan, roots, targets);
  else run_on_device(*ex, scan, roots, targets);
}

// ------------------------------------------------------------------ entry points

// What one materialization point evaluates besides what it was asked for (rule by rule, each
// with the note the plan dump prints):
//   - this thread's pending in-place writes (a write made through a handle that is gone is
//     not lost, and writes fuse with the work that reads them);
//   - every node it computes that an Array handle names, or that is a pending write: written
//     to memory, so later statements start from buffers, not from the history;
//   - live pending roots that read a node it computes ("shares its inputs": `x += a * p`
//     beside the `norm(r) < tol` check that computes `a` and reads `p`), so loops do not
//     grow graphs across iterations and each iteration's plan is the last one's;
//   - live pending roots that read memory it writes in place, which must see the old values.
// The device an evaluation of `n` runs on: its write target's memory, else the memory it reads
// (-1 host, -2 none: a value made of constants that writes nowhere).
static int eval_device(const Node& n) {
  if (n.dest && n.dest->storage) return n.dest->storage->device;
  return n.device;
}

static void gather_roots(std::vector<NodePtr>& roots, std::vector<std::string>& notes) {
  thread_local VisitedSet in_roots, seen;
  in_roots.clear();
  for (const auto& r : roots) in_roots.insert(r.get());
  // Only work on the memory of the evaluation's device (or host) comes along, and nothing
  // that reads a placeholder (it cannot be evaluated). A pending write belongs to the device
  // of the memory it writes, whatever its value reads (`d[...] = 2.0` into a shard on device 1).
  int device = -2;
  for (const auto& r : roots)
    if (eval_device(*r) != -2) device = eval_device(*r);
  // Roots made of constants run where the thread is (leaves_device): only that device's
  // writes come along (the zeros of a dist gather's padding, made under device 1, were run
  // on device 0 with a pending write into a shard there).
  const std::vector<NodePtr> writes = pending_write_count() > 0 ? pending_writes() : std::vector<NodePtr>{};
  if (device == -2 && std::any_of(writes.begin(), writes.end(), [](const NodePtr& w) { return eval_device(*w) >= 0; }))
    device = current_backend() == Backend::Reference ? -1 : current_device();
  auto add = [&](const NodePtr& n, const char* why) {
    if (n->is_materialized() || n->reads_placeholder) return false;
    const int nd = eval_device(*n);
    if (device != -2 && nd != -2 && nd != device) return false;
    if (!in_roots.insert(n.get())) return false;
    roots.push_back(n);
    notes.emplace_back(why);
    return true;
  };
  for (const auto& w : writes) add(w, "a pending in-place write of this thread");
  std::vector<const Node*> stack;
  for (int round = 0; round < 64; ++round) {
    const size_t before = roots.size();
    // Nodes the plan computes; handles and writes among them become roots.
    seen.clear();
    std::vector<const Storage*> written;
    for (size_t i = 0; i < roots.size(); ++i) stack.push_back(roots[i].get());
    while (!stack.empty()) {
      const Node* x = stack.back();
      stack.pop_back();
      if (x->is_leaf() || !seen.insert(x)) continue;
      if (x->dest) written.push_back(x->dest->storage.get());
      if (!in_roots.contains(x) && (x->array_refs.load(std::memory_order_relaxed) > 0 || x->dest))
        add(NodePtr(const_cast<Node*>(x)), x->dest ? "a pending in-place write read by this evaluation"
                                                     : "named by a live Array handle: kept in memory");
      for (const auto& in : x->inputs) stack.push_back(in.get());
    }
    size_t registered = 0;
    for (const auto& r : roots) registered += r->registered.load(std::memory_order_relaxed) ? 1 : 0;
    if (registered_roots() > registered) {
      std::vector<NodePtr> live = live_pending_roots();
      std::sort(live.begin(), live.end(), [](const NodePtr& a, const NodePtr& b) { return a->hash < b->hash; });
      VisitedSet walked;
      for (const auto& r : live) {
        if (r->is_materialized() || in_roots.contains(r.get())) continue;
        const char* why = nullptr;
        walked.clear();
        stack.assign(1, r.get());
        while (!stack.empty() && !why) {
          const Node* x = stack.back();
          stack.pop_back();
          if (!walked.insert(x)) continue;
          if (x->k() == NodeKind::Buffer) {
            for (const Storage* w : written)
              if (x->storage.get() == w) why = "reads memory this evaluation writes: evaluated before the write";
            continue;
          }
          if (x->is_leaf()) continue;
          if (x != r.get() && seen.contains(x)) {
            why = "a pending result that reads what this evaluation computes";
            break;
          }
          for (const auto& in : x->inputs) stack.push_back(in.get());
        }
        stack.clear();
        if (why) add(r, why);
      }
    }
    if (roots.size() == before) break;
  }
}

// A root that shows every element of a library call's result through a plain view (rfft2's
// swapaxes of its column transform, a transpose of a matmul): the evaluation computes the call's
// result instead, and the view becomes a leaf on that memory (view_roots_to_leaves) rather
// than a kernel copying it. A view of fewer elements is still copied, so that it does not keep
// the whole result alive.
bool is_view_of_call(const Node& r) {
  if (r.k() != NodeKind::View || r.dest || r.inputs.size() != 1 || is_mapped_view(r)) return false;
  const Node& b = *r.inputs[0];
  if (b.k() != NodeKind::Library || b.dest || b.dtype != r.dtype || numel(r.shape()) != numel(b.shape())) return false;
  for (int d = 0; d < r.shape().ndim(); ++d)
    if (r.shape()[d] > 1 && r.layout.strides[static_cast<size_t>(d)] == 0) return false;
  return true;
}

// gather_roots takes along pending arrays that read what an evaluation computes, a skipped
// view among them: it is no root (view_roots_to_leaves makes it a leaf).
static void drop_view_roots(std::vector<NodePtr>& roots, std::vector<std::string>& notes,
                            const std::vector<NodePtr>& views) {
  if (views.empty()) return;
  size_t k = 0;
  for (size_t i = 0; i < roots.size(); ++i) {
    if (std::any_of(views.begin(), views.end(), [&](const NodePtr& v) { return v.get() == roots[i].get(); })) continue;
    roots[k] = roots[i];
    notes[k] = notes[i];
    ++k;
  }
  roots.resize(k);
  notes.resize(k);
}

// The roots with such views replaced by the calls they show (`views`: the replaced ones).
static void view_roots_to_calls(std::vector<NodePtr>& roots, std::vector<NodePtr>& views) {
  for (auto& r : roots)
    if (is_view_of_call(*r)) {
      views.push_back(r);
      r = r->inputs[0];
    }
  if (views.empty()) return;  // (every evaluation passes here: no copy without such a root)
  std::vector<NodePtr> uniq;
  for (const auto& r : roots)
    if (std::none_of(uniq.begin(), uniq.end(), [&](const NodePtr& u) { return u.get() == r.get(); })) uniq.push_back(r);
  roots.swap(uniq);
}

// Each view the evaluation skipped, now a leaf on its call's memory (the call's result is
// contiguous from offset 0 there, the layout the view's is relative to).
static void view_roots_to_leaves(const std::vector<NodePtr>& views) {
  for (const auto& v : views) {
    const NodePtr base = v->inputs[0];
    if (!base->is_materialized() || !base->layout.is_contiguous() || base->layout.offset != 0)
      throw InternalError("a view of a library call's result: the result is not contiguous memory after its evaluation");
    const Layout l = v->layout;  // relative to the base's contiguous memory from offset 0
    realize_node(*v, base->storage, &l);
  }
}

// `why`: the reason this evaluation happens, for the plan dump's first root ("" for an
// evaluation the program asked for).
static void realize_roots(const std::vector<NodePtr>& in, const std::string& why) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  std::vector<NodePtr> roots;
  for (const auto& r : in) {
    if (r->is_materialized()) continue;
    bool dup = false;
    for (const auto& x : roots) dup |= x.get() == r.get();
    if (!dup) roots.push_back(r);
  }
  if (roots.empty()) return;
  // Roots on several devices (the pending writes of a thread that wrote into shards on two
  // GPUs) are one evaluation per device, in the order the devices first appear: an evaluation
  // runs on one device (leaves_device).
  int first = -2;
  bool mixed = false;
  for (const auto& r : roots) {
    const int d = eval_device(*r);
    if (d == -2) continue;
    if (first == -2) first = d;
    else mixed |= d != first;
  }
  if (mixed) {
    std::vector<int> order;
    for (const auto& r : roots) {
      const int d = eval_device(*r) == -2 ? first : eval_device(*r);
      if (std::find(order.begin(), order.end(), d) == order.end()) order.push_back(d);
    }
    for (int dev : order) {
      std::vector<NodePtr> part;
      for (const auto& r : roots)
        if ((eval_device(*r) == -2 ? first : eval_device(*r)) == dev) part.push_back(r);
      realize_roots(part, why);
    }
    return;
  }
  std::vector<NodePtr> views;
  view_roots_to_calls(roots, views);
  std::vector<std::string> notes(roots.size());
  if (!why.empty()) notes[0] = why;
  gather_roots(roots, notes);
  drop_view_roots(roots, notes, views);
  std::vector<Target> ts(roots.size());
  std::vector<const Target*> tp;
  bool noted = false;
  for (size_t i = 0; i < roots.size(); ++i) {
    noted = noted || !notes[i].empty();
    if (!roots[i]->dest) continue;
    if (tp.empty()) tp.assign(roots.size(), nullptr);
    ts[i] = Target{roots[i]->dest->storage, roots[i]->dest->layout};
    tp[i] = &ts[i];
  }
  run(roots, tp, noted ? &notes : nullptr);
  view_roots_to_leaves(views);
}

static void exec_realize(const std::vector<NodePtr>& in) { realize_roots(in, std::string()); }

static void exec_settle_pending_writes() {
  if (pending_write_count() == 0) return;
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  std::vector<NodePtr> w = pending_writes();
  if (!w.empty()) exec_realize(w);
}

static void exec_settle_pending_write(const NodePtr& leaf) {
  if (!leaf || !leaf->storage) return;
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  void* w = leaf->storage->pending_write.load(std::memory_order_acquire);
  if (!w || w == leaf.get()) return;
  // Under graph_mutex() the pending write is held (by its thread's list or a handle).
  NodePtr writer(static_cast<Node*>(w));
  exec_realize({writer});
}

// Does `value` read the target's memory anywhere but element-for-element? Each node is
// walked once per context (under a view or not), with an explicit stack: a loop's statements
// that read each other's values (`p = p - q*dt; q = q + p*dt`) make a graph whose paths
// double every step, and a chain is as deep as a user makes it.
static bool reads_misaligned(const Node* value, const Node* target) {
  std::vector<std::pair<const Node*, bool>> stack{{value, false}};  // node, under a view
  VisitedSet seen;                                                   // node address (+1 under a view)
  while (!stack.empty()) {
    const auto [n, under_view] = stack.back();
    stack.pop_back();
    if (!seen.insert(reinterpret_cast<uintptr_t>(n) + (under_view ? 1 : 0))) continue;
    if (n->k() == NodeKind::Buffer) {
      if (n->storage != target->storage) continue;
      if (under_view) return true;
      const Layout& a = n->layout;
      const Layout& b = target->layout;
      if (!(a.shape == b.shape && a.strides == b.strides && a.offset == b.offset)) return true;
      continue;
    }
    const bool view = under_view || n->k() == NodeKind::View || n->k() == NodeKind::Reduce || n->k() == NodeKind::Library;
    for (const auto& in : n->inputs) stack.emplace_back(in.get(), view);
  }
  return false;
}

// An elementwise copy of `value` (the same dtype and shape), computed into its own memory.
static NodePtr copy_of(const NodePtr& value) {
  InputVec ins;
  ins.push_back(value);
  return make_elementwise(static_cast<uint16_t>(Op::Cast), value->dtype, value->shape(), std::move(ins));
}

static void exec_write_into(const NodePtr& target, const NodePtr& value_in) {
  std::lock_guard<std::recursive_mutex> lk(graph_mutex());
  NodePtr value = value_in;
  // Pending work reading this memory sees the values it was written against.
  auto readers = pending_roots_reading(target->storage.get());
  if (!readers.empty()) exec_realize(readers);
  if (reads_misaligned(value.get(), target.get())) {
    // Through a temporary: value's reads of the target must all happen before any write.
    value = copy_of(value);
    exec_realize({value});
  }
  if (value->k() == NodeKind::Library && !target->layout.is_contiguous()) {
    // A library call (cuBLAS, cuSOLVER, a convolution) writes its result densely from the
    // pointer it is given: into a reversed, strided or transposed view it would write the
    // wrong elements, or past the end of the memory. It writes its own buffer, and one
    // elementwise kernel scatters that into the view.
    value = copy_of(value);
  }
  Target t{target->storage, target->layout};
  const Target* tp = &t;
  run({value}, {tp});
}

static void exec_maybe_auto_eval(const NodePtr& node) {
  if (node->reads_placeholder || node->is_leaf()) return;
  GraphBudget& budget = graph_budget();
  const int32_t max_nodes = budget.max_pending.load(std::memory_order_relaxed);
  const uint64_t max_bytes = budget.max_pinned.load(std::memory_order_relaxed);
  bool go = node->pending > max_nodes;
  // The walk below is linear in the graph: it runs every 16 nodes up to 128, then 8 times
  // per doubling (a graph of 8,192 nodes is walked ~60 times, not 512).
  auto walk_every = [](int32_t pending) {
    return std::max<int32_t>(16, static_cast<int32_t>(std::bit_floor(static_cast<uint32_t>(pending)) / 8));
  };
  if (!go && node->pins.total() > max_bytes && node->pending % walk_every(node->pending) == 0) {
    // Count only memory nothing but this graph keeps alive (no Array holds its leaf).
    uint64_t dead = 0;
    std::vector<const Node*> stack{node.get()};
    VisitedSet seen, counted;
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n)) continue;
      if (n->k() == NodeKind::Buffer) {
        if (n->storage && n->array_refs.load() == 0 && counted.insert(n->storage.get())) dead += n->storage->nbytes;
        continue;
      }
      for (const auto& in : n->inputs) stack.push_back(in.get());
    }
    go = dead > max_bytes;
  }
  if (go) {
    counters().auto_evaluations++;
    const std::string why =
        node->pending > max_nodes
            ? fmt::format("auto-evaluation: the pending graph under it has {} nodes, past Config::max_pending_nodes ({})",
                          node->pending, max_nodes)
            : fmt::format("auto-evaluation: the pending graph under it keeps {} of otherwise-dead memory alive, past "
                          "Config::max_pinned_bytes ({})", format_bytes(node->pins.total()), format_bytes(max_bytes));
    log(LogChannel::Plan, "{}", why);
    realize_roots({node}, why);
  }
}

// ------------------------------------------------------------------ hooks
// graph/ sits below the executor and reaches evaluation through these (graph/realize.hpp);
// stream boundaries (runtime/device.hpp) enqueue the thread's pending writes on the stream
// they were made on. Installed before main; cufuse's link interface keeps this object in a
// static link though nothing names it (CMakeLists.txt: cufuse_exec_link_anchor).
namespace {
constexpr EvalHooks kEvalHooks{&exec_realize, &exec_write_into, &exec_maybe_auto_eval, &exec_settle_pending_write,
                               &exec_settle_pending_writes};
const bool g_hooks_installed = [] {
  install_eval_hooks(&kEvalHooks);
  set_stream_boundary_hook(&exec_settle_pending_writes);
  return true;
}();
}  // namespace

}  // namespace detail

extern "C" void cufuse_exec_link_anchor() {}  // see "hooks" above

// ------------------------------------------------------------------ introspection
std::string plan_dump(const std::vector<Array>& outputs, bool with_source) {
  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  std::vector<detail::NodePtr> roots;
  for (const auto& a : outputs) {
    if (!a.defined()) throw ValueError("plan_dump: an Array handle is empty");
    bool dup = false;
    for (const auto& r : roots) dup |= r.get() == a.node().get();
    if (!a.node()->is_materialized() && !dup) roots.push_back(a.node());
  }
  if (roots.empty()) return "plan: nothing to compute (all results are in memory)\n";
  std::vector<detail::NodePtr> views;
  detail::view_roots_to_calls(roots, views);
  std::vector<std::string> notes(roots.size());
  detail::gather_roots(roots, notes);
  detail::drop_view_roots(roots, notes, views);
  std::vector<detail::Target> ts(roots.size());
  std::vector<const detail::Target*> tp(roots.size(), nullptr);
  for (size_t i = 0; i < roots.size(); ++i)
    if (roots[i]->dest) {
      ts[i] = detail::Target{roots[i]->dest->storage, roots[i]->dest->layout};
      tp[i] = &ts[i];
    }
  detail::eliminate_common_subexpressions(roots);
  detail::GraphScan scan;
  scan_graph(roots, tp, scan);
  auto ex = detail::build_executable(roots, tp, scan, false, detail::default_arch(), &notes);
  return detail::describe_executable(*ex, with_source, &notes);
}

}  // namespace cufuse
