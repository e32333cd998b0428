// tests/fuzz_program.hpp: random array programs for differential tests of the planner, the
// code generator and the executor (tests/test_fuzz.cpp on the reference backend, and
// tests/gpu/test_fuzz_gpu.cpp on the device, both against the host reference evaluator).
//
// A program is a list of instructions over three input arrays: elementwise ops by their
// NumPy names, scalars, where, clip, astype, arange, views (transpose, swapaxes, reversal,
// strided slices, integer indexing, new axes, squeeze, broadcast_to, diagonal, reshapes),
// reductions over one, two or all axes (sum, mean, prod, var, std, ptp, nan-, arg-, any,
// all, count_nonzero), scans (cumsum, cumprod), matmul, einsum, convolutions and
// correlations (NumPy's 1-D, SciPy's 2-D with their boundaries), and user kernels
// (ElementwiseKernel, ReductionKernel) that have a lazy twin: on the device the user kernel
// runs, fused with the rest, and the reference evaluates the twin. Between the instructions,
// some programs write in place (fuzz_writes.hpp: a op= e, a.assign(e), a[view] = e,
// a[view] op= e, with views on both sides and values that read the array written). Some
// values are evaluated early (a second build of the program, so the reference's graph stays
// lazy). It can be rebuilt on other inputs (fuse() traces it) and printed in NumPy spelling
// with its seed, so a failure can be read and replayed (CUFUSE_FUZZ_SEED).
//
// How results are compared. Each value carries a bound on how far a correct device result
// may be from the reference's: 0 (bitwise, NaN equal to NaN, -0 equal to +0) where every
// op on its path is exact (IEEE arithmetic, comparisons, views, casts, integer work, max and
// min reductions), else a bound propagated op by op from the values' magnitudes (`bounds`):
// transcendental functions within 4 ulps, sums and matmuls reordered, and the rounding of
// each op. Ops that are not continuous (comparisons, floor, casts to integers, argmax ...)
// are only generated on exact values, so that a rounding difference can never flip them.
//
// A program that writes in place runs lazily, with one evaluation of every result at the end,
// and eagerly, every statement evaluated as soon as it is made; each must agree with the
// model (fuzz_writes.hpp: each statement computed by the host reference evaluator as it is
// made, each write stored by the fuzzer): bitwise on the reference backend, where only the
// planning differs, within the bounds on the device.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <cufuse/cufuse.hpp>

#include "reference/evaluator.hpp"

namespace fuzz {

namespace cf = cufuse;

enum class Kind : uint8_t {
  Unary, Binary, Scalar, Where, Clip, Astype, Transpose, Reverse, Step, IntIndex, Expand, Reshape, Reduce, Matmul,
  Scan, Einsum, Swap, Squeeze, BroadcastTo, Diagonal, Arange, User, Convolve, Linalg
};
constexpr int kKinds = 24;

struct Instr {
  Kind kind = Kind::Unary;
  std::string op;              // NumPy name (Unary, Binary, Scalar, Reduce)
  int a = -1, b = -1, c = -1;  // operands: value ids
  double s = 0, s2 = 0;        // scalar operand; clip bounds
  bool int_scalar = false;     // the scalar is a C++ integer (weak int) instead of a double
  bool left = false;           // Scalar: the scalar is the left operand
  int axis = 0;                // Reverse/Step/IntIndex/Expand/Scan/Swap/Diagonal axis; Reduce, Scan: -1 = all
  int axis2 = -1;              // Reduce: a second axis; Swap: the other axis
  int64_t index = 0;           // IntIndex; Diagonal: the offset; Einsum: the contracted length
  int ddof = 0;                // var, std
  bool keepdims = false;
  bool with_dtype = false;     // Reduce (sum, mean, nansum), Scan: dtype=`dtype`
  cf::DType dtype = cf::DType::Float32;  // Astype; Reduce/Scan with_dtype
  cf::Shape shape;             // Reshape, BroadcastTo
  std::string sub;             // Einsum subscripts; Convolve: the mode
  std::string boundary;        // Convolve (2-D): fill, wrap or symm, `s` the fill value
  int einsum_kind = 0;         // Einsum: 0 a view, 1 a sum over labels, 2 a contraction
                               // Linalg: op on wc(a) (linalg_input), `index` its order k,
                               // `dtype` its dtype; solve's right-hand side from b
                               // User: op names the kernel (user_kernel)
};

// A statement that writes in place, before instruction `at` (fuzz_writes.hpp): the array of
// value `target`, through view `view` (WView) along `axis`, gets `op`= the source, or is
// assigned it (op empty). The source: value `value` (src 0), the Python scalar `s` (src 1),
// or the array written read again through view `rview` along `raxis` (src 2, aliasing).
struct WriteStmt {
  int at = 0;
  int target = -1;
  bool copy = false;  // through a second handle on the target, made when it was built
  int view = 0, axis = 0;
  int64_t index = 0;  // view IntAt: the index
  std::string op;     // "" (assignment) or an in-place ufunc: add, subtract, ... (fuzz_writes.hpp)
  int src = 0;
  int value = -1;
  double s = 0;
  bool int_scalar = false;
  int rview = 0, raxis = 0;
  bool keepdims = false;  // rview Max
};

struct Program {
  uint64_t seed = 0;
  std::vector<cf::DType> in_dtype;
  std::vector<cf::Shape> in_shape;
  std::vector<Instr> code;
  std::vector<bool> exact;     // per value: every op on its path is exact
  std::vector<int> outputs;    // value ids
  std::vector<WriteStmt> writes;  // in-place statements, in program order (by `at`)
  std::vector<int> evals;      // values evaluated early in the run (never in the reference's graph)
  bool evals_at_once = false;  // evaluated as soon as built (later ops build on the buffer), else
                               // after every value is built (realized under the ops that read them)
  bool on_stream = false;      // on the device: the run goes on a new stream (inputs made on the
                               // default one, then synchronized), which is destroyed before fuse()

