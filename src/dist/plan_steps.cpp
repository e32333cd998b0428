// src/dist/plan_steps.cpp: the record of a DArray's program (histories of steps), the
// per-shard plan of pending work (planned by the executor's own machinery, without
// compiling or running), and dist::plan / dist::plan_dump.
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "compile/compiler.hpp"
#include "core/node.hpp"
#include "cufuse/error.hpp"
#include "dist/state.hpp"
#include "dist/world.hpp"
#include "exec/executable.hpp"
#include "plan/cse.hpp"
#include "plan/signature.hpp"

namespace cufuse::dist::detail {

DArray make_darray(const Mesh& mesh, const Sharding& spec, const Shape& shape, DType dtype, std::vector<Array> shards,
                   std::vector<HistoryPtr> history, std::optional<Partial> partial) {
  auto s = std::make_shared<DArrayState>(DArrayState{mesh, spec, shape, dtype, std::move(shards), std::move(partial),
                                                     std::move(history)});
  return DArray(std::move(s));
}

std::vector<HistoryPtr> join_histories(const std::vector<DArray>& ds) {
  std::vector<HistoryPtr> out;
  for (const auto& d : ds)
    for (const auto& h : d.state()->history) {
      bool dup = false;
      for (const auto& o : out) dup |= o == h;
      if (!dup) out.push_back(h);
    }
  return out;
}

HistoryPtr record(Step step, std::vector<HistoryPtr> prev) {
  return std::make_shared<const History>(History{std::move(step), std::move(prev)});
}

std::optional<Step> pending_kernels(const std::vector<Array>& shards, std::string why, bool with_source) {
  if (shards.empty()) return std::nullopt;
  // Every shard of one local shape runs the same plan (SPMD): this process's first stands for them.
  const Array& x0 = shards[static_cast<size_t>(first_local(static_cast<int>(shards.size())))];
  if (!x0.defined() || x0.node()->is_materialized() || x0.node()->is_placeholder()) return std::nullopt;
  std::lock_guard<std::recursive_mutex> lk(cufuse::detail::graph_mutex());
  std::vector<cufuse::detail::NodePtr> roots{x0.node()};
  cufuse::detail::eliminate_common_subexpressions(roots);
  cufuse::detail::GraphScan scan;
  std::vector<const cufuse::detail::Target*> targets(1, nullptr);
  scan_graph(roots, targets, scan);
  Step st;
  st.kind = "kernels";
  st.why = std::move(why);
  // One plan per graph structure (the signature): recorded before every collective, so it is
  // built and described once (with_source, for a dump, is built each time it is asked for).
  auto& w = dist_world();
  if (!with_source) {
    std::lock_guard<std::mutex> k(w.steps_mu);
    if (auto it = w.kernel_steps.find(scan.key); it != w.kernel_steps.end()) {
      st.kernels = it->second.first;
      st.detail = it->second.second;
      return st;
    }
  }
  auto ex = cufuse::detail::build_executable(roots, targets, scan, false, cufuse::detail::default_arch());
  for (const auto& s : ex->steps) st.kernels += s.call ? 0 : 1;
  st.detail = cufuse::detail::describe_executable(*ex, with_source);
  if (!with_source) {
    std::lock_guard<std::mutex> k(w.steps_mu);
    if (w.kernel_steps.size() > 4096) w.kernel_steps.clear();  // bounded: a record, not a plan cache
    w.kernel_steps.emplace(scan.key, std::make_pair(st.kernels, st.detail));
  }
  return st;
}

namespace {
void collect(const HistoryPtr& h, std::set<const History*>& seen, std::vector<Step>& out) {
  if (!seen.insert(h.get()).second) return;
  for (const auto& p : h->prev) collect(p, seen, out);
  out.push_back(h->step);
}

std::vector<Step> steps_of(const DArray& d, bool with_source) {
  if (!d.defined()) throw ValueError("dist::plan: the DArray is empty");
  const auto& s = *d.state();
  std::vector<Step> out;
  std::set<const History*> seen;
  for (const auto& h : s.history) collect(h, seen, out);
  if (auto k = pending_kernels(s.shards, "pending: the shards' lazy work", with_source)) out.push_back(*k);
  if (s.partial) {
    Step st;
    st.kind = "collective";
    st.collective = "allreduce";
    st.op = partial_op_name(s.partial->op);
    for (size_t i = 0; i < s.partial->axes.size(); ++i) st.mesh_axis += (i ? "," : "") + s.partial->axes[i];
    st.ranks = 1;
    for (const auto& a : s.partial->axes) st.ranks *= s.mesh.axis_size(a);
    st.groups = s.mesh.size() / st.ranks;
    st.bytes = s.shards[0].nbytes();
    st.why = "pending: a partial result, combined when something needs it whole";
    out.push_back(st);
  }
  return out;
}

std::string indent(const std::string& text, const char* pad) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out += pad + text.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  return out;
}
}  // namespace

}  // namespace cufuse::dist::detail

namespace cufuse::dist {

std::vector<Step> plan(const DArray& d) { return detail::steps_of(d, false); }

std::string plan_dump(const DArray& d, bool with_source) {
  const auto steps = detail::steps_of(d, with_source);
  std::string out = fmt::format("dist plan of {}\n", d.str());
  out += fmt::format("  each shard of it: {} {}\n", cufuse::name(d.dtype()), to_string(d.local_shape()));
  int n = 0;
  for (const auto& st : steps) {
    ++n;
    if (st.kind == "kernels") {
      out += fmt::format("step {}: per-shard kernels: {} kernel{} on each of {} shards ({})\n", n, st.kernels,
                         st.kernels == 1 ? "" : "s", d.mesh().size(), st.why);
      out += detail::indent(st.detail, "    ");
    } else if (st.kind == "collective") {
      out += fmt::format("step {}: {}{} over mesh axis {} ({} ranks x {} group{}): {} bytes per rank ({})\n", n,
                         st.collective, st.op.empty() ? "" : " " + st.op, st.mesh_axis, st.ranks, st.groups,
                         st.groups == 1 ? "" : "s", st.bytes, st.why);
    } else {
      out += fmt::format("step {}: {} ({})\n", n, st.kind, st.why);
    }
  }
  return out;
}

}  // namespace cufuse::dist
