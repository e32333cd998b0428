// src/library_build/linalg.cpp: cufuse::linalg — NumPy's checks, dtypes and empty cases, the
// solver nodes (solver_call.hpp), and what follows them as graph work: det/slogdet from the
// LU (one reduction kernel), triangle masks, pinv/lstsq/matrix_rank from the SVD, and the
// matrix norms. complex64/complex128 go to cuSOLVER's C/Z routines with NumPy's dtypes (real
// singular values and eigenvalues; det complex, slogdet's sign complex and logabsdet real).
#include <cstdlib>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/eval.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "graph/elementwise.hpp"
#include "library/solver_call.hpp"
#include "library_build/contract.hpp"
#include "library_build/matrix_norm.hpp"
#include "runtime/context.hpp"

namespace cufuse::linalg {

// ------------------------------------------------------------------ data-dependent errors
namespace {
thread_local int errors_override = -1;  // -1: none; else the innermost ErrorScope's Errors
Errors errors_env() { return detail::settings().linalg_errors_ignore ? Errors::Ignore : Errors::Raise; }
}  // namespace
Errors errors() { return errors_override >= 0 ? static_cast<Errors>(errors_override) : errors_env(); }
ErrorScope::ErrorScope(Errors e) : prev_(errors_override) { errors_override = static_cast<int>(e); }
ErrorScope::~ErrorScope() { errors_override = prev_; }


namespace {

using detail::SolverKind;
using detail::SolverSpec;

// NumPy's dtype rule for linalg: float32/float64/complex64/complex128 as they are, integers
// and bool as float64, the half types refused.
DType linalg_dtype(const Array& a) {
  if (!a.defined()) throw ValueError("linalg: an Array handle is empty");
  const DType t = a.dtype();
  if (is_half(t)) throw TypeError(fmt::format("array type {} is unsupported in linalg", name(t)));
  return is_float(t) || is_complex(t) ? t : DType::Float64;
}

// x^H over the last two axes (a transposed view of conj(x): the GEMM reads it with op C).
Array hermitian_t(const Array& x) {
  return is_complex(x.dtype()) ? conj(x).swapaxes(-1, -2) : x.swapaxes(-1, -2);
}

// |x|^2 elementwise, in x's real dtype (x * x for a real x, as the real norms always were).
Array abs_squared(const Array& x) { return is_complex(x.dtype()) ? real(multiply(x, conj(x))) : multiply(x, x); }

void at_least_2d(const Array& a) {
  if (a.ndim() < 2)
    throw ValueError(fmt::format("{}-dimensional array given. Array must be at least two-dimensional", a.ndim()));
}

void square(const Array& a) {
  at_least_2d(a);
  if (a.shape(-1) != a.shape(-2))
    throw ValueError(fmt::format("Last 2 dimensions of the array must be square (shape {})", to_string(a.shape())));
}

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }
Shape cat(Shape s, std::initializer_list<int64_t> dims) {
  for (auto d : dims) s.push_back(d);
  return s;
}

double eps_of(DType t) {
  return real_dtype(t) == DType::Float32 ? std::numeric_limits<float>::epsilon()
                                         : std::numeric_limits<double>::epsilon();
}

Array eye_batch(const Shape& batch, int64_t n, DType t) {
  Array e = equal(arange(n).reshape({n, 1}), arange(n).reshape({1, n})).astype(t);
  return batch.empty() ? e : e.broadcast_to(cat(batch, {n, n}));
}

std::vector<Array> call(const SolverSpec& s, std::initializer_list<Array> inputs) {
  auto c = std::make_shared<detail::SolverCall>(s);
  detail::InputVec ins;
  for (const auto& a : inputs) ins.push_back(detail::cast_node(a.node(), s.dtype));
  std::vector<Array> out;
  for (auto& n : detail::make_library_nodes(c, std::move(ins))) out.emplace_back(n);
  return out;
}

SolverSpec spec_of(SolverKind k, const Array& a, DType t) {
  SolverSpec s;
  s.check_errors = errors() == Errors::Raise;
  s.kind = k;
  s.dtype = t;
  s.batch = batch_of(a.shape());
  s.m = a.shape(-2);
  s.n = a.shape(-1);
  return s;
}

// The LU node's diagonal and the parity of its row swaps (sign of the permutation).
struct LUParts {
  Array diag, perm_sign;
};
LUParts lu_parts(const Array& a, DType t) {
  auto r = call(spec_of(SolverKind::LU, a, t), {a});
  const int64_t n = a.shape(-1);
  Array diag = diagonal(r[0], 0, -2, -1);
  Array swaps = sum(not_equal(r[1], arange(1, n + 1)), -1);
  Array sign = (1 - 2 * remainder(swaps, 2)).astype(t);
  return {diag, sign};
}

}  // namespace

