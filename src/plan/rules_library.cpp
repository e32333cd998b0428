// src/plan/rules_library.cpp: the library rules. library (a matmul, contraction, solver or
// convolution call is a group of its own, every output written to memory; a bias add or
// GELU root over one GEMM result becomes that GEMM with a cuBLASLt epilogue,
// plan/epilogue.hpp), library-input (an input whose layout the call cannot read is
// written contiguously by a kernel first; a reduction or call result it reads is
// materialized) and fused-input (an input the call's generated kernel computes element by
// element, LibraryCall::fuses_input: its elementwise producer goes into that kernel).
#include <algorithm>

#include <fmt/format.h>

#include "core/library_call.hpp"
#include "core/node_names.hpp"
#include "core/walk.hpp"
#include "graph/gather.hpp"
#include "cufuse/error.hpp"
#include "plan/epilogue.hpp"
#include "plan/planner_state.hpp"

namespace cufuse::detail::planning {

namespace {
// Nodes a fused input's subgraph may hold: past this, it is written first (library-input),
// which keeps the call's kernel within the parameter space and NVRTC's time of any kernel.
constexpr size_t kMaxFusedNodes = 64;

// Rule fused-input: can the call's kernel compute input x element by element? Its subgraph
// (elementwise ops, scalars, generators, views over memory or generators; every node of at
// most one dimension: the kernel computes the flat position it reads) holds no gather and no
// view over lazy work; the reduction and call results it reads are listed in `results`.
bool fusable_input(const Node* x, std::vector<const Node*>& results) {
  VisitedSet seen;
  size_t nodes = 0;
  bool ok = true;
  walk_post_order(
      x, [&](const Node* n) { return !ok || seen.contains(n); },
      [](const Node* n) { return n->k() == NodeKind::Elementwise; },
      [&](const Node* n) {
        seen.insert(n);
        const Node* read = n;  // what a view chain reads
        while (read->k() == NodeKind::View && !is_gather(*read)) read = read->inputs[0].get();
        if (read->k() == NodeKind::Reduce || read->k() == NodeKind::Library) results.push_back(read);
        const bool view_ok = n->k() != NodeKind::View || (read->k() != NodeKind::View && read->k() != NodeKind::Elementwise);
        ok = ok && ++nodes <= kMaxFusedNodes && n->ndim() <= 1 && !read->is_placeholder() && view_ok;
      });
  return ok;
}

// Where a call's inputs come from: reduction and call results from memory; an input of a
// layout the call cannot read is laid out first (prep).
// An input the call computes in its own kernel (fused-input) reads reduction and call results
// from memory and nothing else from other groups. Returns whether an input was fused.
bool route_inputs(const std::vector<NodePtr>& inputs, const LibraryCall& lc, const std::string& call, Planner& pl) {
  auto accepts = [&](int i, const Layout& l, DType t) { return lc.accepts_layout(i, l, t); };
  bool fused = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodePtr& x = inputs[i];
    const NodeKind k = x->k();
    std::vector<const Node*> results;
    if (k != NodeKind::Reduce && k != NodeKind::Library && lc.fuses_input(static_cast<int>(i)) &&
        fusable_input(x.get(), results)) {
      for (const Node* r : results) pl.need_in_memory(r, fmt::format("read by an input {} computes (fused-input)", call));
      fused = fused || !x->is_leaf();
      continue;
    }
    if (k == NodeKind::Reduce || k == NodeKind::Library) {
      pl.need_in_memory(x.get(), fmt::format("an input of {}", call));
      if (!accepts(static_cast<int>(i), contiguous_layout(x->shape()), x->dtype))
        throw InternalError("a library call does not accept a contiguous input");
    } else if (!(k == NodeKind::Buffer && accepts(static_cast<int>(i), x->layout, x->dtype))) {
      if (std::find(pl.prep.begin(), pl.prep.end(), x) == pl.prep.end()) pl.prep.push_back(x);
    }
  }
  return fused;
}
}  // namespace

void Planner::place_library(const NodePtr& n) {
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
  grp.lib_inputs.assign(n->inputs.begin(), n->inputs.end());
  if (route_inputs(grp.lib_inputs, *at.call, call_name(*at.call), *this)) grp.fused.push_back(Rule::FusedInput);
  const int g = new_group(std::move(grp));
  cut(g, Rule::Library, n.get(), at.call->describe());
  call_group[at.call.get()] = g;
  group_of[n.get()] = g;
}

// A bias add / GELU root of one GEMM result is that GEMM with a cuBLASLt epilogue
// (src/plan/epilogue.hpp); the plain GEMM's group then writes nothing and goes.
void Planner::fuse_gemm_epilogues(const std::vector<const Target*>& targets, std::vector<bool>& fused_root,
                                  std::unordered_set<const Node*>& absorbed) {
  for (size_t i = 0; i < roots.size(); ++i) {
    EpilogueFusion f;
    if ((i < targets.size() && targets[i]) || !try_fuse_epilogue(roots[i], topo, roots, f)) continue;
    Group grp;
    grp.kind = GroupKind::Library;
    grp.rule = Rule::Library;
    grp.fused.push_back(Rule::Epilogue);
    grp.iter_shape = roots[i]->shape();
    grp.call = f.call;
    grp.lib_inputs.assign(f.inputs.begin(), f.inputs.end());
    route_inputs(grp.lib_inputs, *f.call, call_name(*f.call), *this);
    const int g = new_group(std::move(grp));
    cut(g, Rule::Library, roots[i].get(), f.call->describe() + " with its epilogue");
    add_output(g, roots[i], OutKind::Plain, static_cast<int>(i));
    p.groups.back().lib_output_index.push_back(0);
    absorbed.insert(f.absorbed.get());
    fused_root[i] = true;
  }
}

// Every output of a call goes to memory.
void Planner::library_outputs(const std::unordered_set<const Node*>& absorbed) {
  for (const auto& n : topo) {
    if (n->k() != NodeKind::Library || absorbed.count(n.get())) continue;
    const int g = group_of.at(n.get());
    add_output(g, n, OutKind::Plain, root_index(n.get()));
    p.groups[g].lib_output_index.push_back(library_attrs(*n).output);
  }
}

}  // namespace cufuse::detail::planning
