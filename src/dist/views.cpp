// src/dist/views.cpp: views of DArrays: basic indexing (index), reshape and transpose.
// Replicated dimensions and selections that fall shard by shard on a sharded dimension are
// local views of each shard (no communication, memory shared as NumPy's views); any other
// selection along a sharded dimension gathers only the selected elements: each device cuts
// its part of the selection, pads it to the largest part, one allgather over the axis, and
// each device joins the parts in order (then keeps its slice again where the new size
// divides by the axis).
#include <numeric>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/manipulation.hpp"
#include "dist/collectives.hpp"
#include "dist/darray_ops.hpp"
#include "dist/layout.hpp"
#include "dist/select.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {

namespace {

Array slice_dim(const Array& x, int dim, const Slice& s) {
  std::vector<Index> idx(static_cast<size_t>(dim), Index(_));
  idx.emplace_back(s);
  return x.index(idx);
}

// Gathers, along sharded dimension `dim` (its selection not aligned with the shards), the
// selected elements to every device of each group: the result has the selection's length
// along `dim` on every device. `xs`: each device's shard with its other dimensions already cut.
detail::Shards gather_selected(const Mesh& mesh, detail::Shards sh, const std::string& axis, int dim,
                               const detail::DimSel& sel, int64_t n, const std::string& why) {
  const int ax = mesh.axis(axis);
  const int k = mesh.sizes()[ax];
  const int64_t part = n / k;
  std::vector<detail::LocalPart> parts;
  int64_t most = 0;
  for (int r = 0; r < k; ++r) {
    parts.push_back(detail::local_part(sel, r * part, part));
    most = std::max(most, parts.back().count());
  }
  std::vector<Array> padded(sh.arrays.size());
  for (int dev = 0; dev < mesh.size(); ++dev) {
    const int r = mesh.coords(dev)[ax];
    const Array& x = sh.arrays[static_cast<size_t>(dev)];
    padded[static_cast<size_t>(dev)] = detail::on_device(dev, [&] {
      Array piece = slice_dim(x, dim, detail::local_slice(sel, parts[static_cast<size_t>(r)]));
      const int64_t pad = most - parts[static_cast<size_t>(r)].count();
      if (pad == 0) return piece;
      Shape ps = piece.shape();
      ps[dim] = pad;
      return concatenate({piece, zeros(ps, x.dtype())}, dim);
    });
  }
  detail::Shards g = detail::allgather(mesh, {std::move(padded), std::move(sh.history)}, axis, dim, why);
  // Part r sits at [r * most, r * most + count_r); the selection's order is r ascending for a
  // positive step, descending for a negative one.
  for (int dev = 0; dev < mesh.size(); ++dev) {
    const Array y = g.arrays[static_cast<size_t>(dev)];
    g.arrays[static_cast<size_t>(dev)] = detail::on_device(dev, [&] {
      std::vector<Array> pieces;
      for (int i = 0; i < k; ++i) {
        const int r = sel.step > 0 ? i : k - 1 - i;
        const int64_t c = parts[static_cast<size_t>(r)].count();
        if (c > 0) pieces.push_back(slice_dim(y, dim, Slice{r * most, r * most + c, 1}));
      }
      if (pieces.empty()) return slice_dim(y, dim, Slice{0, 0, 1});
      return pieces.size() == 1 ? pieces[0] : concatenate(pieces, dim);
    });
  }
  return g;
}

Step view_step(std::string why) {
  Step st;
  st.kind = "slice";
  st.why = std::move(why);
  return st;
}

}  // namespace

