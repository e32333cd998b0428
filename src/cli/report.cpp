// src/cli/report.cpp: builds the Report (report.hpp) with the executor's own machinery:
// scan_graph and build_executable plan and generate exactly what an evaluation would, then
// each kernel is compiled on its own so that one NVRTC failure does not hide the others.
// Also walks each group's subgraph, in execution order, for what each kernel or library
// call reads and for the DAG that --dot draws. A node an earlier group wrote is read from
// memory (the executor binds it the same way), so the walk stops there.
#include "cli/report.hpp"

#include <algorithm>
#include <mutex>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/preamble.hpp"
#include "compile/compiler.hpp"
#include "core/library_call.hpp"
#include "core/op_table.hpp"
#include "core/node_names.hpp"
#include "core/reduce_attrs.hpp"
#include "cufuse/error.hpp"
#include "exec/executable.hpp"
#include "plan/plan.hpp"
#include "plan/signature.hpp"
#include "runtime/storage.hpp"

namespace cufuse::cli {

namespace {

using detail::Node;
using detail::NodeKind;
using detail::NodePtr;

std::string short_dtype(DType t) { return std::string(info(t).short_name); }

using detail::call_name;
using detail::node_op_name;

// What a library group's output is: the call's output, or the elementwise node the call's
// epilogue computes ("matmul + epilogue maximum").
std::string library_output_name(const detail::Group& g, const Node& o) {
  if (o.k() == NodeKind::Library || !g.call) return node_op_name(o);
  return fmt::format("{} + epilogue {}", call_name(*g.call), node_op_name(o));
}

class Builder {
 public:
  Builder(Report& rep, const ReportOptions& opt) : rep_(rep), opt_(opt) {}

  std::unordered_map<const Node*, std::vector<std::string>> root_names;

  // A new evaluation: its plan's roots are named afresh, and nothing is in memory yet but
  // leaves (a node an earlier evaluation computed is computed again where it is read).
  void begin_evaluation() {
    root_names.clear();
    written_.clear();
  }

  LeafRead describe_leaf(const Node& n) const {
    LeafRead l;
    l.dtype = n.dtype;
    l.shape = n.shape();
    switch (n.k()) {
      case NodeKind::Buffer: {
        const bool ph = n.is_placeholder();
        l.kind = ph ? "placeholder" : "buffer";
        const int slot = n.placeholder_slot;
        if (ph && slot >= 0 && slot < static_cast<int>(opt_.placeholder_names.size()))
          l.label = opt_.placeholder_names[static_cast<size_t>(slot)];
        else
          l.label = l.kind;
        l.strides = n.layout.strides;
        l.offset = n.layout.offset;
        break;
      }
      case NodeKind::Scalar:
        l.kind = "scalar";
        l.label = n.scalar.kind() == Scalar::Kind::Bool ? (n.scalar.to_bool() ? "True" : "False") : n.scalar.str();
        break;
      case NodeKind::Generator: {
        const auto g = static_cast<detail::GenKind>(n.op);
        l.kind = detail::gen_name(g);
        const auto& p = n.gen;
        switch (g) {
          case detail::GenKind::Arange:
            l.label = is_float(n.dtype) ? fmt::format("arange(start={}, step={})", p.start, p.step - p.start)
                                        : fmt::format("arange(start={}, step={})", p.istart, p.istep_second - p.istart);
            break;
          case detail::GenKind::Linspace:
            l.label = fmt::format("linspace({}, {}, num={}{})", p.start, p.stop, p.num, p.endpoint ? "" : ", endpoint=False");
            break;
          default: l.label = fmt::format("random.{}(seed={})", l.kind, p.seed); break;
        }
        l.strides = n.layout.strides;
        l.offset = n.layout.offset;
        break;
      }
      default:
        l.kind = detail::kind_name(n.k());
        l.label = l.kind;
        break;
    }
    return l;
  }

  // The graph id of a node written by a group walked so far, or of a leaf; -1 if none.
  int graph_id(const Node* n) const {
    if (auto w = written_.find(n); w != written_.end()) return w->second.id;
    if (auto l = leaf_ids_.find(n); l != leaf_ids_.end()) return l->second;
    return -1;
  }

