// src/library/solver_cuda.cpp: the solver nodes on the device (cuSOLVER, cuBLAS batched LU
// for small matrices), one template over float, double, cuComplex and cuDoubleComplex.
// Row-major memory read column-major is the transpose (never the conjugate transpose); see the
// table in solver_call.hpp for what each kind computes and solver_call.hpp's header comment
// for how the transposes are used or undone (transpose_device: cublas<t>geam).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "cufuse/error.hpp"
#include "library/blas_runtime.hpp"
#include "library/solver_call.hpp"
#include "library/solver_typed.hpp"
#include "runtime/device.hpp"
#include "runtime/transfer.hpp"

namespace cufuse::detail {

namespace {

// The typed entry points (float, double, cuComplex, cuDoubleComplex): solver_typed.hpp.
using namespace solver_typed;

// cuBLAS's batched LU pays off for many small matrices; cuSOLVER's getrf for the rest.
constexpr int64_t kSmallLU = 32;

int as_int(int64_t v, const char* what) {
  if (v > INT_MAX) throw NotSupportedError(fmt::format("linalg: {} = {} is past cuSOLVER's 32-bit sizes", what, v));
  return static_cast<int>(v);
}

template <class T>
struct Solver {
  using R = RealOf<T>;  // singular values, eigenvalues
  const SolverSpec& s;
  void* stream;
  cusolverDnHandle_t h;
  int64_t nb;
  DType t;

  template <class U = T>
  U* scratch(std::vector<std::shared_ptr<Storage>>& keep, int64_t count) {
    keep.push_back(device_scratch(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(U)));
    return static_cast<U*>(keep.back()->ptr);
  }
  int* ints(std::vector<std::shared_ptr<Storage>>& keep, int64_t count) {
    keep.push_back(device_scratch(static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(int)));
    memset_device(keep.back()->ptr, 0, static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(int), stream);
    return static_cast<int*>(keep.back()->ptr);
  }
  // Throws `msg` if any info is positive (reads it back: synchronizes the stream).
  void check_info(const int* info, int64_t count, const char* msg) {
    for (int v : read_device_ints(info, count, stream)) {
      if (v > 0) throw ValueError(msg);
      if (v < 0) throw InternalError(fmt::format("cuSOLVER rejected parameter {} of linalg.{}", -v, solver_kind_name(s.kind)));
    }
  }

  // A data-dependent error (singular, not positive definite): NumPy's, unless the call was
  // written under Errors::Ignore (then no read-back and no wait).
  void check_data(const int* info, int64_t count, const char* msg) {
    if (s.check_errors) check_info(info, count, msg);
  }

  // LU of the n x n column-major matrices at lu (contiguous), pivots at piv, info per matrix.
  void lu(T* lu, int64_t n, int* piv, int* info, std::vector<std::shared_ptr<Storage>>& keep) {
    const int ni = as_int(n, "n");
    if (nb > 1 && n <= kSmallLU) {
      keep.push_back(device_pointer_array(lu, n * n * static_cast<int64_t>(sizeof(T)), nb, stream));
      CUFUSE_CUBLAS_CHECK(getrf_batched(cublas_handle(stream), ni, static_cast<T**>(keep.back()->ptr), ni, piv, info,
                                        as_int(nb, "batch")));
      return;
    }
    int lwork = 0;
    CUFUSE_CUSOLVER_CHECK(getrf_bs(h, ni, ni, lu, ni, &lwork));
    T* ws = scratch(keep, lwork);
    for (int64_t b = 0; b < nb; ++b) CUFUSE_CUSOLVER_CHECK(getrf(h, ni, ni, lu + b * n * n, ni, ws, piv + b * n, info + b));
  }

  // Solves op(LU) X = B for the column-major n x k right-hand sides at x (in place).
  void lu_solve(T* lu, int64_t n, const int* piv, cublasOperation_t op, T* x, int64_t k,
                std::vector<std::shared_ptr<Storage>>& keep) {
    const int ni = as_int(n, "n"), ki = as_int(k, "nrhs");
    if (nb > 1 && n <= kSmallLU) {
      auto pa = device_pointer_array(lu, n * n * static_cast<int64_t>(sizeof(T)), nb, stream);
      auto pb = device_pointer_array(x, n * k * static_cast<int64_t>(sizeof(T)), nb, stream);
      int host_info = 0;  // cuBLAS's getrsBatched reports parameter errors on the host
      CUFUSE_CUBLAS_CHECK(getrs_batched(cublas_handle(stream), op, ni, ki, static_cast<T**>(pa->ptr), ni, piv,
                                        static_cast<T**>(pb->ptr), ni, &host_info, as_int(nb, "batch")));
      if (host_info != 0) throw InternalError(fmt::format("cublasXgetrsBatched rejected parameter {}", -host_info));
      keep.push_back(pa);
      keep.push_back(pb);
      return;
    }
    int* info = ints(keep, nb);
    for (int64_t b = 0; b < nb; ++b)
      CUFUSE_CUSOLVER_CHECK(getrs(h, op, ni, ki, lu + b * n * n, ni, piv + b * n, x + b * n * k, ni, info + b));
  }