// ------------------------------------------------------------------ factorizations
Array det(const Array& a) {
  const DType t = linalg_dtype(a);
  square(a);
  if (a.shape(-1) == 0) return ones(batch_of(a.shape()), t);
  LUParts p = lu_parts(a, t);
  return multiply(prod(p.diag, -1), p.perm_sign);
}

namespace {
// The sign of each LU diagonal element as slogdet takes it: sign(d) for a real d, d / |d| (0
// for 0, as NumPy's sign of a singular matrix) for a complex one.
Array unit_of(const Array& d) {
  if (!is_complex(d.dtype())) return cufuse::sign(d);
  Array m = abs(d);
  return where(equal(m, 0), zeros({}, d.dtype()), divide(d, m));
}
}  // namespace

SlogdetResult slogdet(const Array& a) {
  const DType t = linalg_dtype(a);
  square(a);
  if (a.shape(-1) == 0) return {ones(batch_of(a.shape()), t), zeros(batch_of(a.shape()), real_dtype(t))};
  LUParts p = lu_parts(a, t);
  Array sign = multiply(p.perm_sign, prod(unit_of(p.diag), -1));
  Array logabs = sum(log(abs(p.diag)), -1);
  return {sign, logabs};
}

Array inv(const Array& a) {
  const DType t = linalg_dtype(a);
  square(a);
  if (a.shape(-1) == 0) return zeros(a.shape(), t);
  return call(spec_of(SolverKind::Inv, a, t), {a})[0];
}

