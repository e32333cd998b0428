// src/library_build/matmul.cpp: the public contractions built on the GEMM node — matmul (NumPy
// semantics, scalar factors folded into alpha, views of pending results read in place),
// dot, vdot, inner, outer, tensordot — and the TF32 setting. Integer and bool matmul, and
// products with nothing to multiply as matrices, are elementwise work and a reduction.
// Complex operands (mixed with real ones promoted by NumPy's table) take the complex GEMM;
// conj(x) of an operand cuBLAS reads through op T (a transposed view) becomes its op C.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/op_table.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "graph/elementwise.hpp"
#include "graph/realize.hpp"
#include "library/gemm_call.hpp"
#include "library_build/contract.hpp"
#include "runtime/context.hpp"

namespace cufuse {

// ------------------------------------------------------------------ TF32
namespace {
thread_local int tf32_override = -1;  // -1: none; else the innermost TF32Scope's setting
bool tf32_env() { return detail::settings().tf32; }  // CUFUSE_TF32
}  // namespace

bool tf32_enabled() { return tf32_override >= 0 ? tf32_override == 1 : tf32_env(); }
TF32Scope::TF32Scope(bool on) : prev_(tf32_override) { tf32_override = on ? 1 : 0; }
TF32Scope::~TF32Scope() { tf32_override = prev_; }

namespace {

using detail::GemmCall;
using detail::GemmSpec;
using detail::NodeKind;
using detail::NodePtr;
using detail::Op;

void matmul_require(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: an Array handle is empty", what));
}

// Whether `x * c` (or `x / c`) on an operand of dtype t may become the GEMM's alpha: only
// where scaling the product gives the values NumPy's scaling of the operand gives. Never for
// 0, infinities or NaN (0 * inf and 0 / 0 make NaNs inside the operand that a scaled product
// does not: fuzz seed 39661707121, `v3 / -0` into an einsum; and cuBLAS does
// not read A and B at alpha = 0). For float32 and float64 the factor is taken as NumPy takes a
// weak scalar, rounded to t, and must lie within 2^-16 .. 2^16 (the operand's own rounding of
// x * c is then within the GEMM's rounding bound, and neither overflows where the other does
// not). float16 and bfloat16 round x * c to 11 or 8 bits before the product: only powers of
// two fold, at most 1 for float16 (whose range ends at 65504) and 2^8 for bfloat16.
bool foldable(double c, DType t) {
  if (!std::isfinite(c) || c == 0) return false;
  const double m = std::fabs(c);
  int e = 0;
  const bool pow2 = std::frexp(m, &e) == 0.5;
  switch (t) {
    case DType::Float16: return pow2 && m <= 1.0 && m >= 0x1p-8;
    case DType::BFloat16: return pow2 && m <= 0x1p8 && m >= 0x1p-8;
    case DType::Float32:
    case DType::Float64: return m <= 0x1p16 && m >= 0x1p-16;
    default: return false;
  }
}
// The factor as the operand's dtype holds it.
double factor_in(double c, DType t) { return t == DType::Float32 ? static_cast<double>(static_cast<float>(c)) : c; }

// x * c, c * x, x / c and -x on an operand of the GEMM's dtype: the factor goes to alpha
// where it is foldable (above); -x always (exact).
NodePtr peel_scalars(NodePtr n, double& alpha) {
  for (;;) {
    if (n->k() != NodeKind::Elementwise) return n;
    const auto op = static_cast<Op>(n->op);
    if (op == Op::Negative && n->inputs[0]->dtype == n->dtype) {
      alpha = -alpha;
      n = n->inputs[0];
      continue;
    }
    if (op == Op::Multiply || op == Op::TrueDivide) {
      const NodePtr& x = n->inputs[0];
      const NodePtr& y = n->inputs[1];
      if (op == Op::Multiply && x->k() == NodeKind::Scalar && y->dtype == n->dtype &&
          foldable(x->scalar.to_double(), n->dtype)) {
        alpha *= factor_in(x->scalar.to_double(), n->dtype);
        n = y;
        continue;
      }
      if (y->k() == NodeKind::Scalar && x->dtype == n->dtype && foldable(y->scalar.to_double(), n->dtype)) {
        const double c = factor_in(y->scalar.to_double(), n->dtype);
        alpha = op == Op::Multiply ? alpha * c : alpha / c;
        n = x;
        continue;
      }
    }
    return n;
  }
}

// Leading dims of an operand that a contiguous copy could not present to cuBLAS with one
// batch stride (a partial broadcast such as (3, 1, M, K) against (1, 4)) are broadcast
// first: the planner then writes the operand out in full.
NodePtr batch_ready(const NodePtr& n, const Shape& batch, bool vec) {
  if (vec) return n;
  const Shape& s = n->shape();
  Shape ext(s.begin(), s.end() - 2);
  if (detail::collapse_batch(batch, ext, contiguous_strides(ext))) return n;
  Shape full = batch;
  full.push_back(s[s.ndim() - 2]);
  full.push_back(s[s.ndim() - 1]);
  return detail::broadcast_node(n, full);
}

// A View node the GEMM can read in place, through the view's strides, where cuBLAS reads that
// layout: a view of a pending reduction or library result (a transposed SVD factor, a reshaped
// GEMM output) or of dense memory, of the GEMM's dtype.
bool view_in_place(const NodePtr& v, DType t, const GemmCall& probe, int which) {
  if (v->k() != NodeKind::View) return false;
  const NodePtr& in = v->inputs[0];
  const bool pending = in->k() == NodeKind::Reduce || in->k() == NodeKind::Library;
  const bool dense = in->is_materialized() && in->layout.is_contiguous() && in->layout.offset == 0;
  return (pending || dense) && in->dtype == t && probe.operand_readable(which, v->layout);
}

// conj(x) over an operand x that the GEMM reads as it is through op T (a Buffer leaf of that
// layout, or a view read in place): the GEMM reads x with op C instead.
bool conj_peelable(const NodePtr& n, DType t, const GemmCall& probe, int which) {
  if (!is_complex(t) || n->k() != NodeKind::Elementwise || static_cast<Op>(n->op) != Op::Conjugate) return false;
  const NodePtr& x = n->inputs[0];
  if (x->dtype != t) return false;
  if (x->k() == NodeKind::Buffer) return probe.operand_readable(which, x->layout);
  return view_in_place(x, t, probe, which);
}

Array vector_dot(const Array& a, const Array& b, DType t) {
  const DType acc = is_half(t) ? DType::Float32 : t;
  if (t == DType::Bool) return any(logical_and(a, b));
  Array p = multiply(a.astype(acc), b.astype(acc));
  Array s = sum(p, {}, false, acc);
  return acc == t ? s : s.astype(t);
}

// Integer and bool matmul: sum(a[..., :, :, None] * b[..., None, :, :], axis=-2) in the
// result dtype (NumPy's integer matmul wraps like it), one generated reduction kernel.
Array integer_matmul(const Array& a0, const Array& b0, DType t, const GemmSpec& s) {
  Array a = a0.dtype() == t ? a0 : a0.astype(t);
  Array b = b0.dtype() == t ? b0 : b0.astype(t);
  if (s.a_vec && s.b_vec) return vector_dot(a, b, t);
  Array x, y;
  int axis;
  if (s.a_vec) {
    x = a.reshape({s.K, 1});
    y = b;
    axis = -2;
  } else if (s.b_vec) {
    x = a;
    y = b;
    axis = -1;
  } else {
    x = a.expand_dims(-1);
    y = b.expand_dims(-3);
    axis = -2;
  }
  if (t == DType::Bool) return any(logical_and(x, y), axis);
  return sum(multiply(x, y), axis, false, t);
}

}  // namespace

Array matmul(const Array& a, const Array& b) { return detail::matmul_shaped(a, b, std::nullopt); }

namespace detail {

Array matmul_shaped(const Array& a, const Array& b, const std::optional<Shape>& out_shape) {
  matmul_require(a, "matmul");
  matmul_require(b, "matmul");
  auto shaped = [&](const Array& r) { return out_shape && r.shape() != *out_shape ? r.reshape(*out_shape) : r; };
  GemmSpec s;
  s.a.shape = a.shape();
  s.b.shape = b.shape();
  detail::gemm_shapes(s);
  const DType t = promote_types(a.dtype(), b.dtype());
  if (!is_float(t) && !is_complex(t)) return shaped(integer_matmul(a, b, t, s));
  if (s.a_vec && s.b_vec) return shaped(vector_dot(a, b, t));
  if (out_shape && numel(*out_shape) != numel(s.out_shape))
    throw InternalError(fmt::format("matmul: output shape {} for a result of shape {}", to_string(*out_shape),
                                    to_string(s.out_shape)));
  if (out_shape) s.out_shape = *out_shape;  // the same contiguous memory, seen reshaped
  std::lock_guard<std::recursive_mutex> lk(detail::graph_mutex());
  NodePtr na = detail::cast_node(a.node(), t), nb = detail::cast_node(b.node(), t);
  double alpha = 1.0;
  na = peel_scalars(na, alpha);
  nb = peel_scalars(nb, alpha);
  na = batch_ready(na, s.batch, s.a_vec);
  nb = batch_ready(nb, s.batch, s.b_vec);
  s.a.shape = na->shape();
  s.b.shape = nb->shape();
  s.dtype = t;
  s.alpha = alpha;
  s.tf32 = t == DType::Float32 && tf32_enabled();
  if (is_complex(t)) {  // conj(x) read with op C where cuBLAS reads x through op T
    GemmSpec c = s;
    c.conj_a = c.conj_b = true;
    const GemmCall conj_probe(c);
    if (conj_peelable(na, t, conj_probe, 0)) {
      s.conj_a = true;
      na = na->inputs[0];
    }
    if (conj_peelable(nb, t, conj_probe, 1)) {
      s.conj_b = true;
      nb = nb->inputs[0];
    }
  }
  // A view of a pending reduction or library result (a transposed SVD factor, a reshaped
  // GEMM output) is read in place: the GEMM takes the result and the view's strides.
  GemmCall probe(s);
  for (int i = 0; i < 2; ++i) {
    NodePtr& n = i == 0 ? na : nb;
    if (!view_in_place(n, t, probe, i)) continue;
    (i == 0 ? s.a : s.b).view = n->layout;
    n = n->inputs[0];
  }
  auto call = std::make_shared<GemmCall>(std::move(s));
  detail::InputVec ins;
  ins.push_back(na);
  ins.push_back(nb);
  auto nodes = detail::make_library_nodes(call, std::move(ins));
  detail::maybe_auto_eval(nodes[0]);
  return Array(nodes[0]);
}

}  // namespace detail

Array tensordot(const Array& a, const Array& b, const Axes& axes_a, const Axes& axes_b) {
  matmul_require(a, "tensordot");
  matmul_require(b, "tensordot");
  if (axes_a.size() != axes_b.size()) throw ValueError("tensordot: shape-mismatch for sum");
  auto norm = [](int ax, int nd) {
    if (ax < -nd || ax >= nd)
      throw IndexError(fmt::format("tensordot: axis {} is out of bounds for array of dimension {}", ax, nd));
    return ax < 0 ? ax + nd : ax;
  };
  Axes ca, cb;
  int64_t K = 1;
  for (size_t i = 0; i < axes_a.size(); ++i) {
    ca.push_back(norm(axes_a[i], a.ndim()));
    cb.push_back(norm(axes_b[i], b.ndim()));
    if (a.shape()[ca.back()] != b.shape()[cb.back()]) throw ValueError("tensordot: shape-mismatch for sum");
    K *= a.shape()[ca.back()];
  }
  Axes pa, pb;
  Shape out;
  int64_t M = 1, N = 1;
  for (int d = 0; d < a.ndim(); ++d)
    if (std::find(ca.begin(), ca.end(), d) == ca.end()) {
      pa.push_back(d);
      out.push_back(a.shape()[d]);
      M *= a.shape()[d];
    }
  for (int d : ca) pa.push_back(d);
  for (int d : cb) pb.push_back(d);
  for (int d = 0; d < b.ndim(); ++d)
    if (std::find(cb.begin(), cb.end(), d) == cb.end()) {
      pb.push_back(d);
      out.push_back(b.shape()[d]);
      N *= b.shape()[d];
    }
  if (ca.empty()) {  // an outer product: elementwise
    Shape sa = a.shape();
    for (int i = 0; i < b.ndim(); ++i) sa.push_back(1);
    return multiply(a.reshape(sa), b);
  }
  Array at = a.transpose(pa).reshape({M, K});
  Array bt = b.transpose(pb).reshape({K, N});
  return detail::matmul_shaped(at, bt, out);  // (M, N) written as `out` directly
}

Array tensordot(const Array& a, const Array& b, int axes) {
  matmul_require(a, "tensordot");
  matmul_require(b, "tensordot");
  if (axes < 0 || axes > a.ndim() || axes > b.ndim())
    throw ValueError(fmt::format("tensordot: axes {} is out of range for arrays of dimension {} and {}", axes,
                                 a.ndim(), b.ndim()));
  Axes xa, xb;
  for (int i = 0; i < axes; ++i) {
    xa.push_back(a.ndim() - axes + i);
    xb.push_back(i);
  }
  return tensordot(a, b, xa, xb);
}

static void not_aligned(const Array& a, const Array& b, int da, int db) {
  throw ValueError(fmt::format("shapes {} and {} not aligned: {} (dim {}) != {} (dim {})", to_string(a.shape()),
                               to_string(b.shape()), a.shape()[da], da, b.shape()[db], db));
}

Array dot(const Array& a, const Array& b) {
  matmul_require(a, "dot");
  matmul_require(b, "dot");
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  const int da = a.ndim() - 1, db = b.ndim() == 1 ? 0 : b.ndim() - 2;
  if (a.shape()[da] != b.shape()[db]) not_aligned(a, b, da, db);
  if (b.ndim() == 1 || (a.ndim() <= 2 && b.ndim() == 2)) return matmul(a, b);
  return tensordot(a, b, Axes{da}, Axes{db});
}

Array inner(const Array& a, const Array& b) {
  matmul_require(a, "inner");
  matmul_require(b, "inner");
  if (a.ndim() == 0 || b.ndim() == 0) return multiply(a, b);
  const int da = a.ndim() - 1, db = b.ndim() - 1;
  if (a.shape()[da] != b.shape()[db]) not_aligned(a, b, da, db);
  if (a.ndim() == 1 && b.ndim() == 1) return matmul(a, b);
  return tensordot(a, b, Axes{da}, Axes{db});
}

Array vdot(const Array& a, const Array& b) {
  matmul_require(a, "vdot");
  matmul_require(b, "vdot");
  if (a.size() != b.size())
    throw ValueError(fmt::format("vdot: vectors of different sizes ({} of shape {} and {} of shape {})", a.size(),
                                 to_string(a.shape()), b.size(), to_string(b.shape())));
  // NumPy conjugates the first argument (complex), fused into the reduction's prologue.
  return vector_dot(is_complex(a.dtype()) ? conj(a.ravel()) : a.ravel(), b.ravel(), promote_types(a.dtype(), b.dtype()));
}

Array outer(const Array& a, const Array& b) {
  matmul_require(a, "outer");
  matmul_require(b, "outer");
  return multiply(a.reshape({-1, 1}), b.reshape({1, -1}));
}

}  // namespace cufuse