  // Walks a kernel group (kernel >= 0) or a library call's group (call >= 0).
  void walk_group(int group, const detail::Group& g, int kernel, int call) {
    group_ = group;
    kernel_ = kernel;
    call_ = call;
    local_.clear();
    seen_reads_.clear();
    reads_ = kernel >= 0 ? &rep_.kernels[static_cast<size_t>(kernel)].inputs
                         : &rep_.library_calls[static_cast<size_t>(call)].inputs;
    std::vector<std::pair<const Node*, int>> made;
    if (call >= 0) {
      std::vector<int> ins;
      for (const auto& x : g.lib_inputs) ins.push_back(ref(x.get()));
      for (const auto& o : g.outputs) {
        const int id = add_node(*o, library_output_name(g, *o), "library");
        rep_.graph[static_cast<size_t>(id)].inputs = ins;
        made.emplace_back(o.get(), id);
      }
    } else {
      for (const auto& o : g.outputs) {
        if (o->is_leaf() || written_before(o.get())) {
          // A result that is a leaf (a placeholder's view, a scalar, a generator) or memory
          // already written is copied by the kernel: draw the copy inside the cluster.
          const int src = ref(o.get());
          const int id = add_node(*o, "copy", "copy");
          rep_.graph[static_cast<size_t>(id)].inputs.push_back(src);
          made.emplace_back(o.get(), id);
          continue;
        }
        made.emplace_back(o.get(), inner(o.get()));
      }
    }
    // What this group writes is memory for the groups after it.
    for (const auto& [n, id] : made) written_.emplace(n, Written{group, id});
  }

 private:
  struct Written {
    int group;
    int id;
  };
  Report& rep_;
  const ReportOptions& opt_;
  std::unordered_map<const Node*, int> leaf_ids_;
  std::unordered_map<const Node*, Written> written_;
  std::unordered_map<const Node*, int> local_;
  std::vector<const Node*> seen_reads_;
  std::vector<LeafRead>* reads_ = nullptr;
  int group_ = 0, kernel_ = -1, call_ = -1;

  bool written_before(const Node* n) const {
    auto it = written_.find(n);
    return it != written_.end() && it->second.group < group_;
  }

  int add_node(const Node& n, const std::string& what, const std::string& kind) {
    GraphNode g;
    g.id = static_cast<int>(rep_.graph.size());
    g.kernel = kernel_;
    g.library_call = call_;
    g.kind = kind;
    g.label = fmt::format("{}\n{} {}", what, short_dtype(n.dtype), to_string(n.shape()));
    auto rn = root_names.find(&n);
    if (rn != root_names.end()) g.results = rn->second;
    rep_.graph.push_back(std::move(g));
    return rep_.graph.back().id;
  }

  void note_read(const Node* n, LeafRead r) {
    if (std::find(seen_reads_.begin(), seen_reads_.end(), n) != seen_reads_.end()) return;
    seen_reads_.push_back(n);
    reads_->push_back(std::move(r));
  }

  // The graph id of what the current group reads as n: memory an earlier group wrote, a
  // leaf, or (inside a kernel) a node it computes.
  int ref(const Node* n) {
    auto w = written_.find(n);
    if (w != written_.end() && w->second.group < group_) {
      LeafRead r;
      r.kind = "intermediate";
      const GraphNode& src = rep_.graph[static_cast<size_t>(w->second.id)];
      const std::string from = src.kernel >= 0 ? fmt::format("kernel {}", src.kernel)
                                               : fmt::format("library call {}", src.library_call);
      auto rn = root_names.find(n);
      r.label = rn != root_names.end() ? fmt::format("{} (from {})", fmt::join(rn->second, " = "), from)
                                       : fmt::format("{} (from {})", node_op_name(*n), from);
      r.dtype = n->dtype;
      r.shape = n->shape();
      r.strides = contiguous_strides(n->shape());
      note_read(n, std::move(r));
      return w->second.id;
    }
    if (n->is_leaf() || kernel_ < 0) return leaf(n);
    return inner(n);
  }

