// src/cli/functions_statistics.cpp: the function table's rows for issue 33's statistics
// (cufuse/statistics.hpp): bincount, histograms, average, cov, corrcoef, the NaN-ignoring
// moments, diff, ediff1d, gradient, trapezoid, cumulative_sum. functions.cpp appends these
// rows to THE function table.
#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/statistics.hpp"

namespace cufuse::cli {

namespace {

Value pair_of(const Array& x, const Array& y) {
  return Value::tuple({Value::of(x), Value::of(y)}, Value::Kind::Tuple);
}
std::optional<Array> opt_array(const Args& a, const char* p) {
  return a.given(p) ? std::optional<Array>(a.array(p)) : std::nullopt;
}
// An array, a number, or a list of numbers (NumPy's asanyarray of it).
std::optional<Operand> opt_operand(const Args& a, const char* p) {
  if (!a.given(p)) return std::nullopt;
  const Value& v = a.get(p);
  if (v.is_sequence()) {
    std::vector<double> d;
    bool ints = true;
    for (const auto& it : v.items) {
      if (!it.is_number()) a.fail(p, "expected numbers");
      ints &= it.is_int();
      d.push_back(it.number.to_double());
    }
    Array x = cufuse::from_host(d);
    return Operand(ints ? x.astype(DType::Int64) : x);
  }
  return a.operand(p);
}
std::optional<int> opt_int(const Args& a, const char* p) {
  return a.given(p) ? std::optional<int>(static_cast<int>(a.integer(p))) : std::nullopt;
}
AxisArg axis_arg(const Args& a, const char* p) { return a.given(p) ? AxisArg(a.axes(p)) : AxisArg(); }
// bins: an int (a count) or an array of edges (a list becomes one).
Bins bins_of(const Args& a, const char* p, const Value& v) {
  if (v.is_int()) return Bins(v.number.to_int64());
  if (v.is_array()) return Bins(v.array);
  if (v.is_sequence()) {
    std::vector<double> e;
    for (const auto& it : v.items) {
      if (!it.is_number()) a.fail(p, "bins must be an int or a sequence of numbers");
      e.push_back(it.number.to_double());
    }
    return Bins(cufuse::from_host(e));
  }
  a.fail(p, fmt::format("bins must be an int or an array, not {}", v.type_name()));
}
Range range_of(const Args& a, const char* p, const Value& v) {
  if (!v.is_sequence() || v.items.size() != 2 || !v.items[0].is_number() || !v.items[1].is_number())
    a.fail(p, "range must be a pair (min, max)");
  return {v.items[0].number.to_double(), v.items[1].number.to_double()};
}

Value fn_bincount(const Args& a) {
  return Value::of(cufuse::bincount(a.array("x"), opt_array(a, "weights"), a.integer("minlength")));
}
Value fn_histogram(const Args& a) {
  std::optional<Range> r;
  if (a.given("range")) r = range_of(a, "range", a.get("range"));
  const bool density = a.given("density") && a.boolean("density");
  auto h = cufuse::histogram(a.array("a"), bins_of(a, "bins", a.get("bins")), r, opt_array(a, "weights"), density);
  return pair_of(h.hist, h.bin_edges);
}
Value fn_histogram_bin_edges(const Args& a) {
  std::optional<Range> r;
  if (a.given("range")) r = range_of(a, "range", a.get("range"));
  return Value::of(cufuse::histogram_bin_edges(a.array("a"), bins_of(a, "bins", a.get("bins")), r, opt_array(a, "weights")));
}
Value fn_histogram2d(const Args& a) {
  const Value& b = a.get("bins");
  Bins bx = 10;
  std::optional<Bins> by;
  if (b.is_sequence() && b.items.size() == 2) {  // [nx, ny] or [xedges, yedges]
    bx = bins_of(a, "bins", b.items[0]);
    by = bins_of(a, "bins", b.items[1]);
  } else {
    bx = bins_of(a, "bins", b);
  }
  std::optional<std::pair<Range, Range>> r;
  if (a.given("range")) {
    const Value& v = a.get("range");
    if (!v.is_sequence() || v.items.size() != 2) a.fail("range", "range must be ((xmin, xmax), (ymin, ymax))");
    r = std::pair{range_of(a, "range", v.items[0]), range_of(a, "range", v.items[1])};
  }
  const bool density = a.given("density") && a.boolean("density");
  auto h = cufuse::histogram2d(a.array("x"), a.array("y"), bx, by, r, opt_array(a, "weights"), density);
  return Value::tuple({Value::of(h.hist), Value::of(h.xedges), Value::of(h.yedges)}, Value::Kind::Tuple);
}
Value fn_average(const Args& a) {
  if (a.boolean("returned")) {
    auto [avg, scl] = cufuse::average_returned(a.array("a"), axis_arg(a, "axis"), opt_array(a, "weights"), a.boolean("keepdims"));
    return pair_of(avg, scl);
  }
  return Value::of(cufuse::average(a.array("a"), axis_arg(a, "axis"), opt_array(a, "weights"), a.boolean("keepdims")));
}
Value fn_cov(const Args& a) {
  const std::optional<int64_t> ddof = a.given("ddof") ? std::optional<int64_t>(a.integer("ddof")) : std::nullopt;
  return Value::of(cufuse::cov(a.array("m"), opt_array(a, "y"), a.boolean("rowvar"), a.boolean("bias"), ddof, a.dtype("dtype")));
}
Value fn_corrcoef(const Args& a) {
  return Value::of(cufuse::corrcoef(a.array("x"), opt_array(a, "y"), a.boolean("rowvar"), a.dtype("dtype")));
}
template <Array (*F)(const Array&, AxisArg, int, bool, std::optional<DType>)>
Value nan_moment(const Args& a) {
  return Value::of(F(a.array("a"), axis_arg(a, "axis"), static_cast<int>(a.integer("ddof")), a.boolean("keepdims"),
                     a.dtype("dtype")));
}
Value fn_nanprod(const Args& a) {
  return Value::of(cufuse::nanprod(a.array("a"), axis_arg(a, "axis"), a.boolean("keepdims"), a.dtype("dtype")));
}
template <Array (*F)(const Array&, std::optional<int>, bool)>
Value nan_arg(const Args& a) {
  return Value::of(F(a.array("a"), opt_int(a, "axis"), a.boolean("keepdims")));
}
Value fn_diff(const Args& a) {
  return Value::of(cufuse::diff(a.array("a"), static_cast<int>(a.integer("n")), static_cast<int>(a.integer("axis")),
                                opt_operand(a, "prepend"), opt_operand(a, "append")));
}
Value fn_ediff1d(const Args& a) {
  return Value::of(cufuse::ediff1d(a.array("ary"), opt_operand(a, "to_end"), opt_operand(a, "to_begin")));
}
Value fn_gradient(const Args& a) {
  std::vector<Operand> sp;
  for (const auto& it : a.get("varargs").items) {
    if (it.is_array()) sp.emplace_back(Array(it.array));
    else if (it.is_number()) sp.emplace_back(it.number);
    else a.fail("varargs", fmt::format("spacings must be numbers or arrays, not {}", it.type_name()));
  }
  auto g = cufuse::gradient(a.array("f"), sp, axis_arg(a, "axis"), static_cast<int>(a.integer("edge_order")));
  if (g.size() == 1) return Value::of(g[0]);
  std::vector<Value> out;
  for (const auto& x : g) out.push_back(Value::of(x));
  return Value::tuple(std::move(out), Value::Kind::Tuple);
}
Value fn_trapezoid(const Args& a) {
  return Value::of(cufuse::trapezoid(a.array("y"), opt_array(a, "x"), a.real("dx"), static_cast<int>(a.integer("axis"))));
}
Value fn_cumulative_sum(const Args& a) {
  return Value::of(cufuse::cumulative_sum(a.array("x"), opt_int(a, "axis"), a.dtype("dtype"), a.boolean("include_initial")));
}

}  // namespace

const std::vector<FunctionRow>& statistics_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // counting: one scatter-add kernel, the producer and the bin computation fused into it
    {"bincount", "x, weights=None, minlength=0", fn_bincount, false, "occurrences of each non-negative int"},
    {"histogram", "a, bins=10, range=None, density=None, weights=None", fn_histogram, false,
     "(hist, bin_edges) of a.ravel()"},
    {"histogram_bin_edges", "a, bins=10, range=None, weights=None", fn_histogram_bin_edges, false,
     "the edges histogram would use"},
    {"histogram2d", "x, y, bins=10, range=None, density=None, weights=None", fn_histogram2d, false,
     "(H, xedges, yedges) of two 1-d arrays"},
    // moments: fused reductions (cov: a GEMM of the centered rows)
    {"average", "a, axis=None, weights=None, returned=False, keepdims=False", fn_average, false, "weighted mean"},
    {"cov", "m, y=None, rowvar=True, bias=False, ddof=None, dtype=None", fn_cov, false, "covariance matrix"},
    {"corrcoef", "x, y=None, rowvar=True, dtype=None", fn_corrcoef, false, "Pearson correlation coefficients"},
    {"nanvar", "a, axis=None, dtype=None, ddof=0, keepdims=False", nan_moment<cufuse::nanvar>, false,
     "variance ignoring NaNs"},
    {"nanstd", "a, axis=None, dtype=None, ddof=0, keepdims=False", nan_moment<cufuse::nanstd>, false,
     "standard deviation ignoring NaNs"},
    {"nanprod", "a, axis=None, dtype=None, keepdims=False", fn_nanprod, false, "product treating NaN as 1"},
    {"nanargmax", "a, axis=None, keepdims=False", nan_arg<cufuse::nanargmax>, false, "argmax ignoring NaNs"},
    {"nanargmin", "a, axis=None, keepdims=False", nan_arg<cufuse::nanargmin>, false, "argmin ignoring NaNs"},
    // differences and integrals: slices and concatenations, fused
    {"diff", "a, n=1, axis=-1, prepend=None, append=None", fn_diff, false, "n-th discrete difference"},
    {"ediff1d", "ary, to_end=None, to_begin=None", fn_ediff1d, false, "differences of the flattened array"},
    {"gradient", "f, *varargs, axis=None, edge_order=1", fn_gradient, false, "central-difference gradient"},
    {"trapezoid", "y, x=None, dx=1.0, axis=-1", fn_trapezoid, false, "integral by the trapezoid rule"},
    {"cumulative_sum", "x, axis=None, dtype=None, include_initial=False", fn_cumulative_sum, false,
     "running sum (NumPy 2), optionally from 0"},
  };
  return rows;
}

}  // namespace cufuse::cli
