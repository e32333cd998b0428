// src/library/solver_reference.cpp: float64 and complex double host references of the solver
// nodes (one template over the element type): LU with partial pivoting (LAPACK getf2, on
// cuSOLVER's column-major view for the LU node), Gauss elimination for inv/solve, Cholesky,
// Householder QR (LAPACK's reflectors, complex ones included), one-sided Jacobi SVD, cyclic
// Jacobi eigh (a complex Hermitian pair is made real by a phase before its rotation). They are
// the oracle of the GPU tests and the reference backend's implementation; factor signs (phases)
// may differ from cuSOLVER's (tests compare invariants).
#include <limits>
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <type_traits>

#include "cufuse/error.hpp"
#include "library/host_math.hpp"
#include "library/solver_call.hpp"

namespace cufuse::detail {

namespace {

using cplx = std::complex<double>;
template <class T> inline constexpr bool kCplx = !std::is_same_v<T, double>;

inline double cj(double x) { return x; }
inline cplx cj(const cplx& x) { return std::conj(x); }
inline double re(double x) { return x; }
inline double re(const cplx& x) { return x.real(); }
inline double abs2(double x) { return x * x; }
inline double abs2(const cplx& x) { return std::norm(x); }
// LAPACK's pivot size (i?amax): |x|, or |re| + |im| for complex.
inline double cabs1(double x) { return std::fabs(x); }
inline double cabs1(const cplx& x) { return std::fabs(x.real()) + std::fabs(x.imag()); }
// x / |x| (1 for 0): the phase of a complex number.
inline cplx phase(const cplx& x) {
  const double a = std::abs(x);
  return a == 0 ? cplx(1.0) : x / a;
}

// A Givens rotation of two strided vectors: (x, y) <- (c x - s y, s x + c y) for the count
// pairs x = a[k * stride], y = b[k * stride] (two columns: stride n; two rows: stride 1).
template <class T>
void rotate(T* a, T* b, int64_t count, int64_t stride, double c, double s) {
  for (int64_t k = 0; k < count; ++k) {
    const T x = a[k * stride], y = b[k * stride];
    a[k * stride] = c * x - s * y;
    b[k * stride] = s * x + c * y;
  }
}
// Multiplies the strided vector a by f.
template <class T>
void scale(T* a, int64_t count, int64_t stride, const T& f) {
  for (int64_t k = 0; k < count; ++k) a[k * stride] *= f;
}

template <class T> using Mat = std::vector<T>;  // row-major

// LAPACK getf2 on the column-major n x n matrix at c (c[i + j*n]); ipiv 1-based. Returns
// the first zero pivot (1-based) or 0.
template <class T>
int lu_colmajor(T* c, int64_t n, int32_t* ipiv) {
  int info = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    double best = cabs1(c[j + j * n]);
    for (int64_t i = j + 1; i < n; ++i)
      if (cabs1(c[i + j * n]) > best) {
        best = cabs1(c[i + j * n]);
        p = i;
      }
    ipiv[j] = static_cast<int32_t>(p + 1);
    if (c[p + j * n] != T(0.0)) {
      if (p != j)
        for (int64_t k = 0; k < n; ++k) std::swap(c[j + k * n], c[p + k * n]);
      for (int64_t i = j + 1; i < n; ++i) c[i + j * n] /= c[j + j * n];
    } else if (!info) {
      info = static_cast<int>(j + 1);
    }
    for (int64_t k = j + 1; k < n; ++k) {
      const T f = c[j + k * n];
      for (int64_t i = j + 1; i < n; ++i) c[i + k * n] -= c[i + j * n] * f;
    }
  }
  return info;
}

// Solves A X = B (A n x n row-major, B n x k row-major, in place) by Gauss elimination with
// partial pivoting; throws "Singular matrix" on an exact zero pivot (LAPACK's condition), or
// under Errors::Ignore (raise false) gives NaN.
template <class T>
void gauss_solve(Mat<T> A, T* B, int64_t n, int64_t k, bool raise = true) {
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; ++i)
      if (cabs1(A[i * n + j]) > cabs1(A[p * n + j])) p = i;
    if (A[p * n + j] == T(0.0)) {
      if (raise) throw ValueError(kSingular);
      std::fill(B, B + n * k, T(std::numeric_limits<double>::quiet_NaN()));
      return;
    }
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(A[j * n + c], A[p * n + c]);
      for (int64_t c = 0; c < k; ++c) std::swap(B[j * k + c], B[p * k + c]);
    }
    for (int64_t i = j + 1; i < n; ++i) {
      const T f = A[i * n + j] / A[j * n + j];
      if (f == T(0.0)) continue;
      for (int64_t c = j; c < n; ++c) A[i * n + c] -= f * A[j * n + c];
      for (int64_t c = 0; c < k; ++c) B[i * k + c] -= f * B[j * k + c];
    }
  }
  for (int64_t j = n - 1; j >= 0; --j)
    for (int64_t c = 0; c < k; ++c) {
      T v = B[j * k + c];
      for (int64_t i = j + 1; i < n; ++i) v -= A[j * n + i] * B[i * k + c];
      B[j * k + c] = v / A[j * n + j];
    }
}