  int n_inputs() const { return static_cast<int>(in_dtype.size()); }
  // The input value `v` is a view of (through views only), or -1.
  int view_of(int v) const {
    while (v >= n_inputs()) {
      const Instr& in = code[static_cast<size_t>(v - n_inputs())];
      const bool view = in.kind == Kind::Transpose || in.kind == Kind::Reverse || in.kind == Kind::Step ||
                        in.kind == Kind::IntIndex || in.kind == Kind::Expand || in.kind == Kind::Reshape ||
                        in.kind == Kind::Swap || in.kind == Kind::Squeeze || in.kind == Kind::BroadcastTo ||
                        in.kind == Kind::Diagonal || (in.kind == Kind::Einsum && in.einsum_kind == 0);
      if (!view) return -1;
      v = in.a;
    }
    return v;
  }
  int n_values() const { return n_inputs() + static_cast<int>(code.size()); }
  std::string text() const;
};

// ------------------------------------------------------------------ building

// Unary ops with a composite spelling, so that their domain is always valid.
inline cf::Array unary(const std::string& op, const cf::Array& x) {
  if (op == "sqrt_abs") return cf::sqrt(cf::abs(x));
  if (op == "log1p_abs") return cf::log1p(cf::abs(x));
  if (op == "exp_clip") return cf::exp(cf::clip(x, -8, 8));
  return cf::apply(op, {x});
}

inline cf::Array reduce(const Instr& in, const cf::Array& x) {
  cf::AxisArg ax = in.axis < 0 ? cf::AxisArg{} : in.axis2 < 0 ? cf::AxisArg{in.axis} : cf::AxisArg{in.axis, in.axis2};
  const std::optional<cf::DType> dt = in.with_dtype ? std::optional<cf::DType>{in.dtype} : std::nullopt;
  const std::optional<int> one = in.axis < 0 ? std::optional<int>{} : std::optional<int>{in.axis};
  if (in.op == "sum") return cf::sum(x, ax, in.keepdims, dt);
  if (in.op == "mean") return cf::mean(x, ax, in.keepdims, dt);
  if (in.op == "prod") return cf::prod(x, ax, in.keepdims);
  if (in.op == "max") return cf::max(x, ax, in.keepdims);
  if (in.op == "min") return cf::min(x, ax, in.keepdims);
  if (in.op == "any") return cf::any(x, ax, in.keepdims);
  if (in.op == "all") return cf::all(x, ax, in.keepdims);
  if (in.op == "var") return cf::var(x, ax, in.ddof, in.keepdims);
  if (in.op == "std") return cf::std(x, ax, in.ddof, in.keepdims);
  if (in.op == "ptp") return cf::ptp(x, ax, in.keepdims);
  if (in.op == "count_nonzero") return cf::count_nonzero(x, ax, in.keepdims);
  if (in.op == "nansum") return cf::nansum(x, ax, in.keepdims, dt);
  if (in.op == "nanmean") return cf::nanmean(x, ax, in.keepdims, dt);
  if (in.op == "nanmax") return cf::nanmax(x, ax, in.keepdims);
  if (in.op == "nanmin") return cf::nanmin(x, ax, in.keepdims);
  if (in.op == "argmax") return cf::argmax(x, one, in.keepdims);
  if (in.op == "argmin") return cf::argmin(x, one, in.keepdims);
  throw std::logic_error("fuzz: unknown reduction " + in.op);
}

inline cf::Array scan(const Instr& in, const cf::Array& x) {
  const std::optional<int> ax = in.axis < 0 ? std::optional<int>{} : std::optional<int>{in.axis};
  const std::optional<cf::DType> dt = in.with_dtype ? std::optional<cf::DType>{in.dtype} : std::nullopt;
  if (in.op == "cumsum") return cf::cumsum(x, ax, dt);
  if (in.op == "cumprod") return cf::cumprod(x, ax, dt);
  throw std::logic_error("fuzz: unknown scan " + in.op);
}

inline std::vector<cf::Index> axis_index(int ndim, int axis, cf::Index at) {
  std::vector<cf::Index> idx(static_cast<size_t>(ndim), cf::Index(cf::_));
  idx[static_cast<size_t>(axis)] = at;
  return idx;
}

// User kernels, each with a lazy twin that gives the same bits (IEEE ops, --fmad=false, no fma;
// integers wrap either way): madd z = x*y + x, pick z = x > y ? x : y, sqm z = x*x - x, and
// isum, an integer sum in the input's dtype (wrapping, so any order gives the same bits), and
// imax, an integer max with `a > b ? a : b` (ptxas's VIMNMX3 fusion: codegen/user_kernel.cpp).
inline cf::Array user_kernel(const Instr& in, const std::vector<cf::Array>& v, bool twin) {
  static const cf::ElementwiseKernel madd("T x, T y", "T z", "z = x * y + x", "fuzz_madd");
  static const cf::ElementwiseKernel pick("T x, T y", "T z", "z = x > y ? x : y", "fuzz_pick");
  static const cf::ElementwiseKernel sqm("T x", "T z", "z = x * x - x", "fuzz_sqm");
  static const cf::ElementwiseKernel uneg("T x", "T z", "z = -x", "fuzz_uneg");  // wraps as negative()
  static const cf::ReductionKernel isum("T x", "T y", "x", "a + b", "y = a", "0", "fuzz_isum");
  static const cf::ReductionKernel imax("T x", "T y", "x", "a > b ? a : b", "y = a",
                                        "(T)(1ULL << (sizeof(T) * 8 - 1))", "fuzz_imax");  // T's minimum
  const cf::Array& x = v[static_cast<size_t>(in.a)];
  if (in.op == "isum" || in.op == "imax") {
    cf::AxisArg ax = in.axis < 0 ? cf::AxisArg{} : cf::AxisArg{in.axis};
    if (in.op == "imax") return twin ? cf::max(x, ax, in.keepdims) : imax({x}, ax, in.keepdims);
    return twin ? cf::sum(x, ax, in.keepdims, x.dtype()) : isum({x}, ax, in.keepdims);
  }
  // The twins name their products: a user kernel's C++ is compiled as written, so its product
  // is rounded before the add, as a named product is (rule contract-multiply-add contracts only
  // an operator's temporary into fma).
  if (in.op == "sqm") {
    if (!twin) return sqm(x);
    const cf::Array xx = x * x;
    return xx - x;
  }
  if (in.op == "uneg") return twin ? -x : uneg(x);
  const cf::Array& y = v[static_cast<size_t>(in.b)];
  if (in.op == "madd") {
    if (!twin) return madd(x, y);
    const cf::Array xy = x * y;
    return xy + x;
  }
  return twin ? cf::where(x > y, x, y) : pick(x, y);
}

// Linear algebra on a well-conditioned matrix made from any value: wc(x, k, t) =
// I + T / (2k), T = tanh of x's leading k x k block in dtype t (a non-finite entry counts
// as 0). |T| <= 1, so the off-diagonal part has norm at most 1/2: the singular values lie in
// [1/2, 3/2] and the condition number is at most 3, whatever x holds; a tanh that differs by
// a few ulps (or x's own error) moves the result by a bounded amount (`bounds`).
inline cf::Array tanh_block(const cf::Array& x, int64_t rows, int64_t cols, cf::DType t) {
  const int nd = x.ndim();
  if (nd == 0 || x.shape(nd - 1) < cols || (nd >= 2 && x.shape(nd - 2) < rows) || (nd == 1 && rows != cols))
    throw cf::ValueError("fuzz: no such block");
  std::vector<cf::Index> idx(static_cast<size_t>(nd), cf::Index(cf::_));
  idx[static_cast<size_t>(nd - 1)] = cf::slice(0, cols);
  if (nd >= 2) idx[static_cast<size_t>(nd - 2)] = cf::slice(0, rows);
  const cf::Array b = cf::astype(x.index(idx), t);
  return cf::where(cf::isfinite(b), cf::tanh(b), 0);
}
inline cf::Array linalg_input(const cf::Array& x, int64_t k, cf::DType t, bool symmetric) {
  const cf::Array eye = cf::astype(cf::arange(k).reshape(cf::Shape{k, 1}) == cf::arange(k), t);
  const cf::Array a = tanh_block(x, k, k, t) / (2.0 * static_cast<double>(std::max<int64_t>(k, 1))) + eye;
  return symmetric ? (a + a.swapaxes(-1, -2)) * 0.5 : a;
}
// solve's right-hand side: (..., k, min(cols, 3)) from a 2-D or higher value, (k,) from a 1-D one.
inline cf::Array solve_rhs(const cf::Array& y, int64_t k, cf::DType t) {
  if (y.ndim() == 1) return tanh_block(y.index({cf::Index(cf::slice(0, k))}), k, k, t);
  return tanh_block(y, k, std::min<int64_t>(y.shape(y.ndim() - 1), 3), t);
}
inline int64_t solve_rhs_cols(const cf::Shape& y) {
  return y.ndim() == 1 ? 1 : std::min<int64_t>(y[static_cast<size_t>(y.ndim() - 1)], 3);
}
inline cf::Array linalg_op(const Instr& in, const std::vector<cf::Array>& v) {
  namespace la = cf::linalg;
  const bool sym = in.op == "cholesky" || in.op == "eigvalsh" || in.op == "eigh";
  const cf::Array a = linalg_input(v[static_cast<size_t>(in.a)], in.index, in.dtype, sym);
  if (in.op == "inv") return la::inv(a);
  if (in.op == "solve") return la::solve(a, solve_rhs(v[static_cast<size_t>(in.b)], in.index, in.dtype));
  if (in.op == "det") return la::det(a);
  if (in.op == "cholesky") return la::cholesky(a);
  if (in.op == "eigvalsh") return la::eigvalsh(a);
  if (in.op == "svdvals") return la::svdvals(a);
  if (in.op == "pinv") return la::pinv(a);
  if (in.op == "nuc") return la::matrix_norm(a, "nuc");
  if (in.op == "slogdet") return la::slogdet(a).logabsdet;
  if (in.op == "slogdet_sign") return la::slogdet(a).sign;
  if (in.op == "eigh") return la::eigh(a).eigenvalues;
  if (in.op == "svd_s") return la::svd(a, false).S;
  if (in.op == "qr_r") return cf::abs(cf::diagonal(la::qr(a).R, 0, -2, -1));  // |diag R|: the signs are a convention
  if (in.op == "rank") return la::matrix_rank(a);
  const cf::AxisArg last2{-2, -1};
  if (in.op == "norm2") return la::norm(a, 2.0, last2);
  if (in.op == "norm-2") return la::norm(a, -2.0, last2);
  if (in.op == "norm1") return la::norm(a, 1.0, last2);
  if (in.op == "norminf") return la::norm(a, INFINITY, last2);
  throw std::logic_error("fuzz: unknown linalg op " + in.op);
}

// One instruction on the values before it; `twin`: a user kernel's lazy twin instead.
inline cf::Array apply_instr(const Instr& in, const std::vector<cf::Array>& v, bool twin = false) {
  const cf::Array& x = v[static_cast<size_t>(in.a)];
  switch (in.kind) {
    case Kind::Unary: return unary(in.op, x);
    case Kind::Binary: return cf::apply(in.op, {x, v[static_cast<size_t>(in.b)]});
    case Kind::Scalar: {
      cf::Operand s = in.int_scalar ? cf::Operand(static_cast<int64_t>(in.s)) : cf::Operand(in.s);
      return in.left ? cf::apply(in.op, {s, x}) : cf::apply(in.op, {x, s});
    }
    case Kind::Where: return cf::where(x, v[static_cast<size_t>(in.b)], v[static_cast<size_t>(in.c)]);
    case Kind::Clip: return cf::clip(x, in.s, in.s2);
    case Kind::Astype: return cf::astype(x, in.dtype);
    case Kind::Transpose: return x.T();
    case Kind::Reverse: return x.index(axis_index(x.ndim(), in.axis, cf::slice(std::nullopt, std::nullopt, -1)));
    case Kind::Step: return x.index(axis_index(x.ndim(), in.axis, cf::slice(1, std::nullopt, 2)));
    case Kind::IntIndex: return x.index(axis_index(x.ndim(), in.axis, cf::Index(in.index)));
    case Kind::Expand: return x.expand_dims(in.axis);
    case Kind::Reshape: return x.reshape(in.shape);
    case Kind::Reduce: return reduce(in, x);
    case Kind::Matmul: {  // op: "", or "relu" / "gelu" after it (a cuBLASLt epilogue where the dtype allows)
      cf::Array m = cf::matmul(x, v[static_cast<size_t>(in.b)]);
      return in.op == "relu" ? cf::relu(m) : in.op == "gelu" ? cf::gelu(m) : m;
    }
    case Kind::Scan: return scan(in, x);
    case Kind::Einsum:
      return in.b < 0 ? cf::einsum(in.sub, x) : cf::einsum(in.sub, x, v[static_cast<size_t>(in.b)]);
    case Kind::Swap: return x.swapaxes(in.axis, in.axis2);
    case Kind::Squeeze: return x.squeeze();
    case Kind::BroadcastTo: return x.broadcast_to(in.shape);
    case Kind::Diagonal: return cf::diagonal(x, in.index, in.axis, in.axis2);
    case Kind::Arange: return cf::arange(x.shape(x.ndim() - 1));
    case Kind::User: return user_kernel(in, v, twin);
    case Kind::Convolve: {
      const cf::Array& y = v[static_cast<size_t>(in.b)];
      if (in.op == "convolve") return cf::convolve(x, y, in.sub);
      if (in.op == "correlate") return cf::correlate(x, y, in.sub);
      const cf::Scalar fill = in.int_scalar ? cf::Scalar(static_cast<int64_t>(in.s)) : cf::Scalar(in.s);
      if (in.op == "convolve2d") return cf::signal::convolve2d(x, y, in.sub, in.boundary, fill);
      return cf::signal::correlate2d(x, y, in.sub, in.boundary, fill);
    }
    case Kind::Linalg: return linalg_op(in, v);
  }
  throw std::logic_error("fuzz: unknown instruction");
}

// Every value of the program on these inputs: lazy, or with `with_evals` the program's early
// evaluations done (as soon as each value is built, or once all are built). `twin`: user
// kernels replaced by their lazy twins (what the reference evaluator can run).
inline std::vector<cf::Array> values(const Program& p, const std::vector<cf::Array>& inputs, bool with_evals = false,
                                     bool twin = true) {
  std::vector<cf::Array> v(inputs.begin(), inputs.end());
  v.reserve(static_cast<size_t>(p.n_values()));
  auto early = [&](int id) { return std::find(p.evals.begin(), p.evals.end(), id) != p.evals.end(); };
  for (const Instr& in : p.code) {
    v.push_back(apply_instr(in, v, twin));
    if (with_evals && p.evals_at_once && early(static_cast<int>(v.size()) - 1)) v.back().eval();
  }
  if (with_evals && !p.evals_at_once)
    for (int id : p.evals) v[static_cast<size_t>(id)].eval();
  return v;
}

inline std::vector<cf::Array> outputs(const Program& p, const std::vector<cf::Array>& inputs, bool twin = true) {
  std::vector<cf::Array> v = values(p, inputs, false, twin), out;
  for (int o : p.outputs) out.push_back(v[static_cast<size_t>(o)]);
  return out;
}

// ------------------------------------------------------------------ printing

inline std::string num(double d) {
  std::ostringstream s;
  s.precision(17);
  s << d;
  return s.str();
}

inline std::string instr_text(const Instr& in) {
  auto v = [](int i) { return "v" + std::to_string(i); };
  auto idx = [&](const std::string& at, int axis) {
    std::string s = "[";
    for (int d = 0; d < axis; ++d) s += ":, ";
    return s + at + "]";
  };
  switch (in.kind) {
    case Kind::Unary:
      if (in.op == "sqrt_abs") return "sqrt(abs(" + v(in.a) + "))";
      if (in.op == "log1p_abs") return "log1p(abs(" + v(in.a) + "))";
      if (in.op == "exp_clip") return "exp(clip(" + v(in.a) + ", -8, 8))";
      return in.op + "(" + v(in.a) + ")";
    case Kind::Binary: return in.op + "(" + v(in.a) + ", " + v(in.b) + ")";
    case Kind::Scalar: {
      std::string s = in.int_scalar ? std::to_string(static_cast<int64_t>(in.s)) : num(in.s);
      return in.op + "(" + (in.left ? s + ", " + v(in.a) : v(in.a) + ", " + s) + ")";
    }
    case Kind::Where: return "where(" + v(in.a) + ", " + v(in.b) + ", " + v(in.c) + ")";
    case Kind::Clip: return "clip(" + v(in.a) + ", " + num(in.s) + ", " + num(in.s2) + ")";
    case Kind::Astype: return v(in.a) + ".astype(" + std::string(cf::name(in.dtype)) + ")";
    case Kind::Transpose: return v(in.a) + ".T";
    case Kind::Reverse: return v(in.a) + idx("::-1", in.axis);
    case Kind::Step: return v(in.a) + idx("1::2", in.axis);
    case Kind::IntIndex: return v(in.a) + idx(std::to_string(in.index), in.axis);
    case Kind::Expand: return "expand_dims(" + v(in.a) + ", " + std::to_string(in.axis) + ")";
    case Kind::Reshape: return v(in.a) + ".reshape" + cf::to_string(in.shape);
    case Kind::Reduce: {
      std::string ax;
      if (in.axis >= 0 && in.axis2 >= 0) ax = ", axis=(" + std::to_string(in.axis) + ", " + std::to_string(in.axis2) + ")";
      else if (in.axis >= 0) ax = ", axis=" + std::to_string(in.axis);
      return in.op + "(" + v(in.a) + ax + (in.ddof ? ", ddof=" + std::to_string(in.ddof) : std::string()) +
             (in.keepdims ? ", keepdims=True" : "") +
             (in.with_dtype ? ", dtype=" + std::string(cf::name(in.dtype)) : std::string()) + ")";
    }
    case Kind::Matmul: return in.op.empty() ? v(in.a) + " @ " + v(in.b) : in.op + "(" + v(in.a) + " @ " + v(in.b) + ")";
    case Kind::Scan:
      return in.op + "(" + v(in.a) + (in.axis < 0 ? std::string() : ", axis=" + std::to_string(in.axis)) +
             (in.with_dtype ? ", dtype=" + std::string(cf::name(in.dtype)) : std::string()) + ")";
    case Kind::Einsum: return "einsum('" + in.sub + "', " + v(in.a) + (in.b < 0 ? std::string() : ", " + v(in.b)) + ")";
    case Kind::Swap: return v(in.a) + ".swapaxes(" + std::to_string(in.axis) + ", " + std::to_string(in.axis2) + ")";
    case Kind::Squeeze: return v(in.a) + ".squeeze()";
    case Kind::BroadcastTo: return "broadcast_to(" + v(in.a) + ", " + cf::to_string(in.shape) + ")";
    case Kind::Diagonal:
      return "diagonal(" + v(in.a) + ", " + std::to_string(in.index) + ", " + std::to_string(in.axis) + ", " +
             std::to_string(in.axis2) + ")";
    case Kind::Arange: return "arange(" + v(in.a) + ".shape[-1])";
    case Kind::User:
      if (in.op == "isum" || in.op == "imax")
        return "fuzz_" + in.op + "(" + v(in.a) + (in.axis < 0 ? std::string() : ", axis=" + std::to_string(in.axis)) +
               (in.keepdims ? ", keepdims=True" : "") +
               (in.op == "isum" ? ")    # ReductionKernel 'a + b'; twin sum(dtype=T)"
                                : ")    # ReductionKernel 'a > b ? a : b'; twin max");
      if (in.op == "sqm") return "fuzz_sqm(" + v(in.a) + ")    # ElementwiseKernel z = x*x - x";
      if (in.op == "uneg") return "fuzz_uneg(" + v(in.a) + ")    # ElementwiseKernel z = -x";
      return "fuzz_" + in.op + "(" + v(in.a) + ", " + v(in.b) + ")    # ElementwiseKernel " +
             (in.op == "madd" ? "z = x*y + x" : "z = x > y ? x : y");
    case Kind::Convolve:
      if (in.op == "convolve" || in.op == "correlate") return in.op + "(" + v(in.a) + ", " + v(in.b) + ", '" + in.sub + "')";
      return "signal." + in.op + "(" + v(in.a) + ", " + v(in.b) + ", '" + in.sub + "', '" + in.boundary + "', " +
             num(in.s) + ")";
    case Kind::Linalg: {  // wc(x, k, t): linalg_input; rhs(y, k, t): solve_rhs
      const bool sym = in.op == "cholesky" || in.op == "eigvalsh" || in.op == "eigh";
      const std::string w = std::string(sym ? "wcsym(" : "wc(") + v(in.a) +
                            ", " + std::to_string(in.index) + ", " + std::string(cf::name(in.dtype)) + ")";
      if (in.op == "solve")
        return "linalg.solve(" + w + ", rhs(" + v(in.b) + ", " + std::to_string(in.index) + ", " +
               std::string(cf::name(in.dtype)) + "))";
      if (in.op == "nuc") return "linalg.matrix_norm(" + w + ", 'nuc')";
      if (in.op == "slogdet") return "linalg.slogdet(" + w + ").logabsdet";
      if (in.op == "slogdet_sign") return "linalg.slogdet(" + w + ").sign";
      if (in.op == "eigh") return "linalg.eigh(" + w + ").eigenvalues";
      if (in.op == "svd_s") return "linalg.svd(" + w + ", full_matrices=False).S";
      if (in.op == "qr_r") return "abs(diagonal(linalg.qr(" + w + ").R, 0, -2, -1))";
      if (in.op == "rank") return "linalg.matrix_rank(" + w + ")";
      if (in.op.rfind("norm", 0) == 0) return "linalg.norm(" + w + ", " + in.op.substr(4) + ", axis=(-2, -1))";
      return "linalg." + in.op + "(" + w + ")";
    }
  }
  return "?";
}

inline std::string write_text(const WriteStmt& w);  // fuzz_writes.hpp

inline std::string Program::text() const {
  std::ostringstream s;
  s << "# fuzz program, seed " << seed << " (CUFUSE_FUZZ_SEED=" << seed << " replays it)\n";
  // A second handle on a value that a write goes through is made with it.
  auto handle = [&](int id) {
    for (const auto& w : writes)
      if (w.copy && w.target == id) {
        s << "h" << id << " = v" << id << "    # a second handle on the same array\n";
        return;
      }
  };
  size_t w = 0;
  auto writes_at = [&](int at) {
    for (; w < writes.size() && writes[w].at == at; ++w) s << write_text(writes[w]) << "\n";
  };
  for (int i = 0; i < n_inputs(); ++i) {
    s << "v" << i << " = input(" << cf::name(in_dtype[static_cast<size_t>(i)]) << ", "
      << cf::to_string(in_shape[static_cast<size_t>(i)]) << ")\n";
    handle(i);
  }
  for (size_t k = 0; k < code.size(); ++k) {
    writes_at(static_cast<int>(k));
    const int id = n_inputs() + static_cast<int>(k);
    s << "v" << id << " = " << instr_text(code[k]) << (exact[static_cast<size_t>(id)] ? "" : "    # inexact") << "\n";
    handle(id);
  }
  writes_at(static_cast<int>(code.size()));
  s << "outputs:";
  for (int o : outputs) s << " v" << o;
  if (!writes.empty())
    s << "\n(it writes: it runs lazily, evaluated once at the end, and eagerly, each statement evaluated as made, "
         "against the model, each statement computed by the host reference evaluator as made; compared: the outputs "
         "and every array written, as they are at the end)";
  s << "\n";
  if (on_stream) s << "on a new stream (the device only)\n";
  if (!evals.empty()) {
    s << "evaluated early (" << (evals_at_once ? "as soon as built" : "once every value is built") << "):";
    for (int e : evals) s << " v" << e;
    s << "\n";
  }
  return s.str();
}

// ------------------------------------------------------------------ generating

struct Config {
  int min_instr = 4, max_instr = 14;
  std::vector<int64_t> dims = {1, 2, 3, 5, 16, 33, 64, 130};
  double p3d = 0.25;        // chance of a rank-3 base shape
  double p_inplace = 0.25;  // chance of a write into an input after the outputs are built
  double p_writes = 0.25;   // chance of one to three writes between the instructions (fuzz_writes.hpp)
  double p_big = 0.0;       // chance of a long base shape (multi-block reductions, vector tails)
  double p_early = 0.3;     // chance of evaluating one or two values early (realized mid-graph)
  double p_stream = 0.3;    // chance of running on a new stream (device only)
  double p_zero = 0.04;     // chance of a zero-size axis in the base shape (empty arrays)
  bool matmul = true;
  int64_t max_numel = 1 << 16;
};

// What tests/gpu/test_fuzz_gpu.cpp runs. CUFUSE_FUZZ_DEVICE_CONFIG=1 makes tests/test_fuzz.cpp
// use it too, so that a device program can be replayed on the reference backend.
// CUFUSE_FUZZ_MAX_INSTR=<n> and CUFUSE_FUZZ_P_{BIG,3D,INPLACE,WRITES,EARLY,STREAM,ZERO}=<p>
// steer a campaign (longer programs, more long shapes, writes, early evaluations, streams,
// empty axes); a failing program replays with the same settings.
inline Config device_config() {
  Config c;
  c.p_big = 0.1;
  if (const char* e = std::getenv("CUFUSE_FUZZ_MAX_INSTR"); e && *e) c.max_instr = std::max(c.min_instr, std::atoi(e));
  auto prob = [](const char* name, double& p) {
    if (const char* e = std::getenv(name); e && *e) p = std::clamp(std::atof(e), 0.0, 1.0);
  };
  prob("CUFUSE_FUZZ_P_BIG", c.p_big);
  prob("CUFUSE_FUZZ_P_3D", c.p3d);
  prob("CUFUSE_FUZZ_P_INPLACE", c.p_inplace);
  prob("CUFUSE_FUZZ_P_WRITES", c.p_writes);
  prob("CUFUSE_FUZZ_P_EARLY", c.p_early);
  prob("CUFUSE_FUZZ_P_STREAM", c.p_stream);
  prob("CUFUSE_FUZZ_P_ZERO", c.p_zero);
  return c;
}

inline bool floating(cf::DType t) { return cf::is_float(t); }

// Ops that are exact on exact inputs (the device and the reference give the same bits).
inline bool exact_op(const std::string& op) {
  static const char* inexact[] = {"exp_clip", "log1p_abs", "tanh", "sin", "cos", "arctan", "power", "arctan2", "hypot",
                                  "cbrt"};
  for (const char* n : inexact)
    if (op == n) return false;
  return true;
}
// Ops that may take an inexact operand: continuous ones whose error `bounds` can follow.
inline bool continuous_op(const std::string& op) {
  static const char* ok[] = {"negative", "positive", "abs", "square", "tanh", "sin", "cos", "arctan", "exp_clip",
                             "log1p_abs", "add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin",
                             "hypot"};
  for (const char* n : ok)
    if (op == n) return true;
  return false;
}

// fuzz_writes.hpp
inline bool valid_write(const WriteStmt& w, const Program& p, const std::vector<cf::Array>& v);
inline void draw_writes(Program& p, const std::vector<cf::Array>& v, const Config& cfg, std::mt19937_64& g);

class Generator {
 public:
  Generator(uint64_t seed, const Config& cfg) : g_(seed), cfg_(cfg) { p_.seed = seed; }