  int leaf(const Node* n) {
    note_read(n, describe_leaf(*n));
    auto it = leaf_ids_.find(n);
    if (it != leaf_ids_.end()) return it->second;
    GraphNode g;
    g.id = static_cast<int>(rep_.graph.size());
    LeafRead l = describe_leaf(*n);
    g.kind = l.kind;
    g.label = l.kind == "scalar" ? fmt::format("{}\n{}", l.label, short_dtype(n->dtype))
                                 : fmt::format("{}\n{} {}", l.label, short_dtype(n->dtype), to_string(n->shape()));
    if (!l.strides.empty() && !(l.strides == contiguous_strides(l.shape)))
      g.label += fmt::format("\nstrides ({})", fmt::join(l.strides.begin(), l.strides.end(), ", "));
    if (l.offset) g.label += fmt::format("\noffset {}", l.offset);
    rep_.graph.push_back(std::move(g));
    leaf_ids_.emplace(n, rep_.graph.back().id);
    return rep_.graph.back().id;
  }

  int inner(const Node* n) {
    auto it = local_.find(n);
    if (it != local_.end()) return it->second;
    const int id = add_node(*n, node_op_name(*n), detail::kind_name(n->k()));
    local_.emplace(n, id);
    std::vector<int> ins;
    for (const auto& in : n->inputs) ins.push_back(ref(in.get()));
    rep_.graph[static_cast<size_t>(id)].inputs = std::move(ins);
    return id;
  }
};

// Characters of a generated kernel's source up to the end of its preamble (0 without one).
size_t preamble_length_of(const std::string& source) {
  const size_t e = source.find(detail::kPreambleEnd);
  return e == std::string::npos ? 0 : e + detail::kPreambleEnd.size();
}

void compile_into(KernelReport& k, int arch) {
  try {
    detail::CompiledKernelPtr ck = detail::compile_kernel(k.source, k.name, arch);
    k.compiled = true;
    k.registers = ck->registers;
    k.spill_stores = ck->spill_stores;
    k.spill_loads = ck->spill_loads;
    k.stack_bytes = ck->stack_bytes;
    k.shared_bytes = ck->shared_bytes;
    k.compile_ms = ck->compile_ms;
    k.from_disk = ck->from_disk;
  } catch (const CompileError& e) {
    k.error = e.what();
    k.error_log = e.log();
  } catch (const cufuse::Error& e) {
    k.error = e.what();
  }
}

std::vector<WrittenValue> written_values(const detail::Group& g, const Builder& b, const Evaluation* write) {
  std::vector<WrittenValue> out;
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const auto& o = g.outputs[k];
    WrittenValue w;
    w.dtype = o->dtype;
    w.shape = o->shape();
    w.what = g.kind == detail::GroupKind::Library ? library_output_name(g, *o) : node_op_name(*o);
    auto rn = b.root_names.find(o.get());
    if (rn != b.root_names.end()) w.results = rn->second;
    if (write && k < g.output_root.size() && g.output_root[k] == 0) {  // the write's one root
      w.in_place = true;
      w.memory = write->memory;
      w.strides = write->strides;
      w.offset = write->offset;
    }
    out.push_back(std::move(w));
  }
  return out;
}

// Plans one evaluation: the named arrays (with `write`, its one root goes into the memory
// written) appended to the report as kernels and calls of evaluation `evaluation`, groups
// numbered from `group_base`. With `results`, each name gets a ResultReport (a name whose
// array is in memory needs nothing); `writer` gets, per name, the kernel and call writing it.
void plan_evaluation(Report& rep, Builder& b, const std::vector<NamedArray>& named, const Evaluation* write,
                     int evaluation, int& group_base, const ReportOptions& opt, std::vector<ResultReport>* results,
                     std::vector<std::pair<int, int>>& writer) {
  b.begin_evaluation();
  // The roots: each distinct pending array once (two names may share one array).
  std::vector<NodePtr> roots;
  std::vector<int> root_of;
  for (const auto& r : named) {
    if (!r.array.defined()) throw ValueError(fmt::format("result '{}' is an empty Array handle", r.name));
    // a view of a whole library result is that result's memory (exec/executable.hpp)
    const NodePtr& n = detail::is_view_of_call(*r.array.node()) ? r.array.node()->inputs[0] : r.array.node();
    ResultReport rr;
    rr.name = r.name;
    rr.dtype = r.array.node()->dtype;
    rr.shape = r.array.node()->shape();
    rr.in_memory = n->is_materialized();
    if (results && n->is_placeholder()) {  // memory one of the program's evaluations wrote
      const int slot = n->placeholder_slot;
      if (slot >= 0 && slot < static_cast<int>(opt.slots.size()) && opt.slots[static_cast<size_t>(slot)].written_by >= 0) {
        rr.in_memory = true;
        rr.written_by = opt.slots[static_cast<size_t>(slot)].written_by;
      }
    }
    int idx = -1;
    if (!rr.in_memory) {
      for (size_t i = 0; i < roots.size(); ++i)
        if (roots[i].get() == n.get()) idx = static_cast<int>(i);
      if (idx < 0) {
        idx = static_cast<int>(roots.size());
        roots.push_back(n);
      }
      b.root_names[n.get()].push_back(r.name);
    }
    root_of.push_back(idx);
    if (results) results->push_back(rr);
  }
  writer.assign(named.size(), {-1, -1});
  if (roots.empty()) return;

  // A write's target: the memory is a placeholder (no pointer; taken as 16-byte aligned).
  static const std::shared_ptr<detail::Storage> no_memory = std::make_shared<detail::Storage>();
  detail::Target target;
  std::vector<const detail::Target*> targets;
  if (write) {
    target.storage = no_memory;
    target.layout.shape = write->shape;
    target.layout.strides = write->strides;
    target.layout.offset = write->offset;
    targets.push_back(&target);
  }
  detail::GraphScan scan;
  detail::scan_graph(roots, targets, scan);
  // Compiled below, kernel by kernel, so a failure is reported with its kernel.
  auto ex = detail::build_executable(roots, targets, scan, /*compile=*/false, opt.arch);
  const detail::Plan& plan = ex->plan;

  // Each group is one step: a kernel, or a library call.
  std::vector<int> kernel_of_group(plan.groups.size(), -1), call_of_group(plan.groups.size(), -1);
  for (const auto& st : ex->steps) {
    const detail::Group& g = plan.groups[static_cast<size_t>(st.group)];
    if (st.call) {
      LibraryCallReport l;
      l.group = group_base + st.group;
      l.evaluation = evaluation;
      l.name = call_name(*st.call);
      l.detail = st.call->describe();
      l.rule = detail::rule_name(g.rule);
      l.rule_doc = detail::rule_doc(g.rule);
      l.outputs = written_values(g, b, write);
      detail::KernelSpec spec;
      if (st.call->generated_kernel(spec)) {
        l.has_kernel = true;
        l.kernel.group = l.group;
        l.kernel.evaluation = evaluation;
        l.kernel.name = spec.name;
        l.kernel.kind = "library";
        l.kernel.summary = spec.summary;
        l.kernel.source = spec.source;
        l.kernel.preamble_length = preamble_length_of(spec.source);
      }
      call_of_group[static_cast<size_t>(st.group)] = static_cast<int>(rep.library_calls.size());
      rep.library_calls.push_back(std::move(l));
      continue;
    }
    KernelReport k;
    k.group = group_base + st.group;
    k.evaluation = evaluation;
    k.name = st.spec.name;
    k.kind = detail::group_kind_name(g.kind);
    k.rule = detail::rule_name(g.rule);
    k.rule_doc = detail::rule_doc(g.rule);
    for (auto r : g.fused) k.fused.push_back(detail::rule_name(r));
    k.iteration_shape = g.iter_shape;
    if (g.kind != detail::GroupKind::Elementwise) k.axes = g.axes;
    k.outputs = written_values(g, b, write);
    k.summary = st.spec.summary;
    k.source = st.spec.source;
    k.preamble_length = preamble_length_of(k.source);
    kernel_of_group[static_cast<size_t>(st.group)] = static_cast<int>(rep.kernels.size());
    rep.kernels.push_back(std::move(k));
  }
  for (size_t i = 0; i < named.size(); ++i) {
    const int r = root_of[i];
    if (r < 0) continue;
    for (size_t gi = 0; gi < plan.groups.size(); ++gi)
      for (int root : plan.groups[gi].output_root)
        if (root == r) writer[i] = {kernel_of_group[gi], call_of_group[gi]};
    if (results) {
      (*results)[results->size() - named.size() + i].kernel = writer[i].first;
      (*results)[results->size() - named.size() + i].library_call = writer[i].second;
    }
  }
  for (size_t gi = 0; gi < plan.groups.size(); ++gi)
    if (kernel_of_group[gi] >= 0 || call_of_group[gi] >= 0)
      b.walk_group(group_base + static_cast<int>(gi), plan.groups[gi], kernel_of_group[gi], call_of_group[gi]);
  // Each cut names its node by its id in the report's graph (--dot's n<id>), where it has one.
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    std::vector<std::string>* cuts = kernel_of_group[gi] >= 0 ? &rep.kernels[static_cast<size_t>(kernel_of_group[gi])].cuts
                                     : call_of_group[gi] >= 0 ? &rep.library_calls[static_cast<size_t>(call_of_group[gi])].cuts
                                                              : nullptr;
    if (!cuts) continue;
    for (detail::Cut c : plan.groups[gi].cuts) {
      c.index = b.graph_id(c.node);
      cuts->push_back(detail::describe_cut(c));
    }
  }
  group_base += static_cast<int>(plan.groups.size());
}

}  // namespace

