// src/library/solver_reference.cpp: float64 host references of the solver nodes: LU with
// partial pivoting (LAPACK getf2, on cuSOLVER's column-major view for the LU node), Gauss
// elimination for inv/solve, Cholesky, Householder QR, one-sided Jacobi SVD, cyclic Jacobi
// eigh. They are the oracle of the GPU tests and the reference backend's implementation;
// factor signs may differ from cuSOLVER's (tests compare invariants).
#include <limits>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "cufuse/error.hpp"
#include "library/host_math.hpp"
#include "library/solver_call.hpp"

namespace cufuse::detail {

namespace {

// A Givens rotation of two strided vectors: (x, y) <- (c x - s y, s x + c y) for the count
// pairs x = a[k * stride], y = b[k * stride] (two columns: stride n; two rows: stride 1).
void rotate(double* a, double* b, int64_t count, int64_t stride, double c, double s) {
  for (int64_t k = 0; k < count; ++k) {
    const double x = a[k * stride], y = b[k * stride];
    a[k * stride] = c * x - s * y;
    b[k * stride] = s * x + c * y;
  }
}

using Mat = std::vector<double>;  // row-major

// LAPACK getf2 on the column-major n x n matrix at c (c[i + j*n]); ipiv 1-based. Returns
// the first zero pivot (1-based) or 0.
int lu_colmajor(double* c, int64_t n, int32_t* ipiv) {
  int info = 0;
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    double best = std::fabs(c[j + j * n]);
    for (int64_t i = j + 1; i < n; ++i)
      if (std::fabs(c[i + j * n]) > best) {
        best = std::fabs(c[i + j * n]);
        p = i;
      }
    ipiv[j] = static_cast<int32_t>(p + 1);
    if (c[p + j * n] != 0) {
      if (p != j)
        for (int64_t k = 0; k < n; ++k) std::swap(c[j + k * n], c[p + k * n]);
      for (int64_t i = j + 1; i < n; ++i) c[i + j * n] /= c[j + j * n];
    } else if (!info) {
      info = static_cast<int>(j + 1);
    }
    for (int64_t k = j + 1; k < n; ++k) {
      const double f = c[j + k * n];
      for (int64_t i = j + 1; i < n; ++i) c[i + k * n] -= c[i + j * n] * f;
    }
  }
  return info;
}

// Solves A X = B (A n x n row-major, B n x k row-major, in place) by Gauss elimination with
// partial pivoting; throws "Singular matrix" on an exact zero pivot (LAPACK's condition), or
// under Errors::Ignore (raise false) gives NaN.
void gauss_solve(Mat A, double* B, int64_t n, int64_t k, bool raise = true) {
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = j;
    for (int64_t i = j + 1; i < n; ++i)
      if (std::fabs(A[i * n + j]) > std::fabs(A[p * n + j])) p = i;
    if (A[p * n + j] == 0) {
      if (raise) throw ValueError(kSingular);
      std::fill(B, B + n * k, std::numeric_limits<double>::quiet_NaN());
      return;
    }
    if (p != j) {
      for (int64_t c = 0; c < n; ++c) std::swap(A[j * n + c], A[p * n + c]);
      for (int64_t c = 0; c < k; ++c) std::swap(B[j * k + c], B[p * k + c]);
    }
    for (int64_t i = j + 1; i < n; ++i) {
      const double f = A[i * n + j] / A[j * n + j];
      if (f == 0) continue;
      for (int64_t c = j; c < n; ++c) A[i * n + c] -= f * A[j * n + c];
      for (int64_t c = 0; c < k; ++c) B[i * k + c] -= f * B[j * k + c];
    }
  }
  for (int64_t j = n - 1; j >= 0; --j)
    for (int64_t c = 0; c < k; ++c) {
      double v = B[j * k + c];
      for (int64_t i = j + 1; i < n; ++i) v -= A[j * n + i] * B[i * k + c];
      B[j * k + c] = v / A[j * n + j];
    }
}

// Householder QR of A (m x n): Q (m x m), R (m x n), LAPACK's reflector convention.
void householder_qr(const double* a, int64_t m, int64_t n, Mat& Q, Mat& R) {
  R.assign(a, a + m * n);
  Q.assign(static_cast<size_t>(m * m), 0.0);
  for (int64_t i = 0; i < m; ++i) Q[i * m + i] = 1;
  const int64_t k = std::min(m, n);
  std::vector<double> v(static_cast<size_t>(m));
  for (int64_t j = 0; j < k; ++j) {
    double xn = 0;
    for (int64_t i = j + 1; i < m; ++i) xn += R[i * n + j] * R[i * n + j];
    if (xn == 0) continue;  // already triangular in this column: H = I
    const double alpha = R[j * n + j];
    const double beta = -std::copysign(std::sqrt(alpha * alpha + xn), alpha);
    const double tau = (beta - alpha) / beta;
    v[j] = 1;
    for (int64_t i = j + 1; i < m; ++i) v[i] = R[i * n + j] / (alpha - beta);
    for (int64_t c = j; c < n; ++c) {  // R = H R
      double s = 0;
      for (int64_t i = j; i < m; ++i) s += v[i] * R[i * n + c];
      s *= tau;
      for (int64_t i = j; i < m; ++i) R[i * n + c] -= s * v[i];
    }
    for (int64_t r = 0; r < m; ++r) {  // Q = Q H
      double s = 0;
      for (int64_t i = j; i < m; ++i) s += Q[r * m + i] * v[i];
      s *= tau;
      for (int64_t i = j; i < m; ++i) Q[r * m + i] -= s * v[i];
    }
    for (int64_t i = j + 1; i < m; ++i) R[i * n + j] = 0;
  }
}