  // The inputs' dtypes and shapes (the caller makes the arrays, then calls build).
  void choose_inputs() {
    const bool three = coin(cfg_.p3d);
    base_.clear();
    if (coin(cfg_.p_big)) {
      static const std::vector<cf::Shape> big = {cf::Shape{4099}, cf::Shape{65537}, cf::Shape{300001},
                                                 cf::Shape{1027, 129}, cf::Shape{33, 4099}, cf::Shape{2, 3, 20011}};
      base_ = pick(big);
      max_numel_ = int64_t(1) << 20;
    } else {
      if (three) base_.push_back(pick(std::vector<int64_t>{2, 3, 4}));
      base_.push_back(pick(cfg_.dims));
      base_.push_back(pick(cfg_.dims));
    }
    if (coin(cfg_.p_zero)) base_[static_cast<size_t>(irange(0, base_.ndim() - 1))] = 0;
    for (int i = 0; i < 3; ++i) {
      p_.in_dtype.push_back(pick_dtype());
      p_.in_shape.push_back(i == 0 ? base_ : variant_of(base_));
    }
  }
  const Program& program() const { return p_; }

  // Grows the program on real input arrays (lazy; nothing is evaluated).
  Program build(const std::vector<cf::Array>& inputs) {
    std::vector<cf::Array> v(inputs.begin(), inputs.end());
    p_.exact.assign(v.size(), true);
    const int want = static_cast<int>(irange(cfg_.min_instr, cfg_.max_instr));
    int tries = 0;
    while (static_cast<int>(p_.code.size()) < want && tries++ < want * 40) {
      Instr in;
      bool ex = true;
      if (!propose(v, in, ex)) continue;
      cf::Array r;
      try {
        r = apply_instr(in, v, /*twin=*/false);
        if (in.kind == Kind::User) {  // the twin must take the same operands, to the same dtype and shape
          cf::Array w = apply_instr(in, v, /*twin=*/true);
          if (w.dtype() != r.dtype() || !(w.shape() == r.shape())) continue;
        }
      } catch (const cf::Error&) {
        continue;  // not a valid combination (shapes, dtypes): try another
      }
      if (r.size() > std::max(cfg_.max_numel, max_numel_) || r.ndim() > 4) continue;
      p_.code.push_back(in);
      p_.exact.push_back(ex);
      v.push_back(r);
    }
    // Outputs: the last value and up to two others (never a bare input).
    const int n_in = p_.n_inputs(), n = p_.n_values();
    if (n > n_in) {
      p_.outputs.push_back(n - 1);
      const int extra = static_cast<int>(irange(0, 2));
      for (int k = 0; k < extra && n - 1 > n_in; ++k) {
        int o = static_cast<int>(irange(n_in, n - 2));
        if (std::find(p_.outputs.begin(), p_.outputs.end(), o) == p_.outputs.end()) p_.outputs.push_back(o);
      }
    }
    if (n > n_in && coin(cfg_.p_inplace)) {
      // An output that is a view of the target shows the write (as in NumPy): not compared
      // against values from before it, so such a target is not chosen.
      const int t = static_cast<int>(irange(0, n_in - 1));
      bool aliased = false;
      for (int o : p_.outputs) aliased = aliased || p_.view_of(o) == t;
      if (!aliased) {  // (older seeds drew this write: it stays, as the program's last statement)
        WriteStmt w;
        w.at = static_cast<int>(p_.code.size());
        w.target = t;
        w.src = 0;
        w.value = static_cast<int>(irange(n_in, n - 1));
        static const int views[5][2] = {{0, 0}, {1, 0}, {2, 0}, {1, 1}, {5, 0}};  // +=, [::-1], [1::2], [:, ::-1], .T
        const int kind = static_cast<int>(irange(0, 4));
        if (kind == 0) w.op = "add";
        w.view = views[kind][0];
        w.axis = views[kind][1];
        if (valid_write(w, p_, v)) p_.writes.push_back(w);
      }
    }
    if (n > n_in && coin(cfg_.p_early)) {  // drawn last: the programs of older seeds stay the same
      p_.evals_at_once = coin(0.5);
      const int k = static_cast<int>(irange(1, 2));
      for (int i = 0; i < k; ++i) {
        const int e = static_cast<int>(irange(n_in, n - 1));
        if (std::find(p_.evals.begin(), p_.evals.end(), e) == p_.evals.end()) p_.evals.push_back(e);
      }
      std::sort(p_.evals.begin(), p_.evals.end());
    }
    p_.on_stream = n > n_in && coin(cfg_.p_stream);
    std::mt19937_64 gw(p_.seed * 0xD1B54A32D192ED03ULL + 0x5EED);  // the writes' own stream
    draw_writes(p_, v, cfg_, gw);
    return p_;
  }

