// src/graph/indexing.cpp: gathers by index (take, take_along_axis) and advanced indexing
// (x[idx], x[{idx, _, 0}]) as gather views (graph/gather.hpp): lazy, fused index arithmetic.
// Masks go through library_build/compaction.cpp; writes through graph/scatter.cpp.
#include "graph/indexing.hpp"

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"
#include "graph/gather.hpp"

namespace cufuse {

using detail::NodePtr;

Index::Index(const Array& a) : v_(std::make_shared<const Array>(a)) {
  if (!a.defined()) throw ValueError("index: the index is an empty Array handle");
}

namespace detail {

int normalize_index_axis(int axis, int ndim, const char* what) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(fmt::format("{}: axis {} is out of bounds for array of dimension {}", what, axis, ndim));
  return axis < 0 ? axis + ndim : axis;
}

void require_index_dtype(const Array& idx, const char* what) {
  if (!is_integer(idx.dtype()) || idx.dtype() == DType::Bool)
    throw IndexError(fmt::format("{}: arrays used as indices must be of integer (or boolean) type (got {})", what,
                                 name(idx.dtype())));
}

void require_mask_shape(const Array& x, const Array& mask) {
  const int k = mask.ndim();
  if (k > x.ndim())
    throw IndexError(fmt::format("too many indices for array: array is {}-dimensional, but {} were indexed", x.ndim(), k));
  for (int d = 0; d < k; ++d)
    if (mask.shape(d) != x.shape(d))
      throw IndexError(fmt::format("boolean index did not match indexed array along axis {}; size of axis is {} but "
                                   "size of corresponding boolean axis is {}", d, x.shape(d), mask.shape(d)));
}

Array gather_dims(const Array& V, const std::vector<AdvIndex>& adv, bool origin) {
  const Shape& in = V.shape();
  const int nd = in.ndim();
  // The indices broadcast together (NumPy's message when they do not).
  Shape B;
  for (size_t k = 0; k < adv.size(); ++k) {
    try {
      B = k == 0 ? adv[k].index.shape() : broadcast_shapes(B, adv[k].index.shape());
    } catch (const ValueError&) {
      std::string shapes;
      for (const auto& a : adv) shapes += (shapes.empty() ? "" : " ") + to_string(a.index.shape());
      throw IndexError(fmt::format("shape mismatch: indexing arrays could not be broadcast together with shapes {}",
                                   shapes));
    }
  }
  std::vector<bool> is_adv(static_cast<size_t>(nd), false);
  bool adjacent = true;
  for (size_t k = 0; k < adv.size(); ++k) {
    is_adv[adv[k].dim] = true;
    if (k > 0 && adv[k].dim != adv[k - 1].dim + 1) adjacent = false;
  }
  // NumPy's placement: the broadcast dims where the (adjacent) indexed dims were, else first.
  const int bpos = adjacent ? adv.front().dim : 0;
  Shape out;
  std::vector<int> iota(static_cast<size_t>(nd), -1);
  for (int d = 0; d < nd; ++d) {
    if (static_cast<int>(out.size()) == bpos && (d == bpos || !adjacent))
      for (auto b : B) out.push_back(b);
    if (!is_adv[d]) {
      iota[d] = static_cast<int>(out.size());
      out.push_back(in[d]);
    }
  }
  if (static_cast<int>(out.size()) == bpos) for (auto b : B) out.push_back(b);  // the indexed dims were last
  detail::GatherMove m;
  m.in = in;
  m.out = out;
  m.iota_axis = iota;
  m.index.assign(static_cast<size_t>(nd), nullptr);
  m.size = SmallVec<int64_t, 8>(static_cast<size_t>(nd), -1);
  m.axis = SmallVec<int64_t, 8>(static_cast<size_t>(nd), 0);
  Shape placed(static_cast<size_t>(out.ndim()), 1);
  for (int i = 0; i < B.ndim(); ++i) placed[bpos + i] = B[i];
  for (const auto& a : adv) {
    Array e = a.index.broadcast_to(B).reshape(placed).broadcast_to(out);
    m.index[a.dim] = e.node();
    m.size[a.dim] = in[a.dim];
    m.axis[a.dim] = a.axis;
  }
  NodePtr r = apply_gather(V.node(), m);
  if (origin && is_gather(*r) && V.node()->is_materialized()) {
    auto o = std::make_shared<SubscriptOrigin>();
    o->node = V.node();
    o->base = V.lazy_base();
    for (int d = 0; d < nd; ++d) {
      o->index.push_back(m.index[d] ? m.index[d] : iota_node(out, iota[d]));
      o->checked.push_back(m.index[d] ? 1 : 0);
    }
    const auto& at = gather_attrs(*r);
    std::vector<NodePtr> E(r->inputs.begin() + 1, r->inputs.begin() + 1 + gather_rank(*r));
    r = make_gather(r->inputs[0], std::move(E), r->shape(), at.size, at.axis, std::move(o));
  }
  return Array(std::move(r));
}

Array advanced_index(const Array& x, const std::vector<Index>& idx, bool origin) {
  using IdxArray = std::shared_ptr<const Array>;
  // A single mask over x's leading dims (then only full slices or an ellipsis): a selection.
  int arrays = 0, masks = 0;
  for (const auto& i : idx)
    if (auto p = std::get_if<IdxArray>(&i.get())) {
      ++arrays;
      masks += (*p)->dtype() == DType::Bool;
    }
  // (Not for x[{mask}] through index(): its result is written through (`x.index({m}) = v`),
  // so it is a gather at the mask's nonzero() indices, which remembers where it came from.)
  if (!origin && masks == 1 && arrays == 1 && std::holds_alternative<IdxArray>(idx[0].get())) {
    bool rest_full = true;
    for (size_t k = 1; k < idx.size(); ++k) {
      const auto& v = idx[k].get();
      if (auto s = std::get_if<Slice>(&v)) rest_full &= !s->start && !s->stop && s->step == 1;
      else rest_full &= std::holds_alternative<EllipsisT>(v);
    }
    if (rest_full) return masked_select(x, *std::get<IdxArray>(idx[0].get()));
  }
  // Other masks become their nonzero() index arrays (a read-back each, as NumPy's).
  std::vector<Index> ex;
  for (const auto& i : idx) {
    auto p = std::get_if<IdxArray>(&i.get());
    if (p && (*p)->dtype() == DType::Bool) {
      if ((*p)->ndim() == 0) throw NotSupportedError("index: a 0-d boolean index is not supported");
      for (auto& a : nonzero(**p)) ex.emplace_back(a);
    } else {
      ex.push_back(i);
    }
  }
  // The basic part first (slices, new axes, an ellipsis), integers and arrays kept as full
  // dims; then one gather over the dims they index (integers as 0-d index arrays, as NumPy).
  const int nd = x.ndim();
  int consumed = 0;
  for (const auto& i : ex) {
    const auto& v = i.get();
    if (std::holds_alternative<int64_t>(v) || std::holds_alternative<Slice>(v) || std::holds_alternative<IdxArray>(v))
      ++consumed;
  }
  if (consumed > nd)
    throw IndexError(fmt::format("too many indices for array: array is {}-dimensional, but {} were indexed", nd,
                                 consumed));
  Array base = x;
  if (origin && !x.node()->is_materialized() && !x.node()->is_placeholder()) base.eval();  // writes need memory
  std::vector<Index> basic;
  std::vector<AdvIndex> adv;
  int vdim = 0, xdim = 0;
  for (const auto& i : ex) {
    const auto& v = i.get();
    if (auto p = std::get_if<int64_t>(&v)) {
      basic.emplace_back(_);
      adv.push_back(AdvIndex{vdim++, xdim++, full(Shape{}, Scalar(*p), DType::Int64)});
    } else if (auto a = std::get_if<IdxArray>(&v)) {
      require_index_dtype(**a, "index");
      basic.emplace_back(_);
      adv.push_back(AdvIndex{vdim++, xdim++, **a});
    } else if (std::holds_alternative<Slice>(v)) {
      basic.push_back(i);
      ++vdim, ++xdim;
    } else if (std::holds_alternative<NewAxis>(v)) {
      basic.push_back(i);
      ++vdim;
    } else {
      basic.push_back(i);
      vdim += nd - consumed;
      xdim += nd - consumed;
    }
  }
  Array V = base.index(basic);
  if (adv.empty()) return V;
  // Integer indices alone (no arrays): NumPy's basic indexing, a view.
  if (arrays == 0) throw InternalError("advanced_index without arrays");
  return gather_dims(V, adv, origin);
}

}  // namespace detail

