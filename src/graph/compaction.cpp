// src/graph/compaction.cpp: selections whose shape depends on the data: x[mask], nonzero,
// where(cond), argwhere, flatnonzero, extract, compress.
//
// As CuPy: the count is settled on the device and ONE integer is read back. An inclusive
// cumsum of the mask (one scan kernel, the mask's producer fused into it) gives each selected
// element its place (c - 1) and, at its last element, the count; then one scatter kernel
// (graph/gather.hpp) over the input writes each selected element to its place, the values'
// producer and the mask's fused into it. Two kernels and one 8-byte read-back in all.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "graph/gather.hpp"
#include "graph/realize.hpp"
#include "graph/indexing.hpp"

namespace cufuse {

using detail::NodePtr;

namespace {

// The count of a mask's True elements, with its inclusive scan (int32 below 2^31 elements:
// half the bytes of int64; the mask's shape flattened), computed on the device; reads back
// one integer.
std::pair<Array, int64_t> scan_mask(const Array& mask) {
  const NodePtr& m = mask.node();
  if (m->reads_placeholder || m->is_placeholder())
    throw ValueError("the shape of a selection by mask (x[mask], nonzero, argwhere, flatnonzero, extract, compress) "
                     "depends on the mask's values, and a placeholder has none: it needs an array with data");
  const int64_t n = mask.size();
  const DType t = n < (int64_t(1) << 31) ? DType::Int32 : DType::Int64;
  Array c = empty(Shape{n}, t);
  if (n == 0) return {c, 0};
  // Computed into c's memory on its own (realize() would also write out the lazy mask when a
  // handle names it: x[x > 0]'s mask, held by the Subscript).
  detail::write_into(c.eval().node(), cumsum(mask.ravel(), std::nullopt, t).node());
  return {c, c[n - 1].item<int64_t>()};
}

// The rows of `values` (shape M + tail) where the bool `mask` (shape M) holds, in row-major
// order: shape (count,) + tail.
Array select_rows(const Array& values, const Array& mask) {
  const Shape& S = values.shape();
  const int k = mask.ndim();
  Shape tail;
  for (int d = k; d < S.ndim(); ++d) tail.push_back(S[d]);
  auto [c, count] = scan_mask(mask);
  Shape out_shape{count};
  for (auto t : tail) out_shape.push_back(t);
  Array out = empty(out_shape, values.dtype());
  if (count == 0 || numel(S) == 0) return out;
  Shape rows = mask.shape();
  while (rows.ndim() < S.ndim()) rows.push_back(1);
  std::vector<NodePtr> E{(c.reshape(rows) - 1).broadcast_to(S).node()};
  std::vector<int> checked{0};  // places within [0, count) by construction
  for (int d = 0; d < tail.ndim(); ++d) {
    E.push_back(detail::iota_node(S, k + d));
    checked.push_back(0);
  }
  NodePtr pred = mask.reshape(rows).broadcast_to(S).node();
  detail::scatter(out, E, checked, S, values, detail::ScatterModeArg::Assign, pred);
  return out;
}

Array nonzero_mask(const Array& a) { return a.dtype() == DType::Bool ? a : not_equal(a, 0); }

void compaction_require(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
}

}  // namespace

Array masked_select(const Array& x, const Array& mask) {
  compaction_require(x, "x[mask]");
  compaction_require(mask, "x[mask]");
  detail::refuse_selection_in_trace(mask, "x[mask]");
  if (mask.dtype() != DType::Bool) throw IndexError("x[mask]: the mask must be a bool array");
  const int k = mask.ndim();
  if (k > x.ndim())
    throw IndexError(fmt::format("too many indices for array: array is {}-dimensional, but {} were indexed", x.ndim(), k));
  for (int d = 0; d < k; ++d)
    if (mask.shape(d) != x.shape(d))
      throw IndexError(fmt::format("boolean index did not match indexed array along axis {}; size of axis is {} but "
                                   "size of corresponding boolean axis is {}", d, x.shape(d), mask.shape(d)));
  if (k == 0) {  // x[True] is x[None]; x[False] an empty (0,) + x.shape
    Shape s{1};
    for (auto d : x.shape()) s.push_back(d);
    return select_rows(x.reshape(s), mask.reshape(Shape{1}));
  }
  return select_rows(x, mask);
}

Array flatnonzero(const Array& a) {
  compaction_require(a, "flatnonzero");
  detail::refuse_selection_in_trace(a, "flatnonzero");
  const int64_t n = a.size();
  return select_rows(arange(Scalar(int64_t(0)), Scalar(n)), nonzero_mask(a).ravel());
}

Array argwhere(const Array& a) {
  compaction_require(a, "argwhere");
  detail::refuse_selection_in_trace(a, "argwhere");
  const int r = a.ndim();
  if (r == 0) {  // NumPy: shape (1, 0) or (0, 0)
    auto [c, count] = scan_mask(nonzero_mask(a).reshape(Shape{1}));
    (void)c;
    return empty(Shape{count, 0}, DType::Int64);
  }
  const int64_t N = a.size();
  const Array m = nonzero_mask(a).ravel();
  // coordinate d of element i: (i / stride_d) % shape_d, over the (N, r) updates
  std::vector<int64_t> st(static_cast<size_t>(r)), sh(static_cast<size_t>(r));
  int64_t s = 1;
  for (int d = r - 1; d >= 0; --d) {
    st[d] = s;
    sh[d] = a.shape(d);
    s *= std::max<int64_t>(a.shape(d), 1);
  }
  const Shape S{N, r};
  Array i = Array(detail::iota_node(S, 0));
  Array coord = remainder(floor_divide(i, from_host(st, Shape{1, r})), from_host(sh, Shape{1, r}));
  auto [c, count] = scan_mask(m);
  Array out = empty(Shape{count, r}, DType::Int64);
  if (count == 0) return out;
  std::vector<NodePtr> E{(c.reshape(Shape{N, 1}) - 1).broadcast_to(S).node(), detail::iota_node(S, 1)};
  NodePtr pred = m.reshape(Shape{N, 1}).broadcast_to(S).node();
  detail::scatter(out, E, {0, 0}, S, coord, detail::ScatterModeArg::Assign, pred);
  return out;
}

std::vector<Array> nonzero(const Array& a) {
  compaction_require(a, "nonzero");
  detail::refuse_selection_in_trace(a, "nonzero");
  if (a.ndim() == 0)
    throw ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead. If "
                     "the context of this error is of the form `arr[nonzero(cond)]`, just use `arr[cond]`.");
  if (a.ndim() == 1) return {flatnonzero(a)};
  Array w = argwhere(a);
  std::vector<Array> out;
  for (int d = 0; d < a.ndim(); ++d) out.push_back(w.index({_, d}));
  return out;
}

std::vector<Array> where(const Array& condition) { return nonzero(condition); }

Array extract(const Array& condition, const Array& a) {
  compaction_require(condition, "extract");
  compaction_require(a, "extract");
  detail::refuse_selection_in_trace(condition, "extract");
  const int64_t n = condition.size();
  if (n <= a.size()) return select_rows(a.ravel().index({slice(0, n)}), nonzero_mask(condition).ravel());
  return take(a.ravel(), flatnonzero(condition));  // a True past a's end: NumPy's IndexError
}

Array compress(const Array& condition, const Array& a, std::optional<int> axis) {
  compaction_require(condition, "compress");
  compaction_require(a, "compress");
  detail::refuse_selection_in_trace(condition, "compress");
  if (condition.ndim() != 1) throw ValueError("compress: condition must be a 1-d array");
  return take(a, flatnonzero(condition), axis);
}

}  // namespace cufuse