 private:
  std::mt19937_64 g_;
  Config cfg_;
  Program p_;
  cf::Shape base_;
  int64_t max_numel_ = 0;  // raised for a long base shape

  bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(g_) < p; }
  int64_t irange(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(g_); }
  template <class T>
  T pick(const std::vector<T>& xs) { return xs[static_cast<size_t>(irange(0, static_cast<int64_t>(xs.size()) - 1))]; }

  cf::DType pick_dtype() {
    static const std::vector<cf::DType> w = {cf::f32, cf::f32, cf::f32, cf::f32, cf::f64, cf::f64, cf::i32, cf::i32,
                                             cf::i64, cf::f16, cf::bf16, cf::DType::Bool, cf::DType::UInt8,
                                             cf::DType::Int16, cf::DType::Int8, cf::DType::UInt16,
                                             cf::DType::UInt32, cf::DType::UInt64};
    return pick(w);
  }
  // The base shape, or one that broadcasts against it: (A, 1), (1, B), (B,), ().
  cf::Shape variant_of(const cf::Shape& s) {
    switch (irange(0, 5)) {
      case 0: {
        cf::Shape r = s;
        r[static_cast<size_t>(irange(0, s.ndim() - 1))] = 1;
        return r;
      }
      case 1: return cf::Shape{s[static_cast<size_t>(s.ndim() - 1)]};
      case 2: return cf::Shape{};
      default: return s;
    }
  }
  int pick_value(const std::vector<cf::Array>& v) {
    // Recent values more often: programs grow deep rather than wide.
    const int n = static_cast<int>(v.size());
    if (coin(0.5)) return static_cast<int>(irange(std::max(0, n - 3), n - 1));
    return static_cast<int>(irange(0, n - 1));
  }