// Householder QR of A (m x n): Q (m x m), R (m x n), LAPACK's reflector convention (?larfg:
// H = I - tau v v^H, H^H (alpha, x) = (beta, 0) with beta real; Q = H_1 ... H_k, R = Q^H A).
template <class T>
void householder_qr(const T* a, int64_t m, int64_t n, Mat<T>& Q, Mat<T>& R) {
  R.assign(a, a + m * n);
  Q.assign(static_cast<size_t>(m * m), T(0.0));
  for (int64_t i = 0; i < m; ++i) Q[i * m + i] = 1;
  const int64_t k = std::min(m, n);
  std::vector<T> v(static_cast<size_t>(m));
  for (int64_t j = 0; j < k; ++j) {
    double xn = 0;
    for (int64_t i = j + 1; i < m; ++i) xn += abs2(R[i * n + j]);
    const T alpha = R[j * n + j];
    if (xn == 0 && re(alpha) == alpha) continue;  // already triangular, beta real: H = I
    const double beta = -std::copysign(std::sqrt(abs2(alpha) + xn), re(alpha));
    const T tau = (beta - alpha) / beta;
    v[j] = 1;
    for (int64_t i = j + 1; i < m; ++i) v[i] = R[i * n + j] / (alpha - beta);
    for (int64_t c = j; c < n; ++c) {  // R = H^H R
      T s = 0;
      for (int64_t i = j; i < m; ++i) s += cj(v[i]) * R[i * n + c];
      s *= cj(tau);
      for (int64_t i = j; i < m; ++i) R[i * n + c] -= s * v[i];
    }
    for (int64_t r = 0; r < m; ++r) {  // Q = Q H
      T s = 0;
      for (int64_t i = j; i < m; ++i) s += Q[r * m + i] * v[i];
      s *= tau;
      for (int64_t i = j; i < m; ++i) Q[r * m + i] -= s * cj(v[i]);
    }
    R[j * n + j] = beta;
    for (int64_t i = j + 1; i < m; ++i) R[i * n + j] = 0;
  }
}

// Completes the orthonormal columns `have` of U (rows x cols, row-major) to all cols
// columns with unit vectors orthogonalized against the others (twice).
template <class T>
void complete_basis(Mat<T>& U, int64_t rows, int64_t cols, std::vector<bool>& have) {
  std::vector<T> w(static_cast<size_t>(rows));
  int64_t cand = 0;
  for (int64_t c = 0; c < cols; ++c) {
    if (have[c]) continue;
    for (; cand < rows; ++cand) {
      std::fill(w.begin(), w.end(), T(0.0));
      w[cand] = 1;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t o = 0; o < cols; ++o) {
          if (!have[o]) continue;
          T d = 0;
          for (int64_t r = 0; r < rows; ++r) d += cj(U[r * cols + o]) * w[r];
          for (int64_t r = 0; r < rows; ++r) w[r] -= d * U[r * cols + o];
        }
      double nrm = 0;
      for (const T& x : w) nrm += abs2(x);
      nrm = std::sqrt(nrm);
      if (nrm > 1e-6) {
        for (int64_t r = 0; r < rows; ++r) U[r * cols + c] = w[r] / nrm;
        have[c] = true;
        ++cand;
        break;
      }
    }
  }
}

