// src/cli/report.cpp: builds the Report (report.hpp) with the executor's own machinery:
// scan_graph and build_executable plan and generate exactly what an evaluation would, then
// each kernel is compiled on its own so that one NVRTC failure does not hide the others.
// Also walks each group's subgraph for the DAG that --dot draws.
#include "cli/report.hpp"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "codegen/compiler.hpp"
#include "codegen/op_table.hpp"
#include "cufuse/error.hpp"
#include "exec/executable.hpp"
#include "plan/plan.hpp"
#include "plan/signature.hpp"

namespace cufuse::cli {

namespace {

using detail::Node;
using detail::NodeKind;
using detail::NodePtr;

std::string short_dtype(DType t) { return std::string(info(t).short_name); }

std::string node_op_name(const Node& n) {
  switch (n.k()) {
    case NodeKind::Elementwise: {
      const auto& row = detail::op_row(n.op);
      if (row.id == detail::Op::Cast) return fmt::format("astype({})", name(n.dtype));
      return row.name;
    }
    case NodeKind::View: return "view";
    case NodeKind::Generator: return detail::gen_name(static_cast<detail::GenKind>(n.op));
    default: return detail::kind_name(n.k());
  }
}

class Builder {
 public:
  Builder(Report& rep, const ReportOptions& opt) : rep_(rep), opt_(opt) {}

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
      default: l.kind = detail::kind_name(n.k()); l.label = l.kind; break;
    }
    return l;
  }

  // ---------------------------------------------------------------- the DAG for --dot
  int leaf_id(const Node* n, KernelReport& k, std::vector<const Node*>& seen_leaves) {
    if (std::find(seen_leaves.begin(), seen_leaves.end(), n) == seen_leaves.end()) {
      seen_leaves.push_back(n);
      k.inputs.push_back(describe_leaf(*n));
    }
    auto it = leaf_ids_.find(n);
    if (it != leaf_ids_.end()) return it->second;
    GraphNode g;
    g.id = static_cast<int>(rep_.graph.size());
    g.kernel = -1;
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

  int inner_id(const Node* n, int kernel, std::unordered_map<const Node*, int>& local, KernelReport& k,
               std::vector<const Node*>& seen_leaves) {
    if (n->is_leaf()) return leaf_id(n, k, seen_leaves);
    auto it = local.find(n);
    if (it != local.end()) return it->second;
    // A Reduce or Library node written by another group is memory this kernel reads.
    auto prod = produced_by_.find(n);
    if (prod != produced_by_.end() && prod->second.first != kernel &&
        (n->k() == NodeKind::Reduce || n->k() == NodeKind::Library))
      return prod->second.second;
    GraphNode g;
    g.id = static_cast<int>(rep_.graph.size());
    g.kernel = kernel;
    g.kind = detail::kind_name(n->k());
    g.label = fmt::format("{}\n{} {}", node_op_name(*n), short_dtype(n->dtype), to_string(n->shape()));
    auto rn = root_names_.find(n);
    if (rn != root_names_.end()) g.results = rn->second;
    const int id = g.id;
    rep_.graph.push_back(std::move(g));
    local.emplace(n, id);
    if (prod == produced_by_.end() || prod->second.first == kernel) produced_by_[n] = {kernel, id};
    std::vector<int> ins;
    for (const auto& in : n->inputs) ins.push_back(inner_id(in.get(), kernel, local, k, seen_leaves));
    rep_.graph[static_cast<size_t>(id)].inputs = std::move(ins);
    return id;
  }

  void walk_kernel(int kernel, const std::vector<NodePtr>& outputs) {
    std::unordered_map<const Node*, int> local;
    std::vector<const Node*> seen_leaves;
    KernelReport& k = rep_.kernels[static_cast<size_t>(kernel)];
    for (const auto& o : outputs) {
      if (o->is_leaf()) {
        // A result that is a leaf (a placeholder's view, a scalar, a generator) is copied by
        // the kernel: draw the copy inside the cluster.
        GraphNode g;
        g.id = static_cast<int>(rep_.graph.size());
        g.kernel = kernel;
        g.kind = "copy";
        g.label = fmt::format("copy\n{} {}", short_dtype(o->dtype), to_string(o->shape()));
        auto rn = root_names_.find(o.get());
        if (rn != root_names_.end()) g.results = rn->second;
        const int id = g.id;
        rep_.graph.push_back(std::move(g));
        const int src = leaf_id(o.get(), k, seen_leaves);
        rep_.graph[static_cast<size_t>(id)].inputs.push_back(src);
        continue;
      }
      inner_id(o.get(), kernel, local, k, seen_leaves);
    }
  }

  std::unordered_map<const Node*, std::vector<std::string>> root_names_;

 private:
  Report& rep_;
  const ReportOptions& opt_;
  std::unordered_map<const Node*, int> leaf_ids_;
  std::unordered_map<const Node*, std::pair<int, int>> produced_by_;  // node -> (kernel, graph id)
};

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

}  // namespace