// Completes the orthonormal columns `have` of U (rows x cols, row-major) to all cols
// columns with unit vectors orthogonalized against the others (twice).
void complete_basis(Mat& U, int64_t rows, int64_t cols, std::vector<bool>& have) {
  std::vector<double> w(static_cast<size_t>(rows));
  int64_t cand = 0;
  for (int64_t c = 0; c < cols; ++c) {
    if (have[c]) continue;
    for (; cand < rows; ++cand) {
      std::fill(w.begin(), w.end(), 0.0);
      w[cand] = 1;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t o = 0; o < cols; ++o) {
          if (!have[o]) continue;
          double d = 0;
          for (int64_t r = 0; r < rows; ++r) d += U[r * cols + o] * w[r];
          for (int64_t r = 0; r < rows; ++r) w[r] -= d * U[r * cols + o];
        }
      double nrm = 0;
      for (double x : w) nrm += x * x;
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

// One-sided Jacobi SVD of A (m x n, m >= n): A = U diag(S) V^T with U (m x ucols) where
// ucols = m (full) or n, S descending, V (n x n).
void jacobi_svd(const double* a, int64_t m, int64_t n, bool full, Mat& U, std::vector<double>& S, Mat& V) {
  Mat W(a, a + m * n);  // columns rotate towards orthogonality
  V.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1;
  for (int sweep = 0; sweep < 80; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double al = 0, be = 0, ga = 0;
        for (int64_t r = 0; r < m; ++r) {
          al += W[r * n + p] * W[r * n + p];
          be += W[r * n + q] * W[r * n + q];
          ga += W[r * n + p] * W[r * n + q];
        }
        if (ga == 0 || al == 0 || be == 0) continue;
        const double rel = std::fabs(ga) / std::sqrt(al * be);
        off = std::max(off, rel);
        if (rel < 1e-16) continue;
        const double zeta = (be - al) / (2 * ga);
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
    for (int64_t r = 0; r < m; ++r) s2 += W[r * n + j] * W[r * n + j];
    sig[j] = std::sqrt(s2);
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return sig[x] > sig[y]; });
  const int64_t uc = full ? m : n;
  U.assign(static_cast<size_t>(m * uc), 0.0);
  S.assign(static_cast<size_t>(n), 0.0);
  Mat Vs(static_cast<size_t>(n * n));
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

// Cyclic Jacobi on the symmetric matrix A (n x n): ascending w, V with vectors in columns.
void jacobi_eigh(Mat A, int64_t n, std::vector<double>& w, Mat& V) {
  V.assign(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) V[i * n + i] = 1;
  double total = 0;
  for (double x : A) total += x * x;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) off += A[p * n + q] * A[p * n + q];
    if (off <= 1e-32 * total || !(off == off)) break;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const double apq = A[p * n + q];
        if (apq == 0) continue;
        const double theta = (A[q * n + q] - A[p * n + p]) / (2 * apq);
        const double t = std::copysign(1.0, theta) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        const double c = 1 / std::sqrt(t * t + 1), s = t * c;
        rotate(&A[p], &A[q], n, n, c, s);          // A = A J (columns p, q)
        rotate(&A[p * n], &A[q * n], n, 1, c, s);  // A = J^T A (rows p, q)
        rotate(&V[p], &V[q], n, n, c, s);
      }
  }
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return A[x * n + x] < A[y * n + y]; });
  w.assign(static_cast<size_t>(n), 0.0);
  Mat Vs(static_cast<size_t>(n * n));
  for (int64_t j = 0; j < n; ++j) {
    w[j] = A[order[j] * n + order[j]];
    for (int64_t r = 0; r < n; ++r) Vs[r * n + j] = V[r * n + order[j]];
  }
  V = std::move(Vs);
}

}  // namespace

