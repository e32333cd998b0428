// src/dist/collectives.cpp: allreduce, allgather, reducescatter and alltoall over mesh
// groups: the rearrangements around the dimension-0 form, the step each records, and the
// host world's dimension-0 forms (bytes combined on the host; no kernel is launched, so
// kernel counts are the shards' own), whose combining gather's host path also uses.
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "core/node.hpp"
#include "dist/collectives.hpp"
#include "dist/layout.hpp"
#include "dist/nccl.hpp"
#include "dist/world.hpp"

namespace cufuse::dist::detail {

namespace {

// ------------------------------------------------------------------ host forms
// A member's bytes as NCCL reads them: nbytes from data_ptr(), so the host world fails where a
// collective's input is not contiguous in memory (a view of a lazy array exports its base's
// memory: run_group's copy).
std::vector<uint8_t> host_bytes(const Array& a) {
  std::vector<uint8_t> b(static_cast<size_t>(a.nbytes()));
  if (!b.empty()) std::memcpy(b.data(), a.data_ptr(), b.size());
  return b;
}

template <class T>
T combine1(PartialOp op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == PartialOp::Sum || op == PartialOp::Max ? (a || b) : (a && b);
  } else {
    switch (op) {
      case PartialOp::Sum: return static_cast<T>(a + b);
      case PartialOp::Prod: return static_cast<T>(a * b);
      case PartialOp::Max: return (a >= b || a != a) ? a : b;  // NaN propagates, as NumPy's max
      default: return (a <= b || a != a) ? a : b;
    }
  }
}

template <class T>
void combine_as(PartialOp op, uint8_t* acc, const uint8_t* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, x + i * sizeof(T), sizeof(T));
    T r;
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>)
      r = T(combine1<float>(op, static_cast<float>(a), static_cast<float>(b)));  // as NCCL: in float, rounded
    else
      r = combine1<T>(op, a, b);
    std::memcpy(acc + i * sizeof(T), &r, sizeof(T));
  }
}

void combine(DType t, PartialOp op, std::vector<uint8_t>& acc, const std::vector<uint8_t>& x) {
  const int64_t n = static_cast<int64_t>(acc.size()) / itemsize(t);
  switch (t) {
    case DType::Bool: return combine_as<bool>(op, acc.data(), x.data(), n);
    case DType::Int8: return combine_as<int8_t>(op, acc.data(), x.data(), n);
    case DType::Int16: return combine_as<int16_t>(op, acc.data(), x.data(), n);
    case DType::Int32: return combine_as<int32_t>(op, acc.data(), x.data(), n);
    case DType::Int64: return combine_as<int64_t>(op, acc.data(), x.data(), n);
    case DType::UInt8: return combine_as<uint8_t>(op, acc.data(), x.data(), n);
    case DType::UInt16: return combine_as<uint16_t>(op, acc.data(), x.data(), n);
    case DType::UInt32: return combine_as<uint32_t>(op, acc.data(), x.data(), n);
    case DType::UInt64: return combine_as<uint64_t>(op, acc.data(), x.data(), n);
    case DType::Float16: return combine_as<half>(op, acc.data(), x.data(), n);
    case DType::BFloat16: return combine_as<bfloat16_t>(op, acc.data(), x.data(), n);
    case DType::Float32: return combine_as<float>(op, acc.data(), x.data(), n);
    case DType::Float64: return combine_as<double>(op, acc.data(), x.data(), n);
    default: break;
  }
  throw NotSupportedError(fmt::format("dist: no collective reduction of {} (as NCCL)", cufuse::name(t)));
}

// One group's dimension-0 collective on the host; `in` are the members' shards.
std::vector<Array> host_group_collective(Coll c, const std::vector<Array>& in, PartialOp op, const Shape& out_shape) {
  const DType t = in[0].dtype();
  const size_t k = in.size();
  std::vector<std::vector<uint8_t>> b;
  for (const auto& a : in) b.push_back(host_bytes(a));
  std::vector<std::vector<uint8_t>> out(k);
  const size_t chunk = b[0].size() / k;  // reducescatter, alltoall: each member's part
  switch (c) {
    case Coll::AllReduce: {
      std::vector<uint8_t> acc = b[0];
      for (size_t r = 1; r < k; ++r) combine(t, op, acc, b[r]);
      for (auto& o : out) o = acc;
      break;
    }
    case Coll::AllGather: {
      std::vector<uint8_t> all;
      for (const auto& x : b) all.insert(all.end(), x.begin(), x.end());
      for (auto& o : out) o = all;
      break;
    }
    case Coll::ReduceScatter: {
      std::vector<uint8_t> acc = b[0];
      for (size_t r = 1; r < k; ++r) combine(t, op, acc, b[r]);
      for (size_t r = 0; r < k; ++r) out[r].assign(acc.begin() + r * chunk, acc.begin() + (r + 1) * chunk);
      break;
    }
    case Coll::AllToAll:
      for (size_t s = 0; s < k; ++s)
        for (size_t r = 0; r < k; ++r) out[s].insert(out[s].end(), b[r].begin() + s * chunk, b[r].begin() + (s + 1) * chunk);
      break;
  }
  std::vector<Array> res;
  for (auto& o : out) res.push_back(from_host(o.data(), t, out_shape));
  return res;
}

