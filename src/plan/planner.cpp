// src/plan/planner.cpp: the fusion planner. It cuts the pending graph into groups:
//   reduction groups — one per (input shape, reduced axes) "domain": the reductions of that
//       domain (rule siblings), their elementwise producers (prologue), elementwise
//       consumers over the reduced shape (epilogue), and, when a reduction is broadcast
//       back over the rows it reduced and reduced or mapped again, the later reductions
//       (phases) and the row-shaped results (rule rows) — while a row fits on chip; past
//       that each reduction is its own kernel (multi-pass).
//   scan groups — one per cumsum/cumprod, prologue fused.
//   elementwise groups — one per result shape (rule iteration-space); everything
//       elementwise, view, scalar and generator under a result is computed inside
//       (rule output), a node with several consumers once per kernel.
// A reduction result that anything else reads (another domain, a reshape, a library call)
// is written to memory (rule materialize) and read back as a buffer by later groups.
#include <algorithm>
#include <functional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "graph/gather.hpp"
#include "graph/reduce_attrs.hpp"
#include "library/library_call.hpp"
#include "library/epilogue.hpp"
#include "plan/kernel_size.hpp"
#include "plan/param_budget.hpp"
#include "plan/plan.hpp"

namespace cufuse::detail {

const char* rule_name(Rule r) {
  switch (r) {
    case Rule::Output: return "output";
    case Rule::IterationSpace: return "iteration-space";
    case Rule::Prologue: return "prologue";
    case Rule::Epilogue: return "epilogue";
    case Rule::Siblings: return "siblings";
    case Rule::Rows: return "rows";
    case Rule::MultiPass: return "multi-pass";
    case Rule::Materialize: return "materialize";
    case Rule::Scan: return "scan";
    case Rule::Library: return "library";
    case Rule::LibraryInput: return "library-input";
    case Rule::ParamSpace: return "param-space";
    case Rule::KernelSize: return "kernel-size";
  }
  return "?";
}

const char* rule_doc(Rule r) {
  switch (r) {
    case Rule::Output: return "elementwise, view, scalar and generator work under a result fuses into the kernel writing it";
    case Rule::IterationSpace: return "results over one shape share a kernel; results over other shapes get their own";
    case Rule::Prologue: return "the elementwise producers of a reduction are computed inside it";
    case Rule::Epilogue: return "elementwise consumers over a reduction's output are computed after it, in its kernel";
    case Rule::Siblings: return "reductions over the same input shape and axes share one kernel";
    case Rule::Rows: return "a reduction broadcast back over its rows and reduced or mapped again is one row kernel (a row-shaped result whose rows that kernel would read across threads gets a kernel of its own)";
    case Rule::MultiPass: return "rows too long for one block: each reduction runs as its own kernel";
    case Rule::Materialize: return "a reduction result read other than by broadcast-back or epilogue is written to memory";
    case Rule::Scan: return "a cumulative sum/product is its own kernel with its elementwise producers fused";
    case Rule::Library: return "a matmul, contraction, solver or convolution call runs on its own (cuBLAS, cuSOLVER, or its generated kernel)";
    case Rule::LibraryInput: return "a library input whose layout the call cannot read is written contiguously by one kernel first";
    case Rule::ParamSpace: return "a kernel's parameters must fit CUDA's 32 KB: work that would pass that is cut out and written to memory by a kernel of its own, or starts another kernel";
    case Rule::KernelSize: {
      static const std::string doc = fmt::format(
          "a kernel computes at most {} elementwise ops and views (CUFUSE_MAX_KERNEL_OPS; NVRTC's time grows faster than "
          "the code): work that would pass that is cut out and written to memory by a kernel of its own, or starts another kernel",
          max_kernel_ops());
      return doc.c_str();
    }
  }
  return "";
}

std::string rule_limit(Rule r) {
  switch (r) {
    case Rule::ParamSpace: return fmt::format("limit {} bytes of parameters a kernel", kKernelParamLimit);
    case Rule::KernelSize: return fmt::format("limit {} ops a kernel", max_kernel_ops());
    default: return "";
  }
}

const char* group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::Elementwise: return "elementwise";
    case GroupKind::Reduction: return "reduction";
    case GroupKind::Scan: return "scan";
    case GroupKind::Library: return "library";
  }
  return "?";
}

int Plan::buffer_of(const Node* n) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].get() == n) return static_cast<int>(i);
  return -1;
}

