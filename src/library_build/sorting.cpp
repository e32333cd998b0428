// src/library_build/sorting.cpp: sort, argsort, partition, argpartition, lexsort, msort,
// searchsorted and digitize (cufuse/sorting.hpp) on the sort and search nodes
// (library/sort_call.hpp), with NumPy's argument checks and messages.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/sorting.hpp"
#include "graph/manip_support.hpp"
#include "library/sort_call.hpp"
#include "library_build/sort_support.hpp"

namespace cufuse {

namespace detail {

void require_defined(const Array& a, const char* what) {
  if (!a.defined()) throw ValueError(fmt::format("{}: the Array handle is empty", what));
}

std::pair<Array, int> sort_axis(const Array& a, std::optional<int> axis, const char* what) {
  require_defined(a, what);
  if (!axis) return {a.ravel(), 0};
  return {a, manip_axis(*axis, a.ndim(), what)};
}

namespace {

// Complex values in NumPy's sort order (npysort's complex LT): by real part, then imaginary
// part; after every value without a NaN, those with a NaN imaginary part (by real part), then
// those with a NaN real part (by imaginary part), then NaN in both. Three stable argsorts of
// real keys, least significant first (lexsort's way): the imaginary part, the real part, the
// NaN class; a NaN part reads as 0 in its key, so it ties within its class. The values are
// gathered in that order. (-0.0 ties with 0.0, as the real keys with indices do.)
Sorted sort_complex(const Array& a, int axis, bool values, bool indices, const char* what) {
  const Array re = real(a), im = imag(a), nr = isnan(re), ni = isnan(im);
  const Array cls = nr.astype(DType::Int8) * 2 + ni.astype(DType::Int8);
  const Array kre = where(nr, 0.0, re), kim = where(ni, 0.0, im);
  Array idx = sort_along(kim, axis, false, true, what).indices;
  for (const Array* k : {&kre, &cls})
    idx = take_along_axis(idx, sort_along(take_along_axis(*k, idx, axis), axis, false, true, what).indices, axis);
  Sorted r;
  if (values) r.values = take_along_axis(a, idx, axis);
  if (indices) r.indices = idx;
  return r;
}

}  // namespace

Sorted sort_along(const Array& a, int axis, bool values, bool indices, const char* what) {
  if (is_complex(a.dtype())) return sort_complex(a, axis, values, indices, what);
  const int last = a.ndim() - 1;
  const Array t = axis == last ? a : a.moveaxis(axis, last);
  const Shape S = t.shape();
  const int64_t n = S[last], total = numel(S);
  Sorted r;
  if (total == 0) {
    if (values) r.values = zeros(a.shape(), a.dtype());
    if (indices) r.indices = zeros(a.shape(), DType::Int64);
    return r;
  }
  const int64_t rows = total / n;
  auto call = std::make_shared<SortCall>(a.dtype(), rows, n, values, indices, what, S);
  InputVec ins;
  ins.push_back(t.reshape(Shape{rows, n}).node());
  auto nodes = make_library_nodes(std::move(call), std::move(ins));
  auto back = [&](const NodePtr& node) {
    Array x(node);  // of shape S already
    return axis == last ? x : x.moveaxis(last, axis);
  };
  if (values) r.values = back(nodes.at(0));
  if (indices) r.indices = back(nodes.at(values ? 1 : 0));
  return r;
}

}  // namespace detail

namespace {

using detail::sort_along;
using detail::sort_axis;

std::vector<int64_t> checked_kth(const Array& a, const std::vector<int64_t>& kth, int axis) {
  const int64_t n = a.shape(axis);
  for (int64_t k : kth)
    if (k < -n || k >= n) throw ValueError(fmt::format("kth(={}) out of bounds ({})", k, n));
  return kth;
}

}  // namespace

Array sort(const Array& a, std::optional<int> axis) {
  auto [x, ax] = sort_axis(a, axis, "sort");
  return sort_along(x, ax, true, false, "sort").values;
}

Array argsort(const Array& a, std::optional<int> axis, bool stable) {
  auto [x, ax] = sort_axis(a, axis, "argsort");
  return sort_along(x, ax, false, true, "argsort").indices;
}

Array partition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis) {
  auto [x, ax] = sort_axis(a, axis, "partition");
  checked_kth(x, kth, ax);
  return sort_along(x, ax, true, false, "partition").values;
}

Array argpartition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis) {
  auto [x, ax] = sort_axis(a, axis, "argpartition");
  checked_kth(x, kth, ax);
  return sort_along(x, ax, false, true, "argpartition").indices;
}

Array msort(const Array& a) { return sort(a, 0); }