  void run(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out) {
    std::vector<std::shared_ptr<Storage>> keep;
    const int64_t m = s.m, n = s.n, k = std::min(m, n);
    const T* A = static_cast<const T*>(in[0].ptr);
    const size_t mat = static_cast<size_t>(m * n) * sizeof(T);
    switch (s.kind) {
      case SolverKind::LU: {  // no error: det of a singular matrix is 0
        T* lu_out = static_cast<T*>(out[0].ptr);
        copy_device(lu_out, A, mat * static_cast<size_t>(nb), stream);
        lu(lu_out, n, static_cast<int*>(out[1].ptr), ints(keep, nb), keep);
        break;
      }
      case SolverKind::Inv: {  // LU of A^T, then A^T Y = I: Y read row-major is inv(A)
        T* f = scratch(keep, nb * n * n);
        copy_device(f, A, mat * static_cast<size_t>(nb), stream);
        int* piv = ints(keep, nb * n);
        int* info = ints(keep, nb);
        lu(f, n, piv, info, keep);
        T* x = static_cast<T*>(out[0].ptr);
        // U^-1 L^-1 P: the permuted identity built from the pivots, then two triangular
        // solves (getrs would permute the identity's rows with laswp, a quarter of its time).
        if (!(nb > 1 && n <= kSmallLU) && fill_permuted_identity(t, n, nb, piv, x, stream)) {
          cublasHandle_t bh = cublas_handle(stream);
          for (int64_t b = 0; b < nb; ++b) {
            CUFUSE_CUBLAS_CHECK(trsm(bh, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_UNIT, n, n, f + b * n * n, x + b * n * n));
            CUFUSE_CUBLAS_CHECK(trsm(bh, CUBLAS_FILL_MODE_UPPER, CUBLAS_DIAG_NON_UNIT, n, n, f + b * n * n, x + b * n * n));
          }
        } else {
          fill_identity(t, n, nb, x, stream);
          lu_solve(f, n, piv, CUBLAS_OP_N, x, n, keep);
        }
        check_data(info, nb, kSingular);
        break;
      }
      case SolverKind::Solve: {  // LU of A^T, then (A^T)^T X = B
        T* f = scratch(keep, nb * n * n);
        copy_device(f, A, mat * static_cast<size_t>(nb), stream);
        int* piv = ints(keep, nb * n);
        int* info = ints(keep, nb);
        lu(f, n, piv, info, keep);
        const int64_t kk = s.vector_rhs ? 1 : s.nrhs;
        const T* B = static_cast<const T*>(in[1].ptr);
        T* x = static_cast<T*>(out[0].ptr);
        if (kk == 1) {
          copy_device(x, B, static_cast<size_t>(nb * n) * sizeof(T), stream);
          lu_solve(f, n, piv, CUBLAS_OP_T, x, 1, keep);
        } else {
          T* xc = scratch(keep, nb * n * kk);  // column-major B, then X
          for (int64_t b = 0; b < nb; ++b) transpose_device(t, n, kk, B + b * n * kk, kk, xc + b * n * kk, n, stream);
          lu_solve(f, n, piv, CUBLAS_OP_T, xc, kk, keep);
          for (int64_t b = 0; b < nb; ++b) transpose_device(t, kk, n, xc + b * n * kk, n, x + b * n * kk, kk, stream);
        }
        check_data(info, nb, kSingular);
        break;
      }
      case SolverKind::Cholesky: {  // row-major lower = column-major upper: A^T = U^T U, L = U^T
        T* l = static_cast<T*>(out[0].ptr);
        copy_device(l, A, mat * static_cast<size_t>(nb), stream);
        int* info = ints(keep, nb);
        const int ni = as_int(n, "n");
        if (nb > 1) {
          auto ptrs = device_pointer_array(l, n * n * static_cast<int64_t>(sizeof(T)), nb, stream);
          keep.push_back(ptrs);
          CUFUSE_CUSOLVER_CHECK(potrf_batched(h, CUBLAS_FILL_MODE_UPPER, ni, static_cast<T**>(ptrs->ptr), ni, info,
                                              as_int(nb, "batch")));
        } else {
          int lwork = 0;
          CUFUSE_CUSOLVER_CHECK(potrf_bs(h, CUBLAS_FILL_MODE_UPPER, ni, l, ni, &lwork));
          T* ws = scratch(keep, lwork);
          CUFUSE_CUSOLVER_CHECK(potrf(h, CUBLAS_FILL_MODE_UPPER, ni, l, ni, ws, lwork, info));
        }
        check_data(info, nb, kNotPositiveDefinite);
        break;
      }
      case SolverKind::QR: run_qr(in, out, keep); break;
      case SolverKind::SVD: run_svd(in, out, keep); break;
      case SolverKind::Eigh: run_eigh(in, out, keep); break;
    }
    (void)k;
  }

