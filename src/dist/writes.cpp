// src/dist/writes.cpp: in-place writes into DArrays, NumPy's semantics: `d op= v` (casting
// 'same_kind', as NumPy's in-place ufuncs) and `d[idx] = v` (basic indexing; unsafe casting,
// as NumPy's setitem) cast to d's dtype, broadcast the value, keep d's sharding,
// and write each shard's part into that shard's memory (cufuse's lazy writes, so local views
// of the shard see them). A value whose sharding does not line up with the part each device
// writes is resharded (or gathered) first, named in the plan.
#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "cufuse/ops.hpp"
#include "dist/darray_ops.hpp"
#include "graph/elementwise.hpp"
#include "dist/layout.hpp"
#include "dist/select.hpp"
#include "dist/world.hpp"

namespace cufuse::dist {

namespace {

void need_memory(const char* what) {
  if (detail::world_is(World::Plan))
    throw NotSupportedError(fmt::format("{}: the plan world has no memory to write into", what));
}

// Writes r (d's shape) into d shard by shard: r is resharded to d's sharding first.
DArray& store(DArray& d, const DArray& r0, const char* what) {
  need_memory(what);
  if (r0.shape() != d.shape())
    throw ValueError(fmt::format("{}: non-broadcastable output operand with shape {} doesn't match the broadcast "
                                 "shape {}",
                                 what, to_string(d.shape()), to_string(r0.shape())));
  const DArray r = reshard(r0, d.sharding());
  const auto& s = *d.state();
  std::vector<Array> shards = s.shards;
  for (int dev = 0; dev < s.mesh.size(); ++dev) {
    if (!detail::is_local(dev)) continue;
    Array& x = shards[static_cast<size_t>(dev)];
    const Array& v = r.shard(dev);
    detail::on_device(dev, [&] { x.assign(v); });  // NumPy's unsafe casting into d's dtype
  }
  d = detail::make_darray(s.mesh, s.spec, s.shape, s.dtype, std::move(shards), detail::join_histories({d, r}));
  return d;
}

// NumPy's in-place ufuncs cast their result to the target with casting='same_kind'.
void check_same_kind(const DArray& r, const DArray& d, const char* ufunc) {
  if (!cufuse::detail::can_cast_same_kind(r.dtype(), d.dtype()))
    throw TypeError(fmt::format("Cannot cast ufunc '{}' output from {} to {} with casting rule 'same_kind'", ufunc,
                                cufuse::name(r.dtype()), cufuse::name(d.dtype())));
}

template <class F>
DArray& compound(DArray& d, const DArray& v, F f, const char* what, const char* ufunc) {
  if (!d.defined() || !v.defined()) throw ValueError(fmt::format("{}: an operand is empty", what));
  d = detail::finish_partial(d, nullptr, fmt::format("{} writes into it", what));
  const DArray r = map([f](const std::vector<Array>& x) { return f(x[0], x[1]); }, {d, v}, ufunc);
  check_same_kind(r, d, ufunc);
  return store(d, r, what);
}

template <class F>
DArray& compound(DArray& d, const Scalar& v, F f, const char* what, const char* ufunc) {
  if (!d.defined()) throw ValueError(fmt::format("{}: the DArray is empty", what));
  d = detail::finish_partial(d, nullptr, fmt::format("{} writes into it", what));
  const DArray r = map([f, v](const std::vector<Array>& x) { return f(x[0], v); }, {d}, ufunc);
  check_same_kind(r, d, ufunc);
  return store(d, r, what);
}

// d[idx] op= v: NumPy's view in place (same_kind), written back through set().
DArray& subscript_compound(DArray& d, const std::vector<Index>& idx, const DArray& r, const char* ufunc) {
  check_same_kind(r, d, ufunc);
  return d.set(idx, r);
}

// The value of d[idx] = v as each device needs it.
struct Value {
  const Array* array = nullptr;   // a replicated Array (any device, or the host)
  const DArray* darray = nullptr;
  const Scalar* scalar = nullptr;
};

DArray& set_item(DArray& d, const std::vector<Index>& idx, const Value& v, const char* what) {
  need_memory(what);
  if (!d.defined()) throw ValueError(fmt::format("{}: the DArray is empty", what));
  d = detail::finish_partial(d, nullptr, fmt::format("{} writes into it", what));
  const auto& s = *d.state();
  const Mesh& mesh = s.mesh;
  const detail::Selection sel = detail::resolve(s.shape, idx, what);
  const int nd = static_cast<int>(s.shape.size());
  const Shape& out = sel.out_shape;
  auto check_value_shape = [&](const Shape& vs) {
    Shape b;
    try {
      b = broadcast_shapes(vs, out);
    } catch (const Error&) {
      b = {};
    }
    if (b != out)
      throw ValueError(fmt::format("could not broadcast input array from shape {} into shape {}", to_string(vs),
                                   to_string(out)));
  };
  // A DArray value: its own shards where they line up with the parts written (same shape,
  // every cut sharded dimension aligned), else gathered whole to every device.
  DArray vd;
  bool vd_local = false;
  if (v.darray) {
    if (!v.darray->defined()) throw ValueError(fmt::format("{}: the value is empty", what));
    detail::check_same_mesh(mesh, v.darray->mesh(), what);
    check_value_shape(v.darray->shape());
    vd_local = v.darray->shape() == out;
    std::vector<std::string> natural;
    for (int o : sel.out_of) {
      std::string ax = o < 0 ? std::string() : s.spec[o];
      if (!ax.empty() && !sel.dims[static_cast<size_t>(o)].whole(s.shape[o]) &&
          !detail::aligned(sel.dims[static_cast<size_t>(o)], s.shape[o], mesh.axis_size(ax)))
        vd_local = false;
      natural.push_back(ax);
    }
    for (int i = 0; i < nd; ++i)  // an integer on a sharded dimension: one device writes
      if (sel.dims[static_cast<size_t>(i)].dropped && s.spec.sharded(i)) vd_local = false;
    vd = reshard(*v.darray, vd_local ? Sharding(natural) : Sharding::replicated(v.darray->ndim()));
  }
  if (v.array) {
    if (!v.array->defined()) throw ValueError(fmt::format("{}: the value is empty", what));
    check_value_shape(v.array->shape());
  }
  std::vector<Array> shards = s.shards;
  for (int dev = 0; dev < mesh.size(); ++dev) {
    if (!detail::is_local(dev)) continue;
    const auto c = mesh.coords(dev);
    std::vector<Index> li;
    std::vector<std::pair<int64_t, int64_t>> jr(static_cast<size_t>(nd));  // per input dim: positions written
    bool empty = false;
    for (int i = 0; i < nd; ++i) {
      const auto& ds = sel.dims[static_cast<size_t>(i)];
      int64_t lo = 0, n = s.shape[i];
      if (s.spec.sharded(i)) {
        n = s.shape[i] / mesh.axis_size(s.spec[i]);
        lo = c[mesh.axis(s.spec[i])] * n;
      }
      const detail::LocalPart p = detail::local_part(ds, lo, n);
      jr[static_cast<size_t>(i)] = {p.j0, p.j1};
      if (p.count() == 0) empty = true;
      if (ds.dropped) li.emplace_back(p.count() ? p.first : int64_t(0));
      else li.emplace_back(detail::local_slice(ds, p));
    }
    if (empty) continue;  // nothing of the selection on this device
    Array& x = shards[static_cast<size_t>(dev)];
    detail::on_device(dev, [&] {
      Array view = x.index(li);
      if (v.scalar) {
        std::move(view) = *v.scalar;
        return;
      }
      Array val;
      if (vd_local) {
        val = vd.shard(dev);
      } else {
        // The whole value (broadcast to the selection), cut to this device's positions.
        Array whole = v.array ? *v.array : vd.shard(dev);
        whole = whole.broadcast_to(out);
        std::vector<Index> vi;
        for (int o : sel.out_of) {
          if (o < 0) vi.emplace_back(_);
          else vi.emplace_back(Slice{jr[static_cast<size_t>(o)].first, jr[static_cast<size_t>(o)].second, 1});
        }
        val = whole.index(vi);
        if (v.array && detail::cuda_device(dev) >= 0) val = val.to_device(detail::cuda_device(dev));
      }
      std::move(view) = val.reshape(view.shape());  // newaxis dims (size 1) dropped
    });
  }
  d = detail::make_darray(mesh, s.spec, s.shape, s.dtype, std::move(shards),
                          vd.defined() ? detail::join_histories({d, vd}) : s.history);
  return d;
}

}  // namespace

#define CUFUSE_DIST_INPLACE(sym, fn)                                                                     \
  DArray& DArray::operator sym##=(const DArray& v) {                                                    \
    return compound(*this, v, [](const Array& a, const Array& b) { return cufuse::fn(a, b); }, #sym "=", #fn); \
  }                                                                                                      \
  DArray& DArray::operator sym##=(const Scalar& v) {                                                    \
    return compound(*this, v, [](const Array& a, const Scalar& b) { return cufuse::fn(a, b); }, #sym "=", #fn); \
  }                                                                                                      \
  DArray& DSubscript::operator sym##=(const DArray& v) {                                                \
    return subscript_compound(d_, idx_, d_.index(idx_) sym v, #fn);                                      \
  }                                                                                                      \
  DArray& DSubscript::operator sym##=(const Scalar& v) {                                                \
    return subscript_compound(d_, idx_, d_.index(idx_) sym v, #fn);                                      \
  }
CUFUSE_DIST_INPLACE(+, add)
CUFUSE_DIST_INPLACE(-, subtract)
CUFUSE_DIST_INPLACE(*, multiply)
CUFUSE_DIST_INPLACE(/, true_divide)
#undef CUFUSE_DIST_INPLACE

DArray& DArray::set(const std::vector<Index>& idx, const DArray& v) {
  Value val;
  val.darray = &v;
  return set_item(*this, idx, val, "DArray::set");
}
DArray& DArray::set(const std::vector<Index>& idx, const Array& v) {
  Value val;
  val.array = &v;
  return set_item(*this, idx, val, "DArray::set");
}
DArray& DArray::set(const std::vector<Index>& idx, const Scalar& v) {
  Value val;
  val.scalar = &v;
  return set_item(*this, idx, val, "DArray::set");
}

}  // namespace cufuse::dist
