// src/graph/reduce.cpp: Reduce and Scan nodes, and the public reductions built from them
// with NumPy's dtype rules (accumulators, mean/var's float results, empty inputs).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/reduce_attrs.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "graph/elementwise.hpp"
#include "graph/realize.hpp"

namespace cufuse {

namespace detail {

NodePtr make_reduce(ReduceOp op, NodePtr input, Axes axes, bool keepdims) {
  // Complex values: sums, products and NumPy's order (max, min, nanmax, nanmin, argmax, argmin:
  // real part, then imaginary part; a NaN in either part propagates as NumPy's maximum does).
  if (is_complex(input->dtype) && (op == ReduceOp::Any || op == ReduceOp::All || op == ReduceOp::User))
    throw TypeError(fmt::format("reduction {} is not supported for {}", reduce_name(op), name(input->dtype)));
  auto n = new_node(NodeKind::Reduce);
  n->op = static_cast<uint16_t>(op);
  n->dtype = is_arg(op) ? DType::Int64 : (op == ReduceOp::Any || op == ReduceOp::All ? DType::Bool : input->dtype);
  const Shape& in = input->shape();
  if (is_scan(op)) {
    n->layout.shape = in;
  } else {
    Shape out;
    size_t k = 0;
    for (int d = 0; d < in.ndim(); ++d) {
      if (k < axes.size() && axes[k] == d) {
        ++k;
        if (keepdims) out.push_back(1);
      } else {
        out.push_back(in[d]);
      }
    }
    n->layout.shape = out;
  }
  n->inputs.push_back(std::move(input));
  n->attrs = ReduceAttrs{op, axes, keepdims};
  finish_node(*n);
  for (int a : axes) n->hash = hash_mix(n->hash, static_cast<uint64_t>(a) + 1000);
  n->hash = hash_mix(n->hash, keepdims ? 7 : 3);
  maybe_auto_eval(n);
  return n;
}

Axes normalize_axes(const AxisArg& axis, int ndim, const std::string& what) {
  Axes out;
  if (axis.all()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(ndim), false);
  for (int a : axis.axes()) {
    if (a < -ndim || a >= ndim)
      throw IndexError(fmt::format("{}: axis {} is out of bounds for array of dimension {}", what, a, ndim));
    int b = a < 0 ? a + ndim : a;
    if (seen[b]) throw ValueError(fmt::format("{}: duplicate value in 'axis'", what));
    seen[b] = true;
  }
  for (int i = 0; i < ndim; ++i)
    if (seen[i]) out.push_back(i);
  return out;
}

}  // namespace detail

using detail::ReduceOp;
using detail::normalize_axes;

namespace {

int64_t reduced_count(const Shape& s, const Axes& axes) {
  int64_t n = 1;
  for (int a : axes) n *= s[a];
  return n;
}

void require_nonempty(const Array& a, const Axes& axes, const char* what) {
  const int64_t n = reduced_count(a.shape(), axes);
  int64_t m = 1;
  for (int d = 0, k = 0; d < a.ndim(); ++d) {
    if (k < axes.ndim() && axes[k] == d) ++k;
    else m *= a.shape()[d];
  }
  if (n == 0 && m > 0)
    throw ValueError(fmt::format("zero-size array to reduction operation {} which has no identity (shape {})",
                                 what, to_string(a.shape())));
}

// NumPy's accumulator (and result) dtype of sum/prod.
DType sum_dtype(DType t) {
  switch (kind(t)) {
    case DKind::Bool: return DType::Int64;
    case DKind::Int: return DType::Int64;
    case DKind::UInt: return DType::UInt64;
    default: return t;
  }
}
DType accumulate_in(DType t) { return is_half(t) ? DType::Float32 : t; }

Array reduce_node(ReduceOp op, const Array& a, const Axes& axes, bool keepdims, DType compute) {
  auto in = detail::cast_node(a.node(), compute);
  return Array(detail::make_reduce(op, in, axes, keepdims));
}

Array sum_like(ReduceOp op, const Array& a, const AxisArg& axis, bool keepdims, std::optional<DType> dtype,
               const char* what) {
  const Axes axes = normalize_axes(axis, a.ndim(), what);
  const DType out = dtype ? *dtype : sum_dtype(a.dtype());
  const DType acc = accumulate_in(out);
  Array r = reduce_node(op, a, axes, keepdims, acc);
  return out == acc ? r : r.astype(out);
}

// mean's dtypes: (accumulator, result)
std::pair<DType, DType> mean_dtypes(DType t, std::optional<DType> dtype) {
  if (dtype) return {accumulate_in(*dtype), *dtype};
  if (!is_float(t) && !is_complex(t)) return {DType::Float64, DType::Float64};
  return {accumulate_in(t), t};
}

Array mean_impl(const Array& a, const Axes& axes, bool keepdims, std::optional<DType> dtype) {
  auto [acc, out] = mean_dtypes(a.dtype(), dtype);
  const int64_t n = reduced_count(a.shape(), axes);
  Array s = reduce_node(ReduceOp::Sum, a, axes, keepdims, acc);
  Array m = true_divide(s, Scalar::typed(Scalar(static_cast<double>(n)), acc));
  return m.dtype() == out ? m : m.astype(out);
}

// A reduction's by-value argument is dropped once its result is built (reduce.hpp: a
// temporary's value is then named by no handle while its statement evaluates).
Array taken(Array& arg, Array result) {
  arg = Array();
  return result;
}

}  // namespace

Array sum(Array a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  return taken(a, sum_like(ReduceOp::Sum, a, axis, keepdims, dtype, "sum"));
}
Array prod(Array a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  return taken(a, sum_like(ReduceOp::Prod, a, axis, keepdims, dtype, "prod"));
}


Array max(Array a, AxisArg axis, bool keepdims) {
  const Axes axes = normalize_axes(axis, a.ndim(), "max");
  require_nonempty(a, axes, "maximum");
  return taken(a, reduce_node(ReduceOp::Max, a, axes, keepdims, a.dtype()));
}
Array min(Array a, AxisArg axis, bool keepdims) {
  const Axes axes = normalize_axes(axis, a.ndim(), "min");
  require_nonempty(a, axes, "minimum");
  return taken(a, reduce_node(ReduceOp::Min, a, axes, keepdims, a.dtype()));
}
Array nanmax(Array a, AxisArg axis, bool keepdims) {
  const Axes axes = normalize_axes(axis, a.ndim(), "nanmax");
  require_nonempty(a, axes, "fmax");
  const bool nans = is_float(a.dtype()) || is_complex(a.dtype());
  return taken(a, reduce_node(nans ? ReduceOp::NanMax : ReduceOp::Max, a, axes, keepdims, a.dtype()));
}
Array nanmin(Array a, AxisArg axis, bool keepdims) {
  const Axes axes = normalize_axes(axis, a.ndim(), "nanmin");
  require_nonempty(a, axes, "fmin");
  const bool nans = is_float(a.dtype()) || is_complex(a.dtype());
  return taken(a, reduce_node(nans ? ReduceOp::NanMin : ReduceOp::Min, a, axes, keepdims, a.dtype()));
}
Array ptp(Array a, AxisArg axis, bool keepdims) {
  return taken(a, subtract(max(a, axis, keepdims), min(a, axis, keepdims)));
}

Array mean(Array a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  return taken(a, mean_impl(a, normalize_axes(axis, a.ndim(), "mean"), keepdims, dtype));
}

Array var(Array a, AxisArg axis, int ddof, bool keepdims, std::optional<DType> dtype) {
  const Axes axes = normalize_axes(axis, a.ndim(), "var");
  auto [acc, out] = mean_dtypes(a.dtype(), dtype);
  const int64_t n = reduced_count(a.shape(), axes);
  Array s1 = reduce_node(ReduceOp::Sum, a, axes, /*keepdims=*/true, acc);
  Array m = true_divide(s1, Scalar::typed(Scalar(static_cast<double>(n)), acc));
  Array x = subtract(Array(detail::cast_node(a.node(), acc)), m);
  const double div = static_cast<double>(std::max<int64_t>(n - ddof, 0));
  if (is_complex(acc)) {  // NumPy: the mean of |x - mean|^2, x * conj(x) taken real
    const DType racc = real_dtype(acc);
    Array s2 = reduce_node(ReduceOp::Sum, real(multiply(x, conjugate(x))), axes, keepdims, racc);
    Array v = true_divide(s2, Scalar::typed(Scalar(div), racc));
    return taken(a, v.dtype() == real_dtype(out) ? v : v.astype(real_dtype(out)));
  }
  Array s2 = reduce_node(ReduceOp::Sum, multiply(x, x), axes, keepdims, acc);
  Array v = true_divide(s2, Scalar::typed(Scalar(div), acc));
  return taken(a, v.dtype() == out ? v : v.astype(out));
}

Array std(Array a, AxisArg axis, int ddof, bool keepdims, std::optional<DType> dtype) {
  return taken(a, sqrt(var(a, axis, ddof, keepdims, dtype)));
}

Array any(Array a, AxisArg axis, bool keepdims) {
  return taken(a, reduce_node(ReduceOp::Any, a, normalize_axes(axis, a.ndim(), "any"), keepdims, DType::Bool));
}
Array all(Array a, AxisArg axis, bool keepdims) {
  return taken(a, reduce_node(ReduceOp::All, a, normalize_axes(axis, a.ndim(), "all"), keepdims, DType::Bool));
}

Array count_nonzero(Array a, AxisArg axis, bool keepdims) {
  return taken(a, sum(not_equal(a, 0), axis, keepdims, DType::Int64));
}

Array nansum(Array a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  if (!is_float(a.dtype())) return taken(a, sum(a, axis, keepdims, dtype));
  return taken(a, sum(where(isnan(a), 0, a), axis, keepdims, dtype));
}

Array nanmean(Array a, AxisArg axis, bool keepdims, std::optional<DType> dtype) {
  if (!is_float(a.dtype())) return taken(a, mean(a, axis, keepdims, dtype));
  const Axes axes = normalize_axes(axis, a.ndim(), "nanmean");
  auto [acc, out] = mean_dtypes(a.dtype(), dtype);
  Array tot = reduce_node(ReduceOp::Sum, where(isnan(a), 0, a), axes, keepdims, acc);
  Array cnt = reduce_node(ReduceOp::Sum, logical_not(isnan(a)), axes, keepdims, DType::Int64);
  Array avg = true_divide(tot, cnt.astype(acc));
  return taken(a, avg.dtype() == out ? avg : avg.astype(out));
}

static Array arg_reduce(ReduceOp op, const Array& a, std::optional<int> axis, bool keepdims, const char* what) {
  if (a.size() == 0 && (!axis || a.shape(*axis) == 0))
    throw ValueError(fmt::format("attempt to get {} of an empty sequence (shape {})", what, to_string(a.shape())));
  if (axis) {
    const Axes axes = normalize_axes(AxisArg(*axis), a.ndim(), what);
    require_nonempty(a, axes, what);
    return reduce_node(op, a, axes, keepdims, a.dtype());
  }
  // over the flattened array: keepdims keeps every axis as 1
  return reduce_node(op, a, normalize_axes(AxisArg(), a.ndim(), what), keepdims, a.dtype());
}
Array argmax(Array a, std::optional<int> axis, bool keepdims) {
  return taken(a, arg_reduce(ReduceOp::ArgMax, a, axis, keepdims, "argmax"));
}
Array argmin(Array a, std::optional<int> axis, bool keepdims) {
  return taken(a, arg_reduce(ReduceOp::ArgMin, a, axis, keepdims, "argmin"));
}

static Array scan(ReduceOp op, const Array& a, std::optional<int> axis, std::optional<DType> dtype, const char* what) {
  Array src = axis ? a : a.ravel();
  const Axes axes = normalize_axes(AxisArg(axis ? *axis : 0), src.ndim() == 0 ? 1 : src.ndim(), what);
  if (src.ndim() == 0) src = src.reshape({1});
  const DType out = dtype ? *dtype : sum_dtype(a.dtype());
  const DType acc = accumulate_in(out);
  Array r = reduce_node(op, src, axes, false, acc);
  return out == acc ? r : r.astype(out);
}
Array cumsum(Array a, std::optional<int> axis, std::optional<DType> dtype) {
  return taken(a, scan(ReduceOp::CumSum, a, axis, dtype, "cumsum"));
}
Array cumprod(Array a, std::optional<int> axis, std::optional<DType> dtype) {
  return taken(a, scan(ReduceOp::CumProd, a, axis, dtype, "cumprod"));
}

}  // namespace cufuse
