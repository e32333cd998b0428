// src/graph/creation_matrix.cpp: matrices and grids made from index arithmetic: eye,
// identity, tri, triu, tril, diag, meshgrid, logspace.
//
// Nothing here adds a node kind or a generator: the row and column numbers of a 2-D iteration
// space are int64 arange generators whose layout has stride 0 along the other axis (a
// generator's value is computed from its position, so they cost no memory and fuse), and the
// matrices are elementwise expressions over them: eye = (col - row == k), tri = (col <= row + k),
// triu(a) = where(col < row + k, 0, a). All of them fuse with what produces their input and what
// consumes them, on the GPU and on the host reference backend alike.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "core/node.hpp"

namespace cufuse {

namespace {

using detail::GenKind;
using detail::GenParams;

// The index along `axis` of each element of `shape` (int64): an arange generator seen with
// stride 1 along that axis and 0 along the others.
Array iota(const Shape& shape, int axis) {
  GenParams p;
  p.istart = 0;
  p.istep_second = 1;
  p.num = shape[axis];
  detail::Layout l;
  l.shape = shape;
  l.strides = Strides(static_cast<size_t>(shape.ndim()), 0);
  l.strides[axis] = 1;
  return Array(detail::make_generator(GenKind::Arange, DType::Int64, std::move(l), p));
}

void check_dims(const char* what, int64_t n, int64_t m) {
  if (n < 0 || m < 0)
    throw ValueError(fmt::format("{}: negative dimensions are not allowed (N={}, M={})", what, n, m));
}

// col - row, over an n x m grid (int64).
Array col_minus_row(int64_t n, int64_t m) {
  const Shape s{n, m};
  return subtract(iota(s, 1), iota(s, 0));
}

// A strong zero of a's dtype (a 0-d scalar leaf): where(mask, zero, a) keeps a's dtype.
Array zero_of(DType t) { return full(Shape{}, Scalar(0), t); }

// The (rows, cols) of the last two axes NumPy's triu/tril mask: a 1-D array is one row of
// length n against an n x n mask (the result is n x n).
std::pair<int64_t, int64_t> mask_dims(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
  if (a.ndim() == 0)
    throw TypeError(fmt::format("{}: the input must have at least one dimension (got a 0-d {} array)", what,
                                name(a.dtype())));
  if (a.ndim() == 1) return {a.shape(0), a.shape(0)};
  return {a.shape(-2), a.shape(-1)};
}

}  // namespace

Array eye(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const int64_t cols = m ? *m : n;
  check_dims("eye", n, cols);
  return astype(equal(col_minus_row(n, cols), k), dtype);
}

Array identity(int64_t n, DType dtype) { return eye(n, std::nullopt, 0, dtype); }

// NumPy's tri: ones at and below the k-th diagonal (j <= i + k). Negative sizes give an empty
// array, as np.tri(-1) does.
Array tri(int64_t n, std::optional<int64_t> m, int64_t k, DType dtype) {
  const int64_t rows = std::max<int64_t>(n, 0), cols = std::max<int64_t>(m ? *m : n, 0);
  return astype(less_equal(col_minus_row(rows, cols), k), dtype);
}

Array triu(const Array& a, int64_t k) {
  auto [n, m] = mask_dims(a, "triu");
  return where(less(col_minus_row(n, m), k), zero_of(a.dtype()), a);
}

Array tril(const Array& a, int64_t k) {
  auto [n, m] = mask_dims(a, "tril");
  return where(less_equal(col_minus_row(n, m), k), a, zero_of(a.dtype()));
}

Array diag(const Array& v, int64_t k) {
  if (!v.defined()) throw ValueError("diag: the Array handle is empty");
  if (v.ndim() == 2) return diagonal(v, k, 0, 1);
  if (v.ndim() != 1)
    throw ValueError(fmt::format("diag: Input must be 1- or 2-d. (got shape {})", to_string(v.shape())));
  const int64_t len = v.shape(0), ak = k < 0 ? -k : k, n = len + ak;
  // On the main diagonal, out[i, j] = v[j] where i == j: v broadcast along the rows, one
  // elementwise expression. Off it, the len x len block that holds the diagonal is written into
  // a zero matrix (a lazy write: a fill and the block's kernel).
  Array block = where(equal(col_minus_row(len, len), 0), v.reshape(Shape{1, len}), zero_of(v.dtype()));
  if (k == 0) return block;
  Array out = zeros(Shape{n, n}, v.dtype());
  const int64_t r0 = k > 0 ? 0 : ak, c0 = k > 0 ? ak : 0;
  out.index({slice(r0, r0 + len), slice(c0, c0 + len)}) = block;
  return out;
}

std::vector<Array> meshgrid(const std::vector<Array>& xs, std::string_view indexing, bool sparse, bool copy) {
  if (indexing != "xy" && indexing != "ij")
    throw ValueError(fmt::format("meshgrid: Valid values for `indexing` are 'xy' and 'ij'. (got '{}')", indexing));
  const int nd = static_cast<int>(xs.size());
  std::vector<Array> out;
  Shape full_shape(static_cast<size_t>(nd), 1);
  for (int i = 0; i < nd; ++i) {
    if (!xs[i].defined()) throw ValueError(fmt::format("meshgrid: argument {} is an empty Array handle", i));
    Shape s(static_cast<size_t>(nd), 1);
    int at = i;
    if (indexing == "xy" && nd > 1 && i < 2) at = 1 - i;  // the first two axes swapped
    s[at] = xs[i].size();
    full_shape[at] = xs[i].size();
    out.push_back(xs[i].reshape(s));
  }
  if (!sparse)
    for (auto& o : out) o = o.broadcast_to(full_shape);
  if (copy)
    for (auto& o : out) o = o.copy();
  return out;
}

Array logspace(double start, double stop, int64_t num, bool endpoint, double base, DType dtype) {
  if (num < 0) throw ValueError(fmt::format("logspace: Number of samples, {}, must be non-negative.", num));
  Array y = power(Scalar(base), linspace(start, stop, num, endpoint, DType::Float64));
  return dtype == DType::Float64 ? y : astype(y, dtype);
}

}  // namespace cufuse