Report build_report(const std::vector<NamedArray>& results, const ReportOptions& opt) {
  Report rep;
  rep.arch = opt.arch;
  rep.compiled = opt.compile;
  Builder b(rep, opt);

  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  // The roots: each distinct pending result once (two names may share one array).
  std::vector<NodePtr> roots;
  std::vector<int> root_of_result;
  for (const auto& r : results) {
    if (!r.array.defined()) throw ValueError(fmt::format("result '{}' is an empty Array handle", r.name));
    const NodePtr& n = r.array.node();
    ResultReport rr;
    rr.name = r.name;
    rr.dtype = n->dtype;
    rr.shape = n->shape();
    rr.in_memory = n->is_materialized();
    rep.results.push_back(rr);
    int idx = -1;
    if (!rr.in_memory) {
      for (size_t i = 0; i < roots.size(); ++i)
        if (roots[i].get() == n.get()) idx = static_cast<int>(i);
      if (idx < 0) {
        idx = static_cast<int>(roots.size());
        roots.push_back(n);
      }
      b.root_names_[n.get()].push_back(r.name);
    }
    root_of_result.push_back(idx);
  }
  if (roots.empty()) return rep;

  detail::GraphScan scan;
  detail::scan_graph(roots, {}, scan);
  // Compiled below, kernel by kernel, so a failure is reported with its kernel.
  auto ex = detail::build_executable(roots, {}, scan, /*compile=*/false, opt.arch);
  const detail::Plan& plan = ex->plan;

  std::vector<int> kernel_of_group(plan.groups.size(), -1);
  for (const auto& st : ex->steps) {
    const detail::Group& g = plan.groups[static_cast<size_t>(st.group)];
    KernelReport k;
    k.group = st.group;
    k.name = st.spec.name;
    k.rule = detail::rule_name(g.rule);
    k.rule_doc = detail::rule_doc(g.rule);
    k.iteration_shape = g.iter_shape;
    for (size_t o = 0; o < g.outputs.size(); ++o) {
      WrittenValue w;
      w.dtype = g.outputs[o]->dtype;
      w.shape = g.outputs[o]->shape();
      auto rn = b.root_names_.find(g.outputs[o].get());
      if (rn != b.root_names_.end()) w.results = rn->second;
      k.outputs.push_back(std::move(w));
    }
    k.summary = st.spec.summary;
    k.source = st.spec.source;
    kernel_of_group[static_cast<size_t>(st.group)] = static_cast<int>(rep.kernels.size());
    rep.kernels.push_back(std::move(k));
  }
  // Groups no kernel step covers are library calls (cuBLAS, cuSOLVER, contractions).
  for (size_t gi = 0; gi < plan.groups.size(); ++gi) {
    if (kernel_of_group[gi] >= 0) continue;
    const detail::Group& g = plan.groups[gi];
    LibraryCallReport l;
    l.group = static_cast<int>(gi);
    l.name = "library";
    l.rule = detail::rule_name(g.rule);
    l.rule_doc = detail::rule_doc(g.rule);
    for (const auto& out : g.outputs) {
      WrittenValue w;
      w.dtype = out->dtype;
      w.shape = out->shape();
      auto rn = b.root_names_.find(out.get());
      if (rn != b.root_names_.end()) w.results = rn->second;
      l.outputs.push_back(std::move(w));
    }
    rep.library_calls.push_back(std::move(l));
  }
  for (size_t i = 0; i < rep.results.size(); ++i) {
    const int r = root_of_result[i];
    if (r < 0) continue;
    for (size_t gi = 0; gi < plan.groups.size(); ++gi)
      for (int root : plan.groups[gi].output_root)
        if (root == r) rep.results[i].kernel = kernel_of_group[gi];
  }
  for (size_t ki = 0; ki < rep.kernels.size(); ++ki)
    b.walk_kernel(static_cast<int>(ki), plan.groups[static_cast<size_t>(rep.kernels[ki].group)].outputs);

  if (opt.compile)
    for (auto& k : rep.kernels) compile_into(k, opt.arch);
  return rep;
}

}  // namespace cufuse::cli
