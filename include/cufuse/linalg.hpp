// cufuse/linalg.hpp: contractions and linear algebra, NumPy's semantics, all lazy.
//
// matmul and the contractions of einsum/tensordot/dot run as cuBLAS(Lt) nodes of the DAG;
// the planner feeds them with as few kernels as it can (a transposed or strided view that
// cuBLAS reads through op flags, leading dimensions or batch strides goes in as it is) and
// fuses what follows them. A bias add or GELU (cufuse::gelu) right after a float GEMM
// becomes a cuBLASLt epilogue; a ReLU (maximum(x, 0), which keeps NaN) is the one kernel
// after the GEMM, since cuBLASLt's RELU epilogue turns NaN into 0 in some of its kernels.
// Contractions with nothing to multiply as matrices (einsum("ij,ij->i"), einsum("ij->j"),
// einsum("ii->i"), vdot, outer) are views, elementwise work and reductions: one fused
// kernel, never a GEMM. Integer and bool matmul run as one generated reduction kernel.
//
// dtypes: float16 and bfloat16 (float32 accumulation), float32, float64; integers and bool
// through generated kernels. TF32 is off by default, as in CuPy: on with CUFUSE_TF32=1 or
// a TF32Scope; the setting when a matmul is written is part of that node.
//
// cufuse::linalg runs on cuSOLVER (float32 and float64, as CuPy; integer inputs become
// float64, float16/bfloat16 raise TypeError like NumPy). Batched inputs (..., M, N) are
// supported everywhere NumPy supports them. Data-dependent errors (a singular matrix, a
// matrix that is not positive definite) are raised as ValueError with NumPy's text when the
// result is evaluated: the call reads cuSOLVER's info back, which synchronizes the stream.
// Under linalg::ErrorScope(linalg::Errors::Ignore) (CuPy's default) there is no such wait,
// so that work on several streams overlaps; a singular matrix then gives inf/NaN.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse {

// ------------------------------------------------------------------ TF32
// Whether a float32 matmul written now may use TF32 tensor cores: the innermost live
// TF32Scope of this thread, else the environment variable CUFUSE_TF32=1 (default off).
bool tf32_enabled();
class TF32Scope {
 public:
  explicit TF32Scope(bool on);
  ~TF32Scope();
  TF32Scope(const TF32Scope&) = delete;
  TF32Scope& operator=(const TF32Scope&) = delete;

 private:
  int prev_;
};

// ------------------------------------------------------------------ contractions
// NumPy's matmul: 1-D operands are promoted to matrices and the added dim removed again;
// leading dims broadcast. A scalar factor on an operand (matmul(2 * q, p.T())) is folded
// into the GEMM's alpha instead of being computed by a kernel, where that gives NumPy's values:
// a finite, nonzero factor (2^-16 .. 2^16; float16 and bfloat16: powers of two, float16's at
// most 1). A zero or infinite one is applied to the operand (0 * inf and 0 / 0 are NaN there).
Array matmul(const Array& a, const Array& b);
Array dot(const Array& a, const Array& b);    // NumPy's dot (N-D: sum over a's last, b's second-to-last axis)
Array vdot(const Array& a, const Array& b);   // flattened dot product (a reduction)
Array inner(const Array& a, const Array& b);  // sum over the last axes
Array outer(const Array& a, const Array& b);  // flattened outer product (elementwise)
Array tensordot(const Array& a, const Array& b, int axes = 2);
Array tensordot(const Array& a, const Array& b, const Axes& axes_a, const Axes& axes_b);
// A view of the diagonal (offset > 0: above it) of the 2-D slices over axis1, axis2; the
// diagonal becomes the last axis (NumPy's diagonal; read-only like NumPy's).
Array diagonal(const Array& a, int64_t offset = 0, int axis1 = 0, int axis2 = 1);
Array trace(const Array& a, int64_t offset = 0, int axis1 = 0, int axis2 = 1,
            std::optional<DType> dtype = std::nullopt);