void Plan::forget_graph() {
  roots.clear();
  targets.clear();
  buffers.clear();
  for (auto& g : groups) {
    g.outputs.clear();
    g.reductions.clear();
    g.lib_inputs.clear();
  }
}

static bool is_plain_reduce(const Node* n) {
  return n->k() == NodeKind::Reduce && !is_scan(reduce_attrs(*n).op);
}

bool is_broadcast_back(const Node* v, const Node* r) {
  if (v->k() != NodeKind::View || v->inputs.empty() || v->inputs[0].get() != r || !is_plain_reduce(r)) return false;
  const Shape& S = r->inputs[0]->shape();
  if (v->shape() != S || v->layout.offset != 0) return false;
  const Axes& axes = reduce_attrs(*r).axes;
  int64_t expect = 1;
  for (int d = S.ndim() - 1; d >= 0; --d) {
    const bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (S[d] == 1) continue;
    if (reduced) {
      if (v->layout.strides[d] != 0) return false;
    } else {
      if (v->layout.strides[d] != expect) return false;
      expect *= S[d];
    }
  }
  return true;
}

namespace {

// Longest row (reduced elements) a row kernel with phases keeps on chip.
constexpr int64_t kMaxRowOnChip = 32768;

int64_t row_length(const Shape& S, const Axes& axes) {
  int64_t n = 1;
  for (int a : axes) n *= S[a];
  return n;
}

struct Domain {
  Shape S;
  Axes axes;
  bool operator==(const Domain& o) const { return S == o.S && axes == o.axes; }
};

struct Access {
  const Node* red;  // a Reduce (or Scan) node reached
  bool broadcast_back;
  bool direct;  // reached as an elementwise input (same shape), not through a View
};

// The reductions (and other non-elementwise nodes) an elementwise subgraph reads, and how.
void boundary(const Node* root, std::vector<Access>& out) {
  std::vector<const Node*> stack{root};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    switch (x->k()) {
      case NodeKind::Buffer:
      case NodeKind::Scalar:
      case NodeKind::Generator: break;
      case NodeKind::Elementwise:
        for (const auto& in : x->inputs) stack.push_back(in.get());
        break;
      case NodeKind::View: {
        const Node* in = x->inputs[0].get();
        if (is_gather(*x))  // its index nodes are computed where it is; its source is read
          for (int d = 0; d < gather_rank(*x); ++d) stack.push_back(x->inputs[1 + d].get());
        if (in->k() == NodeKind::Reduce || in->k() == NodeKind::Library)
          out.push_back(Access{in, is_broadcast_back(x, in), false});
        else
          stack.push_back(in);
        break;
      }
      case NodeKind::Reduce:
      case NodeKind::Library:
        if (x != root) out.push_back(Access{x, false, true});
        else
          for (const auto& in : x->inputs) stack.push_back(in.get());
        break;
    }
  }
}

// The gather views an elementwise subgraph computes (walked through elementwise nodes and
// gathers' index nodes). Reduction and scan kernels read them from memory: their emitters
// compute a View from a position, and a gather's index nodes need the element's own values.
void gathers_under(const Node* root, std::vector<const Node*>& out) {
  std::vector<const Node*> stack{root};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Node* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (x->k() == NodeKind::Elementwise) {
      for (const auto& in : x->inputs) stack.push_back(in.get());
    } else if (is_gather(*x)) {
      out.push_back(x);
    }
  }
}

struct Planner {
  const std::vector<NodePtr>& roots;
  Plan p;
  std::unordered_map<const Node*, int> group_of;  // Reduce/Scan node -> group
  std::unordered_map<const Node*, int> phase_of;
  std::vector<Domain> domain;                     // per group (reduction groups)
  std::vector<NodePtr> topo;
  std::unordered_set<const Node*> materialize;
  // Rule param-space: the cuts, and per group the parameters its members need so far.
  std::unique_ptr<ParamBudget> budget;
  std::vector<ParamSet> gset;
  std::vector<int64_t> gout;
  std::unordered_set<int> cut_groups;  // groups writing a cut node: nothing else joins them
  // Rule kernel-size: the cuts, and per group the ops its members compute so far.
  std::unique_ptr<OpBudget> ops;
  std::vector<OpSet> gops;

  explicit Planner(const std::vector<NodePtr>& r) : roots(r) {}

  static bool rows_allowed(const Domain& d) { return row_length(d.S, d.axes) <= kMaxRowOnChip; }