  void run_qr(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
              std::vector<std::shared_ptr<Storage>>& keep) {
    const int64_t m = s.m, n = s.n, k = std::min(m, n);
    const int mi = as_int(m, "m"), ni = as_int(n, "n"), ki = as_int(k, "k");
    const bool want_q = s.qr_mode != 2;
    const int64_t kq = s.qr_mode == 1 ? m : k, kr = s.qr_mode == 1 ? m : k;
    const bool extend = want_q && kq > n;  // complete Q of a tall matrix: an m x m buffer
    const T* A = static_cast<const T*>(in[0].ptr);
    T* f = scratch(keep, m * n);  // column-major A, then the factorization
    T* tau = scratch(keep, k);
    T* g = extend ? scratch(keep, m * m) : f;
    int lwork = 0, lq = 0;
    CUFUSE_CUSOLVER_CHECK(geqrf_bs(h, mi, ni, f, mi, &lwork));
    if (want_q) {
      CUFUSE_CUSOLVER_CHECK(orgqr_bs(h, mi, as_int(kq, "kq"), ki, g, mi, tau, &lq));
      lwork = std::max(lwork, lq);
    }
    T* ws = scratch(keep, lwork);
    int* info = ints(keep, nb);
    T* q_out = want_q ? static_cast<T*>(out[0].ptr) : nullptr;
    T* r_out = static_cast<T*>(out[want_q ? 1 : 0].ptr);
    for (int64_t b = 0; b < nb; ++b) {
      transpose_device(t, m, n, A + b * m * n, n, f, m, stream);
      CUFUSE_CUSOLVER_CHECK(geqrf(h, mi, ni, f, mi, tau, ws, lwork, info + b));
      // R = the first kr rows of the column-major factor (its lower part is masked later).
      transpose_device(t, n, kr, f, m, r_out + b * kr * n, n, stream);
      if (!want_q) continue;
      if (extend) {
        memset_device(g, 0, static_cast<size_t>(m * m) * sizeof(T), stream);
        copy_device(g, f, static_cast<size_t>(m * n) * sizeof(T), stream);
      }
      CUFUSE_CUSOLVER_CHECK(orgqr(h, mi, as_int(kq, "kq"), ki, g, mi, tau, ws, lwork, info + b));
      transpose_device(t, kq, m, g, m, q_out + b * m * kq, kq, stream);
    }
    // geqrf/orgqr only report bad parameters (their status says so): no read-back, no sync.
  }

  void run_svd(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
               std::vector<std::shared_ptr<Storage>>& keep) {
    const int64_t m = s.m, n = s.n, k = std::min(m, n);
    const bool uv = s.vectors;
    const int64_t ku = s.full ? m : k, kv = s.full ? n : k;
    const T* A = static_cast<const T*>(in[0].ptr);
    T* u_out = uv ? static_cast<T*>(out[0].ptr) : nullptr;
    R* s_out = static_cast<R*>(out[uv ? 1 : 0].ptr);
    T* v_out = uv ? static_cast<T*>(out[2].ptr) : nullptr;
    const bool wide = n >= m;  // gesvd needs rows >= cols: a wide A is used as the tall A^T
    const int64_t rm = wide ? n : m, rn = wide ? m : n;  // the column-major matrix decomposed
    const int rmi = as_int(rm, "rows"), rni = as_int(rn, "cols");
    int lwork = 0;
    CUFUSE_CUSOLVER_CHECK(gesvd_bs(h, static_cast<const T*>(nullptr), rmi, rni, &lwork));
    T* ws = scratch(keep, lwork);
    R* rwork = scratch<R>(keep, k);
    T* w = scratch(keep, m * n);
    int* info = ints(keep, nb);
    const signed char jobu = uv ? (s.full ? 'A' : 'S') : 'N';
    const signed char jobvt = uv ? 'A' : 'N';
    T* uc = (!wide && uv) ? scratch(keep, m * ku) : nullptr;
    T* vtc = (!wide && uv) ? scratch(keep, n * n) : nullptr;
    for (int64_t b = 0; b < nb; ++b) {
      R* sb = s_out + b * k;
      if (wide) {
        // A^T = U' S V'^T (column-major n x m): U_A = V' (its V'^T read row-major), Vh_A = U'^T
        // (U' read row-major): both written straight into the outputs.
        copy_device(w, A + b * m * n, static_cast<size_t>(m * n) * sizeof(T), stream);
        T* up = uv ? v_out + b * kv * n : nullptr;   // U' (n x kv, ld n)
        T* vtp = uv ? u_out + b * m * ku : nullptr;  // V'^T (m x m, ld m)
        CUFUSE_CUSOLVER_CHECK(gesvd(h, jobu, jobvt, rmi, rni, w, rmi, sb, up, rmi, vtp, rni, ws, lwork, rwork, info + b));
      } else {
        transpose_device(t, m, n, A + b * m * n, n, w, m, stream);
        CUFUSE_CUSOLVER_CHECK(gesvd(h, jobu, jobvt, rmi, rni, w, rmi, sb, uc, rmi, vtc, rni, ws, lwork, rwork, info + b));
        if (uv) {
          transpose_device(t, ku, m, uc, m, u_out + b * m * ku, ku, stream);
          transpose_device(t, n, n, vtc, n, v_out + b * n * n, n, stream);
        }
      }
    }
    check_info(info, nb, kSvdNotConverged);
  }

