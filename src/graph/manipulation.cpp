// src/graph/manipulation.cpp: joining (concatenate, stack, vstack, hstack, dstack,
// column_stack) and splitting (split, array_split, hsplit, vsplit, dsplit).
//
// A concatenation of up to kMaxFusedParts parts is one lazy expression: each part is seen
// through a Clamp map along the axis (its coordinates shifted by its offset, clamped into it,
// so every read is in bounds) and `where(coordinate < end of part i, part i, ...)` picks the
// part an element belongs to; the parts' expressions stay inline, so concatenate({a * 2,
// exp(b)}) * 3 is one kernel. (Every element evaluates every part: the reads of the parts it
// does not belong to fall on their clamped edge, which the caches hold.) More parts are
// written each into its place in new memory, a kernel a part. Splits are slices (views).
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"
#include "graph/manip_support.hpp"

namespace cufuse {

namespace detail {

int manip_axis(int axis, int ndim, const char* what) {
  if (axis < -ndim || axis >= ndim)
    throw IndexError(fmt::format("{}: axis {} is out of bounds for array of dimension {}", what, axis, ndim));
  return axis < 0 ? axis + ndim : axis;
}

Array coordinate(const Shape& shape, int axis) {
  GenParams p;
  p.istart = 0;
  p.istep_second = 1;
  p.num = shape[axis];
  p.seed = kJoinCoordinateSeed;
  Layout l;
  l.shape = shape;
  l.strides = Strides(static_cast<size_t>(shape.ndim()), 0);
  l.strides[axis] = 1;
  return Array(make_generator(GenKind::Arange, DType::Int64, std::move(l), p));
}

bool is_join_coordinate(const Node& n) {
  return n.k() == NodeKind::Generator && static_cast<GenKind>(n.op) == GenKind::Arange &&
         n.dtype == DType::Int64 && n.gen.seed == kJoinCoordinateSeed;
}

NodePtr node_for_view(const Array& a) { return a.reshape(a.shape()).node(); }

Array mapped(const Array& a, const Shape& out, const IndexMap& map) {
  return Array(apply_index_map(node_for_view(a), out, std::make_shared<const IndexMap>(map)));
}

IndexMap identity_map(const Shape& in) {
  IndexMap m;
  for (auto d : in) {
    AxisMap a;
    a.n = d;
    m.axes.push_back(a);
  }
  return m;
}

Array empty_result(const Shape& shape, DType t) { return zeros(shape, t); }

}  // namespace detail

namespace {

using detail::AxisMap;
using detail::AxisMapKind;
using detail::IndexMap;
using detail::manip_axis;

// Parts past this many are written each by a kernel of its own (see the file comment).
constexpr size_t kMaxFusedParts = 16;

void concat_require(const Array& a, const char* what, size_t i) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the array at index {} is an empty Array handle", what, i));
}

DType promoted(const std::vector<Array>& arrays) {
  DType t = arrays[0].dtype();
  for (size_t i = 1; i < arrays.size(); ++i) t = promote_types(t, arrays[i].dtype());
  return t;
}

// The concatenation proper: arrays checked (same rank >= 1, equal off the axis), ax >= 0.
Array join(const std::vector<Array>& arrays, int ax, DType t) {
  Shape out = arrays[0].shape();
  int64_t total = 0;
  for (const auto& a : arrays) total += a.shape()[ax];
  out[ax] = total;
  std::vector<const Array*> parts;
  std::vector<int64_t> offsets;
  int64_t off = 0;
  for (const auto& a : arrays) {
    if (a.shape()[ax] > 0) {
      parts.push_back(&a);
      offsets.push_back(off);
    }
    off += a.shape()[ax];
  }
  auto as_t = [&](const Array& a) { return a.dtype() == t ? a : astype(a, t); };
  if (numel(out) == 0) return detail::empty_result(out, t);
  if (parts.size() == 1) return as_t(*parts[0]).copy();
  if (parts.size() > kMaxFusedParts) {  // each part written into its place
    Array r = empty(out, t);
    std::vector<Index> idx(static_cast<size_t>(ax), Index(_));
    idx.push_back(Index(slice(0, 0)));
    for (size_t i = 0; i < parts.size(); ++i) {
      idx[static_cast<size_t>(ax)] = Index(slice(offsets[i], offsets[i] + parts[i]->shape()[ax]));
      r.index(idx) = as_t(*parts[i]);
    }
    return r;
  }
  const Array coord = detail::coordinate(out, ax);
  auto part = [&](size_t i) {
    IndexMap m = detail::identity_map(parts[i]->shape());
    m.axes[ax].kind = AxisMapKind::Clamp;
    m.axes[ax].shift = offsets[i];
    return detail::mapped(as_t(*parts[i]), out, m);
  };
  Array r = part(parts.size() - 1);
  for (size_t i = parts.size() - 1; i-- > 0;) r = where(less(coord, offsets[i + 1]), part(i), r);
  return r;
}

}  // namespace