  // Proposes an instruction over existing values; `ex` says whether its result is exact.
  bool propose(const std::vector<cf::Array>& v, Instr& in, bool& ex) {
    in.a = pick_value(v);
    const cf::Array& x = v[static_cast<size_t>(in.a)];
    const bool xe = p_.exact[static_cast<size_t>(in.a)];
    const cf::DType t = x.dtype();
    const int nd = x.ndim();
    ex = xe;
    switch (irange(0, 20)) {
      case 0: case 1: case 2: {  // unary
        static const std::vector<std::string> fl = {"negative", "abs", "square", "sqrt_abs", "floor", "rint", "sign",
                                                    "reciprocal", "isnan", "tanh", "sin", "cos", "arctan",
                                                    "exp_clip", "log1p_abs", "logical_not", "positive", "ceil",
                                                    "trunc", "isinf", "cbrt"};
        static const std::vector<std::string> in_ops = {"negative", "abs", "square", "sign", "invert", "logical_not",
                                                        "isfinite", "tanh", "exp_clip", "positive", "reciprocal"};
        in.kind = Kind::Unary;
        in.op = pick(floating(t) ? fl : in_ops);
        if (t == cf::DType::Bool && (in.op == "negative" || in.op == "sign")) return false;
        if (!xe && !continuous_op(in.op)) return false;
        ex = xe && exact_op(in.op);
        return true;
      }
      case 3: case 4: case 5: case 6: {  // binary
        static const std::vector<std::string> ops = {"add", "subtract", "multiply", "true_divide", "maximum",
                                                     "minimum", "fmax", "fmin", "less", "greater_equal", "equal",
                                                     "floor_divide", "remainder", "copysign", "logical_and",
                                                     "logical_xor", "bitwise_and", "bitwise_xor", "power",
                                                     "arctan2", "hypot", "left_shift", "right_shift",
                                                     "bitwise_or", "logical_or", "not_equal", "greater",
                                                     "less_equal"};
        in.kind = Kind::Binary;
        in.op = pick(ops);
        in.b = pick_value(v);
        const bool be = p_.exact[static_cast<size_t>(in.b)];
        if (in.op == "power" && !(floating(t) || floating(v[static_cast<size_t>(in.b)].dtype()))) return false;
        // The sign of a NaN is not specified (x86 makes -NaN, the GPU +NaN), and copysign
        // reads it: its sign operand is an input, which holds no NaN.
        if (in.op == "copysign" && in.b >= p_.n_inputs()) return false;
        if (in.op == "true_divide") {
          if (!be) return false;  // an inexact divisor near zero has no useful bound
        } else if ((!xe || !be) && !continuous_op(in.op)) {
          return false;
        }
        ex = xe && be && exact_op(in.op);
        return true;
      }
      case 7: case 8: {  // with a scalar
        static const std::vector<std::string> ops = {"add", "subtract", "multiply", "true_divide", "maximum",
                                                     "less", "floor_divide", "remainder", "power"};
        in.kind = Kind::Scalar;
        in.op = pick(ops);
        in.int_scalar = !floating(t) && coin(0.7);
        in.s = in.int_scalar ? static_cast<double>(irange(-3, 5)) : pick(std::vector<double>{0.5, 2.5, -1.25, 3, 1e-3, -0.0});
        in.left = coin(0.3);
        if (in.op == "power") {  // small exponents, never a negative integer one
          in.left = false;
          in.s = in.int_scalar ? static_cast<double>(irange(0, 3)) : pick(std::vector<double>{2, 0.5, 3});
          if (!xe) return false;
        }
        if (in.op == "true_divide" && in.left && !xe) return false;
        if (!xe && !continuous_op(in.op) && in.op != "true_divide") return false;
        ex = xe && exact_op(in.op);
        return true;
      }
      case 9: {  // where(cond, b, c), the condition exact
        in.kind = Kind::Where;
        if (t != cf::DType::Bool || !xe) return false;
        in.b = pick_value(v);
        in.c = pick_value(v);
        ex = p_.exact[static_cast<size_t>(in.b)] && p_.exact[static_cast<size_t>(in.c)];
        return true;
      }
      case 10: {  // clip or astype
        if (coin(0.4)) {
          in.kind = Kind::Clip;
          in.s = -2.5;
          in.s2 = pick(std::vector<double>{0.0, 1.5, 4});
          if (t == cf::DType::Bool) return false;
          return true;
        }
        in.kind = Kind::Astype;
        in.dtype = pick_dtype();
        if (!xe && !floating(in.dtype)) return false;  // a cast to an integer is not continuous
        return true;
      }
      case 11: case 12: {  // views
        if (nd == 0) return false;
        in.axis = static_cast<int>(irange(0, nd - 1));
        switch (irange(0, 5)) {
          case 0: in.kind = Kind::Transpose; return nd >= 2;
          case 1: in.kind = Kind::Reverse; return true;
          case 2: in.kind = Kind::Step; return true;
          case 3:
            in.kind = Kind::IntIndex;
            if (x.shape(in.axis) == 0) return false;
            in.index = irange(-x.shape(in.axis), x.shape(in.axis) - 1);
            return true;
          case 4: in.kind = Kind::Expand; in.axis = static_cast<int>(irange(0, nd)); return nd < 4;
          default: {
            in.kind = Kind::Reshape;
            const cf::Shape& s = x.shape();
            if (coin(0.4) || nd == 1) {
              in.shape = cf::Shape{x.size()};
            } else {  // merge the first two axes
              std::vector<int64_t> d{s[0] * s[1]};
              for (int k = 2; k < nd; ++k) d.push_back(s[static_cast<size_t>(k)]);
              in.shape = cf::Shape(d);
            }
            return true;
          }
        }
      }
      case 13: case 14: {  // reductions over one, two or all axes
        static const std::vector<std::string> ops = {"sum", "sum", "mean", "max", "min", "any", "all", "argmax",
                                                     "prod", "var", "std", "ptp", "argmin", "count_nonzero",
                                                     "nansum", "nanmean", "nanmax", "nanmin"};
        in.kind = Kind::Reduce;
        in.op = pick(ops);
        const bool arg = in.op == "argmax" || in.op == "argmin";
        in.axis = nd == 0 || coin(0.25) ? -1 : static_cast<int>(irange(0, nd - 1));
        if (in.axis >= 0 && nd >= 2 && !arg && coin(0.3)) {
          in.axis2 = static_cast<int>(irange(0, nd - 2));
          if (in.axis2 >= in.axis) ++in.axis2;
        }
        in.keepdims = coin(0.4);
        const bool integral = !floating(t);
        if (in.op == "prod" && !integral) return false;  // float products: no useful bound, overflow
        // Not continuous (a rounding flips them), or bounded here for exact operands only.
        if ((arg || in.op == "any" || in.op == "all" || in.op == "count_nonzero" || in.op == "var" ||
             in.op == "std") && !xe)
          return false;
        const bool takes_dtype = in.op == "sum" || in.op == "mean" || in.op == "nansum" || in.op == "nanmean";
        if (takes_dtype && coin(0.2)) {
          in.with_dtype = true;
          in.dtype = integral ? pick(std::vector<cf::DType>{cf::i64, cf::i32, cf::f64, cf::i16, cf::DType::UInt16})
                              : pick(std::vector<cf::DType>{cf::f64, cf::f32});
          if (in.op.find("mean") != std::string::npos && !floating(in.dtype)) return false;
        }
        const bool float_acc = !integral || (in.with_dtype && floating(in.dtype));
        if ((in.op == "sum" || in.op == "nansum") && float_acc) ex = false;
        if (in.op == "mean" || in.op == "nanmean" || in.op == "var" || in.op == "std") ex = false;
        if (in.op == "var" || in.op == "std") in.ddof = static_cast<int>(irange(0, 1));
        return true;
      }
      case 15: {  // scans
        in.kind = Kind::Scan;
        in.op = coin(0.75) ? "cumsum" : "cumprod";
        in.axis = nd == 0 || coin(0.25) ? -1 : static_cast<int>(irange(0, nd - 1));
        const bool integral = !floating(t);
        if (in.op == "cumprod" && !integral) return false;
        if (coin(0.15)) {
          in.with_dtype = true;
          in.dtype = integral ? pick(std::vector<cf::DType>{cf::i64, cf::i32, cf::i16, cf::DType::Int8})
                              : pick(std::vector<cf::DType>{cf::f64, cf::f32});
        }
        ex = xe && integral;
        return true;
      }
      case 16: {  // einsum: views, sums over labels, contractions, products
        in.kind = Kind::Einsum;
        if (t == cf::DType::Bool) return false;
        // The second operand; `xa`, `ya`: the contracted label's axis in each. NumPy's einsum
        // broadcasts a label of length 1, so the terms per result are the longer length.
        auto other = [&](int rank, int xa, int ya) -> bool {
          in.b = pick_value(v);
          const cf::Array& y = v[static_cast<size_t>(in.b)];
          if (y.ndim() != rank || y.dtype() == cf::DType::Bool) return false;
          in.index = std::max(x.shape(xa), y.shape(ya));
          return true;
        };
        const int form = static_cast<int>(irange(0, 3));
        if (nd == 1) {
          if (form == 0) { in.sub = "i->"; in.einsum_kind = 1; }
          else if (form == 1) { in.sub = "i,i->"; in.einsum_kind = 2; if (!other(1, 0, 0)) return false; }
          else { in.sub = "i,j->ij"; in.einsum_kind = 3; if (!other(1, 0, 0)) return false; }
        } else if (nd == 2) {
          if (form == 0) {
            in.einsum_kind = 0;
            in.sub = x.shape(0) == x.shape(1) && coin(0.5) ? "ii->i" : "ij->ji";
          } else if (form == 1) { in.sub = coin(0.5) ? "ij->j" : "ij->i"; in.einsum_kind = 1; }
          else if (form == 2) { in.sub = "ij,ij->i"; in.einsum_kind = 2; if (!other(2, 1, 1)) return false; }
          else { in.sub = "ij,jk->ik"; in.einsum_kind = 2; if (!other(2, 1, 0)) return false; }
        } else if (nd == 3) {
          if (form == 0) { in.sub = "bij->bji"; in.einsum_kind = 0; }
          else if (form == 1) { in.sub = "bij->bj"; in.einsum_kind = 1; }
          else { in.sub = "bij,bjk->bik"; in.einsum_kind = 2; if (!other(3, 2, 1)) return false; }
        } else {
          return false;
        }
        const bool be = in.b < 0 || p_.exact[static_cast<size_t>(in.b)];
        const bool integral = !floating(in.b < 0 ? t : cf::promote_types(t, v[static_cast<size_t>(in.b)].dtype()));
        if (in.einsum_kind == 0) ex = xe;
        else if (in.einsum_kind == 3) ex = xe && be;
        else ex = xe && be && integral;  // integer sums and contractions wrap: exact
        return true;
      }
      case 17: {  // more views
        if (nd == 0) return false;
        switch (irange(0, 3)) {
          case 0:
            in.kind = Kind::Swap;
            if (nd < 2) return false;
            in.axis = static_cast<int>(irange(0, nd - 1));
            in.axis2 = static_cast<int>(irange(-nd, nd - 1));
            return true;
          case 1: {
            in.kind = Kind::Squeeze;
            bool one = false;
            for (int d = 0; d < nd; ++d) one = one || x.shape(d) == 1;
            return one;
          }
          case 2: {
            in.kind = Kind::BroadcastTo;
            if (nd >= 4) return false;
            std::vector<int64_t> d{pick(std::vector<int64_t>{2, 3})};
            for (int k = 0; k < nd; ++k) d.push_back(x.shape(k) == 1 && coin(0.5) ? 3 : x.shape(k));
            in.shape = cf::Shape(d);
            return true;
          }
          default:
            in.kind = Kind::Diagonal;
            if (nd < 2) return false;
            in.axis = static_cast<int>(irange(0, nd - 1));
            in.axis2 = static_cast<int>(irange(0, nd - 2));
            if (in.axis2 >= in.axis) ++in.axis2;
            in.index = irange(-1, 1);
            return true;
        }
      }
      case 18: {  // arange over the last axis (int64), to mix with the value
        in.kind = Kind::Arange;
        ex = true;
        return nd >= 1;
      }
      case 19: {  // a user kernel with a lazy twin, on exact operands (the result is exact)
        in.kind = Kind::User;
        using D = cf::DType;
        if (!xe || !(t == D::Float32 || t == D::Float64 || t == D::Int32 || t == D::Int64 || t == D::Int16 ||
                     t == D::UInt8 || t == D::Bool || t == D::Int8 || t == D::UInt32 || t == D::UInt64))
          return false;  // (not uint16: x * y in int, as C++ promotes it, can overflow)
        in.op = pick(std::vector<std::string>{"madd", "pick", "sqm", "isum"});
        if (in.op == "sqm" && t == D::Bool) return false;  // NumPy: no boolean subtract
        if (in.op == "sqm" && coin(0.4)) in.op = "uneg";  // drawn last: older seeds' sqms stay
        if (in.op == "isum") {
          if (t != D::Int32 && t != D::Int64 && t != D::Int16) return false;
          if (t == D::Int16) in.op = "imax";  // (an isum of int16 would promote in its twin)
          in.axis = nd == 0 || coin(0.3) ? -1 : static_cast<int>(irange(0, nd - 1));
          in.keepdims = coin(0.4);
          if (in.op == "isum" && coin(0.4)) in.op = "imax";  // drawn last: older seeds' isums stay
        } else if (in.op != "sqm" && in.op != "uneg") {
          in.b = pick_value(v);
          const cf::Array& y = v[static_cast<size_t>(in.b)];
          if (y.dtype() != t || !p_.exact[static_cast<size_t>(in.b)]) return false;
        }
        ex = true;
        return true;
      }
      default: {  // matmul, or a convolution (the coin drawn here only: older seeds' other programs stay)
        if (coin(0.35)) return propose_convolve(v, in, ex);
        if (coin(0.3)) return propose_linalg(v, in, ex);
        if (!cfg_.matmul || nd < 1) return false;
        in.kind = Kind::Matmul;
        in.b = pick_value(v);
        // (int64 with uint64 promotes to float64, as in NumPy: sums of products then round)
        if (!floating(cf::promote_types(t, v[static_cast<size_t>(in.b)].dtype()))) {
          ex = xe && p_.exact[static_cast<size_t>(in.b)];  // integer matmul wraps: exact
          return true;
        }
        ex = false;
        if (coin(0.3)) in.op = coin(0.5) ? "relu" : "gelu";  // drawn last: older seeds' matmuls stay
        return true;
      }
    }
  }

  // A cuSOLVER-backed function of wc(x) (linalg_op), k at most 40 and at most 8 matrices.
  bool propose_linalg(const std::vector<cf::Array>& v, Instr& in, bool& ex) {
    const cf::Array& x = v[static_cast<size_t>(in.a)];
    const int nd = x.ndim();
    if (nd < 2) return false;
    in.kind = Kind::Linalg;
    in.op = pick(std::vector<std::string>{"inv", "solve", "det", "cholesky", "eigvalsh", "svdvals", "pinv", "nuc",
                                          "slogdet", "slogdet_sign", "eigh", "svd_s", "qr_r", "rank", "norm2",
                                          "norm-2", "norm1", "norminf"});
    in.index = std::min<int64_t>({x.shape(nd - 2), x.shape(nd - 1), 40});
    const int64_t batch = x.size() / std::max<int64_t>(1, x.shape(nd - 2) * x.shape(nd - 1));
    if (x.size() > 0 && batch > 8) return false;
    const cf::DType t = x.dtype();
    in.dtype = t == cf::f64 || t == cf::f32 ? t : coin(0.5) ? cf::f32 : cf::f64;
    if (in.op == "solve") in.b = pick_value(v);
    ex = false;
    return true;
  }

