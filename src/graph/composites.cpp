// src/graph/composites.cpp: the op table's composite rows (cufuse/op_rows.hpp), each built
// from other ops step by step as NumPy's own Python code computes it, so that its result
// dtype, its roundings (a float16 step rounds to float16) and its special values are NumPy's.
#include <cfloat>
#include <cmath>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"

namespace cufuse {

namespace {

// np.asanyarray: an array as is, a scalar as a 0-d array of its dtype (a Python int int64,
// a float float64, as NumPy makes them).
Array operand_array(const Operand& o) {
  if (o.is_array()) return o.array();
  return full(Shape{}, o.scalar(), o.scalar().dtype());
}

// np.finfo(t).max and .eps.
double float_max(DType t) {
  switch (t) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return FLT_MAX;
    default: return DBL_MAX;
  }
}
double float_eps(DType t) {
  switch (t) {
    case DType::Float16: return 0x1p-10;
    case DType::BFloat16: return 0x1p-7;
    case DType::Float32: return FLT_EPSILON;
    default: return DBL_EPSILON;
  }
}

// NumPy's power_of_ten (numpy/_core/src/multiarray/calculation.c).
double power_of_ten(int n) {
  static constexpr double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
  if (n < 9) return p10[n];
  double r = 1e9;
  while (n-- > 9) r *= 10.;
  return r;
}

}  // namespace

// np.sinc: x = pi * x; y = where(x, x, eps) with eps = finfo(x.dtype).eps for NumPy's floats
// (1e-20 otherwise: ml_dtypes' bfloat16 is not one); sin(y) / y.
Array sinc(const Operand& x) {
  const detail::NumpyRounding numpy_rounding;  // NumPy's steps, rounded as NumPy rounds them
  Array px = multiply(3.141592653589793, x);
  const double eps = px.dtype() == DType::BFloat16 ? 1e-20 : float_eps(px.dtype());
  Array y = where(px, px, eps);
  return true_divide(sin(y), y);
}

// np.round (PyArray_Round): integers unchanged for decimals >= 0 (a copy), rint for
// decimals == 0, else x * 10^d, rint, / 10^d in x's dtype (for negative decimals x / 10^-d,
// rint, * 10^-d, integers through float64 and back).
Array round(const Operand& a, int decimals) {
  const detail::NumpyRounding numpy_rounding;  // NumPy's steps, rounded as NumPy rounds them
  Array x = operand_array(a);
  const bool integer = is_integer(x.dtype());
  if (integer && decimals >= 0) return x.copy();
  if (decimals == 0) return rint(x);
  const double f = power_of_ten(decimals >= 0 ? decimals : -decimals);
  if (!integer && !is_float(x.dtype()))
    throw TypeError(fmt::format("Cannot cast ufunc '{}' output from dtype('float64') to dtype('{}') with casting rule "
                                "'same_kind' (round of a {} array to {} decimals)",
                                decimals > 0 ? "multiply" : "divide", name(x.dtype()), name(x.dtype()), decimals));
  Array y = decimals > 0 ? multiply(x, f) : true_divide(x, f);
  y = rint(y);
  y = decimals > 0 ? true_divide(y, f) : multiply(y, f);
  return integer ? astype(y, x.dtype()) : y;
}

// np.nan_to_num: floats get NaN -> nan, +inf -> posinf, -inf -> neginf, each converted to
// x's dtype (1e300 becomes inf in float32, as NumPy's copyto makes it); other dtypes come
// back unchanged (a copy).
Array nan_to_num(const Operand& x, double nan, std::optional<double> posinf, std::optional<double> neginf) {
  const detail::NumpyRounding numpy_rounding;  // NumPy's steps, rounded as NumPy rounds them
  Array a = operand_array(x);
  const DType t = a.dtype();
  if (!is_float(t)) return a.copy();
  const Scalar vnan = Scalar::typed(Scalar(nan), t);
  const Scalar vpos = Scalar::typed(Scalar(posinf.value_or(float_max(t))), t);
  const Scalar vneg = Scalar::typed(Scalar(neginf.value_or(-float_max(t))), t);
  const double inf = INFINITY;
  return where(isnan(a), vnan, where(equal(a, inf), vpos, where(equal(a, -inf), vneg, a)));
}

// np.isclose: y = b as float (result_type(b, 1.0)); (|x - y| <= atol + rtol * |y|) & isfinite(y)
// | (x == y), and | (isnan(x) & isnan(y)) with equal_nan. A Python-scalar b is computed on
// the host as Python does (a float next to x's dtype).
Array isclose(const Operand& a, const Operand& b, double rtol, double atol, bool equal_nan) {
  const detail::NumpyRounding numpy_rounding;  // NumPy's steps, rounded as NumPy rounds them
  if (!b.is_array() && b.scalar().weak()) {
    const double y = b.scalar().to_double();
    Array close = less_equal(absolute(subtract(a, y)), atol + rtol * std::fabs(y));
    if (!std::isfinite(y)) close = zeros_like(close);
    Array r = logical_or(close, equal(a, y));
    if (equal_nan && std::isnan(y)) r = logical_or(r, isnan(a));
    return r;
  }
  Array y = operand_array(b);
  if (!is_float(y.dtype())) y = astype(y, DType::Float64);
  Array r = logical_or(logical_and(less_equal(absolute(subtract(a, y)), add(atol, multiply(rtol, absolute(y)))),
                                   isfinite(y)),
                       equal(a, y));
  if (equal_nan) r = logical_or(r, logical_and(isnan(a), isnan(y)));
  return r;
}

}  // namespace cufuse