// ------------------------------------------------------------------ joining
Array concatenate(const std::vector<Array>& arrays_in, std::optional<int> axis, std::optional<DType> dtype) {
  if (arrays_in.empty()) throw ValueError("need at least one array to concatenate");
  for (size_t i = 0; i < arrays_in.size(); ++i) concat_require(arrays_in[i], "concatenate", i);
  std::vector<Array> arrays;
  if (!axis) {
    for (const auto& a : arrays_in) arrays.push_back(a.reshape({-1}));
  } else {
    arrays = arrays_in;
  }
  const int nd = arrays[0].ndim();
  if (nd == 0) throw ValueError("zero-dimensional arrays cannot be concatenated");
  for (size_t i = 1; i < arrays.size(); ++i)
    if (arrays[i].ndim() != nd)
      throw ValueError(fmt::format(
          "all the input arrays must have same number of dimensions, but the array at index 0 has {} dimension(s) "
          "and the array at index {} has {} dimension(s)", nd, i, arrays[i].ndim()));
  const int ax = axis ? manip_axis(*axis, nd, "concatenate") : 0;
  for (size_t i = 1; i < arrays.size(); ++i)
    for (int d = 0; d < nd; ++d)
      if (d != ax && arrays[i].shape()[d] != arrays[0].shape()[d])
        throw ValueError(fmt::format(
            "all the input array dimensions except for the concatenation axis must match exactly, but along "
            "dimension {}, the array at index 0 has size {} and the array at index {} has size {}",
            d, arrays[0].shape()[d], i, arrays[i].shape()[d]));
  if (dtype)  // NumPy's casting="same_kind", concatenate's default
    for (const auto& a : arrays)
      if (!detail::can_cast_same_kind(a.dtype(), *dtype))
        throw TypeError(fmt::format("Cannot cast array data from dtype('{}') to dtype('{}') according to the rule "
                                    "'same_kind'", name(a.dtype()), name(*dtype)));
  return join(arrays, ax, dtype ? *dtype : promoted(arrays));
}

Array stack(const std::vector<Array>& arrays, int axis, std::optional<DType> dtype) {
  if (arrays.empty()) throw ValueError("need at least one array to stack");
  for (size_t i = 0; i < arrays.size(); ++i) concat_require(arrays[i], "stack", i);
  for (size_t i = 1; i < arrays.size(); ++i)
    if (arrays[i].shape() != arrays[0].shape())
      throw ValueError(fmt::format("all input arrays must have the same shape (the array at index 0 has shape {} "
                                   "and the array at index {} has shape {})",
                                   to_string(arrays[0].shape()), i, to_string(arrays[i].shape())));
  const int ax = manip_axis(axis, arrays[0].ndim() + 1, "stack");
  std::vector<Array> ex;
  for (const auto& a : arrays) ex.push_back(a.expand_dims(ax));
  return concatenate(ex, ax, dtype);
}

Array vstack(const std::vector<Array>& arrays) {
  if (arrays.empty()) throw ValueError("need at least one array to concatenate");
  return concatenate(atleast_2d(arrays), 0);
}

Array hstack(const std::vector<Array>& arrays) {
  if (arrays.empty()) throw ValueError("need at least one array to concatenate");
  auto as = atleast_1d(arrays);
  return concatenate(as, as[0].ndim() == 1 ? 0 : 1);
}

