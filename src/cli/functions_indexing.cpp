// src/cli/functions_indexing.cpp: the function table's rows for issue 30's advanced indexing,
// masks and scatters (cufuse/indexing.hpp). Gathers (take, take_along_axis, x[idx]) are lazy
// and plan on placeholders like any expression; selections by mask count on the device and
// scatters write memory, so they need arrays with data (on placeholders they report that).
// functions.cpp appends these rows to THE function table.
#include <fmt/format.h>

#include "cli/registry.hpp"
#include "cufuse/indexing.hpp"

namespace cufuse::cli {

namespace {

std::optional<int> opt_axis(const Args& a, const char* p) {
  return a.given(p) ? std::optional<int>(static_cast<int>(a.integer(p))) : std::nullopt;
}
Value tuple_of(const std::vector<Array>& xs) {
  std::vector<Value> out;
  for (const auto& x : xs) out.push_back(Value::of(x));
  return Value::tuple(std::move(out));
}
Value fn_take(const Args& a) {
  return Value::of(cufuse::take(a.array("a"), a.array("indices"), opt_axis(a, "axis"), a.string("mode")));
}
Value fn_take_along_axis(const Args& a) {
  return Value::of(cufuse::take_along_axis(a.array("arr"), a.array("indices"), static_cast<int>(a.integer("axis"))));
}
Value fn_nonzero(const Args& a) { return tuple_of(cufuse::nonzero(a.array("a"))); }
Value fn_argwhere(const Args& a) { return Value::of(cufuse::argwhere(a.array("a"))); }
Value fn_flatnonzero(const Args& a) { return Value::of(cufuse::flatnonzero(a.array("a"))); }
Value fn_extract(const Args& a) { return Value::of(cufuse::extract(a.array("condition"), a.array("arr"))); }
Value fn_compress(const Args& a) {
  return Value::of(cufuse::compress(a.array("condition"), a.array("a"), opt_axis(a, "axis")));
}
Value fn_put(const Args& a) {
  Array x = a.array("a");
  cufuse::put(x, a.array("ind"), a.array("v"), a.string("mode"));
  return Value::none();
}
template <void (*F)(Array&, const Array&, const Operand&)>
Value fn_at(const Args& a) {
  Array x = a.array("a");
  F(x, a.array("indices"), a.array("b"));
  return Value::none();
}

}  // namespace

const std::vector<FunctionRow>& indexing_function_rows() {
  static const std::vector<FunctionRow> rows = {
    // gathers: index arithmetic fused into the kernels around them
    {"take", "a, indices, axis=None, mode='raise'", fn_take, true,
     "elements at indices along axis (flattened for None); mode raise, clip or wrap; a fused gather"},
    {"take_along_axis", "arr, indices, axis", fn_take_along_axis, false,
     "arr's elements at indices along axis, the other axes broadcast; a fused gather"},
    // selections by mask: one kernel and one integer read back (or, past CUFUSE_SELECT_ONE_PASS_BYTES, the
    // mask's tile counts and their scan, one integer read back, one compaction kernel)
    {"nonzero", "a", fn_nonzero, true, "indices of the nonzero elements, one array per dim (needs data)"},
    {"argwhere", "a", fn_argwhere, false, "indices of the nonzero elements as (count, ndim) (needs data)"},
    {"flatnonzero", "a", fn_flatnonzero, false, "indices of the nonzero elements of a.ravel() (needs data)"},
    {"extract", "condition, arr", fn_extract, false, "arr.ravel() where condition.ravel() holds (needs data)"},
    {"compress", "condition, a, axis=None", fn_compress, true, "slices along axis where condition holds (needs data)"},
    // scatters: one kernel over the updates, writing in place (needs data). NumPy spells the
    // ufunc methods np.add.at: the program language has no attributes of functions, so they go
    // by cufuse's C++ names.
    {"put", "a, ind, v, mode='raise'", fn_put, true, "a.flat[ind] = v, v repeated; mode raise, clip or wrap (writes a)"},
    {"add_at", "a, indices, b", fn_at<cufuse::add_at>, false, "a[indices] += b, duplicates accumulated (writes a)"},
    {"maximum_at", "a, indices, b", fn_at<cufuse::maximum_at>, false, "a[indices] = maximum(a[indices], b), unbuffered"},
    {"minimum_at", "a, indices, b", fn_at<cufuse::minimum_at>, false, "a[indices] = minimum(a[indices], b), unbuffered"},
  };
  return rows;
}

}  // namespace cufuse::cli
