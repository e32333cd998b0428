// src/dist/darray.cpp: DArray's accessors, dist::shard, dist::reshard (the cheapest
// collectives from one sharding to another, a partial result finished by reducescatter or
// allreduce), dist::gather (a partial result combined where it lands, a small one on the
// host), dist::eval, and
// creation born distributed.
#include <fmt/format.h>

#include "core/node.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/random.hpp"
#include "cufuse/stream.hpp"
#include "dist/collectives.hpp"
#include "dist/darray_ops.hpp"
#include "dist/layout.hpp"
#include "dist/world.hpp"
#include "runtime/env.hpp"

namespace cufuse::dist {

namespace {
const detail::DArrayState& st(const std::shared_ptr<const detail::DArrayState>& s) {
  if (!s) throw ValueError("dist: the DArray is empty");
  return *s;
}
}  // namespace

const Mesh& DArray::mesh() const { return st(s_).mesh; }
const Sharding& DArray::sharding() const { return st(s_).spec; }
const Shape& DArray::shape() const { return st(s_).shape; }
DType DArray::dtype() const { return st(s_).dtype; }
Shape DArray::local_shape() const { return detail::local_shape(mesh(), sharding(), shape()); }
const std::vector<Array>& DArray::shards() const { return st(s_).shards; }
bool DArray::is_partial() const { return st(s_).partial.has_value(); }
std::vector<std::string> DArray::partial_axes() const {
  return is_partial() ? s_->partial->axes : std::vector<std::string>{};
}

std::optional<PartialOp> DArray::partial_op() const {
  return is_partial() ? std::optional<PartialOp>(s_->partial->op) : std::nullopt;
}

std::string DArray::str() const {
  if (!s_) return "DArray(empty)";
  std::string p;
  if (s_->partial) {
    p = fmt::format(", partial {} over", partial_op_name(s_->partial->op));
    for (size_t i = 0; i < s_->partial->axes.size(); ++i) p += (i ? "," : " ") + s_->partial->axes[i];
  }
  return fmt::format("DArray({}, {}, {} over {}{})", cufuse::name(dtype()), to_string(shape()), sharding().str(),
                     mesh().str(), p);
}

namespace detail {

void check_same_mesh(const Mesh& a, const Mesh& b, std::string_view what) {
  if (!(a == b)) throw ValueError(fmt::format("{}: operands are on different meshes, {} and {}", what, a.str(), b.str()));
}

// Local slices along dims that `to` shards and `from` does not (no communication).
static std::vector<Array> slice_locally(const Mesh& mesh, const std::vector<Array>& shards, const Sharding& from,
                                        const Sharding& to) {
  std::vector<Array> out(shards.size());
  for (int dev = 0; dev < mesh.size(); ++dev) {
    const auto c = mesh.coords(dev);
    const Array& x = shards[static_cast<size_t>(dev)];
    std::vector<std::pair<int64_t, int64_t>> r;
    for (int d = 0; d < to.ndim(); ++d) {
      const int64_t n = x.shape()[d];
      if (to.sharded(d) && !from.sharded(d)) {
        const int ax = mesh.axis(to[d]);
        const int64_t part = n / mesh.sizes()[ax];
        r.emplace_back(c[ax] * part, (c[ax] + 1) * part);
      } else {
        r.emplace_back(0, n);
      }
    }
    out[static_cast<size_t>(dev)] = on_device(dev, [&] { return slice_to(x, r); });
  }
  return out;
}

DArray finish_partial(const DArray& d, const Sharding* want, const std::string& why) {
  const auto& s = *d.state();
  if (!s.partial) return d;
  Sharding cur = s.spec;
  Shards sh{s.shards, s.history};
  std::vector<std::string> rest;
  for (const auto& a : s.partial->axes) {
    int dim = -1;
    if (want)
      for (int j = 0; j < want->ndim(); ++j)
        if ((*want)[j] == a && !cur.sharded(j)) dim = j;
    if (dim >= 0) {
      sh = reducescatter(s.mesh, std::move(sh), a, s.partial->op, dim, why);
      auto dims = cur.dims();
      dims[static_cast<size_t>(dim)] = a;
      cur = Sharding(dims);
    } else {
      rest.push_back(a);
    }
  }
  if (!rest.empty()) sh = allreduce(s.mesh, std::move(sh), rest, s.partial->op, why);
  if (s.partial->scale != 1.0) {
    const double f = s.partial->scale;
    for (size_t i = 0; i < sh.arrays.size(); ++i) {
      const Array x = sh.arrays[i];
      sh.arrays[i] = on_device(static_cast<int>(i), [&] { return (x * f).astype(s.dtype); });
    }
  }
  return make_darray(s.mesh, cur, s.shape, s.dtype, std::move(sh.arrays), std::move(sh.history));
}

}  // namespace detail

DArray reshard(const DArray& d, const Sharding& spec) {
  detail::check_spec(d.mesh(), spec, d.shape(), "dist::reshard");
  const std::string why = fmt::format("reshard {} -> {}", d.sharding().str(), spec.str());
  DArray w = detail::finish_partial(d, &spec, why);
  const auto& s = *w.state();
  const Mesh& mesh = s.mesh;
  if (s.spec == spec) return w;
  auto cur = s.spec.dims();
  detail::Shards sh{s.shards, s.history};
  for (int j = 0; j < spec.ndim(); ++j) {
    const std::string a = cur[static_cast<size_t>(j)];
    if (a.empty() || a == spec[j]) continue;
    int k = -1;
    for (int t = 0; t < spec.ndim(); ++t)
      if (t != j && spec[t] == a && cur[static_cast<size_t>(t)].empty()) k = t;
    if (k >= 0) {
      sh = detail::alltoall(mesh, std::move(sh), a, k, j, why);
      cur[static_cast<size_t>(k)] = a;
    } else {
      sh = detail::allgather(mesh, std::move(sh), a, j, why);
    }
    cur[static_cast<size_t>(j)].clear();
  }
  const Sharding now(cur);
  if (!(now == spec)) {
    sh.arrays = detail::slice_locally(mesh, sh.arrays, now, spec);
    Step step;
    step.kind = "slice";
    step.why = fmt::format("{}: each device keeps its part of the replicated dimensions (no communication)", why);
    sh.history = {detail::record(step, sh.history)};
  }
  return detail::make_darray(mesh, spec, s.shape, s.dtype, std::move(sh.arrays), std::move(sh.history));
}

DArray shard(const Array& a, const Mesh& mesh, const Sharding& spec) {
  if (!a.defined()) throw ValueError("dist::shard: the Array handle is empty");
  detail::check_spec(mesh, spec, a.shape(), "dist::shard");
  std::vector<Array> shards(static_cast<size_t>(mesh.size()));
  const Shape local = detail::local_shape(mesh, spec, a.shape());
  const bool placeholder = a.node()->is_placeholder();
  for (int dev = 0; dev < mesh.size(); ++dev) {
    Array& out = shards[static_cast<size_t>(dev)];
    if (placeholder || !detail::is_local(dev)) {  // another process's shard (MPI): a placeholder
      out = Array(cufuse::detail::make_placeholder(a.dtype(), local, a.node()->placeholder_slot));
      continue;
    }
    Array view = detail::slice_to(a, detail::local_range(mesh, spec, a.shape(), dev));
    out = detail::cuda_device(dev) >= 0 ? view.to_device(detail::cuda_device(dev)) : view;
  }
  return detail::make_darray(mesh, spec, a.shape(), a.dtype(), std::move(shards), {});
}

Array gather(const DArray& d) {
  if (detail::world_is(World::Mpi)) {
    // One process per device: the whole array reaches every rank by allgathers (a reshard to
    // replicated); this rank's shard is then all of it.
    DArray r = reshard(d, Sharding::replicated(d.ndim()));
    const Array& x = r.shard(rank());
    return x.to_device(Device::current().id());
  }
  // A partial result is combined where it is gathered, not by an allreduce: each block's
  // partials are copied to this device and combined there (a peer copy each; D2 read its
  // allreduce's NCCL group launch back on the critical path). The plan world keeps the
  // allreduce, for dist::plan's record of what dist::eval would run.
  const bool combine_here = d.state()->partial && !detail::world_is(World::Plan);
  DArray w = combine_here ? d : detail::finish_partial(d, nullptr, "gather");
  const auto& s = *w.state();
  const Mesh& mesh = s.mesh;
  const int here = detail::world_is(World::Gpus) ? Device::current().id() : -1;
  // A small partial block (CUFUSE_DIST_HOST_COMBINE bytes at most: a sum to a scalar, a short
  // vector) is combined on the host: the partials gather reads are evaluated first (each on its
  // device; in the host world together, sibling kernels), then each is read back in mesh order
  // and combined as NCCL combines, and the result copied to this device (one element: made a
  // constant, full(), so reading it back is no device work). On the H200 pair, D2's peer copy and
  // combining kernel cost ~50 us after the last shard's kernel (the 2-GPU program 332 us against
  // 268 us on one GPU), the two reads back ~12 us.
  const int64_t host_combine = cufuse::detail::settings().dist_host_combine;
  const bool on_host = combine_here && host_combine > 0 && !is_complex(s.dtype) &&
                       static_cast<int64_t>(numel(detail::local_shape(mesh, s.spec, s.shape))) * itemsize(s.dtype) <=
                           host_combine;
  if (on_host) {
    // The shards read: coordinate 0 on every mesh axis that neither shards a dimension nor is
    // a partial axis (any replica will do, as below).
    std::vector<bool> read_axis(static_cast<size_t>(mesh.ndim()), false);
    for (int d = 0; d < static_cast<int>(s.shape.size()); ++d)
      if (s.spec.sharded(d)) read_axis[static_cast<size_t>(mesh.axis(s.spec[d]))] = true;
    for (const auto& a : s.partial->axes) read_axis[static_cast<size_t>(mesh.axis(a))] = true;
    std::vector<Array> reads;
    for (int dev = 0; dev < mesh.size(); ++dev) {
      bool read = true;
      for (int i = mesh.ndim() - 1, rest = dev; i >= 0; rest /= mesh.sizes()[i], --i)
        if (!read_axis[static_cast<size_t>(i)] && rest % mesh.sizes()[i] != 0) read = false;
      if (!read) continue;
      if (here < 0) reads.push_back(s.shards[static_cast<size_t>(dev)]);
      else detail::on_device(dev, [&] { s.shards[static_cast<size_t>(dev)].eval(); });
    }
    if (!reads.empty()) eval_all(reads);
  }
  auto device_at = [&](const std::vector<int>& c) {
    int dev = 0;
    for (int i = 0; i < mesh.ndim(); ++i) dev = dev * mesh.sizes()[i] + c[static_cast<size_t>(i)];
    return dev;
  };
  auto shard_at = [&](const std::vector<int>& c) -> Array {
    const Array& x = s.shards[static_cast<size_t>(device_at(c))];
    return here >= 0 ? x.to_device(here) : x;
  };
  // The block at `c`, its partials combined over every coordinate of the partial axes.
  auto block_at = [&](std::vector<int>& c) -> Array {
    if (!combine_here) return shard_at(c);
    const detail::Partial& p = *s.partial;
    std::vector<int> axes;
    for (const auto& a : p.axes) axes.push_back(mesh.axis(a));
    // In mesh order. (The other devices' partials first made D2 47% on the H200 pair, from 85%:
    // the host came back from their evaluation and copy only once their kernel was done, so this
    // device's own kernel started after it; bench/README.md.)
    Array acc;
    std::vector<uint8_t> sum, next;  // the host combine's bytes: the result so far, the next partial
    for (;;) {
      if (on_host) {
        const Array& x = s.shards[static_cast<size_t>(device_at(c))];
        std::vector<uint8_t>& into = acc.defined() ? next : sum;
        into.resize(static_cast<size_t>(x.nbytes()));
        x.copy_to_host(into.data(), into.size());
        if (acc.defined()) detail::combine_on_host(s.dtype, p.op, sum, next);
        else acc = x;  // the first partial (its shape); the host's result replaces it below
      } else {
        Array x = shard_at(c);
        if (!acc.defined()) acc = x;
        else if (p.op == PartialOp::Sum) acc = acc + x;
        else if (p.op == PartialOp::Prod) acc = acc * x;
        else if (p.op == PartialOp::Max) acc = cufuse::maximum(acc, x);  // NaN propagating, as the allreduce
        else acc = cufuse::minimum(acc, x);
      }
      size_t k = 0;  // the next coordinates of the partial axes (an odometer; all 0 again at the end)
      for (; k < axes.size(); ++k) {
        int& v = c[static_cast<size_t>(axes[k])];
        if (++v < mesh.sizes()[axes[k]]) break;
        v = 0;
      }
      if (k == axes.size()) break;
    }
    if (on_host)  // on this device; one element as a constant, which item() reads with no device work
      acc = acc.size() == 1 ? full(acc.shape(), Scalar::from_bytes(sum.data(), s.dtype), s.dtype)
                            : from_host(sum.data(), s.dtype, acc.shape());
    if (p.scale != 1.0) acc = (acc * p.scale).astype(s.dtype);  // as finish_partial
    return acc;
  };
  // Joins the blocks along each sharded dimension in turn; `c` fixes the mesh coordinates
  // of the axes chosen so far (the others stay 0: any replica will do).
  std::function<Array(int, std::vector<int>&)> build = [&](int dim, std::vector<int>& c) -> Array {
    if (dim == static_cast<int>(s.shape.size())) return block_at(c);
    if (!s.spec.sharded(dim)) return build(dim + 1, c);
    const int ax = mesh.axis(s.spec[dim]);
    std::vector<Array> parts;
    for (int i = 0; i < mesh.sizes()[ax]; ++i) {
      c[static_cast<size_t>(ax)] = i;
      parts.push_back(build(dim + 1, c));
    }
    c[static_cast<size_t>(ax)] = 0;
    return concatenate(parts, dim);
  };
  std::vector<int> c(static_cast<size_t>(mesh.ndim()), 0);
  return build(0, c);
}

DArray& eval(DArray& d) {
  d = detail::finish_partial(d, nullptr, "eval");
  for (size_t i = 0; i < d.shards().size(); ++i) {
    if (detail::world_is(World::Plan)) break;
    if (!detail::is_local(static_cast<int>(i))) continue;
    Array x = d.shards()[i];
    detail::on_device(static_cast<int>(i), [&] { x.eval(); });
  }
  return d;
}

// ------------------------------------------------------------------ creation
namespace {
template <class F>
DArray born(const Shape& shape, const Mesh& mesh, const Sharding& spec, const char* what, F make_global_or_local) {
  detail::check_spec(mesh, spec, shape, what);
  std::vector<Array> shards(static_cast<size_t>(mesh.size()));
  for (int dev = 0; dev < mesh.size(); ++dev)
    if (detail::is_local(dev))
      shards[static_cast<size_t>(dev)] =
          detail::on_device(dev, [&] { return make_global_or_local(detail::local_range(mesh, spec, shape, dev)); });
  // Another process's shards (MPI): placeholders of the same dtype and local shape.
  const DType t = shards[static_cast<size_t>(detail::first_local(mesh.size()))].dtype();
  for (int dev = 0; dev < mesh.size(); ++dev)
    if (!detail::is_local(dev))
      shards[static_cast<size_t>(dev)] =
          Array(cufuse::detail::make_placeholder(t, detail::local_shape(mesh, spec, shape)));
  return detail::make_darray(mesh, spec, shape, t, std::move(shards), {});
}
Shape sizes_of(const std::vector<std::pair<int64_t, int64_t>>& r) {
  Shape s;
  for (auto [a, b] : r) s.push_back(b - a);
  return s;
}
}  // namespace

DArray full(const Shape& shape, const Scalar& value, const Mesh& mesh, const Sharding& spec, std::optional<DType> dtype) {
  return born(shape, mesh, spec, "dist::full", [&](const auto& r) { return cufuse::full(sizes_of(r), value, dtype); });
}
DArray zeros(const Shape& shape, const Mesh& mesh, const Sharding& spec, DType dtype) {
  return full(shape, Scalar(0), mesh, spec, dtype);
}
DArray ones(const Shape& shape, const Mesh& mesh, const Sharding& spec, DType dtype) {
  return full(shape, Scalar(1), mesh, spec, dtype);
}
DArray arange(int64_t n, const Mesh& mesh, const Sharding& spec, DType dtype) {
  return born({n}, mesh, spec, "dist::arange", [&](const auto& r) {
    return cufuse::arange(Scalar(r[0].first), Scalar(r[0].second), Scalar(1), dtype);
  });
}
DArray uniform(const Shape& shape, uint64_t seed, const Mesh& mesh, const Sharding& spec, DType dtype, double low,
               double high) {
  // The global generator read at the shard's slice: its element numbers are the global ones.
  return born(shape, mesh, spec, "dist::uniform", [&](const auto& r) {
    return detail::slice_to(random::uniform(shape, dtype, seed, low, high), r);
  });
}
DArray normal(const Shape& shape, uint64_t seed, const Mesh& mesh, const Sharding& spec, DType dtype, double mean,
              double stddev) {
  return born(shape, mesh, spec, "dist::normal", [&](const auto& r) {
    return detail::slice_to(random::normal(shape, dtype, seed, mean, stddev), r);
  });
}

}  // namespace cufuse::dist
