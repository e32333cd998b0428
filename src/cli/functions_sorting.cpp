// src/cli/functions_sorting.cpp: the function table's rows for issue 33's sorting, searching,
// sets and order statistics (cufuse/sorting.hpp). sort/argsort/partition/searchsorted/median
// and the quantiles are lazy and plan on placeholders; unique, the set functions and digitize
// read a number back (a count, the bins' order), so they need arrays with data.
// functions.cpp appends these rows to THE function table.
#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/sorting.hpp"

namespace cufuse::cli {

namespace {

// An axis that may be None (the flattened array).
// (A default of -1 is read as the number it is: the parameter list's literals are numbers.)
std::optional<int> axis_or_none(const Args& a, const char* p) {
  const Value& v = a.get(p);
  if (v.kind == Value::Kind::None) return std::nullopt;
  if (v.kind == Value::Kind::Number && v.number.to_double() == -1) return -1;
  return static_cast<int>(a.integer(p));
}
AxisArg axes_or_all(const Args& a) { return a.given("axis") ? AxisArg(a.axes("axis")) : AxisArg{}; }
std::vector<int64_t> kth_of(const Args& a) {
  const Value& v = a.get("kth");
  if (v.is_int()) return {v.number.to_int64()};
  if (!v.is_sequence()) a.fail("kth", fmt::format("expected an int or a sequence of ints, got {}", v.type_name()));
  std::vector<int64_t> r;
  for (const auto& it : v.items) {
    if (!it.is_int()) a.fail("kth", fmt::format("expected ints, got {}", it.type_name()));
    r.push_back(it.number.to_int64());
  }
  return r;
}
std::vector<Array> keys_of(const Args& a) {
  const Value& v = a.get("keys");
  if (v.kind == Value::Kind::Array) {
    std::vector<Array> ks;
    for (int64_t i = 0; i < v.array.shape(0); ++i) ks.push_back(v.array.index({i}));
    return ks;
  }
  if (!v.is_sequence()) a.fail("keys", fmt::format("expected a sequence of arrays, got {}", v.type_name()));
  std::vector<Array> ks;
  for (const auto& it : v.items) {
    if (it.kind == Value::Kind::Array) ks.push_back(it.array);
    else if (it.kind == Value::Kind::Number) ks.push_back(cufuse::full(Shape{}, it.number, it.number.dtype()));
    else a.fail("keys", fmt::format("expected arrays, got {}", it.type_name()));
  }
  return ks;
}

Value fn_sort(const Args& a) { return Value::of(cufuse::sort(a.array("a"), axis_or_none(a, "axis"))); }
Value fn_argsort(const Args& a) { return Value::of(cufuse::argsort(a.array("a"), axis_or_none(a, "axis"))); }
Value fn_partition(const Args& a) {
  return Value::of(cufuse::partition(a.array("a"), kth_of(a), axis_or_none(a, "axis")));
}
Value fn_argpartition(const Args& a) {
  return Value::of(cufuse::argpartition(a.array("a"), kth_of(a), axis_or_none(a, "axis")));
}
Value fn_lexsort(const Args& a) { return Value::of(cufuse::lexsort(keys_of(a), axis_or_none(a, "axis").value_or(-1))); }
Value fn_searchsorted(const Args& a) {
  std::optional<Array> sorter;
  if (a.given("sorter")) sorter = a.array("sorter");
  return Value::of(cufuse::searchsorted(a.array("a"), a.array("v"), a.string("side"), sorter));
}
Value fn_digitize(const Args& a) { return Value::of(cufuse::digitize(a.array("x"), a.array("bins"), a.boolean("right"))); }

Value fn_unique(const Args& a) {
  const bool ri = a.boolean("return_index"), rv = a.boolean("return_inverse"), rc = a.boolean("return_counts");
  std::optional<int> axis;
  if (a.given("axis")) axis = static_cast<int>(a.integer("axis"));
  UniqueResult r = cufuse::unique(a.array("ar"), ri, rv, rc, axis);
  if (!ri && !rv && !rc) return Value::of(r.values);
  std::vector<Value> out{Value::of(r.values)};
  if (ri) out.push_back(Value::of(r.indices));
  if (rv) out.push_back(Value::of(r.inverse));
  if (rc) out.push_back(Value::of(r.counts));
  return Value::tuple(std::move(out));
}
Value fn_unique_values(const Args& a) { return Value::of(cufuse::unique_values(a.array("x"))); }
Value fn_isin(const Args& a) {
  return Value::of(cufuse::isin(a.array("element"), a.array("test_elements"), a.boolean("assume_unique"),
                                a.boolean("invert")));
}
template <Array (*F)(const Array&, const Array&, bool)>
Value fn_set_u(const Args& a) {
  return Value::of(F(a.array("ar1"), a.array("ar2"), a.boolean("assume_unique")));
}
Value fn_union1d(const Args& a) { return Value::of(cufuse::union1d(a.array("ar1"), a.array("ar2"))); }

template <Array (*F)(const Array&, AxisArg, bool)>
Value fn_median(const Args& a) {
  return Value::of(F(a.array("a"), axes_or_all(a), a.boolean("keepdims")));
}
// q: a number (the result has the reduced shape) or a sequence (its axis first).
template <Array (*One)(const Array&, double, AxisArg, std::string_view, bool),
          Array (*Many)(const Array&, const std::vector<double>&, AxisArg, std::string_view, bool)>
Value fn_quantile(const Args& a) {
  const Value& q = a.get("q");
  const std::string method = a.string("method");
  if (q.is_sequence()) {
    std::vector<double> qs;
    for (const auto& it : q.items) {
      if (it.kind != Value::Kind::Number) a.fail("q", fmt::format("expected numbers, got {}", it.type_name()));
      qs.push_back(it.number.to_double());
    }
    return Value::of(Many(a.array("a"), qs, axes_or_all(a), method, a.boolean("keepdims")));
  }
  return Value::of(One(a.array("a"), a.real("q"), axes_or_all(a), method, a.boolean("keepdims")));
}

}  // namespace

const std::vector<FunctionRow>& sorting_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // sorting: one sort node (CUB's radix sort between generated key kernels)
    {"sort", "a, axis=-1", fn_sort, true, "sorted along axis (None: flattened); NaNs last"},
    {"argsort", "a, axis=-1", fn_argsort, true, "indices that sort along axis, stable"},
    {"partition", "a, kth, axis=-1", fn_partition, true, "kth elements in their sorted place (here: sorted)"},
    {"argpartition", "a, kth, axis=-1", fn_argpartition, true, "indices that partition along axis"},
    {"lexsort", "keys, axis=-1", fn_lexsort, false, "indirect stable sort on keys, the last one primary"},
    {"msort", "a", [](const Args& a) { return Value::of(cufuse::msort(a.array("a"))); }, false, "sort along axis 0"},
    {"searchsorted", "a, v, side='left', sorter=None", fn_searchsorted, true, "insertion points of v into sorted a"},
    {"digitize", "x, bins, right=False", fn_digitize, false, "the bin of each x (needs data: bins' order read back)"},
    // sets: a sort, one count read back, gathers (need data)
    {"unique", "ar, return_index=False, return_inverse=False, return_counts=False, axis=None", fn_unique, false,
     "sorted unique values (and first indices, inverse, counts) (needs data)"},
    {"unique_values", "x", fn_unique_values, false, "sorted unique values (needs data)"},
    {"isin", "element, test_elements, assume_unique=False, invert=False", fn_isin, false,
     "whether each element is in test_elements (a sort and a binary search)"},
    {"intersect1d", "ar1, ar2, assume_unique=False", fn_set_u<cufuse::intersect1d>, false,
     "sorted values in both (needs data)"},
    {"union1d", "ar1, ar2", fn_union1d, false, "sorted values in either (needs data)"},
    {"setdiff1d", "ar1, ar2, assume_unique=False", fn_set_u<cufuse::setdiff1d>, false,
     "sorted values of ar1 not in ar2 (needs data)"},
    {"setxor1d", "ar1, ar2, assume_unique=False", fn_set_u<cufuse::setxor1d>, false,
     "sorted values in exactly one (needs data)"},
    // order statistics: a sort along the reduced axes, then fused gathers
    {"median", "a, axis=None, keepdims=False", fn_median<cufuse::median>, false, "median over axes (NaN rows NaN)"},
    {"nanmedian", "a, axis=None, keepdims=False", fn_median<cufuse::nanmedian>, false, "median skipping NaNs"},
    {"quantile", "a, q, axis=None, method='linear', keepdims=False", fn_quantile<cufuse::quantile, cufuse::quantile>,
     false, "q-th quantiles (q in [0, 1]), NumPy 2's methods"},
    {"percentile", "a, q, axis=None, method='linear', keepdims=False",
     fn_quantile<cufuse::percentile, cufuse::percentile>, false, "q-th percentiles (q in [0, 100])"},
    {"nanquantile", "a, q, axis=None, method='linear', keepdims=False",
     fn_quantile<cufuse::nanquantile, cufuse::nanquantile>, false, "quantiles skipping NaNs"},
    {"nanpercentile", "a, q, axis=None, method='linear', keepdims=False",
     fn_quantile<cufuse::nanpercentile, cufuse::nanpercentile>, false, "percentiles skipping NaNs"},
  };
  return rows;
}

}  // namespace cufuse::cli