const char* coll_name(Coll c) {
  switch (c) {
    case Coll::AllReduce: return "allreduce";
    case Coll::AllGather: return "allgather";
    case Coll::ReduceScatter: return "reducescatter";
    case Coll::AllToAll: return "alltoall";
  }
  return "?";
}

// The host world's simulated failures (simulate_failure) for one group's collective: a
// member that reports an error fails it at once; one that never arrives makes the others
// wait CUFUSE_DIST_TIMEOUT, then fail. Either breaks the world.
void host_failures(const std::vector<int>& group, const std::string& label) {
  auto& dw = dist_world();
  std::unique_lock<std::mutex> lk(dw.mu);
  auto& s = dw.s;
  if (s.collectives_seen.size() < static_cast<size_t>(s.devices)) s.collectives_seen.resize(static_cast<size_t>(s.devices), 0);
  std::vector<int> dead, erred;
  for (int dev : group) {
    const int seen = s.collectives_seen[static_cast<size_t>(dev)]++;
    for (const auto& f : s.failures)
      if (f.device == dev && seen >= f.after) (f.kind == Failure::Dead ? dead : erred).push_back(dev);
  }
  lk.unlock();
  if (!erred.empty())
    fail_collective(label, group, false, fmt::format("rank {} reported an error (simulated)", fmt::join(erred, ", ")));
  if (!dead.empty()) {
    // The survivors wait for the missing ranks as long as the timeout allows.
    std::this_thread::sleep_for(std::chrono::duration<double>(collective_timeout()));
    fail_collective(label, group, true, fmt::format("rank {} did not arrive (simulated: dead)", fmt::join(dead, ", ")));
  }
}

// The dimension-0 collective over every group of `axes`; out_shape: each member's result.
// Under MPI this process takes part in its own group only (the other devices' shards are
// placeholders, as the plan world's).
std::vector<Array> run_groups(Coll c, const Mesh& mesh, const std::vector<Array>& in, const std::vector<std::string>& axes,
                              PartialOp op, const Shape& out_shape) {
  std::vector<Array> out(in.size());
  std::string label = coll_name(c);
  for (size_t i = 0; i < axes.size(); ++i) label += (i ? ",'" : " over '") + axes[i] + "'";
  const bool plan = world_is(World::Plan);
  for (const auto& g : groups_over(mesh, axes)) {
    bool here = false;
    for (int dev : g) here |= is_local(dev);
    if (plan || !here) {
      for (int dev : g)
        out[static_cast<size_t>(dev)] = Array(cufuse::detail::make_placeholder(in[static_cast<size_t>(dev)].dtype(), out_shape));
      continue;
    }
    check_not_broken(label, g);
    if (world_is(World::Host)) host_failures(g, label);
    std::vector<Array> gin;
    for (int dev : g) {
      Array a = in[static_cast<size_t>(dev)];
      if (is_local(dev))
        on_device(dev, [&] {
          // NCCL reads nbytes from data_ptr(). A view of a lazy array exports its base's
          // memory (computed whole, strided): a copy of it is computed alone, contiguous.
          if (a.lazy_base() || !a.is_contiguous()) a = a.copy();
          a.eval();
        });
      gin.push_back(a);
    }
    auto gout = world_is(World::Host) ? host_group_collective(c, gin, op, out_shape)
                                      : nccl_group_collective(c, g, gin, op, out_shape, label);
    for (size_t r = 0; r < g.size(); ++r) {
      Array& o = out[static_cast<size_t>(g[r])];
      o = gout[r].defined() ? gout[r] : Array(cufuse::detail::make_placeholder(gin[r].dtype(), out_shape));
    }
  }
  return out;
}

// Records the pending kernels of `in` (if any) and the collective after them.
std::vector<HistoryPtr> record_collective(const Shards& in, Step st, const std::string& why) {
  std::vector<HistoryPtr> h = in.history;
  if (auto k = pending_kernels(in.arrays, "before " + st.collective + " (" + why + ")")) h = {record(*k, h)};
  st.kind = "collective";
  st.why = why;
  return {record(std::move(st), std::move(h))};
}

