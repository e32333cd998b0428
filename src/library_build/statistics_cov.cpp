// src/library_build/statistics_cov.cpp: cov and corrcoef (cufuse/statistics.hpp), NumPy's
// Python code with the lazy ops: the rows centered by their means (a fused kernel feeding the
// GEMM), X @ X.T on the matmul library node, scaled by 1 / (N - ddof) as NumPy's `c *=
// true_divide(1, fact)` does (a float64 factor), then squeezed; corrcoef divides by the
// diagonal's square roots and clips to [-1, 1].
#include <cmath>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/statistics.hpp"

namespace cufuse {

namespace {
// array(v, ndmin=2, dtype=t), transposed where !rowvar and it has more than one row.
Array as_rows(const Array& v, DType t, bool rowvar) {
  Array x = v.astype(t);
  if (x.ndim() == 0) x = x.reshape(Shape{1, 1});
  else if (x.ndim() == 1) x = x.reshape(Shape{1, x.shape(0)});
  if (!rowvar && x.shape(0) != 1) x = x.T();
  return x;
}
}  // namespace

Array cov(const Array& m, const std::optional<Array>& y, bool rowvar, bool bias, std::optional<int64_t> ddof,
          std::optional<DType> dtype) {
  if (!m.defined() || (y && !y->defined())) throw ValueError("cov: an Array handle is empty");
  if (m.ndim() > 2) throw ValueError("m has more than 2 dimensions");
  if (y && y->ndim() > 2) throw ValueError("y has more than 2 dimensions");
  DType t = dtype ? *dtype : promote_types(m.dtype(), DType::Float64);
  if (!dtype && y) t = promote_types(t, y->dtype());
  Array X = as_rows(m, t, rowvar);
  if (X.shape(0) == 0) return zeros(Shape{0, 0}, DType::Float64);
  if (y) X = concatenate({X, as_rows(*y, t, rowvar)}, 0);
  const int64_t dd = ddof ? *ddof : (bias ? 0 : 1);
  double fact = static_cast<double>(X.shape(1) - dd);
  if (fact <= 0) fact = 0.0;  // NumPy warns "Degrees of freedom <= 0 for slice"
  const Array avg = mean(X, 1);
  const Array Xc = subtract(X, avg.reshape(Shape{X.shape(0), 1}));
  Array c = matmul(Xc, Xc.T());
  c = multiply(c, Scalar::typed(Scalar(1.0 / fact), DType::Float64)).astype(c.dtype());
  return c.squeeze();
}

Array corrcoef(const Array& x, const std::optional<Array>& y, bool rowvar, std::optional<DType> dtype) {
  Array c = cov(x, y, rowvar, false, std::nullopt, dtype);
  if (c.ndim() == 0) return true_divide(c, c);
  const Array d = sqrt(diagonal(c));
  const int64_t k = d.shape(0);
  c = true_divide(c, d.reshape(Shape{k, 1}));
  c = true_divide(c, d.reshape(Shape{1, k}));
  return clip(c, -1, 1);
}

}  // namespace cufuse
