// src/dist/ops.cpp: operations on DArrays. Elementwise work (dist::map and the operators)
// runs shard by shard through the single-GPU engine, so each shard's work fuses as on one
// GPU; the result's sharding is the operand sharding that costs the fewest bytes to reach.
// Reductions over sharded dimensions give partial results; matmul picks local GEMM,
// GEMM + allreduce or allgather + GEMM from the operands' shardings.
#include <algorithm>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "dist/darray_ops.hpp"
#include "dist/layout.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {

namespace {

// The operand's sharding seen over the output's dimensions (right-aligned, NumPy
// broadcasting); a broadcast dimension (size 1 under a larger one) is none.
std::vector<std::string> aligned(const DArray& d, const Shape& out) {
  const int R = static_cast<int>(out.size()), r = d.ndim();
  std::vector<std::string> a(static_cast<size_t>(R));
  for (int e = 0; e < r; ++e) {
    const int o = e + R - r;
    if (d.shape()[e] == out[o]) a[static_cast<size_t>(o)] = d.sharding()[e];
  }
  return a;
}

// The operand's target sharding (its own dims) under the output's sharding `c`.
Sharding operand_target(const DArray& d, const Shape& out, const std::vector<std::string>& c) {
  const int R = static_cast<int>(out.size()), r = d.ndim();
  std::vector<std::string> t(static_cast<size_t>(r));
  for (int e = 0; e < r; ++e) {
    const int o = e + R - r;
    if (d.shape()[e] == out[o]) t[static_cast<size_t>(e)] = c[static_cast<size_t>(o)];
  }
  return Sharding(t);
}

// Bytes a reshard from d's sharding to `to` moves: each dimension that loses its axis gathers
// (k - 1) local blocks per device.
int64_t reshard_cost(const DArray& d, const Sharding& to) {
  int64_t cost = 0;
  const int64_t local = d.shards()[0].nbytes();
  for (int e = 0; e < d.ndim(); ++e)
    if (d.sharding().sharded(e) && d.sharding()[e] != to[e]) cost += local * (d.mesh().axis_size(d.sharding()[e]) - 1);
  return cost;
}

DArray whole(const DArray& d, const std::string& why) { return detail::finish_partial(d, nullptr, why); }

// The by-value operands of an operation are dropped once its result is built (dist.hpp).
DArray taken(DArray result, DArray& a) {
  a = DArray();
  return result;
}
DArray taken(DArray result, DArray& a, DArray& b) {
  a = DArray();
  b = DArray();
  return result;
}

}  // namespace

DArray map(const LocalFn& f, const std::vector<DArray>& operands, std::string_view what) {
  if (operands.empty()) throw ValueError(fmt::format("dist::{}: no operands", what));
  std::vector<DArray> ops;
  ops.reserve(operands.size());
  for (const auto& d : operands) {
    if (!d.defined()) throw ValueError(fmt::format("dist::{}: an operand is empty", what));
    if (!(d.mesh() == operands[0].mesh()))
      detail::check_same_mesh(operands[0].mesh(), d.mesh(), fmt::format("dist::{}", what));
    ops.push_back(d.is_partial() ? whole(d, fmt::format("{} needs its operand whole", what)) : d);
  }
  const Mesh& mesh = ops[0].mesh();
  Shape out = ops[0].shape();
  for (size_t i = 1; i < ops.size(); ++i) out = broadcast_shapes(out, ops[i].shape());
  // Every operand of the output's shape and one sharding (the common case): that sharding,
  // nothing to weigh or reshard (each op's host time is paid before the first shard's launch).
  bool same = true;
  for (const auto& d : ops) same = same && d.shape() == out && d.sharding() == ops[0].sharding();
  std::vector<std::string> best;
  if (same) {
    best = ops[0].sharding().dims();
  } else {
    // Candidates: each operand's sharding over the output, the largest operand's first.
    std::vector<size_t> order(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return ops[a].shards()[0].nbytes() * (ops[a].shape() == out ? 2 : 1) >
             ops[b].shards()[0].nbytes() * (ops[b].shape() == out ? 2 : 1);
    });
    int64_t best_cost = -1;
    for (size_t i : order) {
      const auto cand = aligned(ops[i], out);
      int64_t cost = 0;
      for (const auto& d : ops) cost += reshard_cost(d, operand_target(d, out, cand));
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        best = cand;
      }
    }
    for (auto& d : ops) d = reshard(d, operand_target(d, out, best));
  }
  std::vector<Array> shards(static_cast<size_t>(mesh.size()));
  for (int dev = 0; dev < mesh.size(); ++dev) {
    std::vector<Array> locals;
    for (const auto& d : ops) locals.push_back(d.shard(dev));
    shards[static_cast<size_t>(dev)] = detail::on_device(dev, [&] { return f(locals); });
  }
  const Sharding spec(best);
  const Shape local = detail::local_shape(mesh, spec, out);
  if (shards[0].shape() != local)
    throw ValueError(fmt::format("dist::{}: the function gave a shard of shape {} where {} was expected (it must "
                                 "be elementwise with NumPy broadcasting)",
                                 what, to_string(shards[0].shape()), to_string(local)));
  const DType t = shards[0].dtype();
  return detail::make_darray(mesh, spec, out, t, std::move(shards), detail::join_histories(ops));
}