  // np.convolve / np.correlate of two 1-D values, or SciPy's convolve2d / correlate2d of two
  // 2-D values with a boundary. The shorter operand stays short: the host reference does
  // every multiply-add.
  bool propose_convolve(const std::vector<cf::Array>& v, Instr& in, bool& ex) {
    const cf::Array& x = v[static_cast<size_t>(in.a)];
    in.kind = Kind::Convolve;
    in.b = pick_value(v);
    const cf::Array& y = v[static_cast<size_t>(in.b)];
    const int nd = x.ndim();
    if ((nd != 1 && nd != 2) || y.ndim() != nd) return false;
    if (std::min(x.size(), y.size()) > 64 || x.size() * y.size() > (int64_t(1) << 22)) return false;
    in.sub = pick(std::vector<std::string>{"full", "same", "valid"});
    const bool integral = !floating(cf::promote_types(x.dtype(), y.dtype()));  // int64 with uint64: float64
    if (nd == 1) {
      in.op = coin(0.5) ? "convolve" : "correlate";
    } else {
      in.op = coin(0.5) ? "convolve2d" : "correlate2d";
      in.boundary = pick(std::vector<std::string>{"fill", "fill", "wrap", "symm"});
      in.int_scalar = integral;
      in.s = in.boundary != "fill" || coin(0.5) ? 0.0 : integral ? 2.0 : 1.5;
    }
    // Integer sums wrap and bool is any-of-and: exact. Float sums are reordered.
    ex = integral && p_.exact[static_cast<size_t>(in.a)] && p_.exact[static_cast<size_t>(in.b)];
    return true;
  }
};

// ------------------------------------------------------------------ error bounds

inline double eps_of(cf::DType t) {
  switch (t) {
    case cf::DType::Float16: return std::ldexp(1.0, -10);
    case cf::DType::BFloat16: return std::ldexp(1.0, -7);
    case cf::DType::Float32: return std::ldexp(1.0, -23);
    case cf::DType::Float64: return std::ldexp(1.0, -52);
    default: return 0;
  }
}
inline double acc_eps(cf::DType t) { return t == cf::DType::Float64 ? std::ldexp(1.0, -52) : std::ldexp(1.0, -23); }

inline double max_abs(const cf::detail::HostArray& h) {
  double m = 0;
  for (int64_t i = 0; i < h.size(); ++i) {
    double d = std::fabs(h.get_double(i));
    if (std::isfinite(d)) m = std::max(m, d);
  }
  return m;
}
inline double min_abs(const cf::detail::HostArray& h) {
  double m = INFINITY;
  for (int64_t i = 0; i < h.size(); ++i) m = std::min(m, std::fabs(h.get_double(i)));
  return m;
}

// a * b for error terms: an exact factor (0) keeps the product exact even against an
// unbounded (infinite) one, where IEEE would give NaN.
inline double times(double a, double b) { return a == 0 || b == 0 ? 0.0 : a * b; }

// Per value: how far a correct result may be from the reference's (0: the same bits).
// `opmax`, for a program that writes (run_statements): per instruction, the largest
// |element| of operands a and b and the smallest of b as the instruction read them, where
// that differs from `ref` (each value as it ends), else NaN.
inline std::vector<double> bounds(const Program& p, const std::vector<cf::detail::HostArray>& ref,
                                  const std::vector<std::array<double, 3>>* opmax = nullptr) {
  const int n_in = p.n_inputs();
  std::vector<double> E(static_cast<size_t>(p.n_values()), 0.0), M(E.size(), 0.0);
  for (size_t i = 0; i < E.size(); ++i) M[i] = max_abs(ref[i]);
  for (size_t k = 0; k < p.code.size(); ++k) {
    const Instr& in = p.code[k];
    const size_t o = static_cast<size_t>(n_in) + k;
    if (p.exact[o]) continue;
    const cf::DType t = ref[o].dtype;
    const double eo = eps_of(t) * M[o];  // one rounding of the result
    auto at_use = [&](int i, double m) { return opmax && !std::isnan((*opmax)[k][static_cast<size_t>(i)]) ? (*opmax)[k][static_cast<size_t>(i)] : m; };
    const double ea = E[static_cast<size_t>(in.a)], Ma = at_use(0, M[static_cast<size_t>(in.a)]);
    double eb = 0, Mb = 0;  // the second operand; a scalar is exact
    if (in.kind == Kind::Scalar) Mb = std::fabs(in.s);
    else if (in.b >= 0) eb = E[static_cast<size_t>(in.b)], Mb = at_use(1, M[static_cast<size_t>(in.b)]);
    double e = 0;
    switch (in.kind) {
      case Kind::Unary:
        if (in.op == "negative" || in.op == "positive" || in.op == "abs") e = ea;
        else if (in.op == "square") e = 2 * times(Ma, ea) + times(ea, ea) + eo;
        else if (in.op == "exp_clip") e = times(M[o], std::expm1(ea)) + 4 * eo;
        else e = ea + 4 * eo;  // tanh, sin, cos, arctan, log1p(abs): Lipschitz 1
        break;
      case Kind::Binary:
      case Kind::Scalar:
        if (in.op == "add" || in.op == "subtract") e = ea + eb + eo;
        else if (in.op == "multiply") e = times(Ma, eb) + times(Mb, ea) + times(ea, eb) + eo;
        else if (in.op == "maximum" || in.op == "minimum" || in.op == "fmax" || in.op == "fmin") e = std::max(ea, eb);
        else if (in.op == "true_divide") {  // only ever by an exact divisor
          const double mb = in.kind == Kind::Scalar ? std::fabs(in.s) : at_use(2, min_abs(ref[static_cast<size_t>(in.b)]));
          e = mb > 0 ? ea / mb + eo : INFINITY;
        } else if (in.op == "hypot") e = ea + eb + 4 * eo;
        else e = 4 * eo;  // power, arctan2: on exact operands only
        break;
      case Kind::Where: e = std::max(E[static_cast<size_t>(in.b)], E[static_cast<size_t>(in.c)]); break;
      case Kind::Astype: e = ea + eo; break;
      case Kind::Reduce:
      case Kind::Scan: {
        const auto& A = ref[static_cast<size_t>(in.a)];
        // Terms per result: a reduction's length; a scan's (at most) its axis length.
        double K = std::max<double>(1.0, static_cast<double>(A.size()) / std::max<double>(1.0, static_cast<double>(ref[o].size())));
        if (in.kind == Kind::Scan) K = in.axis < 0 ? static_cast<double>(A.size()) : static_cast<double>(A.shape[static_cast<size_t>(in.axis)]);
        K = std::max(K, 1.0);
        const double ae = std::max(acc_eps(A.dtype), acc_eps(t));
        const double order = 2 * K * K * ae * Ma;
        if (in.op == "sum" || in.op == "nansum" || in.op == "cumsum") e = K * ea + order + eo;
        else if (in.op == "mean" || in.op == "nanmean") e = ea + order / K + 2 * eo;
        else if (in.op == "var" || in.op == "std") {
          // exact operands: the mean within 2K*eps*Ma, each squared deviation (<= 4Ma^2) and
          // their sum reordered; ddof=1 divides by K-1 (at most twice 1/K).
          const double ev = 4 * (16 * K * ae * Ma * Ma) + 4 * eps_of(t) * 4 * Ma * Ma;
          e = in.op == "var" ? ev + eo : std::sqrt(ev) + 2 * eo;
        } else if (in.op == "ptp") e = 2 * ea + eo;
        else e = ea;  // max, min, nanmax, nanmin
        break;
      }
      case Kind::Einsum:
        if (in.einsum_kind == 1) {  // a sum over labels
          const double K = std::max<double>(1.0, static_cast<double>(ref[static_cast<size_t>(in.a)].size()) /
                                                     std::max<double>(1.0, static_cast<double>(ref[o].size())));
          e = K * ea + 2 * K * K * std::max(acc_eps(ref[static_cast<size_t>(in.a)].dtype), acc_eps(t)) * Ma + eo;
        } else if (in.einsum_kind == 2) {  // a contraction over in.index terms
          const double K = std::max<double>(1.0, static_cast<double>(in.index));
          e = K * (times(Ma, eb) + times(Mb, ea) + times(ea, eb)) + 2 * K * K * acc_eps(t) * Ma * Mb + eo;
        } else if (in.einsum_kind == 3) {  // a product
          e = times(Ma, eb) + times(Mb, ea) + times(ea, eb) + eo;
        } else {
          e = ea;  // a view
        }
        break;
      case Kind::Convolve: {
        // Products per result: at most the smaller operand's size, except SciPy's 2-D 'full'
        // and 'same', which take every element of in2 (the boundary standing in for in1's).
        const int64_t na = ref[static_cast<size_t>(in.a)].size(), nb = ref[static_cast<size_t>(in.b)].size();
        const bool all_of_b = !in.boundary.empty() && in.sub != "valid";
        const double K = static_cast<double>(std::max<int64_t>(1, all_of_b ? nb : std::min(na, nb)));
        const double Mf = std::max(Ma, std::fabs(in.s));  // the fill value stands in for some of a's
        e = K * (times(Mf, eb) + times(Mb, ea) + times(ea, eb)) + 2 * K * K * acc_eps(t) * Mf * Mb + eo;
        break;
      }
      case Kind::Matmul: {
        const auto& A = ref[static_cast<size_t>(in.a)];
        const double K = static_cast<double>(A.shape.ndim() == 0 ? 1 : A.shape[static_cast<size_t>(A.shape.ndim() - 1)]);
        e = K * (times(Ma, eb) + times(Mb, ea) + times(ea, eb)) + 2 * K * K * acc_eps(A.dtype) * Ma * Mb + eo;
        // relu is 1-Lipschitz. gelu's slope is under 1.13, and the reference evaluates it op by
        // op in the result's dtype (tanh's rounding times 0.5 |x| where it cancels against 1),
        // a fused epilogue in float: a few roundings of the largest |x| the product can reach.
        if (in.op == "gelu") e = 1.2 * e + 8 * eps_of(t) * std::max(M[o], K * Ma * Mb) + eo;
        break;
      }
      case Kind::Linalg: {
        // wc(x): the entries of T differ by at most d (tanh is 1-Lipschitz and bounded), so
        // the matrices by dA in the 2-norm (k entries a row of at most d / 2k, and a rounding
        // of each); the inverse's norm is at most 2, the condition number at most 3.
        const double ep = eps_of(in.dtype), k = static_cast<double>(std::max<int64_t>(1, in.index));
        const double d = std::min(ea + eps_of(in.dtype) * Ma + 8 * ep, 2.0);
        const double dA = d / 2 + 2 * k * ep, alg = 64 * k * ep;
        if (in.op == "inv" || in.op == "pinv" || in.op == "cholesky" || in.op == "qr_r") e = 8 * dA + alg;
        else if (in.op == "eigvalsh" || in.op == "svdvals" || in.op == "eigh" || in.op == "svd_s") e = dA + alg;
        else if (in.op.rfind("norm", 0) == 0) e = dA + alg;  // 2, -2: a singular value; 1, inf: k entries
        else if (in.op == "nuc") e = k * (dA + alg);
        else if (in.op == "det") e = M[o] * std::expm1(std::min(2 * k * dA + alg, 700.0));
        else if (in.op == "slogdet") e = 2 * k * dA + alg;  // log|det|: as det's relative error
        else if (in.op == "slogdet_sign" || in.op == "rank") e = 0;  // det > 0 (every |eigenvalue - 1| <= 1/2); rank k
        else {  // solve: x = inv(a) b, b's entries within db, each column of norm at most sqrt(k)
          const double db = std::min(eb + eps_of(in.dtype) * Mb + 8 * ep, 2.0);
          const double R = std::sqrt(k * static_cast<double>(solve_rhs_cols(ref[static_cast<size_t>(in.b)].shape)));
          e = 2 * R * db + R * (4 * dA + 2 * alg);
        }
        e += eo;
        break;
      }
      default: e = ea; break;  // clip and views
    }
    E[o] = e;
  }
  return E;
}