// One-sided Jacobi SVD of A (m x n, m >= n): A = U diag(S) V^H with U (m x ucols) where
// ucols = m (full) or n, S descending, V (n x n). A complex pair of columns is made real
// (column q times the conjugate phase of their product) before its real rotation.
template <class T>
void jacobi_svd(const T* a, int64_t m, int64_t n, bool full, Mat<T>& U, std::vector<double>& S, Mat<T>& V) {
  Mat<T> W(a, a + m * n);  // columns rotate towards orthogonality
  V.assign(static_cast<size_t>(n * n), T(0.0));
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1;
  for (int sweep = 0; sweep < 80; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double al = 0, be = 0;
        T ga = 0;
        for (int64_t r = 0; r < m; ++r) {
          al += abs2(W[r * n + p]);
          be += abs2(W[r * n + q]);
          ga += cj(W[r * n + p]) * W[r * n + q];
        }
        if (ga == T(0.0) || al == 0 || be == 0) continue;
        const double g = std::abs(ga);
        const double rel = g / std::sqrt(al * be);
        off = std::max(off, rel);
        if (rel < 1e-16) continue;
        double gr = re(ga);
        if constexpr (kCplx<T>) {  // w_q e^{-i phi}: the pair's product becomes |ga|
          const T ph = std::conj(phase(ga));
          scale(&W[q], m, n, ph);
          scale(&V[q], n, n, ph);
          gr = g;
        }
        const double zeta = (be - al) / (2 * gr);
        const double t = std::copysign(1.0, zeta) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const double c = 1 / std::sqrt(1 + t * t), s = c * t;
        rotate(&W[p], &W[q], m, n, c, s);
        rotate(&V[p], &V[q], n, n, c, s);
      }
    if (off < 1e-15) break;
  }
  std::vector<double> sig(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    double s2 = 0;
    for (int64_t r = 0; r < m; ++r) s2 += abs2(W[r * n + j]);
    sig[j] = std::sqrt(s2);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sig[x] > sig[y]; });
  const int64_t uc = full ? m : n;
  U.assign(static_cast<size_t>(m * uc), T(0.0));
  S.assign(static_cast<size_t>(n), 0.0);
  Mat<T> Vs(static_cast<size_t>(n * n));
  std::vector<bool> have(static_cast<size_t>(uc), false);
  const double tiny = (sig.empty() ? 0.0 : sig[order[0]]) * 1e-300 + 1e-300;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t o = order[j];
    S[j] = sig[o];
    for (int64_t r = 0; r < n; ++r) Vs[r * n + j] = V[r * n + o];
    if (sig[o] > tiny) {
      for (int64_t r = 0; r < m; ++r) U[r * uc + j] = W[r * n + o] / sig[o];
      have[j] = true;
    }
  }
  V = std::move(Vs);
  complete_basis(U, m, uc, have);
}