Report build_report(const std::vector<NamedArray>& results, const ReportOptions& opt) {
  return build_report(std::vector<Evaluation>{}, results, opt);
}

Report build_report(const std::vector<Evaluation>& writes, const std::vector<NamedArray>& results,
                    const ReportOptions& opt) {
  Report rep;
  rep.arch = opt.arch;
  rep.compiled = opt.compile;
  Builder b(rep, opt);

  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  int group_base = 0;
  // The memory each slot stands for: which kernel or call wrote it.
  std::vector<std::pair<int, int>> writer_of_slot(opt.slots.size(), {-1, -1});
  std::vector<std::pair<int, int>> writer;
  for (size_t e = 0; e < writes.size(); ++e) {
    const Evaluation& ev = writes[e];
    rep.evaluations.push_back(EvaluationReport{evaluation_kind_name(ev.kind), ev.why, ev.loc.line, ev.loc.column});
    plan_evaluation(rep, b, ev.roots, ev.kind == Evaluation::Kind::Write ? &ev : nullptr, static_cast<int>(e),
                    group_base, opt, nullptr, writer);
    for (size_t i = 0; i < ev.slots.size() && i < writer.size(); ++i)
      if (ev.slots[i] >= 0 && ev.slots[i] < static_cast<int>(writer_of_slot.size()))
        writer_of_slot[static_cast<size_t>(ev.slots[i])] = writer[i];
  }
  if (!writes.empty()) rep.evaluations.push_back(EvaluationReport{"results", "the program's results", 0, 0});
  plan_evaluation(rep, b, results, nullptr, static_cast<int>(writes.size()), group_base, opt, &rep.results, writer);
  for (size_t i = 0; i < rep.results.size(); ++i) {  // a result a write left in memory: who wrote it
    auto& rr = rep.results[i];
    if (rr.written_by < 0) continue;
    const int slot = results[i].array.node()->placeholder_slot;
    if (slot >= 0 && slot < static_cast<int>(writer_of_slot.size()))
      std::tie(rr.kernel, rr.library_call) = writer_of_slot[static_cast<size_t>(slot)];
  }

  if (opt.compile) {
    for (auto& k : rep.kernels) compile_into(k, opt.arch);
    for (auto& l : rep.library_calls)
      if (l.has_kernel) compile_into(l.kernel, opt.arch);
  }
  return rep;
}

}  // namespace cufuse::cli