void run_solver_reference(const SolverSpec& s, const std::vector<const HostArray*>& in, std::vector<HostArray>& out) {
  const int64_t nb = numel(s.batch), m = s.m, n = s.n, k = std::min(m, n);
  const Mat A = to_doubles(*in[0]);
  const Mat Bv = s.kind == SolverKind::Solve ? to_doubles(*in[1]) : Mat{};
  std::vector<Mat> res(out.size());
  for (size_t o = 0; o < out.size(); ++o) res[o].assign(static_cast<size_t>(out[o].size()), 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    const double* a = A.data() + b * m * n;
    switch (s.kind) {
      case SolverKind::LU: {
        Mat c(a, a + n * n);  // cuSOLVER's column-major view of row-major A is A^T: same memory
        std::vector<int32_t> piv(static_cast<size_t>(n));
        lu_colmajor(c.data(), n, piv.data());
        std::copy(c.begin(), c.end(), res[0].begin() + b * n * n);
        for (int64_t i = 0; i < n; ++i) res[1][b * n + i] = piv[i];
        break;
      }
      case SolverKind::Inv: {
        double* x = res[0].data() + b * n * n;
        for (int64_t i = 0; i < n; ++i) x[i * n + i] = 1;
        gauss_solve(Mat(a, a + n * n), x, n, n, s.check_errors);
        break;
      }
      case SolverKind::Solve: {
        const int64_t kk = s.vector_rhs ? 1 : s.nrhs;
        double* x = res[0].data() + b * n * kk;
        std::copy(Bv.begin() + b * n * kk, Bv.begin() + (b + 1) * n * kk, x);
        gauss_solve(Mat(a, a + n * n), x, n, kk, s.check_errors);
        break;
      }
      case SolverKind::Cholesky: {
        double* L = res[0].data() + b * n * n;
        for (int64_t j = 0; j < n; ++j) {
          double d = a[j * n + j];
          for (int64_t t = 0; t < j; ++t) d -= L[j * n + t] * L[j * n + t];
          if (!(d > 0)) {
            if (s.check_errors) throw ValueError(kNotPositiveDefinite);
            d = std::numeric_limits<double>::quiet_NaN();  // NaN from here on, as cuSOLVER leaves garbage
          }
          L[j * n + j] = std::sqrt(d);
          for (int64_t i = j + 1; i < n; ++i) {
            double v = a[i * n + j];
            for (int64_t t = 0; t < j; ++t) v -= L[i * n + t] * L[j * n + t];
            L[i * n + j] = v / L[j * n + j];
          }
        }
        break;
      }
      case SolverKind::QR: {
        Mat Q, R;
        householder_qr(a, m, n, Q, R);
        const int64_t kq = s.qr_mode == 1 ? m : k, kr = s.qr_mode == 1 ? m : k;
        if (s.qr_mode != 2)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < kq; ++j) res[0][b * m * kq + i * kq + j] = Q[i * m + j];
        Mat& r = res[s.qr_mode == 2 ? 0 : 1];
        for (int64_t i = 0; i < kr; ++i)
          for (int64_t j = 0; j < n; ++j) r[b * kr * n + i * n + j] = R[i * n + j];
        break;
      }
      case SolverKind::SVD: {
        Mat U, V;
        std::vector<double> S;
        const bool tall = m >= n;
        Mat src(a, a + m * n);
        if (!tall) {  // SVD of A^T: A = V S U^T
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) src[j * m + i] = a[i * n + j];
        }
        const int64_t r = tall ? m : n, c = tall ? n : m;  // rows/cols of the matrix decomposed
        jacobi_svd(src.data(), r, c, s.full, U, S, V);      // U (r x uc), V (c x c)
        const int64_t uc = s.full ? r : c;
        Mat& sv = res[s.vectors ? 1 : 0];
        for (int64_t j = 0; j < k; ++j) sv[b * k + j] = S[j];
        if (!s.vectors) break;
        const int64_t ku = s.full ? m : k, kv = s.full ? n : k;
        double* Uo = res[0].data() + b * m * ku;
        double* Vo = res[2].data() + b * kv * n;
        if (tall) {  // U_A = U, Vh = V^T
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ku; ++j) Uo[i * ku + j] = U[i * uc + j];
          for (int64_t i = 0; i < kv; ++i)
            for (int64_t j = 0; j < n; ++j) Vo[i * n + j] = V[j * n + i];
        } else {  // U_A = V (m x m), Vh = U^T (kv x n)
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < ku; ++j) Uo[i * ku + j] = V[i * m + j];
          for (int64_t i = 0; i < kv; ++i)
            for (int64_t j = 0; j < n; ++j) Vo[i * n + j] = U[j * uc + i];
        }
        break;
      }
      case SolverKind::Eigh: {
        Mat sym(static_cast<size_t>(n * n));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const bool from_lower = s.lower ? i >= j : i <= j;
            sym[i * n + j] = from_lower ? a[i * n + j] : a[j * n + i];
          }
        std::vector<double> w;
        Mat V;
        jacobi_eigh(std::move(sym), n, w, V);
        std::copy(w.begin(), w.end(), res[0].begin() + b * n);
        if (s.vectors) std::copy(V.begin(), V.end(), res[1].begin() + b * n * n);
        break;
      }
    }
  }
  for (size_t o = 0; o < out.size(); ++o) from_doubles(out[o], res[o]);
}

}  // namespace cufuse::detail
