// src/cli/functions_surface.cpp: the function table's rows for issue 30's NumPy surface:
// matrix and grid creation (eye, identity, tri, triu, tril, diag, meshgrid, logspace) and
// the comparisons (allclose, array_equal, testing.assert_allclose, testing.assert_array_equal).
// functions.cpp appends these rows to THE function table.
#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cufuse/creation.hpp"
#include "cufuse/testing.hpp"

namespace cufuse::cli {

namespace {

std::optional<int64_t> opt_int64(const Args& a, const char* p) {
  return a.given(p) ? std::optional<int64_t>(a.integer(p)) : std::nullopt;
}
DType dtype_or_f64(const Args& a) { return a.dtype("dtype").value_or(DType::Float64); }

Value fn_eye(const Args& a) {
  return Value::of(cufuse::eye(a.integer("N"), opt_int64(a, "M"), a.integer("k"), dtype_or_f64(a)));
}
Value fn_identity(const Args& a) { return Value::of(cufuse::identity(a.integer("n"), dtype_or_f64(a))); }
Value fn_tri(const Args& a) {
  return Value::of(cufuse::tri(a.integer("N"), opt_int64(a, "M"), a.integer("k"), dtype_or_f64(a)));
}
Value fn_triu(const Args& a) { return Value::of(cufuse::triu(a.array("m"), a.integer("k"))); }
Value fn_tril(const Args& a) { return Value::of(cufuse::tril(a.array("m"), a.integer("k"))); }
Value fn_diag(const Args& a) { return Value::of(cufuse::diag(a.array("v"), a.integer("k"))); }
Value fn_logspace(const Args& a) {
  return Value::of(cufuse::logspace(a.real("start"), a.real("stop"), a.integer("num"), a.boolean("endpoint"),
                                    a.real("base"), dtype_or_f64(a)));
}
Value fn_meshgrid(const Args& a) {
  std::vector<Array> xs;
  for (const auto& v : a.get("xi").items) {
    if (v.kind == Value::Kind::Number) xs.push_back(cufuse::full(Shape{}, v.number, v.number.dtype()));
    else if (v.kind == Value::Kind::Array) xs.push_back(v.array);
    else a.fail("xi", fmt::format("expected arrays, got {}", v.type_name()));
  }
  std::vector<Value> out;
  for (auto& x : cufuse::meshgrid(xs, a.string("indexing"), a.boolean("sparse"), a.boolean("copy")))
    out.push_back(Value::of(x));
  return Value::tuple(std::move(out));
}
Value fn_allclose(const Args& a) {
  return Value::of(Scalar(cufuse::allclose(a.array("a"), a.array("b"), a.real("rtol"), a.real("atol"),
                                           a.boolean("equal_nan"))));
}
Value fn_array_equal(const Args& a) {
  return Value::of(Scalar(cufuse::array_equal(a.array("a1"), a.array("a2"), a.boolean("equal_nan"))));
}
Value fn_assert_allclose(const Args& a) {
  cufuse::testing::assert_allclose(a.array("actual"), a.array("desired"), a.real("rtol"), a.real("atol"),
                                   a.boolean("equal_nan"), a.string("err_msg"));
  return Value::none();
}
Value fn_assert_array_equal(const Args& a) {
  cufuse::testing::assert_array_equal(a.array("actual"), a.array("desired"), a.string("err_msg"));
  return Value::none();
}

}  // namespace

const std::vector<FunctionRow>& surface_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // matrices and grids: index arithmetic over lazy generators, fused with their consumers
    {"eye", "N, M=None, k=0, dtype=None", fn_eye, false, "ones on the k-th diagonal"},
    {"identity", "n, dtype=None", fn_identity, false, "the n x n identity"},
    {"tri", "N, M=None, k=0, dtype=None", fn_tri, false, "ones at and below the k-th diagonal"},
    {"triu", "m, k=0", fn_triu, false, "zero below the k-th diagonal (fused where)"},
    {"tril", "m, k=0", fn_tril, false, "zero above the k-th diagonal (fused where)"},
    {"diag", "v, k=0", fn_diag, false, "1-d: a matrix with v on the k-th diagonal; 2-d: its k-th diagonal"},
    {"meshgrid", "*xi, copy=True, sparse=False, indexing='xy'", fn_meshgrid, false,
     "coordinate matrices (a tuple); indexing 'xy' or 'ij'"},
    {"logspace", "start, stop, num=50, endpoint=True, base=10.0, dtype=None", fn_logspace, false,
     "base ** linspace(start, stop, num)"},
    // comparisons: one fused reduction, a scalar read back
    {"allclose", "a, b, rtol=1e-05, atol=1e-08, equal_nan=False", fn_allclose, false,
     "all(|a - b| <= atol + rtol * |b|) (a Python bool)"},
    {"array_equal", "a1, a2, equal_nan=False", fn_array_equal, false, "same shape and elements (a Python bool)"},
    {"testing.assert_allclose", "actual, desired, rtol=1e-07, atol=0, equal_nan=True, err_msg=''",
     fn_assert_allclose, false, "AssertionError with NumPy's message unless allclose"},
    {"testing.assert_array_equal", "actual, desired, err_msg=''", fn_assert_array_equal, false,
     "AssertionError with NumPy's message unless equal"},
  };
  return rows;
}

}  // namespace cufuse::cli