// Cyclic Jacobi on the Hermitian (symmetric) matrix A (n x n): ascending w, V with vectors in
// columns. A complex pair (p, q) is first made real by the unitary diag(1, e^{-i phi}) (A's
// row q times e^{i phi}, column q and V's column q times e^{-i phi}), then rotated as a real one.
template <class T>
void jacobi_eigh(Mat<T> A, int64_t n, std::vector<double>& w, Mat<T>& V) {
  V.assign(static_cast<size_t>(n * n), T(0.0));
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1;
  double total = 0;
  for (const T& x : A) total += abs2(x);
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += abs2(A[p * n + q]);
    if (off <= 1e-32 * total || !(off == off)) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        if (A[p * n + q] == T(0.0)) continue;
        if constexpr (kCplx<T>) {
          const T ph = phase(A[p * n + q]);  // e^{i phi}
          scale(&A[q], n, n, std::conj(ph));  // column q
          scale(&A[q * n], n, 1, ph);         // row q
          scale(&V[q], n, n, std::conj(ph));
          A[q * n + q] = re(A[q * n + q]);
          A[p * n + q] = std::abs(A[p * n + q]);
          A[q * n + p] = A[p * n + q];
        }
        const double apq = re(A[p * n + q]);
        const double theta = (re(A[q * n + q]) - re(A[p * n + p])) / (2 * apq);
        const double t = std::copysign(1.0, theta) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        rotate(&A[p], &A[q], n, n, c, s);          // A = A J (columns p, q)
        rotate(&A[p * n], &A[q * n], n, 1, c, s);  // A = J^T A (rows p, q)
        rotate(&V[p], &V[q], n, n, c, s);
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return re(A[x * n + x]) < re(A[y * n + y]); });
  w.assign(static_cast<size_t>(n), 0.0);
  Mat<T> Vs(static_cast<size_t>(n * n));
  for (int64_t j = 0; j < n; ++j) {
    w[j] = re(A[order[j] * n + order[j]]);
    for (int64_t r = 0; r < n; ++r) Vs[r * n + j] = V[r * n + order[j]];
  }
  V = std::move(Vs);
}

