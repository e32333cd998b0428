// src/graph/manipulation_maps.cpp: rearranging by index maps and views: tile, repeat, roll,
// pad (index maps, src/graph/index_map.hpp: they fuse with what feeds and reads them), flip,
// fliplr, flipud, rot90 (negative-stride views), broadcast_arrays and atleast_nd (views).
//
// pad's modes: edge = Clamp, reflect = Reflect, symmetric = Symmetric, wrap = Wrap, each
// with shift = the padding before; they are separable, as NumPy's axis-by-axis padding is.
// constant = where(inside, a seen through Clamp, constant), `inside` from coordinate iotas.
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "graph/manip_support.hpp"

namespace cufuse {

namespace {

using detail::AxisMap;
using detail::AxisMapKind;
using detail::IndexMap;
using detail::manip_axis;

const Array& maps_checked(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
  return a;
}

std::string join_ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(v[i]);
  }
  return s;
}

}  // namespace

// ------------------------------------------------------------------ tile, repeat
Array tile(const Array& a_in, const std::vector<int64_t>& reps_in) {
  maps_checked(a_in, "tile");
  for (auto r : reps_in)
    if (r < 0) throw ValueError(fmt::format("tile: negative dimensions are not allowed (reps ({}))", join_ints(reps_in)));
  const int d = static_cast<int>(reps_in.size());
  Array a = a_in;
  if (d > a.ndim()) {  // NumPy's array(A, ndmin=d): ones in front
    Shape s(static_cast<size_t>(d - a.ndim()), 1);
    for (auto x : a.shape()) s.push_back(x);
    a = a.reshape(s);
  }
  std::vector<int64_t> reps(static_cast<size_t>(a.ndim() - d), 1);
  reps.insert(reps.end(), reps_in.begin(), reps_in.end());
  Shape out = a.shape();
  IndexMap m = detail::identity_map(a.shape());
  bool any = false;
  for (int k = 0; k < a.ndim(); ++k) {
    out[k] = a.shape()[k] * reps[k];
    if (reps[k] != 1 && a.shape()[k] > 1) {
      m.axes[k].kind = AxisMapKind::Wrap;
      any = true;
    } else if (reps[k] != 1) {  // an axis of one element: every copy reads element 0
      m.axes[k].kind = AxisMapKind::Div;
      m.axes[k].r = std::max<int64_t>(reps[k], 1);
      any = true;
    }
  }
  if (numel(out) == 0) return detail::empty_result(out, a.dtype());
  if (!any) return a.copy();
  return detail::mapped(a, out, m);
}

Array repeat(const Array& a_in, int64_t repeats, std::optional<int> axis) {
  maps_checked(a_in, "repeat");
  if (repeats < 0) throw ValueError(fmt::format("repeat: repeats may not contain negative values (got {})", repeats));
  const Array a = axis ? a_in : a_in.reshape({-1});
  const int ax = axis ? manip_axis(*axis, a.ndim(), "repeat") : 0;
  Shape out = a.shape();
  out[ax] *= repeats;
  if (numel(out) == 0) return detail::empty_result(out, a.dtype());
  if (repeats == 1) return a.copy();
  IndexMap m = detail::identity_map(a.shape());
  m.axes[ax].kind = AxisMapKind::Div;
  m.axes[ax].r = repeats;
  return detail::mapped(a, out, m);
}

// Runs of equal counts: repeat(a[s:e], r) each, joined (one kernel up to 16 runs).
Array repeat(const Array& a_in, const std::vector<int64_t>& repeats, std::optional<int> axis) {
  maps_checked(a_in, "repeat");
  const Array a = axis ? a_in : a_in.reshape({-1});
  const int ax = axis ? manip_axis(*axis, a.ndim(), "repeat") : 0;
  const int64_t n = a.shape()[ax];
  for (auto r : repeats)
    if (r < 0) throw ValueError("repeat: repeats may not contain negative values");
  if (repeats.size() == 1) return repeat(a, repeats[0], ax);
  if (static_cast<int64_t>(repeats.size()) != n)
    throw ValueError(fmt::format("operands could not be broadcast together with shape ({},) ({},)", n, repeats.size()));
  std::vector<Array> parts;
  std::vector<Index> idx(static_cast<size_t>(ax), Index(_));
  idx.push_back(Index(_));
  for (int64_t s = 0; s < n;) {
    int64_t e = s + 1;
    while (e < n && repeats[e] == repeats[s]) ++e;
    if (repeats[s] > 0) {
      idx[static_cast<size_t>(ax)] = Index(slice(s, e));
      parts.push_back(repeat(a.index(idx), repeats[s], ax));
    }
    s = e;
  }
  if (parts.empty()) {
    Shape out = a.shape();
    out[ax] = 0;
    return detail::empty_result(out, a.dtype());
  }
  return concatenate(parts, ax);
}

