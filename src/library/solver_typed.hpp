// src/library/solver_typed.hpp: the typed entry points of cuSOLVER and cuBLAS that the solver
// nodes call (solver_cuda.cpp), one overload per element type (float, double, cuComplex,
// cuDoubleComplex) of one name, so that one template runs every dtype: LAPACK's S/D/C/Z
// prefixes, orgqr/ungqr, syevd/heevd and their batched Jacobi forms. Real-valued outputs of
// the complex routines (singular values, eigenvalues, gesvd's rwork) are float/double
// (RealOf). Included by solver_cuda.cpp only.
#pragma once
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <cstdint>

namespace cufuse::detail::solver_typed {

template <class T> struct RealOfT { using type = T; };
template <> struct RealOfT<cuComplex> { using type = float; };
template <> struct RealOfT<cuDoubleComplex> { using type = double; };
template <class T> using RealOf = typename RealOfT<T>::type;

template <class T> inline T one_of() { return T(1); }
template <> inline cuComplex one_of<cuComplex>() { return cuComplex{1.0f, 0.0f}; }
template <> inline cuDoubleComplex one_of<cuDoubleComplex>() { return cuDoubleComplex{1.0, 0.0}; }
template <class T> inline T zero_of() { return T(0); }
template <> inline cuComplex zero_of<cuComplex>() { return cuComplex{0.0f, 0.0f}; }
template <> inline cuDoubleComplex zero_of<cuDoubleComplex>() { return cuDoubleComplex{0.0, 0.0}; }

// X(T, R, P, ORG, SYE): element type, its real type, the LAPACK prefix, the Q-forming routine
// (orgqr / ungqr) and the symmetric / Hermitian prefix (sy / he).
#define CUFUSE_SOLVER_TYPES(X)                  \
  X(float, float, S, orgqr, sy)                 \
  X(double, double, D, orgqr, sy)               \
  X(cuComplex, float, C, ungqr, he)             \
  X(cuDoubleComplex, double, Z, ungqr, he)

#define CUFUSE_SOLVER_ENTRIES(T, R, P, ORG, SYE)                                                                  \
  inline cusolverStatus_t getrf_bs(cusolverDnHandle_t h, int m, int n, T* A, int lda, int* lw) {                  \
    return cusolverDn##P##getrf_bufferSize(h, m, n, A, lda, lw);                                                  \
  }                                                                                                               \
  inline cusolverStatus_t getrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T* w, int* piv, int* info) {   \
    return cusolverDn##P##getrf(h, m, n, A, lda, w, piv, info);                                                   \
  }                                                                                                               \
  inline cusolverStatus_t getrs(cusolverDnHandle_t h, cublasOperation_t t, int n, int k, const T* A, int lda,     \
                                const int* piv, T* B, int ldb, int* info) {                                       \
    return cusolverDn##P##getrs(h, t, n, k, A, lda, piv, B, ldb, info);                                           \
  }                                                                                                               \
  inline cusolverStatus_t potrf_bs(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* A, int lda, int* lw) {     \
    return cusolverDn##P##potrf_bufferSize(h, u, n, A, lda, lw);                                                  \
  }                                                                                                               \
  inline cusolverStatus_t potrf(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* A, int lda, T* w, int lw,     \
                                int* info) {                                                                      \
    return cusolverDn##P##potrf(h, u, n, A, lda, w, lw, info);                                                    \
  }                                                                                                               \
  inline cusolverStatus_t potrf_batched(cusolverDnHandle_t h, cublasFillMode_t u, int n, T** A, int lda,          \
                                        int* info, int nb) {                                                      \
    return cusolverDn##P##potrfBatched(h, u, n, A, lda, info, nb);                                                \
  }                                                                                                               \
  inline cusolverStatus_t geqrf_bs(cusolverDnHandle_t h, int m, int n, T* A, int lda, int* lw) {                  \
    return cusolverDn##P##geqrf_bufferSize(h, m, n, A, lda, lw);                                                  \
  }                                                                                                               \
  inline cusolverStatus_t geqrf(cusolverDnHandle_t h, int m, int n, T* A, int lda, T* tau, T* w, int lw,          \
                                int* info) {                                                                      \
    return cusolverDn##P##geqrf(h, m, n, A, lda, tau, w, lw, info);                                               \
  }                                                                                                               \
  inline cusolverStatus_t orgqr_bs(cusolverDnHandle_t h, int m, int n, int k, const T* A, int lda,                \
                                   const T* tau, int* lw) {                                                       \
    return cusolverDn##P##ORG##_bufferSize(h, m, n, k, A, lda, tau, lw);                                          \
  }                                                                                                               \
  inline cusolverStatus_t orgqr(cusolverDnHandle_t h, int m, int n, int k, T* A, int lda, const T* tau, T* w,     \
                                int lw, int* info) {                                                              \
    return cusolverDn##P##ORG(h, m, n, k, A, lda, tau, w, lw, info);                                              \
  }                                                                                                               \
  inline cusolverStatus_t gesvd_bs(cusolverDnHandle_t h, const T*, int m, int n, int* lw) {                       \
    return cusolverDn##P##gesvd_bufferSize(h, m, n, lw);                                                          \
  }                                                                                                               \
  inline cusolverStatus_t gesvd(cusolverDnHandle_t h, signed char ju, signed char jv, int m, int n, T* A,         \
                                int lda, R* S, T* U, int ldu, T* VT, int ldvt, T* w, int lw, R* rw, int* info) {  \
    return cusolverDn##P##gesvd(h, ju, jv, m, n, A, lda, S, U, ldu, VT, ldvt, w, lw, rw, info);                   \
  }                                                                                                               \
  inline cusolverStatus_t syevd_bs(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n,          \
                                   const T* A, int lda, const R* W, int* lw) {                                    \
    return cusolverDn##P##SYE##evd_bufferSize(h, j, u, n, A, lda, W, lw);                                         \
  }                                                                                                               \
  inline cusolverStatus_t syevd(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n, T* A,       \
                                int lda, R* W, T* w, int lw, int* info) {                                         \
    return cusolverDn##P##SYE##evd(h, j, u, n, A, lda, W, w, lw, info);                                           \
  }                                                                                                               \
  inline cusolverStatus_t syevj_batched_bs(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n,  \
                                           const T* A, int lda, const R* W, int* lw, syevjInfo_t p, int nb) {     \
    return cusolverDn##P##SYE##evjBatched_bufferSize(h, j, u, n, A, lda, W, lw, p, nb);                           \
  }                                                                                                               \
  inline cusolverStatus_t syevj_batched(cusolverDnHandle_t h, cusolverEigMode_t j, cublasFillMode_t u, int n,     \
                                        T* A, int lda, R* W, T* w, int lw, int* info, syevjInfo_t p, int nb) {    \
    return cusolverDn##P##SYE##evjBatched(h, j, u, n, A, lda, W, w, lw, info, p, nb);                             \
  }                                                                                                               \
  inline cublasStatus_t getrf_batched(cublasHandle_t h, int n, T** A, int lda, int* piv, int* info, int nb) {     \
    return cublas##P##getrfBatched(h, n, A, lda, piv, info, nb);                                                  \
  }                                                                                                               \
  inline cublasStatus_t getrs_batched(cublasHandle_t h, cublasOperation_t t, int n, int k, T** A, int lda,        \
                                      const int* piv, T** B, int ldb, int* info, int nb) {                        \
    return cublas##P##getrsBatched(h, t, n, k, A, lda, piv, B, ldb, info, nb);                                    \
  }                                                                                                               \
  /* B = op(A)^-1 B for the n x n triangle A (ld n) and n x k B (ld n), from the left */                          \
  inline cublasStatus_t trsm(cublasHandle_t h, cublasFillMode_t uplo, cublasDiagType_t diag, int64_t n,           \
                             int64_t k, const T* A, T* B) {                                                       \
    const T one = one_of<T>();                                                                                    \
    return cublas##P##trsm_64(h, CUBLAS_SIDE_LEFT, uplo, CUBLAS_OP_N, diag, n, k, &one, A, n, B, n);              \
  }                                                                                                               \
  /* Column-major C (rows x cols, ldc) = op(A) with A column-major (cols x rows, lda); op T or C */               \
  inline cublasStatus_t geam_t(cublasHandle_t h, cublasOperation_t op, int64_t rows, int64_t cols, const T* A,    \
                               int64_t lda, T* C, int64_t ldc) {                                                  \
    const T one = one_of<T>(), zero = zero_of<T>();                                                               \
    return cublas##P##geam_64(h, op, op, rows, cols, &one, A, lda, &zero, A, lda, C, ldc);                        \
  }

CUFUSE_SOLVER_TYPES(CUFUSE_SOLVER_ENTRIES)
#undef CUFUSE_SOLVER_ENTRIES
#undef CUFUSE_SOLVER_TYPES

}  // namespace cufuse::detail::solver_typed
