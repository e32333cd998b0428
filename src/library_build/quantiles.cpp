// src/library_build/quantiles.cpp: median, quantile, percentile and their nan* forms
// (cufuse/sorting.hpp) on one sort along the reduced axes (moved last and flattened), then
// gathers at the positions NumPy's _quantile computes, step by step in NumPy's dtypes
// (float64 index arithmetic, _get_indexes' bounds, _get_gamma, _lerp), so results are bitwise
// NumPy's. The positions are device arithmetic on each row's count of values (the row length,
// or its non-NaN count for the nan* forms, whose NaNs the sort put last): all fused into the
// gathering kernel after the sort.
#include <cmath>

#include <fmt/format.h>

#include "core/reduce_attrs.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/sorting.hpp"
#include "graph/elementwise.hpp"
#include "library_build/sort_support.hpp"

namespace cufuse {

namespace {

// NumPy 2's methods (numpy/lib/_function_base_impl.py, _QuantileMethods).
enum class Kind { Linear, Continuous, Lower, Higher, Nearest, Midpoint, InvertedCdf, AveragedInvertedCdf, ClosestObservation };
struct Method {
  Kind kind;
  double alpha = 1, beta = 1;
};

Method parse_method(std::string_view m) {
  if (m == "linear") return {Kind::Linear};
  if (m == "lower") return {Kind::Lower};
  if (m == "higher") return {Kind::Higher};
  if (m == "nearest") return {Kind::Nearest};
  if (m == "midpoint") return {Kind::Midpoint};
  if (m == "inverted_cdf") return {Kind::InvertedCdf};
  if (m == "averaged_inverted_cdf") return {Kind::AveragedInvertedCdf};
  if (m == "closest_observation") return {Kind::ClosestObservation};
  if (m == "interpolated_inverted_cdf") return {Kind::Continuous, 0, 1};
  if (m == "hazen") return {Kind::Continuous, 0.5, 0.5};
  if (m == "weibull") return {Kind::Continuous, 0, 0};
  if (m == "median_unbiased") return {Kind::Continuous, 1 / 3.0, 1 / 3.0};
  if (m == "normal_unbiased") return {Kind::Continuous, 3 / 8.0, 3 / 8.0};
  throw ValueError(fmt::format(
      "'{}' is not a valid method. Use one of: dict_keys(['inverted_cdf', 'averaged_inverted_cdf', "
      "'closest_observation', 'interpolated_inverted_cdf', 'hazen', 'weibull', 'linear', 'median_unbiased', "
      "'normal_unbiased', 'lower', 'higher', 'midpoint', 'nearest'])",
      m));
}

// a's reduced axes moved last and flattened: rows of shape kept + (n,), sorted.
struct Rows {
  Array sorted;      // kept + (n,)
  Shape kept;        // the result's shape without keepdims
  Shape keep_shape;  // with keepdims
  int64_t n = 0;
};

Rows sorted_rows(const Array& a, const AxisArg& axis, const char* what) {
  detail::require_defined(a, what);
  const Axes red = detail::normalize_axes(axis, a.ndim(), what);
  std::vector<bool> is_red(static_cast<size_t>(a.ndim()), false);
  for (int d : red) is_red[static_cast<size_t>(d)] = true;
  Axes perm;
  Rows r;
  r.n = 1;
  for (int d = 0; d < a.ndim(); ++d) {
    r.keep_shape.push_back(is_red[static_cast<size_t>(d)] ? 1 : a.shape(d));
    if (!is_red[static_cast<size_t>(d)]) perm.push_back(d), r.kept.push_back(a.shape(d));
  }
  for (int d : red) perm.push_back(d), r.n *= a.shape(d);
  Shape rs = r.kept;
  rs.push_back(r.n);
  const Array x = a.ndim() == 0 ? a.reshape(Shape{1}) : a.transpose(perm).reshape(rs);
  r.sorted = detail::sort_along(x, x.ndim() - 1, true, false, what).values;
  return r;
}

// Element idx (int64, kept + (1,), counted from the row's start) of each sorted row.
Array at(const Array& s, const Array& idx) { return take_along_axis(s, idx, s.ndim() - 1); }

// The dtype a float64 Python scalar meets the values in: a float dtype's own, except bfloat16's
// (ml_dtypes computes bfloat16 with a Python float in float32); float64 for integers and bool.
DType weak_result(DType t) {
  if (t == DType::BFloat16) return DType::Float32;
  return is_float(t) ? t : DType::Float64;
}

// The q-th quantile of each row's first c values (c: int64 kept + (1,)), shape kept + (1,).
// weak: q was a Python float (its result keeps a float input's dtype, as NumPy 2.4's weak_q).
Array quantile_rows(const Array& s, const Array& c, double q, const Method& m, bool weak) {
  const DType at_t = s.dtype();
  const Array cf = c.astype(DType::Float64);
  const Array last = c - 1;
  auto discrete = [&](const Array& idx) { return at(s, idx); };
  switch (m.kind) {
    case Kind::Lower: return discrete(floor((cf - 1) * q).astype(DType::Int64));
    case Kind::Higher: return discrete(ceil((cf - 1) * q).astype(DType::Int64));
    case Kind::Nearest: return discrete(rint((cf - 1) * q).astype(DType::Int64));
    case Kind::InvertedCdf:
    case Kind::ClosestObservation: {
      const Array w = m.kind == Kind::InvertedCdf ? cf * q - 1 : cf * q - 1 - 0.5;
      const Array prev = floor(w);
      const Array g = w - prev;
      Array cond = equal(g, 0.0);
      if (m.kind == Kind::ClosestObservation) cond = logical_and(cond, equal(remainder(prev, 2.0), 1.0));
      const Array res = where(cond, prev, prev + 1).astype(DType::Int64);
      return discrete(maximum(res, int64_t(0)));
    }
    default: break;
  }
  Array v;
  switch (m.kind) {
    case Kind::Linear: v = (cf - 1) * q; break;
    case Kind::Midpoint: {
      const Array w = (cf - 1) * q;
      v = 0.5 * (floor(w) + ceil(w));
      break;
    }
    case Kind::AveragedInvertedCdf: v = cf * q - 1; break;
    default: v = cf * q + (m.alpha + q * (1 - m.alpha - m.beta)) - 1; break;
  }
  // _get_indexes: floor, +1; -1 past the last value; 0 before the first.
  const Array below = less(v, 0.0), above = greater_equal(v, (cf - 1));
  const Array fl = floor(v);
  const Array prev = where(below, 0.0, where(above, -1.0, fl));
  const Array next = where(below, 0.0, where(above, -1.0, fl + 1));
  Array gamma = v - prev;
  if (m.kind == Kind::Midpoint) gamma = where(equal(remainder(v, 1.0), 0.0), 0.0, 0.5);
  if (m.kind == Kind::AveragedInvertedCdf) gamma = where(equal(gamma, 0.0), 0.5, 1.0);
  auto position = [&](const Array& p) {
    const Array i = p.astype(DType::Int64);
    return where(less(i, int64_t(0)), c + i, i);
  };
  const Array lo = at(s, position(prev)), hi = at(s, position(next));
  // _lerp: b - (b - a)(1 - t) where t >= 0.5, else a + (b - a) t; a weak t is cast to the
  // values' float dtype (computed in float64 first, as Python computes 1 - t).
  const DType rt = weak_result(at_t);
  const Array t = weak ? gamma.astype(rt) : gamma;
  const Array omt = weak ? (1 - gamma).astype(rt) : 1 - gamma;
  const Array diff = hi - lo;
  return where(greater_equal(gamma, 0.5), hi - diff * omt, lo + diff * t);
}

Array stack_q(const std::vector<Array>& per_q, const Shape& out_shape) {
  std::vector<Array> parts;
  for (const Array& p : per_q) parts.push_back(p.reshape(out_shape));
  return stack(parts, 0);
}

Array quantile_impl(const Array& a, const std::vector<double>& qs, bool vector_q, const AxisArg& axis,
                    std::string_view method, bool keepdims, bool nan, const char* what, double scale) {
  const detail::NumpyRounding numpy_rounding;  // NumPy's interpolation steps, rounded as NumPy rounds them
  detail::require_defined(a, what);
  if (is_complex(a.dtype())) throw TypeError("a must be an array of real numbers");  // NumPy's quantile/percentile
  for (double q : qs)
    if (!(q >= 0 && q <= 1))
      throw ValueError(scale == 100 ? "Percentiles must be in the range [0, 100]" : "Quantiles must be in the range [0, 1]");
  const Method m = parse_method(method);
  const Rows r = sorted_rows(a, axis, what);
  const Shape out_shape = keepdims ? r.keep_shape : r.kept;
  const bool nan_skip = nan && is_float(a.dtype());
  Shape cshape = r.kept;
  cshape.push_back(1);
  if (r.n == 0 && !nan_skip) throw IndexError("index -1 is out of bounds for axis 0 with size 0");
  const DType rt = (m.kind == Kind::Lower || m.kind == Kind::Higher || m.kind == Kind::Nearest ||
                    m.kind == Kind::InvertedCdf || m.kind == Kind::ClosestObservation)
                       ? a.dtype()
                       : (vector_q ? promote_types(DType::Float64, a.dtype()) : weak_result(a.dtype()));
  std::vector<Array> per_q;
  if (r.n == 0) {  // nan* forms of an empty row: NaN
    for (size_t i = 0; i < qs.size(); ++i) per_q.push_back(full(cshape, Scalar(NAN), rt));
  } else {
    const Array c = nan_skip ? sum(logical_not(isnan(r.sorted)), -1, true, DType::Int64)
                             : full(cshape, Scalar(r.n), DType::Int64);
    const Array last = at(r.sorted, full(cshape, Scalar(r.n - 1), DType::Int64));
    for (double q : qs) {
      Array res = quantile_rows(r.sorted, nan_skip ? maximum(c, int64_t(1)) : c, q, m, !vector_q);
      if (nan_skip) res = where(equal(c, int64_t(0)), full(cshape, Scalar(NAN), res.dtype()), res);
      else if (is_float(a.dtype())) res = where(isnan(last), last.astype(res.dtype()), res);
      per_q.push_back(res);
    }
  }
  if (!vector_q) return per_q[0].reshape(out_shape);
  return stack_q(per_q, out_shape);
}

std::vector<double> scaled(const std::vector<double>& q, double by) {
  std::vector<double> out;
  for (double x : q) out.push_back(x / by);
  return out;
}

Array median_impl(const Array& a, const AxisArg& axis, bool keepdims, bool nan, const char* what) {
  const Rows r = sorted_rows(a, axis, what);
  const Shape out_shape = keepdims ? r.keep_shape : r.kept;
  const Array& s = r.sorted;
  const int64_t n = r.n;
  if (n == 0) return mean(s, -1).reshape(out_shape);  // NumPy: NaN (mean of an empty slice)
  Shape cshape = r.kept;
  cshape.push_back(1);
  const bool has_nan = is_float(a.dtype()) || is_complex(a.dtype());  // complex NaNs sort last too
  if (nan && has_nan) {
    // The middle of each row's non-NaN prefix: one value, or the mean of two.
    const Array c = sum(logical_not(isnan(s)), -1, true, DType::Int64);
    const Array lo = at(s, maximum(floor_divide(c - 1, int64_t(2)), int64_t(0)));
    const Array hi = at(s, maximum(floor_divide(c, int64_t(2)), int64_t(0)));
    const Array two = mean(concatenate({lo, hi}, -1), -1, true);
    Array res = where(equal(remainder(c, int64_t(2)), int64_t(1)), lo.astype(two.dtype()), two);
    res = where(equal(c, int64_t(0)), full(cshape, Scalar(NAN), res.dtype()), res);
    return res.reshape(out_shape);
  }
  const int64_t h = n / 2;
  const Array mid = s.index({ellipsis, n % 2 ? slice(h, h + 1) : slice(h - 1, h + 1)});
  Array res = mean(mid, -1, true);
  if (has_nan) {
    const Array last = s.index({ellipsis, slice(n - 1, n)});
    res = where(isnan(last), last.astype(res.dtype()), res);
  }
  return res.reshape(out_shape);
}

}  // namespace

Array median(const Array& a, AxisArg axis, bool keepdims) { return median_impl(a, axis, keepdims, false, "median"); }
Array nanmedian(const Array& a, AxisArg axis, bool keepdims) {
  return median_impl(a, axis, keepdims, true, "nanmedian");
}

Array quantile(const Array& a, double q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, {q}, false, axis, method, keepdims, false, "quantile", 1);
}
Array quantile(const Array& a, const std::vector<double>& q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, q, true, axis, method, keepdims, false, "quantile", 1);
}
Array percentile(const Array& a, double q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, {q / 100}, false, axis, method, keepdims, false, "percentile", 100);
}
Array percentile(const Array& a, const std::vector<double>& q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, scaled(q, 100), true, axis, method, keepdims, false, "percentile", 100);
}
Array nanquantile(const Array& a, double q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, {q}, false, axis, method, keepdims, true, "nanquantile", 1);
}
Array nanquantile(const Array& a, const std::vector<double>& q, AxisArg axis, std::string_view method,
                  bool keepdims) {
  return quantile_impl(a, q, true, axis, method, keepdims, true, "nanquantile", 1);
}
Array nanpercentile(const Array& a, double q, AxisArg axis, std::string_view method, bool keepdims) {
  return quantile_impl(a, {q / 100}, false, axis, method, keepdims, true, "nanpercentile", 100);
}
Array nanpercentile(const Array& a, const std::vector<double>& q, AxisArg axis, std::string_view method,
                    bool keepdims) {
  return quantile_impl(a, scaled(q, 100), true, axis, method, keepdims, true, "nanpercentile", 100);
}

}  // namespace cufuse