#define CUFUSE_DIST_BINARY(sym, fn)                                                                              \
  DArray operator sym(DArray a, DArray b) {                                                                     \
    return taken(map([](const std::vector<Array>& x) { return cufuse::fn(x[0], x[1]); }, {a, b}, #fn), a, b);  \
  }                                                                                                              \
  DArray operator sym(DArray a, const Scalar& s) {                                                              \
    return taken(map([s](const std::vector<Array>& x) { return cufuse::fn(x[0], s); }, {a}, #fn), a);          \
  }                                                                                                              \
  DArray operator sym(const Scalar& s, DArray a) {                                                              \
    return taken(map([s](const std::vector<Array>& x) { return cufuse::fn(s, x[0]); }, {a}, #fn), a);          \
  }
CUFUSE_DIST_BINARY(+, add)
CUFUSE_DIST_BINARY(-, subtract)
CUFUSE_DIST_BINARY(*, multiply)
CUFUSE_DIST_BINARY(/, true_divide)
#undef CUFUSE_DIST_BINARY

DArray operator-(DArray a) {
  return taken(map([](const std::vector<Array>& x) { return -x[0]; }, {a}, "negative"), a);
}

#define CUFUSE_DIST_UNARY(fn)                                                                                   \
  DArray fn(DArray a) {                                                                                          \
    return taken(map([](const std::vector<Array>& x) { return cufuse::fn(x[0]); }, {a}, #fn), a);               \
  }
CUFUSE_DIST_UNARY(exp)
CUFUSE_DIST_UNARY(log)
CUFUSE_DIST_UNARY(sqrt)
CUFUSE_DIST_UNARY(sin)
CUFUSE_DIST_UNARY(cos)
CUFUSE_DIST_UNARY(tanh)
CUFUSE_DIST_UNARY(abs)
#undef CUFUSE_DIST_UNARY

DArray maximum(DArray a, DArray b) {
  return taken(map([](const std::vector<Array>& x) { return cufuse::maximum(x[0], x[1]); }, {a, b}, "maximum"), a, b);
}
DArray minimum(DArray a, DArray b) {
  return taken(map([](const std::vector<Array>& x) { return cufuse::minimum(x[0], x[1]); }, {a, b}, "minimum"), a, b);
}
DArray astype(DArray a, DType t) {
  return taken(map([t](const std::vector<Array>& x) { return x[0].astype(t); }, {a}, "astype"), a);
}

// ------------------------------------------------------------------ reductions
namespace {

enum class Red { Sum, Prod, Max, Min, Mean };

DArray reduce(const DArray& in, Axes axes, Red red, const char* what) {
  if (!in.defined()) throw ValueError(fmt::format("dist::{}: the DArray is empty", what));
  const int nd = in.ndim();
  if (axes.empty())
    for (int i = 0; i < nd; ++i) axes.push_back(i);
  std::vector<bool> reduced(static_cast<size_t>(nd), false);
  for (int& a : axes) {
    if (a < -nd || a >= nd)
      throw IndexError(fmt::format("dist::{}: axis {} is out of bounds for array of dimension {}", what, a, nd));
    if (a < 0) a += nd;
    if (reduced[static_cast<size_t>(a)]) throw ValueError(fmt::format("dist::{}: duplicate value in 'axis'", what));
    reduced[static_cast<size_t>(a)] = true;
  }
  std::sort(axes.begin(), axes.end());
  const PartialOp op = red == Red::Prod ? PartialOp::Prod
                       : red == Red::Max ? PartialOp::Max
                       : red == Red::Min ? PartialOp::Min
                                         : PartialOp::Sum;
  // A partial result reduced by its own op stays partial (the combine commutes with it).
  DArray d = in;
  if (d.is_partial() && !(red != Red::Mean && d.state()->partial->op == op && d.state()->partial->scale == 1.0))
    d = detail::finish_partial(d, nullptr, fmt::format("{} needs its operand whole", what));
  const Mesh& mesh = d.mesh();
  std::vector<std::string> partial_axes = d.partial_axes(), out_dims;
  int ranks = 1;
  for (int i = 0; i < nd; ++i) {
    if (!reduced[static_cast<size_t>(i)]) {
      out_dims.push_back(d.sharding()[i]);
    } else if (d.sharding().sharded(i)) {
      partial_axes.push_back(d.sharding()[i]);
      ranks *= mesh.axis_size(d.sharding()[i]);
    }
  }
  std::sort(partial_axes.begin(), partial_axes.end(),
            [&](const std::string& a, const std::string& b) { return mesh.axis(a) < mesh.axis(b); });
  Shape out;
  for (int i = 0; i < nd; ++i)
    if (!reduced[static_cast<size_t>(i)]) out.push_back(d.shape()[i]);
  const AxisArg ax(axes);
  std::vector<Array> shards(static_cast<size_t>(mesh.size()));
  for (int dev = 0; dev < mesh.size(); ++dev) {
    const Array& x = d.shard(dev);
    shards[static_cast<size_t>(dev)] = detail::on_device(dev, [&] {
      switch (red) {
        case Red::Sum: return cufuse::sum(x, ax);
        case Red::Prod: return cufuse::prod(x, ax);
        case Red::Max: return cufuse::max(x, ax);
        case Red::Min: return cufuse::min(x, ax);
        case Red::Mean: return cufuse::mean(x, ax);
      }
      return Array();
    });
  }
  std::optional<detail::Partial> partial;
  if (!partial_axes.empty()) partial = detail::Partial{op, partial_axes, red == Red::Mean ? 1.0 / ranks : 1.0};
  const DType t = shards[0].dtype();
  return detail::make_darray(mesh, Sharding(out_dims), out, t, std::move(shards), d.state()->history, partial);
}

}  // namespace

DArray sum(DArray a, const Axes& axes) { return taken(reduce(a, axes, Red::Sum, "sum"), a); }
DArray prod(DArray a, const Axes& axes) { return taken(reduce(a, axes, Red::Prod, "prod"), a); }
DArray max(DArray a, const Axes& axes) { return taken(reduce(a, axes, Red::Max, "max"), a); }
DArray min(DArray a, const Axes& axes) { return taken(reduce(a, axes, Red::Min, "min"), a); }
DArray mean(DArray a, const Axes& axes) { return taken(reduce(a, axes, Red::Mean, "mean"), a); }

// ------------------------------------------------------------------ matmul
DArray matmul(const DArray& a0, const DArray& b0) {
  if (!a0.defined() || !b0.defined()) throw ValueError("dist::matmul: an operand is empty");
  detail::check_same_mesh(a0.mesh(), b0.mesh(), "dist::matmul");
  if (a0.ndim() != 2 || b0.ndim() != 2)
    throw ValueError(fmt::format("dist::matmul: 2-D operands only, got shapes {} and {}", to_string(a0.shape()),
                                 to_string(b0.shape())));
  if (a0.shape()[1] != b0.shape()[0])
    throw ValueError(fmt::format("dist::matmul: shapes {} and {} not aligned: {} (dim 1) != {} (dim 0)",
                                 to_string(a0.shape()), to_string(b0.shape()), a0.shape()[1], b0.shape()[0]));
  DArray a = whole(a0, "matmul needs its operand whole"), b = whole(b0, "matmul needs its operand whole");
  const std::string am = a.sharding()[0], ak = a.sharding()[1], bk = b.sharding()[0], bn = b.sharding()[1];
  const int64_t item = itemsize(a.dtype());
  // Candidates, by the bytes they move (reshards, and the partial result's allreduce):
  // the contraction dimension whole (a local GEMM after any gather), or split over the axis
  // either operand splits it on (GEMM + allreduce).
  struct Choice {
    std::string K;  // "" : the contraction dimension whole
    Sharding sa, sb;
    int64_t cost;
  };
  std::vector<Choice> choices;
  {
    std::string n = bn == am ? std::string() : bn;  // one mesh axis cannot split both rows and columns
    Sharding sa({am, std::string()}), sb({std::string(), n});
    choices.push_back({"", sa, sb, reshard_cost(a, sa) + reshard_cost(b, sb)});
  }
  for (const std::string& K : {ak, bk}) {
    if (K.empty() || (!choices.empty() && choices.back().K == K)) continue;
    const std::string m = am == K ? std::string() : am;
    std::string n = bn == K ? std::string() : bn;
    if (!n.empty() && n == m) n.clear();
    Sharding sa({m, K}), sb({K, n});
    int64_t out = a.shape()[0] * b.shape()[1] * item;
    if (!m.empty()) out /= a.mesh().axis_size(m);
    if (!n.empty()) out /= a.mesh().axis_size(n);
    choices.push_back({K, sa, sb, reshard_cost(a, sa) + reshard_cost(b, sb) + out});
  }
  const Choice* best = &choices[0];
  for (const auto& c : choices)
    if (c.cost < best->cost) best = &c;
  const std::string K = best->K;
  const bool moved = !(best->sa == a.sharding()) || !(best->sb == b.sharding());
  const bool gathers = reshard_cost(a, best->sa) + reshard_cost(b, best->sb) > 0;
  std::string how;
  if (!K.empty())
    how = fmt::format("GEMM per shard + allreduce over '{}' (the contraction dimension is split{}; {} bytes moved "
                      "per device, the cheapest)",
                      K, gathers ? "; operands resharded to it first" : moved ? "; operands sliced to it" : "",
                      best->cost);
  else if (gathers)
    how = fmt::format("allgather + GEMM per shard (operands gathered to whole contraction dimensions; {} bytes moved "
                      "per device, the cheapest)",
                      best->cost);
  else
    how = "local GEMM per shard (the contraction dimension is whole)";
  a = reshard(a, best->sa);
  b = reshard(b, best->sb);
  Step step;
  step.kind = "matmul";
  step.why = how;
  auto hist = detail::join_histories({a, b});
  hist = {detail::record(step, hist)};
  const Mesh& mesh = a.mesh();
  std::vector<Array> shards(static_cast<size_t>(mesh.size()));
  for (int dev = 0; dev < mesh.size(); ++dev)
    shards[static_cast<size_t>(dev)] = detail::on_device(dev, [&] { return cufuse::matmul(a.shard(dev), b.shard(dev)); });
  const Sharding spec({a.sharding()[0], b.sharding()[1]});
  std::optional<detail::Partial> partial;
  if (!K.empty()) partial = detail::Partial{PartialOp::Sum, {K}, 1.0};
  const DType t = shards[0].dtype();
  return detail::make_darray(mesh, spec, {a.shape()[0], b.shape()[1]}, t, std::move(shards), std::move(hist), partial);
}

}  // namespace cufuse::dist