Array solve(const Array& a, const Array& b) {
  const DType t = promote_types(linalg_dtype(a), linalg_dtype(b));
  square(a);
  const int64_t n = a.shape(-1);
  SolverSpec s = spec_of(SolverKind::Solve, a, t);
  Array A = a, B = b;
  if (b.ndim() == 1) {
    if (b.shape(0) != n)
      throw ValueError(fmt::format("solve1: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                   "signature (m,m),(m)->(m) (size {} is different from {})", b.shape(0), n));
    s.vector_rhs = true;
    if (!s.batch.empty()) B = b.broadcast_to(cat(s.batch, {n}));
  } else {
    if (b.shape(-2) != n)
      throw ValueError(fmt::format("solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                                   "signature (m,m),(m,n)->(m,n) (size {} is different from {})", b.shape(-2), n));
    s.nrhs = b.shape(-1);
    s.batch = broadcast_shapes(s.batch, batch_of(b.shape()));
    if (batch_of(a.shape()) != s.batch) A = a.broadcast_to(cat(s.batch, {n, n}));
    if (batch_of(b.shape()) != s.batch) B = b.broadcast_to(cat(s.batch, {n, s.nrhs}));
  }
  const Shape out = s.vector_rhs ? cat(s.batch, {n}) : cat(s.batch, {n, s.nrhs});
  if (n == 0 || numel(out) == 0) return zeros(out, t);
  return call(s, {A, B})[0];
}

Array cholesky(const Array& a, bool upper) {
  const DType t = linalg_dtype(a);
  square(a);
  if (a.shape(-1) == 0) return zeros(a.shape(), t);
  Array l = detail::tril_last2(call(spec_of(SolverKind::Cholesky, a, t), {a})[0]);
  return upper ? hermitian_t(l) : l;  // U = L^H (NumPy's upper=True)
}

QRResult qr(const Array& a, std::string_view mode) {
  const DType t = linalg_dtype(a);
  at_least_2d(a);
  SolverSpec s = spec_of(SolverKind::QR, a, t);
  if (mode == "reduced") s.qr_mode = 0;
  else if (mode == "complete") s.qr_mode = 1;
  else if (mode == "r") s.qr_mode = 2;
  else throw ValueError(fmt::format("Unrecognized mode '{}' (qr takes 'reduced', 'complete' or 'r')", mode));
  const int64_t m = s.m, n = s.n, k = std::min(m, n);
  if (m == 0 || n == 0) {
    const int64_t kq = s.qr_mode == 1 ? m : k;
    Array R = zeros(cat(s.batch, {kq, n}), t);
    if (s.qr_mode == 2) return {Array(), zeros(cat(s.batch, {k, n}), t)};
    Array Q = s.qr_mode == 1 ? eye_batch(s.batch, m, t) : zeros(cat(s.batch, {m, k}), t);
    return {Q, R};
  }
  auto r = call(s, {a});
  if (s.qr_mode == 2) return {Array(), detail::triu_last2(r[0])};
  return {r[0], detail::triu_last2(r[1])};
}

SVDResult svd(const Array& a, bool full_matrices, bool compute_uv) {
  const DType t = linalg_dtype(a);
  at_least_2d(a);
  SolverSpec s = spec_of(SolverKind::SVD, a, t);
  s.full = full_matrices;
  s.vectors = compute_uv;
  const int64_t m = s.m, n = s.n, k = std::min(m, n);
  if (m == 0 || n == 0) {
    Array S = zeros(cat(s.batch, {k}), real_dtype(t));
    if (!compute_uv) return {Array(), S, Array()};
    Array U = full_matrices ? eye_batch(s.batch, m, t) : zeros(cat(s.batch, {m, k}), t);
    Array Vh = full_matrices ? eye_batch(s.batch, n, t) : zeros(cat(s.batch, {k, n}), t);
    return {U, S, Vh};
  }
  auto r = call(s, {a});
  if (!compute_uv) return {Array(), r[0], Array()};
  return {r[0], r[1], r[2]};
}

Array svdvals(const Array& a) { return svd(a, false, false).S; }

namespace {
SolverSpec eigh_spec(const Array& a, char UPLO, bool vectors) {
  const DType t = linalg_dtype(a);
  if (UPLO != 'L' && UPLO != 'U') throw ValueError("UPLO argument must be 'L' or 'U'");
  square(a);
  SolverSpec s = spec_of(SolverKind::Eigh, a, t);
  s.lower = UPLO == 'L';
  s.vectors = vectors;
  return s;
}
}  // namespace

EighResult eigh(const Array& a, char UPLO) {
  const SolverSpec s = eigh_spec(a, UPLO, true);
  if (s.n == 0) return {zeros(cat(s.batch, {0}), real_dtype(s.dtype)), zeros(a.shape(), s.dtype)};
  auto r = call(s, {a});
  return {r[0], r[1]};
}

Array eigvalsh(const Array& a, char UPLO) {
  const SolverSpec s = eigh_spec(a, UPLO, false);
  if (s.n == 0) return zeros(cat(s.batch, {0}), real_dtype(s.dtype));
  return call(s, {a})[0];
}

// ------------------------------------------------------------------ derived
Array pinv(const Array& a, double rcond) {
  const DType t = linalg_dtype(a);
  at_least_2d(a);
  const int64_t m = a.shape(-2), n = a.shape(-1);
  if (m == 0 || n == 0) return zeros(cat(batch_of(a.shape()), {n, m}), t);
  SVDResult d = svd(a, false, true);
  Array cutoff = multiply(max(d.S, -1, true), rcond);
  Array sinv = where(greater(d.S, cutoff), reciprocal(d.S), 0);
  // V diag(1/s) U^H: V read in place through a transposed view of the SVD's Vh (complex: of
  // conj(Vh), which the GEMM reads with op C).
  return matmul(hermitian_t(d.Vh), multiply(sinv.expand_dims(-1), hermitian_t(d.U)));
}

LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond) {
  const DType t = promote_types(linalg_dtype(a), linalg_dtype(b));
  if (a.ndim() != 2)
    throw ValueError(fmt::format("{}-dimensional array given. Array must be two-dimensional", a.ndim()));
  if (b.ndim() != 1 && b.ndim() != 2)
    throw ValueError(fmt::format("{}-dimensional array given. Array must be one or two-dimensional", b.ndim()));
  const int64_t m = a.shape(0), n = a.shape(1);
  if (b.shape(0) != m)
    throw ValueError(fmt::format("Incompatible dimensions: a {} and b {}", to_string(a.shape()), to_string(b.shape())));
  const bool vec = b.ndim() == 1;
  Array A = a.astype(t);
  Array B = (vec ? b.reshape({m, 1}) : b).astype(t);
  const int64_t K = B.shape(1);
  LstsqResult r;
  if (m == 0 || n == 0) {
    r.x = zeros(vec ? Shape{n} : Shape{n, K}, t);
    r.s = zeros({0}, real_dtype(t));
    r.rank = 0;
    r.residuals = (n == 0 && m > 0) ? sum(abs_squared(B), 0) : zeros({0}, real_dtype(t));
    return r;
  }
  const double rc = rcond ? *rcond : eps_of(t) * static_cast<double>(std::max(m, n));
  SVDResult d = svd(A, false, true);
  Array cutoff = multiply(max(d.S), rc);
  Array keep = greater(d.S, cutoff);
  Array sinv = where(keep, reciprocal(d.S), 0);
  Array utb = matmul(hermitian_t(d.U), B);  // (k, K)
  Array x = matmul(hermitian_t(d.Vh), multiply(sinv.expand_dims(-1), utb));  // (n, K)
  Array rank = count_nonzero(keep);
  Array sv = d.S;
  eval(x, rank, sv);  // one SVD for all three
  r.rank = rank.item<int64_t>();
  if (r.rank == n && m > n) {
    Array res = subtract(B, matmul(A, x));
    r.residuals = sum(abs_squared(res), 0);
  } else {
    r.residuals = zeros({0}, real_dtype(t));
  }
  r.x = vec ? x.reshape({n}) : x;
  r.s = sv;
  return r;
}

Array matrix_rank(const Array& a, std::optional<double> tol) {
  if (!a.defined()) throw ValueError("matrix_rank: the Array handle is empty");
  if (a.ndim() < 2) return any(not_equal(a, 0)).astype(DType::Int64);
  const DType t = linalg_dtype(a);
  const int64_t m = a.shape(-2), n = a.shape(-1);
  if (m == 0 || n == 0) return zeros(batch_of(a.shape()), DType::Int64);
  Array S = svdvals(a);
  Array thresh = tol ? full(Shape{}, Scalar(*tol), real_dtype(t))
                     : multiply(max(S, -1, true), eps_of(t) * static_cast<double>(std::max(m, n)));
  return count_nonzero(greater(S, thresh), -1);
}

Array norm(const Array& x, std::string_view ord, AxisArg axis, bool keepdims) {
  if (!x.defined()) throw ValueError("norm: the Array handle is empty");
  if (ord != "fro" && ord != "nuc") throw ValueError(fmt::format("Invalid norm order '{}' for matrices", ord));
  int r = 0, c = 1;
  if (axis.all()) {
    if (x.ndim() != 2) throw ValueError(fmt::format("Improper number of dimensions to norm (shape {})", to_string(x.shape())));
  } else if (axis.axes().size() == 2) {
    r = axis.axes()[0];
    c = axis.axes()[1];
  } else {
    throw ValueError(fmt::format("Invalid norm order '{}' for vectors", ord));
  }
  Array xf = is_float(x.dtype()) || is_complex(x.dtype()) ? x : x.astype(DType::Float64);
  if (ord == "fro") return detail::matrix_norm_axes(xf, std::nullopt, r, c, keepdims);
  // nuclear: the sum of the singular values over the two axes
  const int nd = xf.ndim();
  auto normax = [&](int ax) {
    if (ax < -nd || ax >= nd) throw IndexError(fmt::format("norm: axis {} is out of bounds for array of dimension {}", ax, nd));
    return ax < 0 ? ax + nd : ax;
  };
  r = normax(r);
  c = normax(c);
  if (r == c) throw ValueError("Duplicate axes given.");
  Axes perm;
  for (int d = 0; d < nd; ++d)
    if (d != r && d != c) perm.push_back(d);
  perm.push_back(r);
  perm.push_back(c);
  Array s = sum(svdvals(xf.transpose(perm)), -1);
  if (!keepdims) return s;
  Shape ks = xf.shape();
  ks[r] = 1;
  ks[c] = 1;
  return s.reshape(ks);
}

namespace {
Array vector_or_matrix_norm(const Array& x_in, std::optional<double> ord, AxisArg axis, bool keepdims) {
  Array x = is_float(x_in.dtype()) || is_complex(x_in.dtype()) ? x_in : x_in.astype(DType::Float64);
  // Matrix norms (2 axes, or a 2-D array with an ord): matrix_norm_axes below.
  if (axis.all() && ord && x.ndim() == 2) return detail::matrix_norm_axes(x, ord, 0, 1, keepdims);
  if (axis.all() && ord && x.ndim() > 2)
    throw ValueError(fmt::format("norm: improper number of dimensions to norm ({}-D with ord={})", x.ndim(), *ord));
  if (!axis.all() && axis.axes().size() == 2)
    return detail::matrix_norm_axes(x, ord, axis.axes()[0], axis.axes()[1], keepdims);
  if (!axis.all() && axis.axes().size() != 1) throw ValueError("norm: improper number of dimensions to norm");
  const double p = ord ? *ord : 2.0;
  if (std::isinf(p)) return p > 0 ? max(abs(x), axis, keepdims) : min(abs(x), axis, keepdims);
  if (p == 0) return sum(not_equal(x, 0), axis, keepdims, real_dtype(x.dtype()));
  if (p == 1) return sum(abs(x), axis, keepdims);
  if (p == 2) return sqrt(sum(abs_squared(x), axis, keepdims));
  Array s = sum(power(abs(x), p), axis, keepdims);
  return power(s, 1.0 / p);
}
}  // namespace

// x by value, dropped once the result is built (as the reductions of reduce.hpp).
Array norm(Array x, std::optional<double> ord, AxisArg axis, bool keepdims) {
  Array r = vector_or_matrix_norm(x, ord, axis, keepdims);
  x = Array();
  return r;
}
Array matrix_norm(const Array& x, std::string_view ord, bool keepdims) {
  if (!x.defined()) throw ValueError("matrix_norm: the Array handle is empty");
  at_least_2d(x);
  return norm(x, ord, AxisArg({-2, -1}), keepdims);
}

}  // namespace cufuse::linalg

namespace cufuse::detail {

Array matrix_norm_axes(const Array& x, std::optional<double> ord, int axis0, int axis1, bool keepdims) {
  const int nd = x.ndim();
  auto normax = [&](int ax) {
    if (ax < -nd || ax >= nd) throw IndexError(fmt::format("norm: axis {} is out of bounds for array of dimension {}", ax, nd));
    return ax < 0 ? ax + nd : ax;
  };
  int r = normax(axis0), c = normax(axis1);
  if (r == c) throw ValueError("Duplicate axes given.");
  Shape ks = x.shape();
  ks[r] = 1;
  ks[c] = 1;
  auto finish = [&](const Array& v) { return keepdims ? v.reshape(ks) : v; };
  if (!ord) return sqrt(sum(linalg::abs_squared(x), {r, c}, keepdims));
  const double o = *ord;
  if (o == 2 || o == -2) {
    Axes perm;
    for (int d = 0; d < nd; ++d)
      if (d != r && d != c) perm.push_back(d);
    perm.push_back(r);
    perm.push_back(c);
    Array s = linalg::svdvals(x.transpose(perm));
    return finish(o > 0 ? max(s, -1) : min(s, -1));
  }
  if (o == 1 || o == -1) {
    const int cc = c > r ? c - 1 : c;
    Array cs = sum(abs(x), r);
    return finish(o > 0 ? max(cs, cc) : min(cs, cc));
  }
  if (std::isinf(o)) {
    const int rr = r > c ? r - 1 : r;
    Array rs = sum(abs(x), c);
    return finish(o > 0 ? max(rs, rr) : min(rs, rr));
  }
  throw ValueError(fmt::format("Invalid norm order {} for matrices.", o));
}

}  // namespace cufuse::detail