namespace detail {

ClipMode clip_mode(std::string_view mode) {
  if (mode == "raise") return ClipMode::Raise;
  if (mode == "clip") return ClipMode::Clip;
  if (mode == "wrap") return ClipMode::Wrap;
  throw ValueError(fmt::format("clipmode must be one of 'clip', 'raise', or 'wrap' (got '{}')", mode));
}

Array clip_indices(const Array& indices, int64_t n, ClipMode mode) {
  if (mode == ClipMode::Raise || indices.size() == 0) return indices;
  const Array i = indices.dtype() == DType::Int64 ? indices : astype(indices, DType::Int64);  // NumPy's intp
  if (mode == ClipMode::Clip) return minimum(maximum(i, int64_t(0)), n - 1);
  return remainder(i, n);  // Python's modulo: in [0, n)
}

}  // namespace detail

Array take(const Array& a, const Array& indices, std::optional<int> axis, std::string_view mode) {
  if (!a.defined() || !indices.defined()) throw ValueError("take: an Array handle is empty");
  detail::require_index_dtype(indices, "take");
  const detail::ClipMode cm = detail::clip_mode(mode);
  Array src = a;
  int ax = 0;
  if (!axis) src = a.ravel();
  else ax = detail::normalize_index_axis(*axis, a.ndim(), "take");
  if (src.ndim() == 0) throw IndexError("take: axis 0 is out of bounds for array of dimension 0");
  if (cm != detail::ClipMode::Raise && src.shape(ax) == 0 && indices.size() > 0)
    throw IndexError("cannot do a non-empty take from an empty axes.");
  return detail::gather_dims(src, {detail::AdvIndex{ax, ax, detail::clip_indices(indices, src.shape(ax), cm)}}, false);
}

