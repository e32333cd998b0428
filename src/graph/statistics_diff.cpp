// src/graph/statistics_diff.cpp: differences and integrals (cufuse/statistics.hpp): diff,
// ediff1d, gradient, trapezoid, cumulative_sum. Each is NumPy's own Python code written with
// the lazy ops (slices along an axis, concatenate, reductions), step by step in NumPy's
// dtypes, so its roundings are NumPy's and it fuses with its producers and consumers.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/statistics.hpp"
#include "core/reduce_attrs.hpp"
#include "graph/elementwise.hpp"
#include "graph/manip_support.hpp"
#include "graph/statistics_support.hpp"

namespace cufuse {

namespace detail {

Array as_array(const Operand& o) {
  if (o.is_array()) return o.array();
  return full(Shape{}, o.scalar(), o.scalar().dtype());
}

Array along(const Array& a, int axis, Slice s) {
  std::vector<Index> idx(static_cast<size_t>(a.ndim()), Index(_));
  idx[static_cast<size_t>(axis)] = Index(s);
  return a.index(idx);
}

}  // namespace detail

using detail::along;
using detail::as_array;

Array diff(const Array& a_in, int n, int axis, const std::optional<Operand>& prepend,
           const std::optional<Operand>& append) {
  if (!a_in.defined()) throw ValueError("diff: the Array handle is empty");
  if (n == 0) return a_in;
  if (n < 0) throw ValueError(fmt::format("order must be non-negative but got {}", n));
  if (a_in.ndim() == 0) throw ValueError("diff requires input that is at least one dimensional");
  const int ax = detail::manip_axis(axis, a_in.ndim(), "diff");
  std::vector<Array> parts;
  auto edge = [&](const Operand& o) {
    Array e = as_array(o);
    if (e.ndim() == 0) {
      Shape s = a_in.shape();
      s[ax] = 1;
      e = e.broadcast_to(s);
    }
    parts.push_back(e);
  };
  if (prepend) edge(*prepend);
  parts.push_back(a_in);
  if (append) edge(*append);
  Array a = parts.size() > 1 ? concatenate(parts, ax) : a_in;
  const bool is_bool = a.dtype() == DType::Bool;
  for (int i = 0; i < n; ++i) {
    Array hi = along(a, ax, slice(1, none)), lo = along(a, ax, slice(none, -1));
    a = is_bool ? not_equal(hi, lo) : subtract(hi, lo);
  }
  return a;
}

Array ediff1d(const Array& ary_in, const std::optional<Operand>& to_end, const std::optional<Operand>& to_begin) {
  if (!ary_in.defined()) throw ValueError("ediff1d: the Array handle is empty");
  const Array ary = ary_in.ravel();
  const DType t = ary.dtype();
  auto part = [&](const Operand& o, const char* what) {
    Array e = as_array(o);
    if (!detail::can_cast_same_kind(e.dtype(), t))
      throw TypeError(fmt::format("dtype of `{}` must be compatible with input `ary` under the `same_kind` rule.", what));
    return e.ravel().astype(t);
  };
  Array d = subtract(ary.index({slice(1, none)}), ary.index({slice(none, -1)}));
  if (!to_end && !to_begin) return d;
  std::vector<Array> parts;
  if (to_begin) parts.push_back(part(*to_begin, "to_begin"));
  parts.push_back(d.astype(t));
  if (to_end) parts.push_back(part(*to_end, "to_end"));
  return concatenate(parts, 0);
}

Array trapezoid(const Array& y, const std::optional<Array>& x, double dx, int axis) {
  if (!y.defined()) throw ValueError("trapezoid: the Array handle is empty");
  const int ax = detail::manip_axis(axis, y.ndim(), "trapezoid");
  Array s = add(along(y, ax, slice(1, none)), along(y, ax, slice(none, -1)));
  Array prod;
  if (!x) {
    prod = multiply(dx, s);
  } else {
    Array d;
    if (x->ndim() == 1) {
      d = diff(*x);
      Shape sh(static_cast<size_t>(y.ndim()), 1);
      sh[ax] = d.shape(0);
      d = d.reshape(sh);
    } else {
      d = diff(*x, 1, axis);
    }
    prod = multiply(d, s);
  }
  return sum(true_divide(prod, 2.0), ax);
}

Array cumulative_sum(const Array& x_in, std::optional<int> axis, std::optional<DType> dtype, bool include_initial) {
  if (!x_in.defined()) throw ValueError("cumulative_sum: the Array handle is empty");
  const Array x = x_in.ndim() == 0 ? x_in.reshape(Shape{1}) : x_in;
  if (!axis) {
    if (x.ndim() >= 2)
      throw ValueError("For arrays which have more than one dimension ``axis`` argument is required.");
    axis = 0;
  }
  const int ax = detail::manip_axis(*axis, x.ndim(), "cumulative_sum");
  Array res = cumsum(x, ax, dtype);
  if (!include_initial) return res;
  Shape s = res.shape();
  s[ax] = 1;
  return concatenate({zeros(s, res.dtype()), res}, ax);
}

// ------------------------------------------------------------------ gradient
namespace {

// One axis's spacing: a scalar (weak: a C++ number; strong: a 0-d array of a dtype, as NumPy's
// collapse of evenly spaced coordinates to diffx[0] makes) or the coordinates' differences.
struct Spacing {
  std::optional<Operand> uniform;
  Array d;  // 1-D differences where not uniform
};

Spacing spacing_of(const Operand& o, int64_t len) {
  if (!o.is_array()) return Spacing{Operand(o.scalar()), Array()};
  Array x = o.array();
  if (x.ndim() == 0) return Spacing{Operand(Array(x)), Array()};
  if (x.ndim() != 1) throw ValueError("distances must be either scalars or 1d");
  if (x.shape(0) != len) throw ValueError("when 1d, distances must match the length of the corresponding dimension");
  if (is_integer(x.dtype()) || x.dtype() == DType::Bool) x = x.astype(DType::Float64);
  Array d = diff(x);
  // NumPy: evenly spaced coordinates become the scalar diffx[0] (one bool read back).
  if (d.size() > 0 && all(equal(d, d.index({Index(int64_t(0))}))).item<bool>())
    return Spacing{Operand(d.index({Index(int64_t(0))})), Array()};
  return Spacing{std::nullopt, d};
}

// k * h, k / h: a C++ number stays weak (NumPy's Python float arithmetic); a 0-d array is lazy.
Operand times(double k, const Operand& h) {
  if (!h.is_array()) return Operand(k * h.scalar().to_double());
  return Operand(multiply(k, h));
}
Operand over(double k, const Operand& h) {
  if (!h.is_array()) return Operand(k / h.scalar().to_double());
  return Operand(true_divide(k, h));
}

Array gradient_axis(const Array& f, int ax, const Spacing& sp, int edge_order, DType otype) {
  const int N = f.ndim();
  auto at = [&](int64_t start, std::optional<int64_t> stop) { return along(f, ax, slice(start, stop)); };
  const Array f0 = at(0, 1), f1 = at(1, 2), f2 = at(2, 3);
  const Array fl = at(-1, none), fl1 = at(-2, -1), fl2 = at(-3, -2);
  Array interior, first, last;
  if (sp.uniform) {
    const Operand& h = *sp.uniform;
    interior = true_divide(subtract(at(2, none), at(0, -2)), times(2.0, h));
    if (edge_order == 1) {
      first = true_divide(subtract(f1, f0), h);
      last = true_divide(subtract(fl, fl1), h);
    } else {
      first = add(add(multiply(over(-1.5, h), f0), multiply(over(2.0, h), f1)),
                  multiply(over(-0.5, h), f2));
      last = add(add(multiply(over(0.5, h), fl2), multiply(over(-2.0, h), fl1)),
                 multiply(over(1.5, h), fl));
    }
  } else {
    const Array& d = sp.d;
    Shape sh(static_cast<size_t>(N), 1);
    sh[ax] = -1;
    const Array dx1 = d.index({slice(0, -1)}), dx2 = d.index({slice(1, none)});
    const Array a = true_divide(negative(dx2), multiply(dx1, add(dx1, dx2))).reshape(sh);
    const Array b = true_divide(subtract(dx2, dx1), multiply(dx1, dx2)).reshape(sh);
    const Array c = true_divide(dx1, multiply(dx2, add(dx1, dx2))).reshape(sh);
    interior = add(add(multiply(a, at(0, -2)), multiply(b, at(1, -1))), multiply(c, at(2, none)));
    const Array d0 = d.index({Index(int64_t(0))}), d1 = d.index({Index(int64_t(1))});
    const Array dn = d.index({Index(int64_t(-1))}), dn1 = d.index({Index(int64_t(-2))});
    if (edge_order == 1) {
      first = true_divide(subtract(f1, f0), d0);
      last = true_divide(subtract(fl, fl1), dn);
    } else {
      Array e1 = d0, e2 = d1;
      const Array fa = true_divide(negative(add(multiply(2.0, e1), e2)), multiply(e1, add(e1, e2)));
      const Array fb = true_divide(add(e1, e2), multiply(e1, e2));
      const Array fc = true_divide(negative(e1), multiply(e2, add(e1, e2)));
      first = add(add(multiply(fa, f0), multiply(fb, f1)), multiply(fc, f2));
      e1 = dn1;
      e2 = dn;
      const Array la = true_divide(e2, multiply(e1, add(e1, e2)));
      const Array lb = true_divide(negative(add(e2, e1)), multiply(e1, e2));
      const Array lc = true_divide(add(multiply(2.0, e2), e1), multiply(e2, add(e1, e2)));
      last = add(add(multiply(la, fl2), multiply(lb, fl1)), multiply(lc, fl));
    }
  }
  return concatenate({first.astype(otype), interior.astype(otype), last.astype(otype)}, ax);
}

}  // namespace

std::vector<Array> gradient(const Array& f_in, const std::vector<Operand>& spacing, AxisArg axis, int edge_order) {
  if (!f_in.defined()) throw ValueError("gradient: the Array handle is empty");
  // NumPy's normalize_axis_tuple: the axes in the order given (one gradient each, in that order)
  Axes axes = detail::normalize_axes(axis, f_in.ndim(), "gradient");
  if (!axis.all()) {
    axes.clear();
    for (auto ax : axis.axes()) axes.push_back(detail::manip_axis(static_cast<int>(ax), f_in.ndim(), "gradient"));
  }
  const size_t len_axes = axes.size();
  Array f = f_in;
  DType otype = f.dtype();
  if (!is_float(otype)) {
    if (is_integer(otype)) f = f.astype(DType::Float64);
    otype = DType::Float64;
  }
  std::vector<Spacing> dx;  // NumPy's order: the spacings' errors, edge_order's, then the shapes'
  for (size_t i = 0; i < len_axes; ++i) {
    const int ax = static_cast<int>(axes[i]);
    if (spacing.empty()) dx.push_back(Spacing{Operand(1.0), Array()});
    else if (spacing.size() == 1 && (!spacing[0].is_array() || spacing[0].array().ndim() == 0))
      dx.push_back(spacing_of(spacing[0], f.shape(ax)));
    else if (spacing.size() == len_axes) dx.push_back(spacing_of(spacing[i], f.shape(ax)));
    else throw TypeError("invalid number of arguments");
  }
  if (edge_order > 2) throw ValueError("'edge_order' greater than 2 not supported");
  if (edge_order < 1) throw ValueError("'edge_order' must be 1 or 2");
  for (size_t i = 0; i < len_axes; ++i)
    if (f.shape(static_cast<int>(axes[i])) < edge_order + 1)
      throw ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                       "elements are required.");
  std::vector<Array> out;
  for (size_t i = 0; i < len_axes; ++i) out.push_back(gradient_axis(f, static_cast<int>(axes[i]), dx[i], edge_order, otype));
  return out;
}

}  // namespace cufuse