Step coll_step(const Mesh& mesh, const char* name, const std::vector<std::string>& axes, const Array& sent,
               std::string op = {}) {
  Step st;
  st.collective = name;
  st.op = std::move(op);
  for (size_t i = 0; i < axes.size(); ++i) st.mesh_axis += (i ? "," : "") + axes[i];
  st.ranks = ranks_over(mesh, axes);
  st.groups = mesh.size() / st.ranks;
  st.bytes = sent.nbytes();
  return st;
}

// x with `dim` split into (k, n/k) and the k moved first: rank r's part is x[r] (contiguous
// once copied).
Array parts_first(const Array& x, int dim, int k) {
  Shape s = x.shape();
  Shape split;
  for (int d = 0; d < static_cast<int>(s.size()); ++d) {
    if (d == dim) {
      split.push_back(k);
      split.push_back(s[d] / k);
    } else {
      split.push_back(s[d]);
    }
  }
  return x.reshape(split).moveaxis(dim, 0);
}

// The inverse joining: y of shape (k, rest...) with the k moved to `dim` and merged into it.
Array join_parts(const Array& y, int dim) {
  const Shape s = y.shape();
  Array m = y.moveaxis(0, dim);
  Shape merged;
  for (int d = 1; d < static_cast<int>(s.size()); ++d) {
    if (d - 1 == dim) merged.push_back(s[0] * s[d]);
    else merged.push_back(s[d]);
  }
  return m.reshape(merged);
}

std::vector<Array> per_shard(const std::vector<Array>& xs, const std::function<Array(const Array&)>& f) {
  std::vector<Array> out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) out[i] = on_device(static_cast<int>(i), [&] { return f(xs[i]); });
  return out;
}

void need_axes(const Mesh& mesh, const std::vector<std::string>& axes) {
  for (const auto& a : axes) (void)mesh.axis(a);
}

}  // namespace

void combine_on_host(DType t, PartialOp op, std::vector<uint8_t>& acc, const std::vector<uint8_t>& x) {
  combine(t, op, acc, x);
}


Shards allreduce(const Mesh& mesh, Shards in, const std::vector<std::string>& axes, PartialOp op, std::string why) {
  need_axes(mesh, axes);
  const Array& a0 = in.arrays[0];
  auto h = record_collective(in, coll_step(mesh, "allreduce", axes, a0, partial_op_name(op)), why);
  return {run_groups(Coll::AllReduce, mesh, in.arrays, axes, op, a0.shape()), std::move(h)};
}

Shards allgather(const Mesh& mesh, Shards in, const std::string& axis, int dim, std::string why) {
  const int k = mesh.axis_size(axis);
  const Array& a0 = in.arrays[0];
  auto h = record_collective(in, coll_step(mesh, "allgather", {axis}, a0), why);
  Shape gathered = a0.shape();
  gathered.insert_at(0, k);
  auto out = run_groups(Coll::AllGather, mesh, in.arrays, {axis}, PartialOp::Sum, gathered);
  return {per_shard(out, [&](const Array& y) { return join_parts(y, dim); }), std::move(h)};
}

Shards reducescatter(const Mesh& mesh, Shards in, const std::string& axis, PartialOp op, int dim, std::string why) {
  const int k = mesh.axis_size(axis);
  if (in.arrays[0].shape()[dim] % k != 0)
    throw ValueError(fmt::format("dist: reducescatter over '{}' ({}): dimension {} of size {} does not divide", axis, k,
                                 dim, in.arrays[0].shape()[dim]));
  Shards moved{per_shard(in.arrays, [&](const Array& x) { return parts_first(x, dim, k); }), in.history};
  auto h = record_collective(moved, coll_step(mesh, "reducescatter", {axis}, moved.arrays[0], partial_op_name(op)), why);
  Shape part = moved.arrays[0].shape();
  part.erase_at(0);
  return {run_groups(Coll::ReduceScatter, mesh, moved.arrays, {axis}, op, part), std::move(h)};
}

Shards alltoall(const Mesh& mesh, Shards in, const std::string& axis, int split_dim, int concat_dim, std::string why) {
  const int k = mesh.axis_size(axis);
  if (in.arrays[0].shape()[split_dim] % k != 0)
    throw ValueError(fmt::format("dist: alltoall over '{}' ({}): dimension {} of size {} does not divide", axis, k,
                                 split_dim, in.arrays[0].shape()[split_dim]));
  Shards moved{per_shard(in.arrays, [&](const Array& x) { return parts_first(x, split_dim, k); }), in.history};
  auto h = record_collective(moved, coll_step(mesh, "alltoall", {axis}, moved.arrays[0]), why);
  auto out = run_groups(Coll::AllToAll, mesh, moved.arrays, {axis}, PartialOp::Sum, moved.arrays[0].shape());
  return {per_shard(out, [&](const Array& y) { return join_parts(y, concat_dim); }), std::move(h)};
}

}  // namespace cufuse::dist::detail