// ------------------------------------------------------------------ flips and rotations
Array flip(const Array& a, AxisArg axis) {
  maps_checked(a, "flip");
  const int nd = a.ndim();
  std::vector<bool> rev(static_cast<size_t>(nd), axis.all());
  if (!axis.all())
    for (int x : axis.axes()) {
      const int k = manip_axis(x, nd, "flip");
      if (rev[k]) throw ValueError("flip: repeated axis");
      rev[k] = true;
    }
  std::vector<Index> idx;
  for (int k = 0; k < nd; ++k) idx.push_back(rev[k] ? Index(slice(none, none, -1)) : Index(_));
  return a.index(idx);
}

Array fliplr(const Array& a) {
  maps_checked(a, "fliplr");
  if (a.ndim() < 2) throw ValueError("Input must be >= 2-d.");
  return flip(a, 1);
}

Array flipud(const Array& a) {
  maps_checked(a, "flipud");
  if (a.ndim() < 1) throw ValueError("Input must be >= 1-d.");
  return flip(a, 0);
}

Array rot90(const Array& m, int k, std::pair<int, int> axes) {
  maps_checked(m, "rot90");
  const int nd = m.ndim();
  if (axes.first == axes.second || std::abs(axes.first - axes.second) == nd)
    throw ValueError("Axes must be different.");
  if (axes.first >= nd || axes.first < -nd || axes.second >= nd || axes.second < -nd)
    throw ValueError(fmt::format("Axes=({}, {}) out of range for array of ndim={}.", axes.first, axes.second, nd));
  const int a0 = axes.first < 0 ? axes.first + nd : axes.first, a1 = axes.second < 0 ? axes.second + nd : axes.second;
  k = ((k % 4) + 4) % 4;
  if (k == 0) return m.index({ellipsis});
  if (k == 2) return flip(flip(m, a0), a1);
  Axes perm(static_cast<size_t>(nd));
  for (int i = 0; i < nd; ++i) perm[i] = i;
  std::swap(perm[a0], perm[a1]);
  if (k == 1) return flip(m, a1).transpose(perm);
  return flip(m.transpose(perm), a1);
}

// ------------------------------------------------------------------ roll
Array roll(const Array& a, const std::vector<int64_t>& shift, const std::vector<int>& axis) {
  maps_checked(a, "roll");
  if (shift.empty() || axis.empty() || (shift.size() != axis.size() && shift.size() != 1 && axis.size() != 1))
    throw ValueError(fmt::format("roll: 'shift' and 'axis' should be scalars or 1D sequences of one length (got {} "
                                 "shifts and {} axes)", shift.size(), axis.size()));
  const int nd = a.ndim();
  std::vector<int64_t> total(static_cast<size_t>(nd), 0);
  const size_t count = std::max(shift.size(), axis.size());
  for (size_t i = 0; i < count; ++i) {
    const int ax = manip_axis(axis[axis.size() == 1 ? 0 : i], nd, "roll");
    total[ax] += shift[shift.size() == 1 ? 0 : i];
  }
  IndexMap m = detail::identity_map(a.shape());
  bool any = false;
  for (int k = 0; k < nd; ++k) {
    const int64_t n = a.shape()[k];
    if (n == 0) continue;
    const int64_t s = ((total[k] % n) + n) % n;
    if (s == 0) continue;
    m.axes[k].kind = AxisMapKind::Wrap;
    m.axes[k].shift = s;
    any = true;
  }
  if (a.size() == 0 || !any) return a.copy();
  return detail::mapped(a, a.shape(), m);
}

Array roll(const Array& a, int64_t shift, std::optional<int> axis) {
  maps_checked(a, "roll");
  if (!axis) return roll(a.reshape({-1}), std::vector<int64_t>{shift}, std::vector<int>{0}).reshape(a.shape());
  return roll(a, std::vector<int64_t>{shift}, std::vector<int>{*axis});
}