Array dstack(const std::vector<Array>& arrays) {
  if (arrays.empty()) throw ValueError("need at least one array to concatenate");
  return concatenate(atleast_3d(arrays), 2);
}

Array column_stack(const std::vector<Array>& arrays) {
  if (arrays.empty()) throw ValueError("need at least one array to concatenate");
  std::vector<Array> cols;
  for (size_t i = 0; i < arrays.size(); ++i) {
    concat_require(arrays[i], "column_stack", i);
    const Array& a = arrays[i];
    cols.push_back(a.ndim() < 2 ? a.reshape({a.size(), 1}) : a);
  }
  return concatenate(cols, 1);
}

// ------------------------------------------------------------------ splitting
namespace {

std::vector<Array> split_at(const Array& a, const std::vector<int64_t>& bounds, int ax) {
  // bounds: 0, the division points, n (as NumPy's div_points); slices with Python's clamping.
  std::vector<Array> out;
  std::vector<Index> idx(static_cast<size_t>(ax), Index(_));
  idx.push_back(Index(_));
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    idx[static_cast<size_t>(ax)] = Index(slice(bounds[i], bounds[i + 1]));
    out.push_back(a.index(idx));
  }
  return out;
}

const Array& split_checked(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
  return a;
}

}  // namespace

std::vector<Array> array_split(const Array& a, int64_t sections, int axis) {
  split_checked(a, "array_split");
  const int ax = manip_axis(axis, a.ndim(), "array_split");
  if (sections <= 0) throw ValueError("number sections must be larger than 0.");
  const int64_t n = a.shape()[ax], each = n / sections, extras = n % sections;
  std::vector<int64_t> bounds{0};
  for (int64_t i = 0; i < sections; ++i) bounds.push_back(bounds.back() + each + (i < extras ? 1 : 0));
  return split_at(a, bounds, ax);
}

std::vector<Array> array_split(const Array& a, const std::vector<int64_t>& indices, int axis) {
  split_checked(a, "array_split");
  const int ax = manip_axis(axis, a.ndim(), "array_split");
  std::vector<int64_t> bounds{0};
  bounds.insert(bounds.end(), indices.begin(), indices.end());
  bounds.push_back(a.shape()[ax]);
  return split_at(a, bounds, ax);
}

std::vector<Array> split(const Array& a, int64_t sections, int axis) {
  split_checked(a, "split");
  const int ax = manip_axis(axis, a.ndim(), "split");
  if (sections <= 0) throw ValueError("number sections must be larger than 0.");
  if (a.shape()[ax] % sections != 0)
    throw ValueError(fmt::format("array split does not result in an equal division (an axis of {} into {} sections)",
                                 a.shape()[ax], sections));
  return array_split(a, sections, ax);
}

std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int axis) {
  return array_split(a, indices, axis);
}

namespace {
int hsplit_axis(const Array& a) {
  split_checked(a, "hsplit");
  if (a.ndim() == 0) throw ValueError("hsplit only works on arrays of 1 or more dimensions");
  return a.ndim() > 1 ? 1 : 0;
}
void need_dims(const Array& a, int nd, const char* what) {
  split_checked(a, what);
  if (a.ndim() < nd) throw ValueError(fmt::format("{} only works on arrays of {} or more dimensions", what, nd));
}
}  // namespace

std::vector<Array> hsplit(const Array& a, int64_t sections) { return split(a, sections, hsplit_axis(a)); }
std::vector<Array> hsplit(const Array& a, const std::vector<int64_t>& indices) {
  return split(a, indices, hsplit_axis(a));
}
std::vector<Array> vsplit(const Array& a, int64_t sections) {
  need_dims(a, 2, "vsplit");
  return split(a, sections, 0);
}
std::vector<Array> vsplit(const Array& a, const std::vector<int64_t>& indices) {
  need_dims(a, 2, "vsplit");
  return split(a, indices, 0);
}
std::vector<Array> dsplit(const Array& a, int64_t sections) {
  need_dims(a, 3, "dsplit");
  return split(a, sections, 2);
}
std::vector<Array> dsplit(const Array& a, const std::vector<int64_t>& indices) {
  need_dims(a, 3, "dsplit");
  return split(a, indices, 2);
}

}  // namespace cufuse