// NumPy's einsum: explicit ("ij,jk->ik") and implicit ("ij,jk") output, '...', repeated
// labels (diagonals, traces), any number of operands, contracted pairwise in a greedy order.
Array einsum(std::string_view subscripts, const std::vector<Array>& operands);
template <class... A>
Array einsum(std::string_view subscripts, const Array& first, const A&... rest) {
  return einsum(subscripts, std::vector<Array>{first, rest...});
}

// Activations written so that the planner recognizes them after a GEMM (cuBLASLt epilogue).
Array relu(const Array& x);  // maximum(x, 0)
// GELU, tanh approximation (cuBLASLt's): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Array gelu(const Array& x);

namespace linalg {

// ------------------------------------------------------------------ data-dependent errors
// Raise: NumPy's errors (the default). Ignore: no check and no wait, CuPy's default
// (cupyx.errstate(linalg='ignore')). The innermost ErrorScope of this thread when a call is
// written decides for that call, else CUFUSE_LINALG_ERRORS=ignore, else Raise.
enum class Errors { Raise, Ignore };
Errors errors();
class ErrorScope {
 public:
  explicit ErrorScope(Errors e);
  ~ErrorScope();
  ErrorScope(const ErrorScope&) = delete;
  ErrorScope& operator=(const ErrorScope&) = delete;

 private:
  int prev_;
};

// ------------------------------------------------------------------ factorizations
Array det(const Array& a);
struct SlogdetResult {
  Array sign, logabsdet;
};
SlogdetResult slogdet(const Array& a);
Array inv(const Array& a);
// Solves a x = b: b is (..., M) when 1-D, else (..., M, K); leading dims broadcast.
Array solve(const Array& a, const Array& b);
// The lower Cholesky factor L (a = L L^T; only a's lower triangle is read), or the upper
// factor U = L^T with upper = true.
Array cholesky(const Array& a, bool upper = false);

struct QRResult {
  Array Q, R;  // mode "r": Q is empty (an undefined Array)
};
// mode: "reduced" (Q (M, K), R (K, N), K = min(M, N)), "complete" (Q (M, M), R (M, N)), "r".
QRResult qr(const Array& a, std::string_view mode = "reduced");

struct SVDResult {
  Array U, S, Vh;  // compute_uv = false: only S
};
SVDResult svd(const Array& a, bool full_matrices = true, bool compute_uv = true);
Array svdvals(const Array& a);

struct EighResult {
  Array eigenvalues, eigenvectors;  // ascending; eigenvectors in the columns
};
// Symmetric eigendecomposition reading the lower (UPLO 'L') or upper ('U') triangle.
EighResult eigh(const Array& a, char UPLO = 'L');
Array eigvalsh(const Array& a, char UPLO = 'L');

// ------------------------------------------------------------------ derived
// Pseudo-inverse from the SVD: singular values at or below rcond * max(s) are dropped.
Array pinv(const Array& a, double rcond = 1e-15);
struct LstsqResult {
  Array x, residuals;  // residuals: (K,) sums of squares when rank == N and M > N, else (0,)
  int64_t rank = 0;
  Array s;
};
// Least squares through the SVD (2-D a; b (M,) or (M, K)). The rank decides the shape of
// the residuals (NumPy's contract), so lstsq evaluates it: it synchronizes.
// rcond defaults to eps(dtype) * max(M, N).
LstsqResult lstsq(const Array& a, const Array& b, std::optional<double> rcond = std::nullopt);
// Number of singular values above tol (default: max(s) * max(M, N) * eps(dtype)); 1-D and
// 0-D inputs: 1 unless all zero.
Array matrix_rank(const Array& a, std::optional<double> tol = std::nullopt);

// Matrix norms by name: "fro" (Frobenius) or "nuc" (nuclear), over two axes (the last two
// of a 2-D array when axis is none). The numeric orders (1, -1, 2, -2, inf, -inf) and the
// vector norms are cufuse::linalg::norm(x, ord, axis) of cufuse/reduce.hpp, which routes
// its matrix cases here.
Array norm(const Array& x, std::string_view ord, AxisArg axis = {}, bool keepdims = false);
Array matrix_norm(const Array& x, std::string_view ord = "fro", bool keepdims = false);  // over the last two axes

}  // namespace linalg
}  // namespace cufuse