// The reference run over element type T (double: real dtypes; complex double: complex ones).
// Real-valued outputs (singular values, eigenvalues) are collected as T with a zero imaginary
// part and stored into their real dtype.
template <class T>
void solver_reference(const SolverSpec& s, const std::vector<const HostArray*>& in, std::vector<HostArray>& out) {
  const int64_t nb = numel(s.batch), m = s.m, n = s.n, k = std::min(m, n);
  const Mat<T> A = to_values<T>(*in[0]);
  const Mat<T> Bv = s.kind == SolverKind::Solve ? to_values<T>(*in[1]) : Mat<T>{};
  std::vector<Mat<T>> res(out.size());
  for (size_t o = 0; o < out.size(); ++o) res[o].assign(static_cast<size_t>(out[o].size()), T(0.0));
  for (int64_t b = 0; b < nb; ++b) {
    const T* a = A.data() + b * m * n;
    switch (s.kind) {
      case SolverKind::LU: {
        Mat<T> c(a, a + n * n);  // cuSOLVER's column-major view of row-major A is A^T: same memory
        std::vector<int32_t> piv(static_cast<size_t>(n));
        lu_colmajor(c.data(), n, piv.data());
        std::copy(c.begin(), c.end(), res[0].begin() + b * n * n);
        for (int64_t i = 0; i < n; ++i) res[1][b * n + i] = piv[i];
        break;
      }
      case SolverKind::Inv: {
        T* x = res[0].data() + b * n * n;
        for (int64_t i = 0; i < n; ++i) x[i * n + i] = 1;
        gauss_solve(Mat<T>(a, a + n * n), x, n, n, s.check_errors);
        break;
      }
      case SolverKind::Solve: {
        const int64_t kk = s.vector_rhs ? 1 : s.nrhs;
        T* x = res[0].data() + b * n * kk;
        std::copy(Bv.begin() + b * n * kk, Bv.begin() + (b + 1) * n * kk, x);
        gauss_solve(Mat<T>(a, a + n * n), x, n, kk, s.check_errors);
        break;
      }
      case SolverKind::Cholesky: {  // A = L L^H from A's lower triangle
        T* L = res[0].data() + b * n * n;
        for (int64_t j = 0; j < n; ++j) {
          double d = re(a[j * n + j]);
          for (int64_t t = 0; t < j; ++t) d -= abs2(L[j * n + t]);
          if (!(d > 0)) {
            if (s.check_errors) throw ValueError(kNotPositiveDefinite);
            d = std::numeric_limits<double>::quiet_NaN();  // NaN from here on, as cuSOLVER leaves garbage
          }
          L[j * n + j] = std::sqrt(d);
          for (int64_t i = j + 1; i < n; ++i) {
            T v = a[i * n + j];
            for (int64_t t = 0; t < j; ++t) v -= L[i * n + t] * cj(L[j * n + t]);
            L[i * n + j] = v / L[j * n + j];
          }
        }
        break;
      }
      case SolverKind::QR: {
        Mat<T> Q, R;
        householder_qr(a, m, n, Q, R);
        const int64_t kq = s.qr_mode == 1 ? m : k, kr = s.qr_mode == 1 ? m : k;
        if (s.qr_mode != 2)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < kq; ++j) res[0][b * m * kq + i * kq + j] = Q[i * m + j];
        Mat<T>& r = res[s.qr_mode == 2 ? 0 : 1];
        for (int64_t i = 0; i < kr; ++i)
          for (int64_t j = 0; j < n; ++j) r[b * kr * n + i * n + j] = R[i * n + j];
        break;
      }
      case SolverKind::SVD: {
        Mat<T> U, V;
        std::vector<double> S;
        const bool tall = m >= n;
        Mat<T> src(a, a + m * n);
        if (!tall) {  // SVD of A^H: A = V S U^H
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) src[j * m + i] = cj(a[i * n + j]);
        }
        const int64_t r = tall ? m : n, c = tall ? n : m;  // rows/cols of the matrix decomposed
        jacobi_svd(src.data(), r, c, s.full, U, S, V);      // U (r x uc), V (c x c)
        const int64_t uc = s.full ? r : c;
        Mat<T>& sv = res[s.vectors ? 1 : 0];
        for (int64_t j = 0; j < k; ++j) sv[b * k + j] = S[j];
        if (!s.vectors) break;
        const int64_t ku = s.full ? m : k, kv = s.full ? n : k;
        T* Uo = res[0].data() + b * m * ku;
        T* Vo = res[2].data() + b * kv * n;
        if (tall) {  // U_A = U, Vh = V^H
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ku; ++j) Uo[i * ku + j] = U[i * uc + j];
          for (int64_t i = 0; i < kv; ++i)
            for (int64_t j = 0; j < n; ++j) Vo[i * n + j] = cj(V[j * n + i]);
        } else {  // U_A = V (m x m), Vh = U^H (kv x n)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ku; ++j) Uo[i * ku + j] = V[i * m + j];
          for (int64_t i = 0; i < kv; ++i)
            for (int64_t j = 0; j < n; ++j) Vo[i * n + j] = cj(U[j * uc + i]);
        }
        break;
      }
      case SolverKind::Eigh: {  // the Hermitian matrix of A's lower (upper) triangle, real diagonal
        Mat<T> sym(static_cast<size_t>(n * n));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const bool from_lower = s.lower ? i >= j : i <= j;
            sym[i * n + j] = i == j ? T(re(a[i * n + j])) : from_lower ? a[i * n + j] : cj(a[j * n + i]);
          }
        std::vector<double> w;
        Mat<T> V;
        jacobi_eigh(std::move(sym), n, w, V);
        std::copy(w.begin(), w.end(), res[0].begin() + b * n);
        if (s.vectors) std::copy(V.begin(), V.end(), res[1].begin() + b * n * n);
        break;
      }
    }
  }
  for (size_t o = 0; o < out.size(); ++o) from_values(out[o], res[o]);
}

}  // namespace

void run_solver_reference(const SolverSpec& s, const std::vector<const HostArray*>& in, std::vector<HostArray>& out) {
  if (is_complex(s.dtype)) solver_reference<cplx>(s, in, out);
  else solver_reference<double>(s, in, out);
}

}  // namespace cufuse::detail