  void grow_gsets() {
    if (gset.size() < p.groups.size()) {
      gset.resize(p.groups.size());
      gout.resize(p.groups.size(), 0);
      gops.resize(p.groups.size());
    }
  }
  // Would group g's kernel still fit CUDA's parameter limit, and the kernel-size limit, with
  // x computed in it (and written out, if `output`)? `why`: the rule of the limit it passes.
  bool fits(int g, const Node* x, bool output, Rule* why = nullptr) {
    grow_gsets();
    const int64_t out = gout[g] + (output ? output_param_cost(*x) : 0);
    if (union_cost(gset[g], budget->set_of(x)) + out > kParamBudget) {
      if (why) *why = Rule::ParamSpace;
      return false;
    }
    if (!ops->small() && union_size(gops[g], ops->set_of(x)) > max_kernel_ops()) {
      if (why) *why = Rule::KernelSize;
      return false;
    }
    return true;
  }
  void account(int g, const Node* x, bool output) {
    grow_gsets();
    merge_into(gset[g], budget->set_of(x));
    if (output) gout[g] += output_param_cost(*x);
    if (!ops->small()) merge_into(gops[g], ops->set_of(x));
  }

  void collect() {
    std::unordered_set<const Node*> seen;
    std::vector<std::pair<NodePtr, size_t>> stack;
    for (const auto& r : roots) stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i == 0 && seen.count(n.get())) {
        stack.pop_back();
        continue;
      }
      if (n->is_leaf() || i >= n->inputs.size()) {
        if (seen.insert(n.get()).second) topo.push_back(n);
        stack.pop_back();
        continue;
      }
      NodePtr next = n->inputs[i++];
      if (!seen.count(next.get())) stack.emplace_back(next, 0);
    }
  }

  void place_reduction(const NodePtr& n) {
    const ReduceAttrs& at = reduce_attrs(*n);
    const Domain d{n->inputs[0]->shape(), at.axes};
    std::vector<Access> acc;
    boundary(n.get(), acc);
    const bool across = rows_across_threads(n.get(), d);
    int phase = 0, via_group = -1;
    bool multipass = false;
    std::vector<const Node*> needs;
    for (const auto& a : acc) {
      auto it = group_of.find(a.red);
      const bool same_domain = it != group_of.end() && p.groups[it->second].kind == GroupKind::Reduction &&
                               domain[it->second] == d;
      if (a.broadcast_back && same_domain && rows_allowed(d) && !across && (via_group < 0 || via_group == it->second)) {
        via_group = it->second;
        phase = std::max(phase, phase_of[a.red] + 1);
      } else {
        if (a.broadcast_back && same_domain && (!rows_allowed(d) || across)) multipass = true;
        needs.push_back(a.red);
      }
    }
    int g = -1;
    auto deps_before = [&](int grp) {
      for (const Node* x : needs) {
        auto it = group_of.find(x);
        if (it == group_of.end() || it->second >= grp) return false;
      }
      return true;
    };
    if (via_group >= 0) {
      if (deps_before(via_group) && fits(via_group, n.get(), false)) g = via_group;
      else {  // cannot join the rows it reads: read them from memory instead
        for (const auto& a : acc)
          if (a.broadcast_back) needs.push_back(a.red);
        phase = 0;
      }
    }
    if (g < 0) {
      for (size_t k = 0; k < p.groups.size(); ++k)
        if (p.groups[k].kind == GroupKind::Reduction && domain[k] == d && deps_before(static_cast<int>(k)) &&
            fits(static_cast<int>(k), n.get(), false)) {
          g = static_cast<int>(k);
          phase = 0;
          break;
        }
    }
    if (g < 0) {
      Group grp;
      grp.kind = GroupKind::Reduction;
      grp.iter_shape = d.S;
      grp.axes = d.axes;
      grp.rule = multipass ? Rule::MultiPass : Rule::Prologue;
      grp.multipass = multipass;
      p.groups.push_back(std::move(grp));
      domain.resize(p.groups.size());
      g = static_cast<int>(p.groups.size() - 1);
      domain[g] = d;
    } else if (phase == 0) {
      add_rule(p.groups[g], Rule::Siblings);
    } else {
      add_rule(p.groups[g], Rule::Rows);
    }
    for (const Node* x : needs) materialize.insert(x);
    account(g, n.get(), false);
    p.groups[g].reductions.push_back(n);
    p.groups[g].phase.push_back(phase);
    group_of[n.get()] = g;
    phase_of[n.get()] = phase;
  }

  void place_scan(const NodePtr& n) {
    std::vector<Access> acc;
    boundary(n.get(), acc);
    for (const auto& a : acc) materialize.insert(a.red);
    Group grp;
    grp.kind = GroupKind::Scan;
    grp.iter_shape = n->inputs[0]->shape();
    grp.axes = reduce_attrs(*n).axes;
    grp.rule = Rule::Scan;
    grp.reductions.push_back(n);
    grp.phase.push_back(0);
    p.groups.push_back(std::move(grp));
    domain.resize(p.groups.size());
    group_of[n.get()] = static_cast<int>(p.groups.size() - 1);
  }

  static void add_rule(Group& g, Rule r) {
    if (std::find(g.fused.begin(), g.fused.end(), r) == g.fused.end()) g.fused.push_back(r);
  }

  // Adds n to group g's outputs; false if it was one already.
  bool add_output(int g, const NodePtr& n, OutKind k, int root) {
    Group& grp = p.groups[g];
    for (size_t i = 0; i < grp.outputs.size(); ++i)
      if (grp.outputs[i].get() == n.get()) return false;
    if (grp.kind != GroupKind::Library) account(g, n.get(), true);
    grp.outputs.push_back(n);
    grp.out_kinds.push_back(k);
    grp.output_root.push_back(root);
    int b = root;
    if (b < 0) {
      b = static_cast<int>(p.buffers.size());
      p.buffers.push_back(n);
    }
    grp.output_buffer.push_back(b);
    return true;
  }

  // The kept shape of a reduction domain, without size-1 dims.
  static Shape squeezed_kept(const Domain& d) {
    Shape s;
    for (int i = 0; i < d.S.ndim(); ++i)
      if (std::find(d.axes.begin(), d.axes.end(), i) == d.axes.end() && d.S[i] != 1) s.push_back(d.S[i]);
    return s;
  }
  static Shape squeezed(const Shape& x) {
    Shape s;
    for (auto v : x)
      if (v != 1) s.push_back(v);
    return s;
  }

  // Rule rows, an exception. A row kernel gives each row to one thread when its reads run
  // along the kept axes rather than along the rows (consecutive threads then read
  // consecutive addresses). With phases, or a row-shaped result, such a kernel cannot split a
  // row over blocks, so too few rows leave most of the GPU idle (softmax over axis 0 of
  // f32[8192,8192]: 8192 threads, 4.5 ms), and a result written along its rows costs 32
  // lines per warp store (softmax(x.T): 8.3 ms). There, each reduction runs as its own
  // kernel (split over blocks like sum(x, 0)) and the row-shaped result as an elementwise
  // kernel reading them (tiled or rows mode): ~0.4 ms. True when fewer than kAcrossRows rows
  // of at least kAcrossMinRow elements (shorter ones cost little walked by one thread) over
  // the domain's shape read some memory leaf under x at stride 1 along a kept axis and not
  // along the innermost reduced one.
  static constexpr int64_t kAcrossRows = int64_t(1) << 18, kAcrossMinRow = 1024;
  static bool rows_across_threads(const Node* x, const Domain& d) {
    const int nd = d.S.ndim();
    int last = -1;
    for (int a : d.axes)
      if (d.S[a] != 1) last = std::max(last, a);
    const int64_t n = row_length(d.S, d.axes);
    if (last < 0 || n < kAcrossMinRow || numel(d.S) / n >= kAcrossRows) return false;
    std::vector<const Node*> stack{x};
    std::unordered_set<const Node*> seen;
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (n->k() == NodeKind::Elementwise) {
        for (const auto& in : n->inputs) stack.push_back(in.get());
        continue;
      }
      if (n->k() == NodeKind::Reduce) {
        stack.push_back(n->inputs[0].get());
        continue;
      }
      if (n->k() != NodeKind::Buffer || !(n->shape() == d.S)) continue;
      const Strides& st = n->layout.strides;
      if (st[last] == 1 || st[last] == -1) continue;
      for (int k = 0; k < nd; ++k)
        if (d.S[k] != 1 && std::find(d.axes.begin(), d.axes.end(), k) == d.axes.end() && (st[k] == 1 || st[k] == -1))
          return true;
    }
    return false;
  }

  void place_root(int i) {
    const NodePtr& x = roots[i];
    if (x->k() == NodeKind::Reduce) {
      const int g = group_of.at(x.get());
      add_output(g, x, OutKind::Value, i);
      return;
    }
    std::vector<Access> acc;
    if (!x->is_leaf()) boundary(x.get(), acc);
    std::vector<const Node*> gathers;
    if (!acc.empty() && x->k() == NodeKind::Elementwise) gathers_under(x.get(), gathers);
    if (!acc.empty() && x->k() == NodeKind::Elementwise && gathers.empty() && !is_scatter(*x)) {
      int g = -1;
      bool all_bb = true, all_direct = true, one_group = true;
      for (const auto& a : acc) {
        auto it = group_of.find(a.red);
        if (it == group_of.end() || p.groups[it->second].kind != GroupKind::Reduction) {
          one_group = false;
          break;
        }
        if (g >= 0 && g != it->second) one_group = false;
        g = it->second;
        all_bb &= a.broadcast_back;
        all_direct &= a.direct;
      }
      if (one_group && g >= 0) {
        const Domain& d = domain[g];
        if (all_bb && x->shape() == d.S && !rows_allowed(d)) p.groups[g].multipass = true;
        const bool targeted = i < static_cast<int>(p.targets.size()) && p.targets[i];
        if (all_bb && x->shape() == d.S && rows_allowed(d) && fits(g, x.get(), true) &&
            (targeted || !rows_across_threads(x.get(), d))) {
          add_rule(p.groups[g], Rule::Rows);
          add_output(g, x, OutKind::Row, i);
          return;
        }
        if (all_direct && squeezed(x->shape()) == squeezed_kept(d) && fits(g, x.get(), true)) {
          add_rule(p.groups[g], Rule::Epilogue);
          add_output(g, x, OutKind::Epilogue, i);
          return;
        }
      }
    }
    for (const auto& a : acc) materialize.insert(a.red);
    plain.push_back(i);
  }
  std::vector<int> plain;

  std::unordered_map<const LibraryCall*, int> call_group;
  std::vector<NodePtr> prep;  // library inputs to write contiguously first

  void place_library(const NodePtr& n) {
    const auto& at = library_attrs(*n);
    auto it = call_group.find(at.call.get());
    if (it != call_group.end()) {
      group_of[n.get()] = it->second;
      return;
    }
    Group grp;
    grp.kind = GroupKind::Library;
    grp.rule = Rule::Library;
    grp.iter_shape = n->shape();
    grp.call = at.call;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const NodePtr& x = n->inputs[i];
      grp.lib_inputs.push_back(x);
      const NodeKind k = x->k();
      if (k == NodeKind::Reduce || k == NodeKind::Library) {
        materialize.insert(x.get());
        if (!at.call->accepts_layout(static_cast<int>(i), contiguous_layout(x->shape()), x->dtype))
          throw InternalError("a library call does not accept a contiguous input");
      } else if (!(k == NodeKind::Buffer && at.call->accepts_layout(static_cast<int>(i), x->layout, x->dtype))) {
        if (std::find(prep.begin(), prep.end(), x) == prep.end()) prep.push_back(x);
      }
    }
    p.groups.push_back(std::move(grp));
    domain.resize(p.groups.size());
    const int g = static_cast<int>(p.groups.size() - 1);
    call_group[at.call.get()] = g;
    group_of[n.get()] = g;
  }

  int root_index(const Node* n) const {
    for (size_t i = 0; i < roots.size(); ++i)
      if (roots[i].get() == n) return static_cast<int>(i);
    return -1;
  }

  void run(const std::vector<const Target*>& targets) {
    p.roots = roots;
    p.targets = targets;
    p.buffers = roots;
    collect();
    {
      std::unordered_set<const Node*> keep;
      for (const auto& r : roots) keep.insert(r.get());
      for (const auto& n : topo) {
        if (n->k() == NodeKind::Reduce) {
          keep.insert(n.get());
          std::vector<const Node*> gathers;  // written by kernels of their own (see gathers_under)
          gathers_under(n->inputs[0].get(), gathers);
          for (const Node* g : gathers) keep.insert(g);
        }
        if (n->k() == NodeKind::Library)
          for (const auto& in : n->inputs) keep.insert(in.get());
      }
      ops = std::make_unique<OpBudget>(topo, keep);
      for (const auto& c : ops->cuts()) keep.insert(c.get());  // computed by kernels of their own
      budget = std::make_unique<ParamBudget>(topo, keep, [&](const Node* n) { return ops->is_cut(n); });
    }
    for (const auto& n : topo) {
      if (n->k() == NodeKind::Reduce) {
        if (is_scan(reduce_attrs(*n).op)) place_scan(n);
        else place_reduction(n);
      } else if (n->k() == NodeKind::Library) {
        place_library(n);
      }
    }
    // Rule library, fused epilogue: a bias add / GELU root of one GEMM result is that
    // GEMM with a cuBLASLt epilogue (src/library/epilogue.hpp); the plain GEMM's group then
    // writes nothing and goes.
    std::unordered_set<const Node*> absorbed;
    std::vector<bool> fused_root(roots.size(), false);
    for (size_t i = 0; i < roots.size(); ++i) {
      EpilogueFusion f;
      if ((i < targets.size() && targets[i]) || !try_fuse_epilogue(roots[i], topo, roots, f)) continue;
      Group grp;
      grp.kind = GroupKind::Library;
      grp.rule = Rule::Library;
      grp.fused.push_back(Rule::Epilogue);
      grp.iter_shape = roots[i]->shape();
      grp.call = f.call;
      for (size_t k = 0; k < f.inputs.size(); ++k) {
        const NodePtr& x = f.inputs[k];
        grp.lib_inputs.push_back(x);
        const NodeKind kk = x->k();
        if (kk == NodeKind::Reduce || kk == NodeKind::Library) materialize.insert(x.get());
        else if (!(kk == NodeKind::Buffer && f.call->accepts_layout(static_cast<int>(k), x->layout, x->dtype)) &&
                 std::find(prep.begin(), prep.end(), x) == prep.end())
          prep.push_back(x);
      }
      p.groups.push_back(std::move(grp));
      domain.resize(p.groups.size());
      add_output(static_cast<int>(p.groups.size() - 1), roots[i], OutKind::Plain, static_cast<int>(i));
      p.groups.back().lib_output_index.push_back(0);
      absorbed.insert(f.absorbed.get());
      fused_root[i] = true;
    }
    for (const auto& n : topo) {  // every output of a call goes to memory
      if (n->k() != NodeKind::Library || absorbed.count(n.get())) continue;
      const int g = group_of.at(n.get());
      add_output(g, n, OutKind::Plain, root_index(n.get()));
      p.groups[g].lib_output_index.push_back(library_attrs(*n).output);
    }
    for (int i = 0; i < static_cast<int>(roots.size()); ++i)
      if (roots[i]->k() != NodeKind::Library && !fused_root[i]) place_root(i);
    // Plain elementwise groups, one per shape: results, and library inputs to lay out.
    std::vector<std::pair<NodePtr, int>> ew_out;
    for (int i : plain) ew_out.emplace_back(roots[i], i);
    for (const auto& x : prep) {
      bool have = false;
      for (const auto& [n, r] : ew_out) have |= n.get() == x.get();
      if (!have) ew_out.emplace_back(x, root_index(x.get()));
      std::vector<Access> acc;
      if (!x->is_leaf()) boundary(x.get(), acc);
      for (const auto& a : acc) materialize.insert(a.red);
    }
    // Rules param-space and kernel-size: cut reductions are written to memory; cut
    // elementwise work and views get kernels of their own (below).
    std::vector<NodePtr> cuts = budget->cuts();
    cuts.insert(cuts.end(), ops->cuts().begin(), ops->cuts().end());
    for (const auto& c : cuts) {
      if (c->k() == NodeKind::Reduce) {
        materialize.insert(c.get());
        continue;
      }
      bool have = false;
      for (const auto& [n, r] : ew_out) have |= n.get() == c.get();
      if (!have) ew_out.emplace_back(c, root_index(c.get()));
      std::vector<Access> acc;
      boundary(c.get(), acc);
      for (const auto& a : acc) materialize.insert(a.red);
    }
    // A gather under a reduction or scan is written to memory by an elementwise kernel
    // first (rule materialize; see gathers_under).
    for (const auto& n : topo) {
      if (n->k() != NodeKind::Reduce) continue;
      std::vector<const Node*> gathers;
      gathers_under(n->inputs[0].get(), gathers);
      for (const Node* gv : gathers) {
        bool have = false;
        for (const auto& [e, r] : ew_out) have |= e.get() == gv;
        if (have) continue;
        ew_out.emplace_back(NodePtr(const_cast<Node*>(gv)), root_index(gv));
        std::vector<Access> acc;
        boundary(gv, acc);
        for (const auto& a : acc) materialize.insert(a.red);
      }
    }
    // Results read from memory by other groups.
    for (const auto& n : topo) {
      if (!materialize.count(n.get())) continue;
      auto it = group_of.find(n.get());
      if (it == group_of.end() || p.groups[it->second].kind == GroupKind::Library) continue;
      add_output(it->second, n, OutKind::Value, -1);
      add_rule(p.groups[it->second], Rule::Materialize);
    }
    std::vector<int> ew_groups;
    // Rule iteration-space: one kernel per shape, except where a result joining a kernel
    // would make groups depend on each other in a cycle: x and f(sum(x)) (the reduction runs
    // after x and before f), a library input and a result computed from that call's output.
    // Such a result starts a kernel of its own. (Only reduction and library groups can close
    // a cycle: with none, nothing needs checking.)
    // Rules param-space and kernel-size: a cut node is computed by a kernel of its own (a
    // kernel computing its users too would compute it inline, reading everything under it
    // again), and no result joins a kernel it would push past either limit.
    bool boundaries = budget->any_cut() || ops->any_cut();
    for (const auto& grp : p.groups) boundaries = boundaries || grp.kind != GroupKind::Elementwise;
    for (const auto& [x, i] : ew_out) {
      const bool scatter = is_scatter(*x);
      const bool param_cut = budget->is_cut(x.get()), cut = param_cut || ops->is_cut(x.get()) || scatter;
      int g = -1;
      bool over = false;
      Rule over_rule = Rule::ParamSpace;
      for (size_t k = 0; k < ew_groups.size() && g < 0 && !cut; ++k) {
        const int gk = ew_groups[k];
        if (!(p.groups[gk].iter_shape == x->shape()) || cut_groups.count(gk)) continue;
        Rule why = Rule::ParamSpace;
        if (!fits(gk, x.get(), true, &why)) {
          if (!over || why == Rule::ParamSpace) over_rule = why;
          over = true;
          continue;
        }
        if (!boundaries) {  // no cycle possible: nothing to take back
          add_output(gk, x, OutKind::Plain, i);
          g = gk;
          continue;
        }
        const ParamSet saved_set = gset[gk];
        const int64_t saved_out = gout[gk];
        if (!add_output(gk, x, OutKind::Plain, i) || run_order(group_deps()).size() == p.groups.size()) {
          g = gk;
        } else {
          undo_add_output(gk, i);
          gset[gk] = saved_set;
          gout[gk] = saved_out;
        }
      }
      if (g < 0) {
        Group grp;
        grp.kind = GroupKind::Elementwise;
        // A scatter's kernel walks its updates, writing the array they go into in place.
        grp.iter_shape = scatter ? scatter_attrs(*x).iter : x->shape();
        grp.rule = scatter   ? Rule::Output
                   : param_cut ? Rule::ParamSpace
                   : cut     ? Rule::KernelSize
                   : over    ? over_rule
                   : i < 0   ? Rule::LibraryInput
                             : Rule::Output;
        p.groups.push_back(std::move(grp));
        g = static_cast<int>(p.groups.size() - 1);
        ew_groups.push_back(g);
        if (cut) cut_groups.insert(g);
        add_output(g, x, OutKind::Plain, i);
      }
      if (i < 0 && !cut) add_rule(p.groups[g], Rule::LibraryInput);
    }
    if (ew_groups.size() - std::count_if(ew_groups.begin(), ew_groups.end(), [&](int k) {
          return p.groups[k].rule == Rule::ParamSpace || p.groups[k].rule == Rule::KernelSize;
        }) > 1)
      for (int k : ew_groups)
        if (p.groups[k].rule == Rule::Output) p.groups[k].rule = Rule::IterationSpace;
    // Groups that write nothing (their reductions only fed groups that moved away) go.
    std::vector<Group> kept;
    for (auto& g : p.groups)
      if (!g.outputs.empty()) kept.push_back(std::move(g));
    p.groups = std::move(kept);
    order_groups();
  }

  // Per group, the groups whose results it reads. With `reuse` false, an elementwise or view
  // result of another group is not a dependency of a reduction, scan or elementwise group:
  // run before its producer, such a group computes it inline (the executor reads a node
  // from memory only once its group has run), so only what that result itself reads counts.
  // A library call reads every input from memory.
  std::vector<std::vector<size_t>> group_deps(bool reuse = true) const {
    const size_t ng = p.groups.size();
    std::unordered_map<const Node*, size_t> produced;
    for (size_t g = 0; g < ng; ++g)
      for (const auto& o : p.groups[g].outputs) produced[o.get()] = g;
    std::vector<std::vector<size_t>> deps(ng);
    for (size_t g = 0; g < ng; ++g) {
      const Group& grp = p.groups[g];
      std::unordered_set<const Node*> own(grp.outputs.size() + grp.reductions.size());
      for (const auto& r : grp.reductions) own.insert(r.get());
      std::vector<const Node*> stack;
      std::unordered_set<const Node*> seen;
      if (grp.kind == GroupKind::Library) {
        for (const auto& x : grp.lib_inputs) stack.push_back(x.get());
      } else {
        for (const auto& r : grp.reductions) stack.push_back(r->inputs[0].get());
        for (size_t k = 0; k < grp.outputs.size(); ++k)
          if (grp.kind == GroupKind::Elementwise || grp.out_kinds[k] != OutKind::Value)
            for (const auto& in : grp.outputs[k]->inputs) stack.push_back(in.get());
        if (grp.kind == GroupKind::Elementwise)
          for (const auto& o : grp.outputs) if (o->is_leaf()) stack.push_back(o.get());
      }
      while (!stack.empty()) {
        const Node* x = stack.back();
        stack.pop_back();
        if (!seen.insert(x).second) continue;
        auto it = produced.find(x);
        // A generator (arange, linspace) that another group writes out is still generated
        // inline here (the executor's binding never reads one back): no dependency, and the
        // plan, so the bits, do not depend on whether the generator is also a result.
        if (it != produced.end() && it->second != g && x->k() == NodeKind::Generator && grp.kind != GroupKind::Library)
          continue;
        if (it != produced.end() && it->second != g) {
          const bool recomputable = x->k() == NodeKind::Elementwise || x->k() == NodeKind::View;
          if (reuse || !recomputable || grp.kind == GroupKind::Library) {
            deps[g].push_back(it->second);
            continue;
          }
        }
        if (own.count(x) && grp.kind != GroupKind::Elementwise) continue;
        for (const auto& in : x->inputs) stack.push_back(in.get());
      }
    }
    return deps;
  }

  // The groups in an order where each runs after the groups whose results it reads (the
  // first ready one each time, so the planner's order is kept where it can be); empty when
  // they depend on each other in a cycle.
  static std::vector<size_t> run_order(const std::vector<std::vector<size_t>>& deps) {
    std::vector<size_t> order;
    std::vector<bool> done(deps.size(), false);
    for (size_t step = 0; step < deps.size(); ++step) {
      size_t pick = deps.size();
      for (size_t g = 0; g < deps.size() && pick == deps.size(); ++g) {
        if (done[g]) continue;
        bool ready = true;
        for (size_t d : deps[g]) ready = ready && done[d];
        if (ready) pick = g;
      }
      if (pick == deps.size()) return {};
      done[pick] = true;
      order.push_back(pick);
    }
    return order;
  }

  // Takes back the output add_output just added to group g (root: as given there).
  void undo_add_output(int g, int root) {
    Group& grp = p.groups[g];
    grp.outputs.pop_back();
    grp.out_kinds.pop_back();
    grp.output_root.pop_back();
    grp.output_buffer.pop_back();
    if (root < 0) p.buffers.pop_back();
  }

  // Groups in an order where each runs after the groups whose results it reads; where
  // reading every result from memory closes a cycle (a reduction's row kernel reads an
  // elementwise result that itself reads that kernel's first phase: x = f(y, mean(z)),
  // then min(x) beside mean(z)), the groups run in an order where such a result is
  // computed inline by the groups that come before its own.
  void order_groups() {
    std::vector<size_t> order = run_order(group_deps());
    if (order.size() != p.groups.size()) order = run_order(group_deps(/*reuse=*/false));
    if (order.size() != p.groups.size()) throw InternalError("planner: groups depend on each other in a cycle");
    std::vector<Group> ordered;
    for (size_t g : order) ordered.push_back(std::move(p.groups[g]));
    p.groups = std::move(ordered);
  }
};

}  // namespace

Plan make_plan(const std::vector<NodePtr>& roots, const std::vector<const Target*>& targets) {
  Planner pl(roots);
  pl.run(targets);
  return std::move(pl.p);
}

}  // namespace cufuse::detail