DArray DArray::index(const std::vector<Index>& idx) const {
  if (!defined()) throw ValueError("dist: index of an empty DArray");
  DArray d = detail::finish_partial(*this, nullptr, "index needs its operand whole");
  const auto& s = *d.state();
  const Mesh& mesh = s.mesh;
  const detail::Selection sel = detail::resolve(s.shape, idx, "DArray::index");
  const int nd = static_cast<int>(s.shape.size());
  // Per input dimension: how it is cut.
  enum class How { Same, Local, Aligned, Gather };
  std::vector<How> how(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) {
    const auto& ds = sel.dims[static_cast<size_t>(i)];
    if (!s.spec.sharded(i)) how[i] = ds.whole(s.shape[i]) ? How::Same : How::Local;
    else if (ds.whole(s.shape[i])) how[i] = How::Same;
    else if (detail::aligned(ds, s.shape[i], mesh.axis_size(s.spec[i]))) how[i] = How::Aligned;
    else how[i] = How::Gather;
  }
  // 1. Local cuts: replicated dims as the selection says, aligned sharded dims by the
  // device's part (integers stay as length-1 slices until the end).
  std::vector<Array> shards(s.shards.size());
  for (int dev = 0; dev < mesh.size(); ++dev) {
    const auto c = mesh.coords(dev);
    std::vector<Index> li;
    for (int i = 0; i < nd; ++i) {
      const auto& ds = sel.dims[static_cast<size_t>(i)];
      switch (how[i]) {
        case How::Same:
        case How::Gather: li.emplace_back(_); break;
        case How::Local: li.emplace_back(detail::local_slice(ds, {0, ds.len, ds.start})); break;
        case How::Aligned: {
          const int k = mesh.axis_size(s.spec[i]);
          const int64_t part = s.shape[i] / k;
          li.emplace_back(detail::local_slice(ds, detail::local_part(ds, c[mesh.axis(s.spec[i])] * part, part)));
          break;
        }
      }
    }
    const Array& x = s.shards[static_cast<size_t>(dev)];
    shards[static_cast<size_t>(dev)] = detail::on_device(dev, [&] { return x.index(li); });
  }
  detail::Shards sh{std::move(shards), s.history};
  // 2. Each unaligned sharded dim: its selected elements gathered, then cut again.
  std::vector<std::string> spec_in = s.spec.dims();
  const std::string why = fmt::format("index of {}", s.spec.str());
  for (int i = 0; i < nd; ++i) {
    if (how[i] != How::Gather) continue;
    const auto& ds = sel.dims[static_cast<size_t>(i)];
    const std::string axis = spec_in[static_cast<size_t>(i)];
    sh = gather_selected(mesh, std::move(sh), axis, i,
                         ds, s.shape[i], fmt::format("{}: the selection along dimension {} crosses the shards", why, i));
    const int k = mesh.axis_size(axis);
    if (!ds.dropped && ds.len > 0 && ds.len % k == 0) {
      // Sharded again along the new length: each device keeps its part (no communication).
      const int ax = mesh.axis(axis);
      for (int dev = 0; dev < mesh.size(); ++dev) {
        const int64_t q = ds.len / k, r = mesh.coords(dev)[ax];
        const Array y = sh.arrays[static_cast<size_t>(dev)];
        sh.arrays[static_cast<size_t>(dev)] = detail::on_device(dev, [&] { return slice_dim(y, i, Slice{r * q, (r + 1) * q, 1}); });
      }
      sh.history = {detail::record(view_step(fmt::format("{}: each device keeps its part of dimension {} again", why, i)),
                                   sh.history)};
    } else {
      spec_in[static_cast<size_t>(i)].clear();
    }
  }
  // 3. The result's dims: integers dropped, newaxis added (a reshape of each shard, a view).
  std::vector<std::string> spec_out;
  for (int o : sel.out_of) spec_out.push_back(o < 0 ? std::string() : spec_in[static_cast<size_t>(o)]);
  const Sharding out_spec(spec_out);
  const Shape local = detail::local_shape(mesh, out_spec, sel.out_shape);
  for (size_t dev = 0; dev < sh.arrays.size(); ++dev) {
    const Array y = sh.arrays[dev];
    if (y.shape() != local)
      sh.arrays[dev] = detail::on_device(static_cast<int>(dev), [&] { return y.reshape(local); });
  }
  return detail::make_darray(mesh, out_spec, sel.out_shape, s.dtype, std::move(sh.arrays), std::move(sh.history));
}

DSubscript DArray::operator[](std::initializer_list<Index> idx) { return DSubscript(*this, std::vector<Index>(idx)); }