// Compares a result with the reference within `bound` (0: bitwise, NaN == NaN, -0 == +0).
// Returns the number of elements outside it; `report` gets the first few.
inline int64_t compare(const cf::detail::HostArray& got, const cf::detail::HostArray& want, double bound,
                       std::string& report) {
  if (got.dtype != want.dtype || !(got.shape == want.shape)) {
    report += "  dtype/shape: got " + std::string(cf::name(got.dtype)) + " " + cf::to_string(got.shape) +
              ", want " + std::string(cf::name(want.dtype)) + " " + cf::to_string(want.shape) + "\n";
    return 1;
  }
  int64_t bad = 0;
  const bool fl = cf::is_float(want.dtype);
  const double big = want.dtype == cf::DType::Float16 ? 16384.0 : want.dtype == cf::DType::BFloat16 ? 1e37 : want.dtype == cf::DType::Float32 ? 1e37 : 1e300;
  for (int64_t i = 0; i < want.size(); ++i) {
    bool ok;
    if (!fl) {
      ok = got.get_uint64(i) == want.get_uint64(i);
    } else {
      const double a = got.get_double(i), b = want.get_double(i);
      if (std::isnan(a) || std::isnan(b)) ok = (std::isnan(a) && std::isnan(b)) || (bound > 0 && std::fabs(std::isnan(a) ? b : a) > big);
      else if (a == b) ok = true;
      else if (bound > 0 && (std::isinf(a) || std::isinf(b))) ok = std::fabs(std::isinf(a) ? b : a) > big;
      else ok = bound > 0 && std::fabs(a - b) <= 2 * bound;
    }
    if (!ok) {
      if (bad < 4)
        report += "  element " + std::to_string(i) + ": got " + num(got.get_double(i)) + ", want " +
                  num(want.get_double(i)) + " (bound " + num(2 * bound) + ")\n";
      ++bad;
    }
  }
  return bad;
}

// An array's values (computed first where it is lazy), read from its memory by the
// reference's Buffer leaf.
inline cf::detail::HostArray host_of(const cf::Array& a) {
  a.eval();
  return cf::detail::reference_evaluate(a.node());
}

}  // namespace fuzz

#include "fuzz_writes.hpp"

namespace fuzz {

// The seeds to run: CUFUSE_FUZZ_SEED=<n> runs program n alone; otherwise `count` programs
// (CUFUSE_FUZZ_RUNS overrides it) from `first` (CUFUSE_FUZZ_FIRST overrides it).
struct Seeds {
  uint64_t first = 0;
  int count = 0;
  bool replay = false;  // one program named by CUFUSE_FUZZ_SEED
};
inline Seeds seeds(uint64_t first, int count) {
  Seeds s{first, count, false};
  if (const char* e = std::getenv("CUFUSE_FUZZ_SEED"); e && *e) return Seeds{std::strtoull(e, nullptr, 10), 1, true};
  if (const char* e = std::getenv("CUFUSE_FUZZ_FIRST"); e && *e) s.first = std::strtoull(e, nullptr, 10);
  if (const char* e = std::getenv("CUFUSE_FUZZ_RUNS"); e && *e) s.count = std::atoi(e);
  return s;
}

// ------------------------------------------------------------------ running one program

// Whether a fuse() call and the lazy run of the same graph may take different tiers: the
// bytecode interpreter runs a plan's first launches on the device (CUFUSE_TIERED, on unless 0)
// and, on the reference backend, the groups it takes under CUFUSE_REFERENCE_INTERPRET=1. Its
// reductions add in their own order, so the two agree only within the values' bounds (the H200
// campaigns' "fuse() call" differences in the last bits of var, mean and sums; reproduced on
// the CPU with the interpreter's host build, none of them in a lazy run against the reference).
inline bool tiers_may_differ(bool device) {
  const char* e = std::getenv(device ? "CUFUSE_TIERED" : "CUFUSE_REFERENCE_INTERPRET");
  return device ? !(e && std::string(e) == "0") : (e != nullptr && std::string(e) == "1");
}

// Random inputs from a seed: normal floats (sd 3) with a few zeros, -0 and infinities;
// integers mostly small, some large (narrower dtypes wrap them, as astype does); bools.
// Half the programs get +inf among their float inputs (one value in 100, with as many 0 and
// -0); the other half only finite values, so that reductions over long rows (where a 1%
// inf would make almost every row inf or NaN) are compared on values, within their bounds.
inline bool inputs_have_infinities(uint64_t seed) { return ((seed * 0x2545F4914F6CDD1DULL) >> 40) & 1; }

inline cf::Array random_input(std::mt19937_64& g, cf::DType t, const cf::Shape& s, bool infinities) {
  const size_t n = static_cast<size_t>(cf::numel(s));
  std::normal_distribution<double> nd(0.0, 3.0);
  std::uniform_int_distribution<int64_t> small(-9, 9), large(-2000000000LL, 2000000000LL);
  std::uniform_int_distribution<int> pct(0, 99);
  if (cf::is_float(t)) {
    std::vector<double> f(n);
    for (auto& x : f) {
      const int c = pct(g);
      x = c == 0 ? 0.0 : c == 1 ? -0.0 : (c == 2 && infinities) ? INFINITY : nd(g);
    }
    return cf::from_host(f, s).astype(t).eval();
  }
  std::vector<int64_t> k(n);
  // 1 in 100 the dtype's lowest, 1 in 100 its highest (-1 is every unsigned dtype's, wrapped).
  const int bits = static_cast<int>(cf::itemsize(t)) * 8;
  const bool sgn = cf::is_signed_int(t);
  const int64_t lo = !sgn ? 0 : bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t(1) << (bits - 1));
  const int64_t hi = !sgn ? -1 : bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
  for (auto& x : k) {
    const int c = pct(g);
    x = c < 10 ? large(g) : c == 10 ? lo : c == 11 ? hi : small(g);
  }
  if (t == cf::DType::Bool) for (auto& x : k) x &= 1;
  return cf::from_host(k, s).astype(t).eval();
}

inline std::vector<cf::Array> random_inputs(const Program& p, uint64_t seed) {
  std::mt19937_64 g(seed * 0x9e3779b97f4a7c15ULL + 1);
  std::vector<cf::Array> in;
  for (int i = 0; i < p.n_inputs(); ++i)
    in.push_back(random_input(g, p.in_dtype[static_cast<size_t>(i)], p.in_shape[static_cast<size_t>(i)],
                              inputs_have_infinities(seed)));
  return in;
}

struct Outcome {
  Program program;
  int64_t bad = 0;          // elements outside their bound, over every check
  std::string report;       // what failed, with the program
  bool inplace_ran = false; // the program's writes ran (lazily, against the model)
  bool eager = false;       // ... and eagerly
  bool fused = false;       // the fuse() checks ran
  bool early = false;       // some values were evaluated before the outputs
  bool user = false;        // user kernels ran (on the device; their twins elsewhere)
  bool stream = false;      // the run went on a new stream
  int inexact_outputs = 0;  // outputs compared within a bound instead of bitwise
};