Array take_along_axis(const Array& a, const Array& indices, int axis) {
  if (!a.defined() || !indices.defined()) throw ValueError("take_along_axis: an Array handle is empty");
  detail::require_index_dtype(indices, "take_along_axis");
  const int nd = a.ndim();
  if (indices.ndim() != nd)
    throw ValueError(fmt::format("take_along_axis: `indices` and `arr` must have the same number of dimensions "
                                 "(got {} and {})", indices.ndim(), nd));
  const int ax = detail::normalize_index_axis(axis, nd, "take_along_axis");
  // The other axes broadcast between a and indices (NumPy's fancy index with aranges).
  Shape out(static_cast<size_t>(nd));
  for (int d = 0; d < nd; ++d) {
    if (d == ax) {
      out[d] = indices.shape(d);
      continue;
    }
    const int64_t p = a.shape(d), q = indices.shape(d);
    if (p != q && p != 1 && q != 1)
      throw ValueError(fmt::format("shape mismatch: value array of shape {} could not be broadcast to indexing "
                                   "result of shape {}", to_string(indices.shape()), to_string(a.shape())));
    out[d] = p == 1 ? q : p;
  }
  Shape ab = a.shape();
  ab[ax] = a.shape(ax);
  for (int d = 0; d < nd; ++d)
    if (d != ax) ab[d] = out[d];
  Array src = a.broadcast_to(ab);
  detail::GatherMove m;
  m.in = ab;
  m.out = out;
  m.iota_axis.resize(static_cast<size_t>(nd));
  m.index.assign(static_cast<size_t>(nd), nullptr);
  m.size = SmallVec<int64_t, 8>(static_cast<size_t>(nd), -1);
  m.axis = SmallVec<int64_t, 8>(static_cast<size_t>(nd), 0);
  for (int d = 0; d < nd; ++d) m.iota_axis[d] = d == ax ? -1 : d;
  m.index[ax] = indices.broadcast_to(out).node();
  m.size[ax] = a.shape(ax);
  m.axis[ax] = ax;
  return Array(detail::apply_gather(src.node(), m));
}

Subscript Array::operator[](const Array& idx) const { return Subscript(*this, idx); }

Array Subscript::value() const { return detail::advanced_index(x_, {Index(index_)}, false); }
DType Subscript::dtype() const { return x_.dtype(); }

}  // namespace cufuse
