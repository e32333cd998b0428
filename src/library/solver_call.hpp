// src/library/solver_call.hpp: the cuSOLVER library nodes. Each takes contiguous row-major
// float32/float64/complex64/complex128 matrices (..., M, N) and gives row-major results (S and
// w real: float32 for complex64, float64 for complex128); cuSOLVER's column-major
// view of row-major memory is the transpose, which most calls use as it is (LU of A^T gives
// det(A); inv(A^T)^T = inv(A); A's lower triangle is A^T's upper one) and the rest fix with
// cublas<t>geam transposes in scratch memory. Results that NumPy zeroes (R's lower part,
// L's upper part) are left to a masking kernel of the graph (linalg.cpp).
//
//   kind      inputs        outputs
//   LU        A (n, n)      LU of A^T as cuSOLVER stores it (n, n); pivots (n,) int32, 1-based
//   Inv       A (n, n)      inv(A)                                   ("Singular matrix")
//   Solve     A (n, n), B   x with A x = B; B (n, k) or (n,)         ("Singular matrix")
//   Cholesky  A (n, n)      L in the lower triangle (upper: garbage)  ("Matrix is not positive definite")
//   QR        A (m, n)      Q (m, kq), R (kr, n) (lower part: garbage); mode "r": R only
//   SVD       A (m, n)      U (m, ku), S (k,), Vh (kv, n); without vectors: S only
//   Eigh      A (n, n)      w (n,) ascending, V (n, n) (vectors in columns); without vectors: w
//                           (complex: A^T is conj(A) for a Hermitian A, so V is conjugated as it
//                           is transposed back; every other kind needs no conjugation)
// Every kind is batched over leading dims (cuSOLVER/cuBLAS batched routines for small
// matrices where they exist, else a loop). The run() reads info back where an error is
// possible (one stream synchronization).
#pragma once
#include "cufuse/enum_names.hpp"
#include "core/library_call.hpp"

namespace cufuse::detail {

#define CUFUSE_SOLVER_KINDS(X) \
  X(LU, "getrf")               \
  X(Inv, "inv")                \
  X(Solve, "solve")            \
  X(Cholesky, "cholesky")      \
  X(QR, "qr")                  \
  X(SVD, "svd")                \
  X(Eigh, "eigh")
enum class SolverKind : uint8_t { CUFUSE_SOLVER_KINDS(CUFUSE_ENUMERATOR) };
inline const char* solver_kind_name(SolverKind k) { return CUFUSE_ENUM_NAME(CUFUSE_SOLVER_KINDS, k); }

struct SolverSpec {
  SolverKind kind = SolverKind::LU;
  DType dtype = DType::Float64;
  Shape batch;
  int64_t m = 0, n = 0;
  int64_t nrhs = 1;         // Solve: columns of B
  bool vector_rhs = false;  // Solve: B is (..., n)
  int qr_mode = 0;          // QR: 0 reduced, 1 complete, 2 r
  bool full = true;         // SVD: full_matrices
  bool vectors = true;      // SVD: compute_uv; Eigh: eigenvectors
  bool lower = true;        // Eigh: UPLO 'L'
  bool check_errors = true; // raise on a singular / not positive definite input (waits for the stream)
};

class SolverCall : public LibraryCall {
 public:
  explicit SolverCall(SolverSpec s);
  const SolverSpec& spec() const { return s_; }
  std::string describe() const override;
  int num_outputs() const override { return static_cast<int>(shapes_.size()); }
  DType output_dtype(int i) const override;
  Shape output_shape(int i) const override { return shapes_[static_cast<size_t>(i)]; }
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, void* stream) const override;
  void run_reference(const std::vector<const HostArray*>& inputs, std::vector<HostArray>& outputs) const override;
  uint64_t attributes_hash() const override { return hash_; }

 private:
  SolverSpec s_;
  std::vector<Shape> shapes_;
  uint64_t hash_;
};

// The GPU runs, one per kind (solver_cuda.cpp).
void run_solver_cuda(const SolverSpec& s, const std::vector<TensorRef>& in, const std::vector<TensorRef>& out,
                     void* stream);
// The float64 (complex double) host references (solver_reference.cpp).
void run_solver_reference(const SolverSpec& s, const std::vector<const HostArray*>& in, std::vector<HostArray>& out);

// NumPy's messages for data-dependent failures.
inline constexpr const char* kSingular = "Singular matrix";
inline constexpr const char* kNotPositiveDefinite = "Matrix is not positive definite";
inline constexpr const char* kSvdNotConverged = "SVD did not converge";
inline constexpr const char* kEighNotConverged = "Eigenvalues did not converge";

}  // namespace cufuse::detail