// The arrays a program with writes is compared on, as they are at the end: its outputs, each
// array written (its handle, whole) and the array whose memory that is (an input, or a lazy
// value the write made memory).
inline std::vector<int> checked_values(const Program& p) {
  std::vector<int> ids = p.outputs;
  auto add = [&](int id) {
    if (id >= 0 && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const auto& w : p.writes) {
    add(w.target);
    add(written_root(p, w.target));
  }
  return ids;
}

// Copies of the inputs in new memory (a program with writes changes the arrays it is given);
// on the reference backend through the host (no copy kernels to compile).
inline std::vector<cf::Array> fresh_copies(const std::vector<cf::Array>& in) {
  std::vector<cf::Array> out;
  for (const auto& x : in) {
    if (cf::current_backend() == cf::Backend::Reference) {
      const cf::detail::HostArray h = host_of(x);
      out.push_back(cf::from_host(h.bytes.data(), h.dtype, h.shape));
    } else {
      out.push_back(cf::astype(x, x.dtype()).eval());
    }
  }
  return out;
}

// A program that writes in place (see the file comment). The reference is the model
// (fuzz_writes.hpp, Mode::Model: each statement computed as it is made by the host reference
// evaluator, each write stored by the fuzzer). The lazy run is compared with it on every
// program, the eager run (each statement evaluated as made) on the device, and on one in four
// programs on the reference backend (its kernels cost compile time;
// CUFUSE_FUZZ_EAGER_EVERY=1 runs it on all): bitwise there (`strict`), else within the bounds.
inline void run_with_writes(const Program& p, const std::vector<cf::Array>& in, bool strict, bool device,
                            Outcome& out, const std::function<void(const std::string&, int64_t, const std::string&)>& fail) {
  const std::vector<int> ids = checked_values(p);
  auto finals = [&](const Run& r) {
    std::vector<cf::detail::HostArray> h;
    for (int id : ids) h.push_back(host_of(r.v[static_cast<size_t>(id)]));
    return h;
  };
  std::vector<cf::detail::HostArray> want;
  std::vector<double> E;
  {
    std::vector<cf::detail::HostArray> host_in;
    for (const auto& x : in) host_in.push_back(host_of(x));
    cf::BackendScope ref(cf::Backend::Reference);
    std::vector<cf::Array> rin;
    for (const auto& h : host_in) rin.push_back(host_array(h));
    std::vector<cf::detail::HostArray> snap;
    std::vector<std::array<double, 3>> opmax;
    const Run m = run_statements(p, rin, Mode::Model, /*twin=*/true, &snap, strict ? nullptr : &opmax);
    want = finals(m);
    if (!strict) E = bounds(p, snap, &opmax);
  }
  const bool has_user = std::any_of(p.code.begin(), p.code.end(), [](const Instr& i) { return i.kind == Kind::User; });
  out.user = device && has_user;
  out.early = !p.evals.empty();
  auto check = [&](const char* run, const std::vector<cf::detail::HostArray>& got) {
    for (size_t k = 0; k < ids.size(); ++k) {
      const int id = ids[k];
      const bool output = std::find(p.outputs.begin(), p.outputs.end(), id) != p.outputs.end();
      const double bound = strict || p.exact[static_cast<size_t>(id)] ? 0.0 : E[static_cast<size_t>(id)];
      if (bound > 0) ++out.inexact_outputs;
      std::string d;
      if (int64_t n = compare(got[k], want[k], bound, d))
        fail(std::string(run) + ", v" + std::to_string(id) + (output ? "" : " (written)"), n, d);
    }
  };
  Run lazy = run_statements(p, fresh_copies(in), Mode::Lazy, /*twin=*/!device);
  std::vector<cf::Array> results;
  for (int id : ids) results.push_back(lazy.v[static_cast<size_t>(id)]);
  cf::eval_all(results);  // one evaluation of everything, every write pending under it
  check("lazy", finals(lazy));
  static const uint64_t every = [] {  // CUFUSE_FUZZ_EAGER_EVERY=<n>: on the reference backend, 1 program in n
    const char* e = std::getenv("CUFUSE_FUZZ_EAGER_EVERY");
    return e && *e ? std::max<uint64_t>(1, std::strtoull(e, nullptr, 10)) : uint64_t(4);
  }();
  if (device || p.seed % every == 0) {
    const Run eager = run_statements(p, fresh_copies(in), Mode::Eager, /*twin=*/!device);
    check("eager", finals(eager));
    out.eager = true;
  }
  out.inplace_ran = true;
}

// Generates program `seed`, evaluates its outputs on the current backend, and compares them
// with the reference evaluator's values: bitwise when `strict` (the reference backend: the
// same evaluator, so only the planning can differ), else within the propagated bounds. A
// program that writes in place runs as run_with_writes says. With `with_fuse` (and no
// writes), the program also runs through cufuse::fuse() twice (a trace, then a replay on new
// inputs), each bitwise equal to the plain lazy evaluation.
inline Outcome run_program_unguarded(uint64_t seed, const Config& cfg, bool strict, bool with_fuse, Outcome& out);

inline Outcome run_program(uint64_t seed, const Config& cfg, bool strict, bool with_fuse) {
  Outcome out;
  try {
    return run_program_unguarded(seed, cfg, strict, with_fuse, out);
  } catch (const std::exception& e) {  // a valid program must never throw
    out.bad += 1;
    out.report = out.program.text() + "threw: " + e.what() + "\n";
    return out;
  }
}

inline Outcome run_program_unguarded(uint64_t seed, const Config& cfg, bool strict, bool with_fuse, Outcome& out) {
  Generator gen(seed, cfg);
  gen.choose_inputs();
  std::vector<cf::Array> in = random_inputs(gen.program(), seed);
  const Program p = gen.build(in);
  out.program = p;
  auto fail = [&](const std::string& what, int64_t n, const std::string& detail) {
    out.bad += n;
    out.report += what + ": " + std::to_string(n) + " element(s) differ\n" + detail;
  };
  if (p.outputs.empty()) return out;
  const bool device = cf::current_backend() == cf::Backend::Cuda;
  // A new stream for the run, as a user would: the inputs' work on the default stream done first.
  // It is destroyed after the comparisons while results made on it are still alive.
  std::optional<cf::Stream> stream;
  std::optional<cf::StreamScope> on_stream;
  auto enter_stream = [&] {
    if (!device || !p.on_stream) return;
    cf::Device().synchronize();
    stream.emplace();
    on_stream.emplace(*stream);
    out.stream = true;
  };
  if (!p.writes.empty()) {
    enter_stream();
    run_with_writes(p, in, strict, device, out, fail);
    on_stream.reset();
    stream.reset();
    if (out.bad) out.report = p.text() + out.report;
    return out;
  }

  std::vector<cf::Array> vals = values(p, in);
  std::vector<cf::detail::NodePtr> roots;
  for (const auto& v : vals) roots.push_back(v.node());
  const std::vector<cf::detail::HostArray> ref = cf::detail::reference_evaluate(roots);
  const std::vector<double> E = bounds(p, ref);

  // The run's copy: a second build where it differs from the reference's graph above, which
  // stays lazy (the reference never reads a value the device computed) and holds the user
  // kernels' twins (the host cannot run user CUDA; on the device the user kernels run).
  enter_stream();
  const bool has_user = std::any_of(p.code.begin(), p.code.end(), [](const Instr& i) { return i.kind == Kind::User; });
  out.user = device && has_user;
  if (!p.evals.empty() || out.user) {
    vals = values(p, in, /*with_evals=*/true, /*twin=*/!device);
    out.early = !p.evals.empty();
  }
  std::vector<cf::Array> outs;
  for (int o : p.outputs) outs.push_back(vals[static_cast<size_t>(o)]);
  vals.clear();
  roots.clear();
  cf::eval_all(outs);
  for (size_t k = 0; k < outs.size(); ++k) {
    const size_t o = static_cast<size_t>(p.outputs[k]);
    const double bound = strict || p.exact[o] ? 0.0 : E[o];
    if (bound > 0) ++out.inexact_outputs;
    std::string d;
    if (int64_t n = compare(host_of(outs[k]), ref[o], bound, d)) fail("output v" + std::to_string(o), n, d);
  }

  on_stream.reset();
  stream.reset();
  if (with_fuse) {
    out.fused = true;
    const bool tiers = tiers_may_differ(device);
    cf::FuseOptions opt;
    opt.cuda_graph = (seed % 3) != 0;  // on by default; a third of the programs launch kernel by kernel
    auto f = cf::fuse([p, device](cf::Array a, cf::Array b, cf::Array c) { return outputs(p, {a, b, c}, !device); }, opt);
    for (int call = 0; call < 2; ++call) {
      std::vector<cf::Array> args = call == 0 ? in : random_inputs(p, seed + 0x5151);
      std::vector<cf::Array> got = f(args[0], args[1], args[2]);
      // Bitwise against the same graph evaluated lazily. The run above evaluated some values
      // early: a reduction over such a value reads it from memory, in another layout or split
      // than over its producers, so its sums are rounded in another order (within the bound
      // they were compared at); the trace has no early evaluations, so it is compared with
      // a lazy run that has none either.
      // Where the two may run on different tiers (tiers_may_differ), inexact outputs within
      // twice their bound (each is within it of the reference), computed for these inputs.
      std::vector<cf::Array> plain = call == 0 && p.evals.empty() ? outs : outputs(p, args, !device);
      cf::eval_all(plain);
      std::vector<double> Ec;
      if (tiers) {
        if (call == 0) {
          Ec = E;
        } else {
          std::vector<cf::detail::NodePtr> r2;
          const std::vector<cf::Array> v2 = values(p, args);
          for (const auto& v : v2) r2.push_back(v.node());
          Ec = bounds(p, cf::detail::reference_evaluate(r2));
        }
      }
      for (size_t k = 0; k < plain.size() && k < got.size(); ++k) {
        std::string d;
        const size_t o = static_cast<size_t>(p.outputs[k]);
        const double bound = tiers && !p.exact[o] ? 2 * Ec[o] : 0.0;
        if (int64_t n = compare(host_of(got[k]), host_of(plain[k]), bound, d))
          fail("fuse() call " + std::to_string(call + 1) + ", output v" + std::to_string(p.outputs[k]), n, d);
      }
      if (got.size() != plain.size()) fail("fuse() result count", 1, "");
    }
  }
  if (out.bad) out.report = p.text() + out.report;
  return out;
}

// What the write statements of the programs run covered (from the programs themselves).
struct WriteTally {
  int stmts = 0, ops = 0, assigns = 0;  // statements: op=, assignments
  int views = 0;                         // written through a view (reversed, strided, shifted, .T, [i])
  int alias_reads = 0, reduced_reads = 0;  // values reading the array written (reduced: max, min)
  int copies = 0;                        // through a second handle
  int lazy_targets = 0;                  // into a lazy value (made memory by the write)
  int several_arrays = 0;                // programs writing two or more arrays
  int kept_old = 0;                      // programs with an output built before a write that reads the array written
  int seen_through_views = 0;            // programs with an output that is another view of an array written

  void add(const Program& p) {
    std::vector<int> roots;
    for (const auto& w : p.writes) {
      ++stmts;
      ++(w.op.empty() ? assigns : ops);
      views += w.view != Whole;
      alias_reads += w.src == 2;
      reduced_reads += w.src == 2 && (w.rview == Max || w.rview == Min);
      copies += w.copy;
      const int r = written_root(p, w.target);
      lazy_targets += r >= p.n_inputs();
      if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
    }
    several_arrays += roots.size() >= 2;
    bool old = false, seen = false;
    for (int o : p.outputs)
      for (const auto& w : p.writes) {
        const int r = written_root(p, w.target);
        if (written_root(p, o) == r) seen = seen || (o != w.target && o != r);
        else old = old || (o < p.n_inputs() + w.at && reads_value(p, o, r));
      }
    kept_old += old;
    seen_through_views += seen;
  }
};

// Runs programs seeds.first .. first + count - 1 and tallies them.
struct Summary {
  int programs = 0, failed = 0, inplace = 0, fused = 0, early = 0, user = 0, streams = 0, inexact_outputs = 0;
  WriteTally writes;                 // over the programs that write in place (`inplace` of them)
  int eager = 0;                     // programs with writes also run eagerly
  int finite = 0;                    // programs whose inputs hold no infinities
  std::set<int> kinds;               // instruction kinds generated
  int convolutions = 0;              // convolution and correlation instructions (the rarest kind)
  std::vector<std::string> reports;  // one per failed program
};
inline Summary run_many(const Seeds& seeds, const Config& cfg, bool strict, bool with_fuse) {
  Summary sum;
  // CUFUSE_FUZZ_PROGRESS=1: each seed on stderr before it runs (a crash or a hang names it).
  const char* progress = std::getenv("CUFUSE_FUZZ_PROGRESS");
  const bool show = progress && std::string(progress) == "1";
  for (int i = 0; i < seeds.count; ++i) {
    if (show) std::fprintf(stderr, "fuzz seed %llu\n", static_cast<unsigned long long>(seeds.first + static_cast<uint64_t>(i)));
    Outcome o = run_program(seeds.first + static_cast<uint64_t>(i), cfg, strict, with_fuse);
    ++sum.programs;
    sum.inplace += o.inplace_ran;
    sum.eager += o.eager;
    sum.writes.add(o.program);
    sum.fused += o.fused;
    sum.early += o.early;
    sum.user += o.user;
    sum.streams += o.stream;
    sum.inexact_outputs += o.inexact_outputs;
    sum.finite += !inputs_have_infinities(seeds.first + static_cast<uint64_t>(i));
    for (const auto& in : o.program.code) {
      sum.kinds.insert(static_cast<int>(in.kind));
      sum.convolutions += in.kind == Kind::Convolve;
    }
    if (o.bad) {
      ++sum.failed;
      sum.reports.push_back(o.report);
    }
  }
  return sum;
}

}  // namespace fuzz
