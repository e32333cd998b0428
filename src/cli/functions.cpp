// src/cli/functions.cpp: THE function table of cufuse-dump-kernels: every function a program
// can call, by its NumPy name, with its parameters and a few lines mapping it to cufuse.
// Every op of the op table (codegen/op_table.hpp) is a row without being listed here; the
// rows below add NumPy's aliases, casts, views, reductions, contractions, linear algebra and
// creation functions. To expose a new library function, add one row and its implementation
// here; registry.cpp binds the arguments, `@` finds the row named "matmul",
// and np.linalg.X finds the row named "linalg.X".
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/registry.hpp"
#include "codegen/op_table.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "graph/node.hpp"

namespace cufuse::cli {

namespace {

// ------------------------------------------------------------------ helpers
// x.reshape(2, 3), x.reshape((2, 3)) and reshape(x, (2, 3)) all mean shape (2, 3).
Value unwrap_varargs(const Value& v) {
  if (v.is_sequence() && v.items.size() == 1 && (v.items[0].is_sequence() || v.items[0].is_none())) return v.items[0];
  return v;
}

void require_order_c(const Args& a) {
  if (a.string("order") != "C") a.fail("order", "only order='C' is supported");
}

const char* const* operand_names(int arity, detail::TypeRule rule) {
  static const char* const one[] = {"x"};
  static const char* const two[] = {"x1", "x2"};
  static const char* const where[] = {"condition", "x", "y"};
  if (rule == detail::TypeRule::Where) return where;
  return arity == 1 ? one : two;
}

// ------------------------------------------------------------------ elementwise
Value fn_elementwise(const Args& a) {
  const char* op = a.row().op ? a.row().op : a.row().name;
  const auto id = detail::find_op(op);
  const detail::OpRow& row = detail::op_row(*id);
  const char* const* names = operand_names(row.arity, row.rule);
  std::vector<Operand> ops;
  for (int i = 0; i < row.arity; ++i) ops.push_back(a.operand(names[i]));
  return Value::of(cufuse::apply(op, ops));
}

Value fn_astype(const Args& a) { return Value::of(cufuse::astype(a.array("x"), *a.dtype("dtype"))); }

Value fn_clip(const Args& a) {
  const bool lo = a.given("a_min"), hi = a.given("a_max");
  if (!lo && !hi) a.fail("a_min", "one of a_min or a_max must be given");
  if (lo && hi) return Value::of(cufuse::clip(a.operand("a"), a.operand("a_min"), a.operand("a_max")));
  if (lo) return Value::of(cufuse::maximum(a.operand("a"), a.operand("a_min")));
  return Value::of(cufuse::minimum(a.operand("a"), a.operand("a_max")));
}

Value fn_copy(const Args& a) { return Value::of(a.array("a").copy()); }

// ------------------------------------------------------------------ views
Value fn_reshape(const Args& a) {
  require_order_c(a);
  Value s = unwrap_varargs(a.get("shape"));
  if (s.is_sequence() && s.items.empty() && a.get("shape").items.empty())
    a.fail("shape", "missing the new shape");
  Shape shape;
  if (s.is_int()) {
    shape.push_back(s.number.to_int64());
  } else {
    for (const auto& it : s.items) {
      if (!it.is_int()) a.fail("shape", fmt::format("the shape must hold ints, not {}", it.type_name()));
      shape.push_back(it.number.to_int64());
    }
  }
  return Value::of(a.array("a").reshape(shape));
}

Axes to_axes(const Args& a, const char* param, const Value& v) {
  Axes ax;
  if (v.is_int()) {
    ax.push_back(static_cast<int>(v.number.to_int64()));
    return ax;
  }
  if (!v.is_sequence()) a.fail(param, fmt::format("axes must be an int or a tuple of ints, not {}", v.type_name()));
  for (const auto& it : v.items) {
    if (!it.is_int()) a.fail(param, fmt::format("axes must be ints, not {}", it.type_name()));
    ax.push_back(static_cast<int>(it.number.to_int64()));
  }
  return ax;
}

Value fn_transpose(const Args& a) {
  Value v = unwrap_varargs(a.get("axes"));
  if (v.is_none() || (v.is_sequence() && v.items.empty())) return Value::of(a.array("a").transpose());
  return Value::of(a.array("a").transpose(to_axes(a, "axes", v)));
}

Value fn_permute_dims(const Args& a) {
  if (!a.given("axes")) return Value::of(a.array("a").transpose());
  return Value::of(a.array("a").transpose(a.axes("axes")));
}

Value fn_swapaxes(const Args& a) {
  return Value::of(a.array("a").swapaxes(static_cast<int>(a.integer("axis1")), static_cast<int>(a.integer("axis2"))));
}

Value fn_moveaxis(const Args& a) {
  return Value::of(
      a.array("a").moveaxis(static_cast<int>(a.integer("source")), static_cast<int>(a.integer("destination"))));
}

Value fn_expand_dims(const Args& a) {
  Array x = a.array("a");
  Axes ax = a.axes("axis");
  const int out_nd = x.ndim() + ax.ndim();
  std::vector<int> norm;
  for (int v : ax) {
    if (v < -out_nd || v >= out_nd)
      a.fail("axis", fmt::format("axis {} is out of bounds for array of dimension {}", v, out_nd));
    int n = v < 0 ? v + out_nd : v;
    if (std::find(norm.begin(), norm.end(), n) != norm.end()) a.fail("axis", "repeated axis");
    norm.push_back(n);
  }
  std::sort(norm.begin(), norm.end());
  for (int n : norm) x = x.expand_dims(n);
  return Value::of(x);
}

Value fn_squeeze(const Args& a) {
  if (!a.given("axis")) return Value::of(a.array("a").squeeze());
  return Value::of(a.array("a").squeeze(a.axes("axis")));
}

Value fn_broadcast_to(const Args& a) { return Value::of(a.array("array").broadcast_to(a.shape("shape"))); }

Value fn_broadcast_arrays(const Args& a) {
  const Value& all = a.get("arrays");
  std::vector<Array> xs;
  for (const auto& v : all.items) {
    if (!v.is_array()) a.fail("arrays", fmt::format("expected arrays, got {}", v.type_name()));
    xs.push_back(v.array);
  }
  Shape s;
  for (const auto& x : xs) s = cufuse::broadcast_shapes(s, x.shape());
  std::vector<Value> out;
  for (const auto& x : xs) out.push_back(Value::of(x.broadcast_to(s)));
  return Value::tuple(std::move(out));
}

Value fn_ravel(const Args& a) {
  require_order_c(a);
  return Value::of(a.array("a").ravel());
}

Value fn_flatten(const Args& a) {
  require_order_c(a);
  return Value::of(a.array("a").flatten());
}

// ------------------------------------------------------------------ creation
Value fn_arange(const Args& a) {
  Scalar start = a.number("start");
  Scalar stop = a.given("stop") ? a.number("stop") : start;
  if (!a.given("stop")) start = Scalar(int64_t{0});
  Scalar step = a.given("step") ? a.number("step") : Scalar(int64_t{1});
  return Value::of(cufuse::arange(start, stop, step, a.dtype("dtype")));
}

Value fn_linspace(const Args& a) {
  return Value::of(cufuse::linspace(a.real("start"), a.real("stop"), a.integer("num"), a.boolean("endpoint"),
                                    a.dtype("dtype").value_or(DType::Float64)));
}

Value fn_zeros(const Args& a) { return Value::of(cufuse::zeros(a.shape("shape"), a.dtype("dtype").value_or(DType::Float64))); }
Value fn_ones(const Args& a) { return Value::of(cufuse::ones(a.shape("shape"), a.dtype("dtype").value_or(DType::Float64))); }
Value fn_full(const Args& a) { return Value::of(cufuse::full(a.shape("shape"), a.number("fill_value"), a.dtype("dtype"))); }
Value fn_zeros_like(const Args& a) { return Value::of(cufuse::zeros_like(a.array("a"), a.dtype("dtype"))); }
Value fn_ones_like(const Args& a) { return Value::of(cufuse::ones_like(a.array("a"), a.dtype("dtype"))); }
Value fn_full_like(const Args& a) {
  return Value::of(cufuse::full_like(a.array("a"), a.number("fill_value"), a.dtype("dtype")));
}

// ------------------------------------------------------------------ reductions
// axis=None (all axes), an int, or a tuple of ints.
AxisArg axis_arg(const Args& a) {
  if (!a.given("axis")) return AxisArg{};
  return AxisArg(a.axes("axis"));
}
std::optional<int> one_axis(const Args& a) {
  if (!a.given("axis")) return std::nullopt;
  return static_cast<int>(a.integer("axis"));
}

#define CUFUSE_CLI_REDUCE_DTYPE(fn) \
  Value fn_##fn(const Args& a) { return Value::of(cufuse::fn(a.array("a"), axis_arg(a), a.boolean("keepdims"), a.dtype("dtype"))); }
#define CUFUSE_CLI_REDUCE(fn) \
  Value fn_##fn(const Args& a) { return Value::of(cufuse::fn(a.array("a"), axis_arg(a), a.boolean("keepdims"))); }
CUFUSE_CLI_REDUCE_DTYPE(sum) CUFUSE_CLI_REDUCE_DTYPE(prod) CUFUSE_CLI_REDUCE_DTYPE(mean)
CUFUSE_CLI_REDUCE_DTYPE(nansum) CUFUSE_CLI_REDUCE_DTYPE(nanmean)
CUFUSE_CLI_REDUCE(max) CUFUSE_CLI_REDUCE(min) CUFUSE_CLI_REDUCE(nanmax) CUFUSE_CLI_REDUCE(nanmin)
CUFUSE_CLI_REDUCE(any) CUFUSE_CLI_REDUCE(all) CUFUSE_CLI_REDUCE(count_nonzero) CUFUSE_CLI_REDUCE(ptp)
#undef CUFUSE_CLI_REDUCE
#undef CUFUSE_CLI_REDUCE_DTYPE

Value fn_var(const Args& a) {
  return Value::of(cufuse::var(a.array("a"), axis_arg(a), static_cast<int>(a.integer("ddof")), a.boolean("keepdims"),
                               a.dtype("dtype")));
}
Value fn_std(const Args& a) {
  return Value::of(cufuse::std(a.array("a"), axis_arg(a), static_cast<int>(a.integer("ddof")), a.boolean("keepdims"),
                               a.dtype("dtype")));
}
Value fn_argmax(const Args& a) { return Value::of(cufuse::argmax(a.array("a"), one_axis(a), a.boolean("keepdims"))); }
Value fn_argmin(const Args& a) { return Value::of(cufuse::argmin(a.array("a"), one_axis(a), a.boolean("keepdims"))); }
Value fn_cumsum(const Args& a) { return Value::of(cufuse::cumsum(a.array("a"), one_axis(a), a.dtype("dtype"))); }
Value fn_cumprod(const Args& a) { return Value::of(cufuse::cumprod(a.array("a"), one_axis(a), a.dtype("dtype"))); }
// linalg.norm: ord None, a number (inf included) or 'fro'/'nuc'; axis None, an int or a
// pair (a matrix norm over those two axes: the API routes numeric orders there itself).
Value fn_norm(const Args& a) {
  const Value& o = a.get("ord");
  if (o.kind == Value::Kind::String) {
    if (o.text != "fro" && o.text != "nuc")
      a.fail("ord", fmt::format("invalid norm order '{}' (the named orders are 'fro' and 'nuc')", o.text));
    if (a.given("axis") && a.axes("axis").size() != 2)
      a.fail("ord", fmt::format("invalid norm order '{}' for vectors (give a 2-tuple axis)", o.text));
    if (!a.given("axis") && a.array("x").ndim() != 2)
      a.fail("x", fmt::format("improper number of dimensions to norm: ord '{}' with axis=None needs a 2-D array, "
                              "not {}-D (give a 2-tuple axis)", o.text, a.array("x").ndim()));
    return Value::of(cufuse::linalg::norm(a.array("x"), std::string_view(o.text), axis_arg(a), a.boolean("keepdims")));
  }
  std::optional<double> ord;
  if (a.given("ord")) ord = a.real("ord");
  if (a.given("axis")) {
    const size_t n = a.axes("axis").size();
    if (n != 1 && n != 2) a.fail("axis", fmt::format("improper number of dimensions to norm ({} axes)", n));
    if (n == 2 && ord && !(std::isinf(*ord) || *ord == 1 || *ord == -1 || *ord == 2 || *ord == -2))
      a.fail("ord", fmt::format("invalid norm order {} for matrices (1, -1, 2, -2, inf, -inf, 'fro', 'nuc')", *ord));
  }
  return Value::of(cufuse::linalg::norm(a.array("x"), ord, axis_arg(a), a.boolean("keepdims")));
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
    return is_float(x.dtype()) ? x.dtype() : DType::Float64;
  };
  const DType t = promote_types(lin("a", A), lin("b", B));
  const bool vec = B.ndim() == 1;
  const Array Af = A.astype(t), Bf = (vec ? B.reshape({m, 1}) : B).astype(t);
  const double eps = t == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double rc = rcond ? *rcond : eps * static_cast<double>(std::max(m, n));
  auto d = cufuse::linalg::svd(Af, false, true);
  Array keep = cufuse::greater(d.S, cufuse::multiply(cufuse::max(d.S), rc));
  Array sinv = cufuse::where(keep, cufuse::reciprocal(d.S), 0);
  Array utb = cufuse::matmul(d.U.swapaxes(-1, -2), Bf);
  Array x = cufuse::matmul(d.Vh.swapaxes(-1, -2), cufuse::multiply(sinv.expand_dims(-1), utb));
  Array rank = cufuse::count_nonzero(keep);
  if (rank.dtype() != DType::Int64) rank = rank.astype(DType::Int64);
  Array res;
  if (m > n) {
    Array e = cufuse::subtract(Bf, cufuse::matmul(Af, x));
    res = cufuse::sum(cufuse::multiply(e, e), 0);
  } else {
    res = cufuse::zeros({0}, t);
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

// ------------------------------------------------------------------ the table
// name, parameters, implementation, also a method, doc[, op-table name]
const FunctionRow kRows[] = {
    // casts and copies
    {"astype", "x, dtype", fn_astype, true, "cast: astype(x, 'f16'), x.astype(float16)"},
    {"copy", "a", fn_copy, true, "a copy (one elementwise kernel)"},
    {"clip", "a, a_min=None, a_max=None", fn_clip, true, "minimum(maximum(a, a_min), a_max), NaN propagating"},
    // NumPy's other names for ops of the op table
    {"abs", "x", fn_elementwise, false, "alias of absolute", "absolute"},
    {"divide", "x1, x2", fn_elementwise, false, "alias of true_divide", "true_divide"},
    {"mod", "x1, x2", fn_elementwise, false, "alias of remainder", "remainder"},
    {"pow", "x1, x2", fn_elementwise, false, "alias of power", "power"},
    {"bitwise_not", "x", fn_elementwise, false, "alias of invert", "invert"},
    {"bitwise_invert", "x", fn_elementwise, false, "alias of invert", "invert"},
    {"bitwise_left_shift", "x1, x2", fn_elementwise, false, "alias of left_shift", "left_shift"},
    {"bitwise_right_shift", "x1, x2", fn_elementwise, false, "alias of right_shift", "right_shift"},
    {"asin", "x", fn_elementwise, false, "alias of arcsin", "arcsin"},
    {"acos", "x", fn_elementwise, false, "alias of arccos", "arccos"},
    {"atan", "x", fn_elementwise, false, "alias of arctan", "arctan"},
    {"atan2", "x1, x2", fn_elementwise, false, "alias of arctan2", "arctan2"},
    {"asinh", "x", fn_elementwise, false, "alias of arcsinh", "arcsinh"},
    {"acosh", "x", fn_elementwise, false, "alias of arccosh", "arccosh"},
    {"atanh", "x", fn_elementwise, false, "alias of arctanh", "arctanh"},
    // views (lazy: they move into the kernels' index arithmetic)
    {"reshape", "a, *shape, order='C'", fn_reshape, true, "reshape(x, (2, -1)), x.reshape(2, -1)"},
    {"transpose", "a, *axes", fn_transpose, true, "reverse or permute the axes"},
    {"permute_dims", "a, axes=None", fn_permute_dims, false, "transpose with explicit axes"},
    {"swapaxes", "a, axis1, axis2", fn_swapaxes, true, "exchange two axes"},
    {"moveaxis", "a, source, destination", fn_moveaxis, false, "move one axis"},
    {"expand_dims", "a, axis", fn_expand_dims, true, "insert size-1 axes"},
    {"squeeze", "a, axis=None", fn_squeeze, true, "drop size-1 axes"},
    {"broadcast_to", "array, shape", fn_broadcast_to, true, "a broadcast view"},
    {"broadcast_arrays", "*arrays", fn_broadcast_arrays, false, "broadcast arrays against each other (a tuple)"},
    {"ravel", "a, order='C'", fn_ravel, true, "a 1-d view (a copy where NumPy copies)"},
    {"flatten", "a, order='C'", fn_flatten, true, "a 1-d copy"},
    // reductions and scans (the planner fuses their prologues, epilogues and row patterns)
    {"sum", "a, axis=None, dtype=None, keepdims=False", fn_sum, true, "sum over axes (all by default)"},
    {"prod", "a, axis=None, dtype=None, keepdims=False", fn_prod, true, "product over axes"},
    {"mean", "a, axis=None, dtype=None, keepdims=False", fn_mean, true, "mean over axes"},
    {"var", "a, axis=None, dtype=None, ddof=0, keepdims=False", fn_var, true, "variance over axes"},
    {"std", "a, axis=None, dtype=None, ddof=0, keepdims=False", fn_std, true, "standard deviation over axes"},
    {"max", "a, axis=None, keepdims=False", fn_max, true, "maximum over axes (NaN propagates)"},
    {"min", "a, axis=None, keepdims=False", fn_min, true, "minimum over axes (NaN propagates)"},
    {"amax", "a, axis=None, keepdims=False", fn_max, false, "alias of max"},
    {"amin", "a, axis=None, keepdims=False", fn_min, false, "alias of min"},
    {"nansum", "a, axis=None, dtype=None, keepdims=False", fn_nansum, false, "sum ignoring NaN"},
    {"nanmean", "a, axis=None, dtype=None, keepdims=False", fn_nanmean, false, "mean ignoring NaN"},
    {"nanmax", "a, axis=None, keepdims=False", fn_nanmax, false, "maximum ignoring NaN"},
    {"nanmin", "a, axis=None, keepdims=False", fn_nanmin, false, "minimum ignoring NaN"},
    {"ptp", "a, axis=None, keepdims=False", fn_ptp, false, "max - min over axes"},
    {"any", "a, axis=None, keepdims=False", fn_any, true, "logical or over axes"},
    {"all", "a, axis=None, keepdims=False", fn_all, true, "logical and over axes"},
    {"count_nonzero", "a, axis=None, keepdims=False", fn_count_nonzero, false, "non-zero elements over axes"},
    {"argmax", "a, axis=None, keepdims=False", fn_argmax, true, "index of the first maximum"},
    {"argmin", "a, axis=None, keepdims=False", fn_argmin, true, "index of the first minimum"},
    {"cumsum", "a, axis=None, dtype=None", fn_cumsum, true, "running sum along an axis"},
    {"cumprod", "a, axis=None, dtype=None", fn_cumprod, true, "running product along an axis"},
    {"linalg.norm", "x, ord=None, axis=None, keepdims=False", fn_norm, false,
     "vector or matrix norm: linalg.norm(x, ord=2, axis=-1), linalg.norm(x, 'fro'), linalg.norm(x, 2, axis=(0, 1))"},
    // contractions (cuBLAS GEMMs where there is something to multiply as matrices, else
    // fused views, elementwise work and reductions)
    {"matmul", "x1, x2", fn_matmul, false, "matrix product (also x1 @ x2); a scalar factor becomes the GEMM's alpha"},
    {"dot", "a, b", fn_dot, true, "NumPy's dot"},
    {"vdot", "a, b", fn_vdot, false, "dot product of the flattened arrays (a reduction)"},
    {"inner", "a, b", fn_inner, false, "sum over the last axes"},
    {"outer", "a, b", fn_outer, false, "outer product of the flattened arrays (elementwise)"},
    {"tensordot", "a, b, axes=2", fn_tensordot, false, "tensordot(a, b, axes=1), tensordot(a, b, ((1, 0), (0, 1)))"},
    {"einsum", "subscripts, *operands, optimize=False", fn_einsum, false,
     "einsum('ij,jk->ik', a, b): any number of operands, contracted pairwise (greedy)"},
    {"diagonal", "a, offset=0, axis1=0, axis2=1", fn_diagonal, true, "a view of the diagonal (as the last axis)"},
    {"trace", "a, offset=0, axis1=0, axis2=1, dtype=None", fn_trace, true, "sum of the diagonal"},
    {"relu", "x", fn_relu, false, "cufuse: maximum(x, 0) (a cuBLASLt epilogue after a GEMM)"},
    {"gelu", "x", fn_gelu, false, "cufuse: GELU, tanh approximation (a cuBLASLt epilogue after a GEMM)"},
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
    // creation (lazy generators and filled arrays: they fuse into their consumers)
    {"arange", "start, stop=None, step=None, dtype=None", fn_arange, false, "arange(n), arange(a, b, step)"},
    {"linspace", "start, stop, num=50, endpoint=True, dtype=None", fn_linspace, false, "evenly spaced numbers"},
    {"zeros", "shape, dtype=None", fn_zeros, false, "filled with 0 (float64 by default)"},
    {"ones", "shape, dtype=None", fn_ones, false, "filled with 1 (float64 by default)"},
    {"full", "shape, fill_value, dtype=None", fn_full, false, "filled with a value"},
    {"zeros_like", "a, dtype=None", fn_zeros_like, false, "zeros of a's shape and dtype"},
    {"ones_like", "a, dtype=None", fn_ones_like, false, "ones of a's shape and dtype"},
    {"full_like", "a, fill_value, dtype=None", fn_full_like, false, "a value in a's shape and dtype"},
};

std::vector<FunctionRow> build_table() {
  std::vector<FunctionRow> rows(std::begin(kRows), std::end(kRows));
  // Every op of the op table by its NumPy name (astype is the row above).
  for (int i = 0; i < detail::kNumOps; ++i) {
    const detail::OpRow& op = detail::op_row(static_cast<detail::Op>(i));
    if (op.id == detail::Op::Cast) continue;
    if (std::any_of(rows.begin(), rows.end(), [&](const FunctionRow& r) { return std::string_view(r.name) == op.name; }))
      continue;
    const char* params = op.rule == detail::TypeRule::Where ? "condition, x, y" : (op.arity == 1 ? "x" : "x1, x2");
    rows.push_back(FunctionRow{op.name, params, fn_elementwise, false, "elementwise (op table)", op.name});
  }
  return rows;
}

}  // namespace

const std::vector<FunctionRow>& function_table() {
  static const std::vector<FunctionRow> rows = build_table();
  return rows;
}

}  // namespace cufuse::cli
