// src/library_build/sets.cpp: unique (flattened, or along an axis), unique_values, isin,
// intersect1d, union1d, setdiff1d, setxor1d (cufuse/sorting.hpp), as NumPy 2 computes them:
// a sort, a mask of the first element of each run of equal values (NaNs one run), and the
// positions of the mask's True elements read back once (flatnonzero: one count), from which
// the values, first indices and counts are gathered and the inverse scattered.
// Flattened unique of integers (and bools) whose range max - min + 1 is at most the element
// count is counted instead of sorted (`counted_unique`): min and max read back, one
// scatter-add of each element into its value's counter, the present values found by
// flatnonzero of the counters (one count read back), first indices by a scatter-min of the
// positions, the inverse a gather of the counters' running ranks. Same results as the sort,
// without its passes over the data (SR5: unique of int32[2^26] with 2^16 values).
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/error.hpp"
#include "cufuse/indexing.hpp"
#include "cufuse/manipulation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/reduce.hpp"
#include "cufuse/sorting.hpp"
#include "graph/histogram_bins.hpp"
#include "graph/manip_support.hpp"
#include "library_build/sort_support.hpp"

namespace cufuse {

namespace {

using detail::require_defined;

// s[1:] != s[:-1] along axis 0 of a 1-D s, NaN equal to NaN where `equal_nan` (NumPy 2's unique).
Array differs_from_previous(const Array& s, bool equal_nan) {
  const int64_t n = s.shape(0);
  const Array hi = s.index({slice(1, n)}), lo = s.index({slice(0, n - 1)});
  Array ne = not_equal(hi, lo);
  if (equal_nan && (is_float(s.dtype()) || is_complex(s.dtype()))) ne = logical_and(ne, logical_not(logical_and(isnan(hi), isnan(lo))));
  return ne;
}

// [True] + rest: the first element of each run.
Array run_starts(const Array& ne) { return concatenate({ones(Shape{1}, DType::Bool), ne}); }

// counts of the runs starting at `starts` (int64, sorted) in n elements.
Array run_counts(const Array& starts, int64_t n) {
  const int64_t k = starts.size();
  return concatenate({starts.index({slice(1, k)}), full(Shape{1}, Scalar(n), DType::Int64)}) - starts;
}

// The inverse: for each original position perm[i], the run number of sorted position i.
Array inverse_of(const Array& starts_mask, const Array& perm, int64_t n) {
  Array run = cumsum(starts_mask, 0, DType::Int64) - 1;
  Array inv = zeros(Shape{n}, DType::Int64);
  put(inv, perm, run);
  return inv;
}

// The counted form of unique_flat (see the file comment), or false where it does not apply:
// a non-integer dtype, or a range of values wider than the element count.
bool counted_unique(const Array& a, const Array& flat, bool ri, bool rinv, bool rc, UniqueResult& r) {
  const DType t = flat.dtype();
  if (!is_integer(t) && !is_bool(t)) return false;
  const int64_t n = flat.size();
  // The extremes, read back together; uint64 in its own type (values past int64's range).
  // (The int64 cast is made again after the read-back: an Array holding it then would be
  // written out by the evaluation of min and max.)
  const bool u64 = t == DType::UInt64;
  auto wide = [&] { return u64 ? flat : flat.astype(DType::Int64); };
  Array mn = min(wide()), mx = max(wide());
  eval_all({mn, mx});
  uint64_t span = 0;  // max - min, exact in 64 bits for every integer dtype
  Array off;          // each element's counter, int64 in [0, span]
  Scalar lo;
  if (u64) {
    const uint64_t l = mn.item<uint64_t>(), h = mx.item<uint64_t>();
    span = h - l;
    lo = Scalar(l);
    if (span >= static_cast<uint64_t>(n)) return false;
    off = subtract(flat, lo).astype(DType::Int64);
  } else {
    const int64_t l = mn.item<int64_t>(), h = mx.item<int64_t>();
    span = static_cast<uint64_t>(h) - static_cast<uint64_t>(l);
    lo = Scalar(l);
    if (span >= static_cast<uint64_t>(n)) return false;
    off = subtract(wide(), lo);
  }
  const int64_t R = static_cast<int64_t>(span) + 1;
  const Array counts = detail::scatter_add_into(R, DType::Int64, off, Operand(int64_t(1)), Array());
  const Array present = flatnonzero(counts);  // the second read-back
  r.values = (u64 ? add(present.astype(DType::UInt64), lo) : add(present, lo)).astype(t);
  if (rc) r.counts = take(counts, present);
  if (ri) {
    Array first = full(Shape{R}, Scalar(n), DType::Int64);
    minimum_at(first, off, arange(Scalar(int64_t(0)), Scalar(n)));
    r.indices = take(first, present);
  }
  if (rinv) r.inverse = take(cumsum(greater(counts, 0), 0, DType::Int64) - 1, off).reshape(a.shape());
  return true;
}

UniqueResult unique_flat(const Array& a, bool ri, bool rinv, bool rc) {
  const Array flat = a.ravel();
  const int64_t n = flat.size();
  UniqueResult r;
  if (n == 0) {
    r.values = zeros(Shape{0}, a.dtype());
    if (ri) r.indices = zeros(Shape{0}, DType::Int64);
    if (rinv) r.inverse = zeros(a.shape(), DType::Int64);
    if (rc) r.counts = zeros(Shape{0}, DType::Int64);
    return r;
  }
  if (counted_unique(a, flat, ri, rinv, rc, r)) return r;
  // With indices asked, the values are gathered through them (each keeps its bits: -0.0 as
  // the first occurrence of zero, as NumPy's stable sort gives); else sorted directly.
  const bool need_perm = ri || rinv;
  detail::Sorted s = detail::sort_along(flat, 0, !need_perm, need_perm, "unique");
  if (need_perm) s.values = take(flat, s.indices);
  const Array mask = run_starts(differs_from_previous(s.values, true));
  const Array starts = flatnonzero(mask);  // the one read-back
  r.values = take(s.values, starts);
  if (ri) r.indices = take(s.indices, starts);
  if (rinv) r.inverse = inverse_of(mask, s.indices, n).reshape(a.shape());
  if (rc) r.counts = run_counts(starts, n);
  return r;
}

UniqueResult unique_axis(const Array& a, int axis, bool ri, bool rinv, bool rc) {
  // Rows along `axis`, compared lexicographically (the first column primary).
  const Array m = a.moveaxis(axis, 0);
  const int64_t n = m.shape(0);
  const int64_t cols = n == 0 ? 0 : m.size() / n;
  const Array rows = m.reshape(Shape{n, cols});
  UniqueResult r;
  Shape vshape = m.shape();
  if (n == 0) {
    r.values = zeros(a.shape(), a.dtype());
    if (ri) r.indices = zeros(Shape{0}, DType::Int64);
    if (rinv) r.inverse = zeros(Shape{0}, DType::Int64);
    if (rc) r.counts = zeros(Shape{0}, DType::Int64);
    return r;
  }
  Array perm;
  if (cols == 0) {
    perm = arange(Scalar(int64_t(0)), Scalar(n));
  } else {
    std::vector<Array> keys;
    for (int64_t c = cols - 1; c >= 0; --c) keys.push_back(rows.index({_, c}));
    perm = lexsort(keys, 0);
  }
  const Array srows = take(rows, perm, 0);
  Array ne = cols == 0 ? zeros(Shape{n - 1}, DType::Bool)
                       : any(not_equal(srows.index({slice(1, n)}), srows.index({slice(0, n - 1)})), 1);
  const Array mask = run_starts(ne);
  const Array starts = flatnonzero(mask);
  vshape[0] = starts.size();
  r.values = take(srows, starts, 0).reshape(vshape).moveaxis(0, axis);
  if (ri) r.indices = take(perm, starts);
  if (rinv) r.inverse = inverse_of(mask, perm, n);
  if (rc) r.counts = run_counts(starts, n);
  return r;
}

Array flat1d(const Array& a, const char* what) {
  require_defined(a, what);
  return a.ravel();
}

}  // namespace

UniqueResult unique(const Array& a, bool return_index, bool return_inverse, bool return_counts,
                    std::optional<int> axis) {
  require_defined(a, "unique");
  if (!axis) return unique_flat(a, return_index, return_inverse, return_counts);
  const int ax = detail::manip_axis(*axis, a.ndim(), "unique");
  return unique_axis(a, ax, return_index, return_inverse, return_counts);
}

Array unique_values(const Array& a) { return unique(a).values; }

Array isin(const Array& element, const Array& test_elements, bool assume_unique, bool invert) {
  require_defined(element, "isin");
  require_defined(test_elements, "isin");
  const DType t = promote_types(element.dtype(), test_elements.dtype());
  const Array e = element.astype(t);
  const Array ts = sort(test_elements.ravel().astype(t));
  const int64_t n = ts.size();
  Array found;
  if (n == 0) {
    found = zeros(element.shape(), DType::Bool);
  } else {
    const Array at = minimum(searchsorted(ts, e), n - 1);
    found = equal(take(ts, at), e);
  }
  return invert ? logical_not(found) : found;
}

Array intersect1d(const Array& a, const Array& b, bool assume_unique) {
  Array x = flat1d(a, "intersect1d"), y = flat1d(b, "intersect1d");
  if (!assume_unique) x = unique_values(x), y = unique_values(y);
  const Array aux = sort(concatenate({x, y}));
  const int64_t n = aux.size();
  if (n == 0) return aux;
  const Array lo = aux.index({slice(0, n - 1)});
  return masked_select(lo, equal(aux.index({slice(1, n)}), lo));
}

Array union1d(const Array& a, const Array& b) {
  return unique_values(concatenate({flat1d(a, "union1d"), flat1d(b, "union1d")}));
}

Array setdiff1d(const Array& a, const Array& b, bool assume_unique) {
  Array x = flat1d(a, "setdiff1d");
  if (!assume_unique) x = unique_values(x);
  return masked_select(x, isin(x, flat1d(b, "setdiff1d"), true, true));
}

Array setxor1d(const Array& a, const Array& b, bool assume_unique) {
  Array x = flat1d(a, "setxor1d"), y = flat1d(b, "setxor1d");
  if (!assume_unique) x = unique_values(x), y = unique_values(y);
  const Array aux = sort(concatenate({x, y}));
  const int64_t n = aux.size();
  if (n == 0) return aux;
  const Array t = ones(Shape{1}, DType::Bool);
  const Array flag = concatenate({t, differs_from_previous(aux, false), t});
  return masked_select(aux, logical_and(flag.index({slice(1, n + 1)}), flag.index({slice(0, n)})));
}

}  // namespace cufuse