  void run_eigh(const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                std::vector<std::shared_ptr<Storage>>& keep) {
    const int64_t n = s.n;
    const int ni = as_int(n, "n");
    const cusolverEigMode_t jobz = s.vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    // NumPy's lower triangle (row-major) is the column-major upper triangle.
    const cublasFillMode_t uplo = s.lower ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
    const T* A = static_cast<const T*>(in[0].ptr);
    R* w_out = static_cast<R*>(out[0].ptr);
    T* v_out = s.vectors ? static_cast<T*>(out[1].ptr) : nullptr;
    T* a = scratch(keep, nb * n * n);
    copy_device(a, A, static_cast<size_t>(nb * n * n) * sizeof(T), stream);
    int* info = ints(keep, nb);
    if (nb > 1 && n <= 32) {
      syevjInfo_t params = nullptr;
      CUFUSE_CUSOLVER_CHECK(cusolverDnCreateSyevjInfo(&params));
      struct Destroy {
        syevjInfo_t p;
        ~Destroy() { cusolverDnDestroySyevjInfo(p); }
      } destroy{params};
      CUFUSE_CUSOLVER_CHECK(cusolverDnXsyevjSetSortEig(params, 1));
      int lwork = 0;
      const int nbi = as_int(nb, "batch");
      CUFUSE_CUSOLVER_CHECK(syevj_batched_bs(h, jobz, uplo, ni, a, ni, w_out, &lwork, params, nbi));
      T* ws = scratch(keep, lwork);
      CUFUSE_CUSOLVER_CHECK(syevj_batched(h, jobz, uplo, ni, a, ni, w_out, ws, lwork, info, params, nbi));
      check_info(info, nb, kEighNotConverged);  // before params goes
    } else {
      int lwork = 0;
      CUFUSE_CUSOLVER_CHECK(syevd_bs(h, jobz, uplo, ni, a, ni, w_out, &lwork));
      T* ws = scratch(keep, lwork);
      for (int64_t b = 0; b < nb; ++b)
        CUFUSE_CUSOLVER_CHECK(syevd(h, jobz, uplo, ni, a + b * n * n, ni, w_out + b * n, ws, lwork, info + b));
      check_info(info, nb, kEighNotConverged);
    }
    // Eigenvectors are the columns of the column-major result. cuSOLVER decomposed A^T, which
    // for a Hermitian A is conj(A): its eigenvectors are the conjugates of A's, so a complex
    // result is conjugated as it is transposed.
    if (s.vectors)
      for (int64_t b = 0; b < nb; ++b)
        transpose_device(t, n, n, a + b * n * n, n, v_out + b * n * n, n, stream, is_complex(t));
  }
};

}  // namespace

void run_solver_cuda(const SolverSpec& s, const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                     void* stream) {
  const int64_t nb = numel(s.batch);
  if (nb == 0 || s.m == 0 || s.n == 0) return;  // the front ends build empty results without a call
  cusolverDnHandle_t h = cusolver_handle(stream);
  if (s.dtype == DType::Float32) Solver<float>{s, stream, h, nb, s.dtype}.run(in, out);
  else if (s.dtype == DType::Float64) Solver<double>{s, stream, h, nb, s.dtype}.run(in, out);
  else if (s.dtype == DType::Complex64) Solver<cuComplex>{s, stream, h, nb, s.dtype}.run(in, out);
  else if (s.dtype == DType::Complex128) Solver<cuDoubleComplex>{s, stream, h, nb, s.dtype}.run(in, out);
  else throw InternalError(fmt::format("linalg: {} reached cuSOLVER", name(s.dtype)));
}

}  // namespace cufuse::detail