Array lexsort(const std::vector<Array>& keys, int axis) {
  if (keys.empty()) throw TypeError("need sequence of keys with len > 0 in lexsort");
  for (const Array& k : keys) {
    detail::require_defined(k, "lexsort");
    if (k.shape() != keys[0].shape()) throw ValueError("all keys need to be the same shape");
  }
  const int ax = detail::manip_axis(axis, keys[0].ndim(), "lexsort");
  // Stable sorts from the least significant key (the first) to the primary one (the last).
  Array idx = sort_along(keys[0], ax, false, true, "lexsort").indices;
  for (size_t i = 1; i < keys.size(); ++i) {
    Array k = take_along_axis(keys[i], idx, ax);
    idx = take_along_axis(idx, sort_along(k, ax, false, true, "lexsort").indices, ax);
  }
  return idx;
}

Array lexsort(const Array& keys, int axis) {
  detail::require_defined(keys, "lexsort");
  if (keys.ndim() == 0) throw TypeError("need sequence of keys with len > 0 in lexsort");
  std::vector<Array> ks;
  for (int64_t i = 0; i < keys.shape(0); ++i) ks.push_back(keys.index({i}));
  return lexsort(ks, axis);
}

namespace {

// searchsorted of complex values (s sorted in NumPy's complex order): one stable complex
// argsort of s and v together, v first for side "left" (an element of s equal to a value of v
// sorts after it) and s first for "right"; a value's insertion point is the number of elements
// of s before it in that order.
Array searchsorted_complex(const Array& s, const Array& v, bool right) {
  const int64_t n = s.size(), m = v.size();
  const Array vf = v.ravel();
  const Array order = argsort(right ? concatenate({s, vf}) : concatenate({vf, s}));
  const Array from_s = right ? less(order, n) : greater_equal(order, m);
  const Array before = cumsum(from_s.astype(DType::Int64));
  const Array pos = argsort(order);  // where each element went
  return take(before, pos.index({right ? slice(n, n + m) : slice(0, m)})).reshape(v.shape());
}

}  // namespace

Array searchsorted(const Array& a, const Array& v, std::string_view side, const std::optional<Array>& sorter) {
  detail::require_defined(a, "searchsorted");
  detail::require_defined(v, "searchsorted");
  bool right = false;
  if (side == "right") right = true;
  else if (side != "left") throw ValueError(fmt::format("search side must be 'left' or 'right' (got '{}')", side));
  if (a.ndim() == 0) throw ValueError("object of too small depth for desired array");
  if (a.ndim() > 1) throw ValueError("object too deep for desired array");
  Array s = a;
  if (sorter) {
    detail::require_defined(*sorter, "searchsorted");
    if (sorter->size() != a.size()) throw ValueError("sorter.size must equal a.size");
    if (!is_integer(sorter->dtype())) throw TypeError("searchsorted: sorter must be an integer array");
    s = take(a, *sorter);
  }
  const DType t = promote_types(a.dtype(), v.dtype());
  const int64_t n = s.size();
  if (n == 0 || v.size() == 0) return zeros(v.shape(), DType::Int64);
  if (is_complex(t)) return searchsorted_complex(s.dtype() == t ? s : s.astype(t), v.dtype() == t ? v : v.astype(t), right);
  auto call = std::make_shared<detail::SearchCall>(t, n, v.shape(), right);
  detail::InputVec ins;
  ins.push_back((s.dtype() == t ? s : s.astype(t)).node());
  ins.push_back((v.dtype() == t ? v : v.astype(t)).node());
  return Array(detail::make_library_nodes(std::move(call), std::move(ins)).at(0));
}

Array digitize(const Array& x, const Array& bins, bool right) {
  detail::require_defined(x, "digitize");
  detail::require_defined(bins, "digitize");
  if (is_complex(x.dtype())) throw TypeError("x may not be complex");  // NumPy's digitize
  if (is_complex(bins.dtype()))
    throw TypeError(fmt::format("Cannot cast array data from dtype('{}') to dtype('float64') according to the rule 'safe'",
                                name(bins.dtype())));
  if (bins.ndim() == 0) throw ValueError("object of too small depth for desired array");
  if (bins.ndim() > 1) throw ValueError("object too deep for desired array");
  const int64_t n = bins.size();
  bool decreasing = false;
  if (n > 1) {
    // NumPy's monotonicity check: one number read back (bit 0: a rise, bit 1: a fall).
    const Array lo = bins.index({slice(0, n - 1)}), hi = bins.index({slice(1, n)});
    const int64_t f = (any(less(lo, hi)).astype(DType::Int64) + any(greater(lo, hi)).astype(DType::Int64) * 2)
                          .item<int64_t>();
    if (f == 3) throw ValueError("bins must be monotonically increasing or decreasing");
    decreasing = f == 2;
  }
  const char* side = right ? "left" : "right";
  if (!decreasing) return searchsorted(bins, x, side);
  return n - searchsorted(flip(bins), x, side);
}

}  // namespace cufuse
