// src/graph/statistics_moments.cpp: weighted and NaN-ignoring moments (cufuse/statistics.hpp):
// average, nanvar, nanstd, nanprod, nanargmax, nanargmin. NumPy's Python code written with the
// lazy reductions, in NumPy's dtypes step by step (nanvar's mean is cast back to the sum's
// dtype as NumPy's in-place divide does), so the sibling reductions fuse (count and sum in one
// kernel) and the squared deviations fuse into the second reduction's prologue. What NumPy
// checks on the values (weights summing to zero, all-NaN slices) reads one bool back.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/statistics.hpp"
#include "core/reduce_attrs.hpp"

namespace cufuse {

namespace {

// np.average's weights, broadcastable against a: as given where shapes match, else 1-D (or
// one extent per axis) along `axes`, reshaped with 1 elsewhere.
Array weights_for(const Array& a, const AxisArg& axis, const Array& w) {
  if (w.shape() == a.shape()) return w;
  if (axis.all()) throw TypeError("Axis must be specified when shapes of a and weights differ.");
  const Axes axes = detail::normalize_axes(axis, a.ndim(), "average");
  Shape want;
  for (auto ax : axes) want.push_back(a.shape(static_cast<int>(ax)));
  if (!(w.shape() == want))
    throw ValueError("Shape of weights must be consistent with shape of a along specified axis.");
  // NumPy: wgt.transpose(argsort(axis)), then ones except along the axes.
  std::vector<int> order(axes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return axes[x] < axes[y]; });
  Axes perm;
  for (int o : order) perm.push_back(o);
  Array t = w.ndim() > 1 ? w.transpose(perm) : w;
  Shape s;
  for (int d = 0; d < a.ndim(); ++d) {
    bool in = false;
    for (auto ax : axes) in |= ax == d;
    s.push_back(in ? a.shape(d) : 1);
  }
  return t.reshape(s);
}

std::pair<Array, Array> average_impl(const Array& a, const AxisArg& axis, const std::optional<Array>& weights,
                                     bool keepdims) {
  if (!a.defined()) throw ValueError("average: the Array handle is empty");
  const Axes axes = detail::normalize_axes(axis, a.ndim(), "average");
  if (!weights) {
    Array avg = mean(a, axes, keepdims);
    const double scl = avg.size() ? static_cast<double>(a.size()) / static_cast<double>(avg.size()) : NAN;
    return {avg, full(avg.shape(), Scalar::typed(Scalar(scl), avg.dtype()))};
  }
  if (!weights->defined()) throw ValueError("average: the weights' Array handle is empty");
  const DType at = a.dtype(), wt = weights->dtype();
  const DType rt = (is_integer(at) || is_bool(at)) ? promote_types(promote_types(at, wt), DType::Float64)
                                                     : promote_types(at, wt);
  const Array w = weights_for(a, axis, *weights);
  Array scl = sum(w, axes, keepdims, rt);
  if (any(equal(scl, 0.0)).item<bool>()) throw ValueError("Weights sum to zero, can't be normalized");
  Array avg = true_divide(sum(multiply(a.astype(rt), w.astype(rt)), axes, keepdims), scl);
  if (!(scl.shape() == avg.shape())) scl = scl.broadcast_to(avg.shape());
  return {avg, scl};
}

}  // namespace

Array average(const Array& a, AxisArg axis, const std::optional<Array>& weights, bool keepdims) {
  return average_impl(a, axis, weights, keepdims).first;
}
std::pair<Array, Array> average_returned(const Array& a, AxisArg axis, const std::optional<Array>& weights,
                                         bool keepdims) {
  return average_impl(a, axis, weights, keepdims);
}

Array nanvar(const Array& a, AxisArg axis, int ddof, bool keepdims, std::optional<DType> dtype) {
  if (!a.defined()) throw ValueError("nanvar: the Array handle is empty");
  if (!is_float(a.dtype())) return var(a, axis, ddof, keepdims, dtype);
  const Axes axes = detail::normalize_axes(axis, a.ndim(), "nanvar");
  const Array m = isnan(a);
  const Array arr = where(m, 0, a);
  const Array cnt = sum(logical_not(m), axes, /*keepdims=*/true, DType::Int64);
  Array avg = sum(arr, axes, /*keepdims=*/true, dtype);
  avg = true_divide(avg, cnt).astype(avg.dtype());          // np.true_divide(avg, cnt, out=avg)
  const Array x = where(m, 0, subtract(arr, avg).astype(a.dtype()));  // np.subtract(arr, avg, out=arr)
  Array v = sum(multiply(x, x), axes, keepdims, dtype);
  const Array dof = subtract(keepdims ? cnt : cnt.squeeze(axes), ddof);
  v = true_divide(v, dof).astype(v.dtype());
  return where(less_equal(dof, 0), NAN, v);
}

Array nanstd(const Array& a, AxisArg axis, int ddof, bool keepdims, std::optional<DType> dtype) {
  return sqrt(nanvar(a, axis, ddof, keepdims, dtype));
}

Array nanprod(const Array& a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  if (!a.defined()) throw ValueError("nanprod: the Array handle is empty");
  if (!is_float(a.dtype())) return prod(a, axis, keepdims, dtype);
  return prod(where(isnan(a), 1, a), axis, keepdims, dtype);
}

namespace {
Array nan_arg(const Array& a, std::optional<int> axis, bool keepdims, bool is_max) {
  if (!a.defined()) throw ValueError("nanargmax: the Array handle is empty");
  if (!is_float(a.dtype())) return is_max ? argmax(a, axis, keepdims) : argmin(a, axis, keepdims);
  const Array m = isnan(a);
  if (a.size() > 0) {
    const Array slices = axis ? all(m, *axis) : all(m);
    if (any(slices).item<bool>()) throw ValueError("All-NaN slice encountered");
  }
  const Array r = where(m, is_max ? -INFINITY : INFINITY, a);
  return is_max ? argmax(r, axis, keepdims) : argmin(r, axis, keepdims);
}
}  // namespace

Array nanargmax(const Array& a, std::optional<int> axis, bool keepdims) { return nan_arg(a, axis, keepdims, true); }
Array nanargmin(const Array& a, std::optional<int> axis, bool keepdims) { return nan_arg(a, axis, keepdims, false); }

}  // namespace cufuse
