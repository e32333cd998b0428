// src/cli/functions_library.cpp: the function table's rows for the library: contractions
// (matmul and `@`, dot, vdot, inner, outer, tensordot, einsum, trace, diagonal, relu, gelu)
// and np.linalg (cuSOLVER), each a few lines mapping NumPy's parameters to cufuse.
// functions.cpp appends these rows to THE function table.
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/registry.hpp"
#include "core/node.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/signal.hpp"

namespace cufuse::cli {

namespace {

// ------------------------------------------------------------------ convolution
Value fn_convolve(const Args& a) { return Value::of(cufuse::convolve(a.array("a"), a.array("v"), a.string("mode"))); }
Value fn_correlate(const Args& a) { return Value::of(cufuse::correlate(a.array("a"), a.array("v"), a.string("mode"))); }
Value fn_convolve2d(const Args& a) {
  return Value::of(cufuse::signal::convolve2d(a.array("in1"), a.array("in2"), a.string("mode"), a.string("boundary"),
                                              a.number("fillvalue")));
}
Value fn_correlate2d(const Args& a) {
  return Value::of(cufuse::signal::correlate2d(a.array("in1"), a.array("in2"), a.string("mode"), a.string("boundary"),
                                               a.number("fillvalue")));
}

// ------------------------------------------------------------------ contractions
Value fn_matmul(const Args& a) {
  for (const char* p : {"x1", "x2"})
    if (a.array(p).ndim() == 0) a.fail(p, fmt::format("input operand {} does not have enough dimensions "
                                                       "(it is 0-d; matmul needs 1-D or more: multiply for scalars)",
                                                       p[1] == '1' ? 0 : 1));
  return Value::of(cufuse::matmul(a.array("x1"), a.array("x2")));
}
Value fn_dot(const Args& a) { return Value::of(cufuse::dot(a.array("a"), a.array("b"))); }
Value fn_vdot(const Args& a) { return Value::of(cufuse::vdot(a.array("a"), a.array("b"))); }
Value fn_inner(const Args& a) { return Value::of(cufuse::inner(a.array("a"), a.array("b"))); }
Value fn_outer(const Args& a) { return Value::of(cufuse::outer(a.array("a"), a.array("b"))); }

// tensordot axes: an int N (a's last N with b's first N), or a pair (axes of a, axes of b),
// each an int or a sequence of ints.
Value fn_tensordot(const Args& a) {
  const Value& v = a.get("axes");
  if (v.is_int()) {
    const int64_t n = v.number.to_int64();
    if (n < 0) a.fail("axes", fmt::format("axes must be a non-negative int, not {}", n));
    return Value::of(cufuse::tensordot(a.array("a"), a.array("b"), static_cast<int>(n)));
  }
  if (!v.is_sequence() || v.items.size() != 2)
    a.fail("axes", fmt::format("axes must be an int or a pair of axis sequences, not {}", v.describe()));
  Axes side[2];
  for (int k = 0; k < 2; ++k) side[k] = to_axes(a, "axes", v.items[static_cast<size_t>(k)]);
  if (side[0].size() != side[1].size())
    a.fail("axes", fmt::format("shape-mismatch for sum: {} axes of a, {} of b", side[0].size(), side[1].size()));
  return Value::of(cufuse::tensordot(a.array("a"), a.array("b"), side[0], side[1]));
}

Value fn_einsum(const Args& a) {
  const std::string subscripts = a.string("subscripts");
  const Value& ops = a.get("operands");
  if (ops.items.empty()) a.fail("operands", "einsum needs at least one operand after the subscripts");
  std::vector<Array> xs;
  for (const auto& v : ops.items) {
    if (v.is_array()) xs.push_back(v.array);
    else if (v.is_number()) xs.push_back(cufuse::full({}, v.number));
    else a.fail("operands", fmt::format("operands must be arrays, not {} (the subscripts come first, as one string)",
                                        v.type_name()));
  }
  return Value::of(cufuse::einsum(subscripts, xs));
}

Array at_least_2d(const Args& a, const char* param) {
  Array x = a.array(param);
  if (x.ndim() < 2) a.fail(param, fmt::format("the array must be at least two-dimensional, not {}-D", x.ndim()));
  return x;
}
Value fn_diagonal(const Args& a) {
  return Value::of(cufuse::diagonal(at_least_2d(a, "a"), a.integer("offset"), static_cast<int>(a.integer("axis1")),
                                    static_cast<int>(a.integer("axis2"))));
}
Value fn_trace(const Args& a) {
  return Value::of(cufuse::trace(at_least_2d(a, "a"), a.integer("offset"), static_cast<int>(a.integer("axis1")),
                                 static_cast<int>(a.integer("axis2")), a.dtype("dtype")));
}

Value fn_relu(const Args& a) { return Value::of(cufuse::relu(a.array("x"))); }
Value fn_gelu(const Args& a) { return Value::of(cufuse::gelu(a.array("x"))); }

// ------------------------------------------------------------------ linalg
// A matrix argument of a cuSOLVER routine, checked here so that the error points at it:
// float32/float64 (integers and bool become float64 in the library; float16 and bfloat16
// are refused, as NumPy does), at least 2-D, square where the routine needs it.
enum class Need { Matrix, Square };
Array linalg_arg(const Args& a, const char* param, Need need) {
  Array x = a.array(param);
  if (is_half(x.dtype())) a.fail(param, fmt::format("array type {} is unsupported in linalg", name(x.dtype())));
  if (x.ndim() < 2)
    a.fail(param, fmt::format("{}-dimensional array given. Array must be at least two-dimensional", x.ndim()));
  if (need == Need::Square && x.shape(-1) != x.shape(-2))
    a.fail(param, fmt::format("last 2 dimensions of the array must be square (shape {})", to_string(x.shape())));
  return x;
}

void refuse_hermitian(const Args& a) {
  if (a.boolean("hermitian")) a.fail("hermitian", "hermitian=True is not supported (the general routine is used)");
}
char uplo(const Args& a) {
  const std::string u = a.string("UPLO");
  if (u != "L" && u != "U") a.fail("UPLO", fmt::format("UPLO must be 'L' or 'U', not '{}'", u));
  return u[0];
}

Value fn_det(const Args& a) { return Value::of(cufuse::linalg::det(linalg_arg(a, "a", Need::Square))); }
Value fn_slogdet(const Args& a) {
  auto r = cufuse::linalg::slogdet(linalg_arg(a, "a", Need::Square));
  return Value::tuple({Value::of(r.sign), Value::of(r.logabsdet)});
}
Value fn_inv(const Args& a) { return Value::of(cufuse::linalg::inv(linalg_arg(a, "a", Need::Square))); }
Value fn_solve(const Args& a) { return Value::of(cufuse::linalg::solve(linalg_arg(a, "a", Need::Square), a.array("b"))); }
Value fn_cholesky(const Args& a) { return Value::of(cufuse::linalg::cholesky(linalg_arg(a, "a", Need::Square), a.boolean("upper"))); }

Value fn_qr(const Args& a) {
  const std::string mode = a.string("mode");
  if (mode != "reduced" && mode != "complete" && mode != "r")
    a.fail("mode", fmt::format("unrecognized mode '{}' (qr takes 'reduced', 'complete' or 'r')", mode));
  auto r = cufuse::linalg::qr(linalg_arg(a, "a", Need::Matrix), mode);
  if (mode == "r") return Value::of(r.R);
  return Value::tuple({Value::of(r.Q), Value::of(r.R)});
}

Value fn_svd(const Args& a) {
  refuse_hermitian(a);
  const bool uv = a.boolean("compute_uv");
  auto r = cufuse::linalg::svd(linalg_arg(a, "a", Need::Matrix), a.boolean("full_matrices"), uv);
  if (!uv) return Value::of(r.S);
  return Value::tuple({Value::of(r.U), Value::of(r.S), Value::of(r.Vh)});
}
Value fn_svdvals(const Args& a) { return Value::of(cufuse::linalg::svdvals(linalg_arg(a, "x", Need::Matrix))); }

Value fn_eigh(const Args& a) {
  auto r = cufuse::linalg::eigh(linalg_arg(a, "a", Need::Square), uplo(a));
  return Value::tuple({Value::of(r.eigenvalues), Value::of(r.eigenvectors)});
}
Value fn_eigvalsh(const Args& a) { return Value::of(cufuse::linalg::eigvalsh(linalg_arg(a, "a", Need::Square), uplo(a))); }

Value fn_pinv(const Args& a) {
  refuse_hermitian(a);
  const double rcond = a.given("rcond") ? a.real("rcond") : 1e-15;
  return Value::of(cufuse::linalg::pinv(linalg_arg(a, "a", Need::Matrix), rcond));
}

Value fn_matrix_rank(const Args& a) {
  refuse_hermitian(a);
  std::optional<double> tol;
  if (a.given("tol")) tol = a.real("tol");
  const Array x = a.array("A");
  return Value::of(cufuse::linalg::matrix_rank(x.ndim() < 2 ? x : linalg_arg(a, "A", Need::Matrix), tol));
}

// NumPy's lstsq decides the residuals' shape by the rank, so cufuse::linalg::lstsq evaluates
// it. Inputs that read a placeholder (--arg) cannot be evaluated: for them the same graph is
// built lazily (x, the rank as a 0-d int64 array, s) and the residuals are planned as for a
// full-rank a (sums of squares when M > N, else empty).
Value fn_lstsq(const Args& a) {
  const Array A = a.array("a"), B = a.array("b");
  std::optional<double> rcond;
  if (a.given("rcond")) rcond = a.real("rcond");
  if (A.ndim() != 2) a.fail("a", fmt::format("{}-dimensional array given. Array must be two-dimensional", A.ndim()));
  if (B.ndim() != 1 && B.ndim() != 2)
    a.fail("b", fmt::format("{}-dimensional array given. Array must be one or two-dimensional", B.ndim()));
  if (B.shape(0) != A.shape(0))
    a.fail("b", fmt::format("incompatible dimensions: a {} and b {}", to_string(A.shape()), to_string(B.shape())));
  const int64_t m = A.shape(0), n = A.shape(1);
  const bool lazy = (A.node()->reads_placeholder || A.node()->is_placeholder() || B.node()->reads_placeholder ||
                     B.node()->is_placeholder()) && m > 0 && n > 0;
  if (!lazy) {
    auto r = cufuse::linalg::lstsq(A, B, rcond);
    return Value::tuple({Value::of(r.x), Value::of(r.residuals), Value::of(Scalar(r.rank)), Value::of(r.s)});
  }
  auto lin = [&](const char* param, const Array& x) {
    if (is_half(x.dtype())) a.fail(param, fmt::format("array type {} is unsupported in linalg", name(x.dtype())));
    return is_float(x.dtype()) || is_complex(x.dtype()) ? x.dtype() : DType::Float64;
  };
  const DType t = promote_types(lin("a", A), lin("b", B));
  // x^H (complex: a transposed view of conj(x), which the GEMM reads with op C)
  auto herm = [](const Array& x) { return is_complex(x.dtype()) ? cufuse::conj(x).swapaxes(-1, -2) : x.swapaxes(-1, -2); };
  const bool vec = B.ndim() == 1;
  const Array Af = A.astype(t), Bf = (vec ? B.reshape({m, 1}) : B).astype(t);
  const double eps =
      real_dtype(t) == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double rc = rcond ? *rcond : eps * static_cast<double>(std::max(m, n));
  auto d = cufuse::linalg::svd(Af, false, true);
  Array keep = cufuse::greater(d.S, cufuse::multiply(cufuse::max(d.S), rc));
  Array sinv = cufuse::where(keep, cufuse::reciprocal(d.S), 0);
  Array utb = cufuse::matmul(herm(d.U), Bf);
  Array x = cufuse::matmul(herm(d.Vh), cufuse::multiply(sinv.expand_dims(-1), utb));
  Array rank = cufuse::count_nonzero(keep);
  if (rank.dtype() != DType::Int64) rank = rank.astype(DType::Int64);
  Array res;
  if (m > n) {
    Array e = cufuse::subtract(Bf, cufuse::matmul(Af, x));
    res = cufuse::sum(is_complex(t) ? cufuse::real(cufuse::multiply(e, cufuse::conj(e))) : cufuse::multiply(e, e), 0);
  } else {
    res = cufuse::zeros({0}, real_dtype(t));
  }
  return Value::tuple({Value::of(vec ? x.reshape({n}) : x), Value::of(res), Value::of(rank), Value::of(d.S)});
}

// matrix_norm: over the last two axes; ord 'fro', 'nuc', or 1, -1, 2, -2, inf, -inf.
Value fn_matrix_norm(const Args& a) {
  const Array x = a.array("x");
  if (x.ndim() < 2)
    a.fail("x", fmt::format("{}-dimensional array given. Array must be at least two-dimensional", x.ndim()));
  const Value& o = a.get("ord");
  if (o.kind == Value::Kind::String) {
    if (o.text != "fro" && o.text != "nuc")
      a.fail("ord", fmt::format("invalid norm order '{}' (the named orders are 'fro' and 'nuc')", o.text));
    return Value::of(cufuse::linalg::matrix_norm(x, std::string_view(o.text), a.boolean("keepdims")));
  }
  if (o.is_none()) return Value::of(cufuse::linalg::matrix_norm(x, "fro", a.boolean("keepdims")));
  const double ord = a.real("ord");
  if (!(std::isinf(ord) || ord == 1 || ord == -1 || ord == 2 || ord == -2))
    a.fail("ord", fmt::format("invalid norm order {} for matrices (1, -1, 2, -2, inf, -inf, 'fro', 'nuc')", ord));
  return Value::of(cufuse::linalg::norm(x, ord, AxisArg(Axes{-2, -1}), a.boolean("keepdims")));
}

}  // namespace

const std::vector<FunctionRow>& library_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // contractions (cuBLAS GEMMs where there is something to multiply as matrices, else
    // fused views, elementwise work and reductions)
    {"matmul", "x1, x2", fn_matmul, false, "matrix product (also x1 @ x2); a scalar factor becomes the GEMM's alpha"},
    {"dot", "a, b", fn_dot, true, "NumPy's dot"},
    {"vdot", "a, b", fn_vdot, false, "dot product of the flattened arrays, a conjugated (a reduction)"},
    {"inner", "a, b", fn_inner, false, "sum over the last axes"},
    {"outer", "a, b", fn_outer, false, "outer product of the flattened arrays (elementwise)"},
    {"tensordot", "a, b, axes=2", fn_tensordot, false, "tensordot(a, b, axes=1), tensordot(a, b, ((1, 0), (0, 1)))"},
    {"einsum", "subscripts, *operands, optimize=False", fn_einsum, false,
     "einsum('ij,jk->ik', a, b): any number of operands, contracted pairwise (greedy)"},
    {"diagonal", "a, offset=0, axis1=0, axis2=1", fn_diagonal, true, "a view of the diagonal (as the last axis)"},
    {"trace", "a, offset=0, axis1=0, axis2=1, dtype=None", fn_trace, true, "sum of the diagonal"},
    {"relu", "x", fn_relu, false, "cufuse: maximum(x, 0) (a cuBLASLt epilogue after a GEMM)"},
    {"gelu", "x", fn_gelu, false, "cufuse: GELU, tanh approximation (a cuBLASLt epilogue after a GEMM)"},
    // convolution (one generated direct kernel)
    {"convolve", "a, v, mode='full'", fn_convolve, false, "NumPy's 1-D convolution (modes full, same, valid)"},
    {"correlate", "a, v, mode='valid'", fn_correlate, false, "NumPy's 1-D correlation"},
    {"convolve2d", "in1, in2, mode='full', boundary='fill', fillvalue=0", fn_convolve2d, false,
     "scipy.signal.convolve2d (also signal.convolve2d): boundaries fill, wrap, symm"},
    {"correlate2d", "in1, in2, mode='full', boundary='fill', fillvalue=0", fn_correlate2d, false,
     "scipy.signal.correlate2d (also signal.correlate2d)"},
    // linear algebra (cuSOLVER); tuples where NumPy returns tuples
    {"linalg.det", "a", fn_det, false, "determinant"},
    {"linalg.slogdet", "a", fn_slogdet, false, "(sign, logabsdet)"},
    {"linalg.inv", "a", fn_inv, false, "inverse"},
    {"linalg.solve", "a, b", fn_solve, false, "solve a x = b"},
    {"linalg.cholesky", "a, upper=False", fn_cholesky, false, "Cholesky factor (lower; upper=True: upper)"},
    {"linalg.qr", "a, mode='reduced'", fn_qr, false, "(Q, R) for 'reduced' and 'complete'; R for 'r'"},
    {"linalg.svd", "a, full_matrices=True, compute_uv=True, hermitian=False", fn_svd, false,
     "(U, S, Vh); S alone with compute_uv=False"},
    {"linalg.svdvals", "x", fn_svdvals, false, "singular values"},
    {"linalg.eigh", "a, UPLO='L'", fn_eigh, false, "(eigenvalues, eigenvectors) of a symmetric matrix"},
    {"linalg.eigvalsh", "a, UPLO='L'", fn_eigvalsh, false, "eigenvalues of a symmetric matrix"},
    {"linalg.pinv", "a, rcond=1e-15, hermitian=False", fn_pinv, false, "pseudo-inverse (through the SVD)"},
    {"linalg.lstsq", "a, b, rcond=None", fn_lstsq, false,
     "(x, residuals, rank, s); on --arg inputs rank is a 0-d array and the residuals assume full rank"},
    {"linalg.matrix_rank", "A, tol=None, hermitian=False", fn_matrix_rank, false, "number of singular values above tol"},
    {"linalg.matrix_norm", "x, ord='fro', keepdims=False", fn_matrix_norm, false,
     "norm over the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf"},
  };
  return rows;
}

}  // namespace cufuse::cli
