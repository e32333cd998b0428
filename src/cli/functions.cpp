// src/cli/functions.cpp: THE function table of cufuse-dump-kernels: every function a program
// can call, by its NumPy name, with its parameters and a few lines mapping it to cufuse.
// Every op of the op table (cufuse/op_rows.hpp: kernel rows, composites and NumPy's aliases)
// is a row without being listed here; the rows below add casts, views, reductions and creation functions, and
// functions_library.cpp's rows the contractions and linear algebra. To expose a new
// function, add one row and its implementation to the file of its kind; registry.cpp binds
// the arguments, `@` finds the row named "matmul", and np.linalg.X the row "linalg.X".
#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/registry.hpp"
#include "core/node.hpp"
#include "core/op_table.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/linalg.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse::cli {

// An int or a tuple of ints (registry.hpp).
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

// ------------------------------------------------------------------ elementwise
// Every op of the op table (kernel rows, composites, aliases), bound by its signature's
// operand and parameter names (src/core/op_table.cpp's kSignatures) and called by name.
Value fn_elementwise(const Args& a) {
  const char* op = a.row().op ? a.row().op : a.row().name;
  const detail::OpFunction* f = detail::find_function(op);
  const detail::Signature& s = detail::signature(f->sig);
  std::vector<Operand> ops;
  for (int i = 0; i < s.n_operands; ++i) ops.push_back(a.operand(s.operands[i]));
  std::vector<OpParam> params;
  for (int i = 0; i < s.n_params; ++i)
    if (a.given(s.params[i].name)) params.push_back(OpParam{s.params[i].name, a.number(s.params[i].name)});
  return Value::of(cufuse::apply(op, ops, params));
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

// ------------------------------------------------------------------ the table
// name, parameters, implementation, also a method, doc[, op-table name]
const FunctionRow kRows[] = {
    // casts and copies
    {"astype", "x, dtype", fn_astype, true, "cast: astype(x, 'f16'), x.astype(float16)"},
    {"copy", "a", fn_copy, true, "a copy (one elementwise kernel)"},
    {"clip", "a, a_min=None, a_max=None", fn_clip, true, "minimum(maximum(a, a_min), a_max), NaN propagating"},
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
  const auto& lib = library_function_rows();  // functions_library.cpp
  rows.insert(rows.end(), lib.begin(), lib.end());
  const auto& surface = surface_function_rows();  // functions_surface.cpp
  rows.insert(rows.end(), surface.begin(), surface.end());
  const auto& manip = manipulation_function_rows();  // functions_manipulation.cpp
  rows.insert(rows.end(), manip.begin(), manip.end());
  const auto& indexing = indexing_function_rows();  // functions_indexing.cpp
  rows.insert(rows.end(), indexing.begin(), indexing.end());
  const auto& stats = statistics_function_rows();  // functions_statistics.cpp
  rows.insert(rows.end(), stats.begin(), stats.end());
  const auto& sorting = sorting_function_rows();  // functions_sorting.cpp
  rows.insert(rows.end(), sorting.begin(), sorting.end());
  const auto& ffts = fft_function_rows();  // functions_fft.cpp
  rows.insert(rows.end(), ffts.begin(), ffts.end());
  // Every op of the op table by its NumPy name (astype is the row above), aliases and
  // composites included, with its signature's parameters and NumPy's defaults.
  static const std::vector<std::string> texts = [] {
    std::vector<std::string> t;
    for (const detail::OpFunction& f : detail::op_functions()) {
      t.push_back(detail::python_params(f.sig));
      t.push_back(f.doc ? std::string(f.doc) : "alias of " + std::string(detail::op_row(f.op).name));
    }
    return t;
  }();
  size_t k = 0;
  for (const detail::OpFunction& f : detail::op_functions()) {
    const char* params = texts[k++].c_str();
    const char* doc = texts[k++].c_str();
    if (f.sig == detail::Sig::CAST) continue;
    if (std::any_of(rows.begin(), rows.end(), [&](const FunctionRow& r) { return std::string_view(r.name) == f.name; }))
      continue;
    rows.push_back(FunctionRow{f.name, params, fn_elementwise, false, doc, f.name});
  }
  return rows;
}

}  // namespace

const std::vector<FunctionRow>& function_table() {
  static const std::vector<FunctionRow> rows = build_table();
  return rows;
}

}  // namespace cufuse::cli