// ------------------------------------------------------------------ pad
Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& pad_width, std::string_view mode,
          const Scalar& constant_value) {
  maps_checked(a, "pad");
  const int nd = a.ndim();
  AxisMapKind kind;
  if (mode == "constant") kind = AxisMapKind::Clamp;
  else if (mode == "edge") kind = AxisMapKind::Clamp;
  else if (mode == "reflect") kind = AxisMapKind::Reflect;
  else if (mode == "symmetric") kind = AxisMapKind::Symmetric;
  else if (mode == "wrap") kind = AxisMapKind::Wrap;
  else
    throw ValueError(fmt::format("mode '{}' is not supported (cufuse's pad takes 'constant', 'edge', 'reflect', "
                                 "'symmetric' and 'wrap')", mode));
  if (pad_width.size() != 1 && static_cast<int>(pad_width.size()) != nd)
    throw ValueError(fmt::format("operands could not be broadcast together with remapped shapes "
                                 "[original->remapped]: ({},2) and requested shape ({},2)", pad_width.size(), nd));
  std::vector<std::pair<int64_t, int64_t>> pw;
  for (int k = 0; k < nd; ++k) {
    const auto p = pad_width[pad_width.size() == 1 ? 0 : k];
    if (p.first < 0 || p.second < 0) throw ValueError("index can't contain negative values");
    pw.push_back(p);
  }
  Shape out = a.shape();
  for (int k = 0; k < nd; ++k) out[k] = a.shape()[k] + pw[k].first + pw[k].second;
  const bool constant = mode == "constant";
  if (!constant)
    for (int k = 0; k < nd; ++k)
      if (a.shape()[k] == 0 && (pw[k].first > 0 || pw[k].second > 0))
        throw ValueError(fmt::format("can't extend empty axis {} using modes other than 'constant' or 'empty'", k));
  const DType t = a.dtype();
  // The fill value as the array's dtype (NumPy assigns it into the padded array: floats into
  // integers are cast, integers out of range are an OverflowError).
  auto fill_value = [&]() {
    if (constant_value.kind() == Scalar::Kind::Float && !is_float(t))
      return astype(full(Shape{}, constant_value, DType::Float64), t);
    return full(Shape{}, constant_value, t);
  };
  if (numel(out) == 0) return detail::empty_result(out, t);
  if (constant && a.size() == 0) return fill_value().broadcast_to(out).copy();
  IndexMap m = detail::identity_map(a.shape());
  bool any = false;
  for (int k = 0; k < nd; ++k) {
    if (pw[k].first == 0 && pw[k].second == 0) continue;
    m.axes[k].kind = kind;
    m.axes[k].shift = pw[k].first;
    any = true;
  }
  if (!any) return a.copy();
  Array body = detail::mapped(a, out, m);
  if (!constant) return body;
  Array inside;
  for (int k = 0; k < nd; ++k) {
    if (pw[k].first == 0 && pw[k].second == 0) continue;
    const Array c = detail::coordinate(out, k);
    Array in_k = logical_and(greater_equal(c, pw[k].first), less(c, pw[k].first + a.shape()[k]));
    inside = inside.defined() ? logical_and(inside, in_k) : in_k;
  }
  return where(inside, body, fill_value());
}

Array pad(const Array& a, std::pair<int64_t, int64_t> pad_width, std::string_view mode, const Scalar& constant_value) {
  return pad(a, std::vector<std::pair<int64_t, int64_t>>{pad_width}, mode, constant_value);
}

Array pad(const Array& a, int64_t pad_width, std::string_view mode, const Scalar& constant_value) {
  return pad(a, std::vector<std::pair<int64_t, int64_t>>{{pad_width, pad_width}}, mode, constant_value);
}

// ------------------------------------------------------------------ shapes
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays) {
  Shape s;
  for (size_t i = 0; i < arrays.size(); ++i) {
    maps_checked(arrays[i], "broadcast_arrays");
    s = i == 0 ? arrays[i].shape() : broadcast_shapes(s, arrays[i].shape());
  }
  std::vector<Array> out;
  for (const auto& a : arrays) out.push_back(a.broadcast_to(s));
  return out;
}

Array atleast_1d(const Array& a) {
  maps_checked(a, "atleast_1d");
  return a.ndim() == 0 ? a.reshape({1}) : a;
}
Array atleast_2d(const Array& a) {
  maps_checked(a, "atleast_2d");
  if (a.ndim() == 0) return a.reshape({1, 1});
  if (a.ndim() == 1) return a.reshape({1, a.shape()[0]});
  return a;
}
Array atleast_3d(const Array& a) {
  maps_checked(a, "atleast_3d");
  if (a.ndim() == 0) return a.reshape({1, 1, 1});
  if (a.ndim() == 1) return a.reshape({1, a.shape()[0], 1});
  if (a.ndim() == 2) return a.reshape({a.shape()[0], a.shape()[1], 1});
  return a;
}
std::vector<Array> atleast_1d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const auto& a : arrays) out.push_back(atleast_1d(a));
  return out;
}
std::vector<Array> atleast_2d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const auto& a : arrays) out.push_back(atleast_2d(a));
  return out;
}
std::vector<Array> atleast_3d(const std::vector<Array>& arrays) {
  std::vector<Array> out;
  for (const auto& a : arrays) out.push_back(atleast_3d(a));
  return out;
}

}  // namespace cufuse