DArray DArray::transpose(const Axes& axes0) const {
  if (!defined()) throw ValueError("dist: transpose of an empty DArray");
  const int nd = ndim();
  Axes axes = axes0;
  if (axes.empty())
    for (int i = nd - 1; i >= 0; --i) axes.push_back(i);
  if (static_cast<int>(axes.size()) != nd) throw ValueError("axes don't match array");
  std::vector<bool> seen(static_cast<size_t>(nd), false);
  for (int& a : axes) {
    if (a < -nd || a >= nd)
      throw IndexError(fmt::format("axis {} is out of bounds for array of dimension {}", a, nd));
    if (a < 0) a += nd;
    if (seen[static_cast<size_t>(a)]) throw ValueError("repeated axis in transpose");
    seen[static_cast<size_t>(a)] = true;
  }
  DArray d = detail::finish_partial(*this, nullptr, "transpose needs its operand whole");
  const auto& s = *d.state();
  std::vector<std::string> spec;
  Shape shape;
  for (int a : axes) {
    spec.push_back(s.spec[a]);
    shape.push_back(s.shape[a]);
  }
  std::vector<Array> shards(s.shards.size());
  for (size_t dev = 0; dev < shards.size(); ++dev) {
    const Array& x = s.shards[dev];
    shards[dev] = detail::on_device(static_cast<int>(dev), [&] { return x.transpose(axes); });
  }
  return detail::make_darray(s.mesh, Sharding(spec), shape, s.dtype, std::move(shards), s.history);
}

namespace {

// Output dimension that sharded input dimension d can stay sharded on (the same number of
// elements before it and a size its axis divides), or -1.
int reshape_target(const Shape& in, const Shape& out, int d, int k) {
  int64_t before = 1;
  for (int i = 0; i < d; ++i) before *= in[i];
  int64_t p = 1;
  for (int e = 0; e < static_cast<int>(out.size()); ++e) {
    if (p == before && out[e] % k == 0 && out[e] > 0) return e;
    p *= out[e];
  }
  return -1;
}

}  // namespace

DArray DArray::reshape(const Shape& shape0) const {
  if (!defined()) throw ValueError("dist: reshape of an empty DArray");
  const Shape& in = shape();
  int64_t total = 1, known = 1;
  int minus = -1;
  for (int e = 0; e < static_cast<int>(shape0.size()); ++e) {
    if (shape0[e] == -1) {
      if (minus >= 0) throw ValueError("can only specify one unknown dimension");
      minus = e;
    } else if (shape0[e] < 0) {
      throw ValueError(fmt::format("negative dimensions not allowed: {}", to_string(shape0)));
    } else {
      known *= shape0[e];
    }
  }
  for (int i = 0; i < ndim(); ++i) total *= in[i];
  Shape out = shape0;
  if (minus >= 0) {
    if (known == 0 || total % known != 0)
      throw ValueError(fmt::format("cannot reshape array of size {} into shape {}", total, to_string(shape0)));
    out[minus] = total / known;
  } else if (known != total) {
    throw ValueError(fmt::format("cannot reshape array of size {} into shape {}", total, to_string(shape0)));
  }
  DArray d = detail::finish_partial(*this, nullptr, "reshape needs its operand whole");
  // Sharded dims that cannot stay sharded are gathered first.
  std::vector<std::string> keep = d.sharding().dims();
  std::vector<std::string> out_spec(out.size());
  bool gather = false;
  for (int i = 0; i < ndim(); ++i) {
    if (!d.sharding().sharded(i)) continue;
    const int e = reshape_target(in, out, i, d.mesh().axis_size(d.sharding()[i]));
    if (e < 0) {
      keep[static_cast<size_t>(i)].clear();
      gather = true;
    } else {
      out_spec[static_cast<size_t>(e)] = d.sharding()[i];
    }
  }
  if (gather) d = reshard(d, Sharding(keep));
  const auto& s = *d.state();
  const Sharding spec(out_spec);
  const Shape local = detail::local_shape(s.mesh, spec, out);
  std::vector<Array> shards(s.shards.size());
  for (size_t dev = 0; dev < shards.size(); ++dev) {
    const Array& x = s.shards[dev];
    shards[dev] = detail::on_device(static_cast<int>(dev), [&] { return x.reshape(local); });
  }
  return detail::make_darray(s.mesh, spec, out, s.dtype, std::move(shards), s.history);
}

}  // namespace cufuse::dist
