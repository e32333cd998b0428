// src/graph/histogram_bins.cpp: NumPy's histogram edges and each value's bin as lazy
// expressions (src/graph/histogram_bins.hpp). Equal bins follow np.histogram's closed form
// ((t - first) / denom * nbins, truncated) in NumPy's dtypes, then its one-step correction
// against the edges themselves (edges[i] <= t < edges[i+1], the last bin closed), so a value
// lands where NumPy puts it even within an ulp of an edge. Given edges are searched with a
// fixed number of binary-search steps (searchsorted(edges, t, "right")), each a gather of the
// edges, all inline in the kernel that counts.
#include <cmath>

#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/ops.hpp"
#include "core/node.hpp"
#include "graph/gather.hpp"
#include "graph/histogram_bins.hpp"
#include "graph/indexing.hpp"
#include "graph/manip_support.hpp"

namespace cufuse::detail {

namespace {
// v rounded to dtype t (NumPy's scalar arithmetic in t: computing in double and rounding once
// is exact for + - * / of float16, bfloat16 and float32).
double in_dtype(double v, DType t) { return Scalar::typed(Scalar(v), t).to_double(); }
Scalar strong(double v, DType t) { return Scalar::typed(Scalar(v), t); }
}  // namespace

void require_values(const Array& a, const char* what) {
  const NodePtr& n = a.node();
  if (n->reads_placeholder || n->is_placeholder())
    throw ValueError(fmt::format("{} counts the array's values, and a placeholder has none: it needs an array with data",
                                 what));
}

std::pair<Scalar, Scalar> outer_edges(const Array& a, const std::optional<Range>& range) {
  if (range) {
    double first = range->first, last = range->second;
    if (first > last) throw ValueError("max must be larger than min in range parameter.");
    if (!std::isfinite(first) || !std::isfinite(last))
      throw ValueError(fmt::format("supplied range of [{}, {}] is not finite", first, last));
    if (first == last) {
      first -= 0.5;
      last += 0.5;
    }
    return {Scalar(first), Scalar(last)};
  }
  if (a.size() == 0) return {Scalar(int64_t(0)), Scalar(int64_t(1))};
  Array mn = min(a), mx = max(a);
  eval_all({mn, mx});
  Scalar first = mn.item_scalar(), last = mx.item_scalar();
  const DType t = a.dtype();
  if (is_float(t) && (!std::isfinite(first.to_double()) || !std::isfinite(last.to_double())))
    throw ValueError(fmt::format("autodetected range of [{}, {}] is not finite", first.to_double(), last.to_double()));
  const bool equal = is_float(t) ? first.to_double() == last.to_double() : first.to_int64() == last.to_int64();
  if (equal) {
    const DType w = is_float(t) ? t : DType::Float64;
    first = strong(first.to_double() - 0.5, w);
    last = strong(last.to_double() + 0.5, w);
  }
  return {first, last};
}

Array linspace_like_numpy(const Scalar& first, const Scalar& last, int64_t num, std::optional<DType> out) {
  // NumPy: dt = result_type(start, stop), inexact; delta = stop - start and step = delta / div
  // in dt; y = arange(num) * step + start; y[-1] = stop.
  const DType dt = (first.weak() || !is_float(first.dtype())) ? DType::Float64 : first.dtype();
  const double start = first.to_double(), stop = last.to_double();
  const int64_t div = num - 1;
  const double delta = in_dtype(stop - start, dt);
  const double step = div > 0 ? in_dtype(delta / static_cast<double>(div), dt) : 0.0;
  Array i = arange(Scalar(int64_t(0)), Scalar(num));
  Array y;
  if (step == 0.0 && div > 0) y = multiply(true_divide(i.astype(dt), div), strong(delta, dt));
  else y = multiply(i.astype(dt), strong(step, dt));
  y = add(y, strong(start, dt));
  if (div > 0) y = where(equal(i, div), strong(stop, dt), y);
  return out && *out != dt ? y.astype(*out) : y;
}

void check_edges(const Array& edges, const std::string& what_1d, const std::string& what_monotonic) {
  if (edges.ndim() != 1) throw ValueError(what_1d);
  if (edges.size() > 1 &&
      any(greater(edges.index({slice(none, -1)}), edges.index({slice(1, none)}))).item<bool>())
    throw ValueError(what_monotonic);
}

BinEdges bin_edges(const Array& a, const Bins& bins, const std::optional<Range>& range) {
  BinEdges e;
  if (!bins.is_count()) {
    const Array& edges = bins.edges();
    if (!edges.defined()) throw ValueError("histogram: the bins' Array handle is empty");
    if (edges.ndim() == 0) return bin_edges(a, Bins(edges.item_scalar().to_int64()), range);
    check_edges(edges, "`bins` must be 1d, when an array", "`bins` must increase monotonically, when an array");
    e.edges = edges;
    e.nbins = std::max<int64_t>(edges.size() - 1, 0);
    e.bin_type = edges.dtype();
    return e;
  }
  if (bins.count() < 1) throw ValueError("`bins` must be positive, when an integer");
  auto [first, last] = outer_edges(a, range);
  e.uniform = true;
  e.nbins = bins.count();
  e.bin_type = is_float(a.dtype()) ? a.dtype() : DType::Float64;
  e.edges = linspace_like_numpy(first, last, e.nbins + 1, e.bin_type);
  e.range_given = range.has_value();
  e.first = first;
  e.last = last;
  // NumPy's norm_denom = _unsigned_subtract(last, first): a float64 scalar for weak ends and
  // integer data, else in the data's float dtype.
  if (first.weak()) {
    e.denom = strong(last.to_double() - first.to_double(), DType::Float64);
  } else if (!is_float(first.dtype())) {
    const uint64_t d = is_unsigned_int(first.dtype()) ? last.to_uint64() - first.to_uint64()
                                                      : static_cast<uint64_t>(last.to_int64()) - static_cast<uint64_t>(first.to_int64());
    e.denom = strong(static_cast<double>(d), DType::Float64);
  } else {
    e.denom = strong(in_dtype(last.to_double() - first.to_double(), first.dtype()), first.dtype());
  }
  return e;
}

Array gather_1d(const Array& v, const Array& idx) {
  GatherMove mv;
  mv.in = v.shape();
  mv.out = idx.shape();
  mv.iota_axis = {-1};
  mv.index = {idx.node()};
  mv.size.push_back(-1);
  mv.axis.push_back(0);
  return Array(apply_gather(node_for_view(v), mv));
}

Array count_le(const Array& edges, const Array& t) {
  const int64_t m = edges.size();
  Array lo = zeros(t.shape(), DType::Int64), hi = full(t.shape(), Scalar(m), DType::Int64);
  for (int64_t span = 1; span <= m; span *= 2) {  // ceil(log2(m + 1)) steps
    const Array active = less(lo, hi);
    const Array mid = minimum(right_shift(add(lo, hi), 1), m - 1);
    const Array le = logical_and(active, less_equal(gather_1d(edges, mid), t));
    const Array gt = logical_and(active, logical_not(le));
    lo = where(le, add(mid, 1), lo);
    hi = where(gt, mid, hi);
  }
  return lo;
}

BinIndex bin_index(const Array& a, const BinEdges& e) {
  const int64_t n = e.nbins;
  if (!e.uniform) {
    const Array c = count_le(e.edges, a);
    const Array keep = logical_and(greater_equal(c, 1), less_equal(a, e.edges.index({Index(n)})));
    return {clip(subtract(c, 1), 0, n - 1), keep};
  }
  Array keep;
  if (e.range_given)  // NumPy compares the data as it is with the range's (weak) ends
    keep = logical_and(greater_equal(a, e.first), less_equal(a, e.last));
  const Array t = a.astype(e.bin_type);
  Array f = multiply(true_divide(subtract(t, e.first), e.denom), n);
  if (keep.defined()) f = where(keep, f, 0);
  // The index arithmetic in int32 where every value (0 .. n) fits: half the instructions of
  // int64's on the device, where this per-element work, not the read, bounds H1's kernel.
  const DType it = n < (int64_t(1) << 30) ? DType::Int32 : DType::Int64;
  Array i = f.astype(it);
  i = clip(where(equal(i, n), n - 1, i), 0, n - 1);                        // indices[indices == n] -= 1
  // The edges in memory (n + 1 values, a tiny kernel of their own): each element reads its two
  // from the cache, where computing them inline (linspace's int-to-double, multiply-add,
  // double-to-float, twice) was most of H1's per-element instructions (H200: 0.370 -> 0.237 ms).
  // Evaluated here, when the histogram is built, not when its result is needed: the planner
  // fuses a gather's computed source into the gathering kernel, and has no rule yet that keeps
  // an expensive one in memory instead (then this eval goes).
  Array edges = e.edges;
  edges.eval();
  i = clip(subtract(i, less(t, gather_1d(edges, i)).astype(it)), 0, n - 1);  // decrement
  const Array inc = logical_and(greater_equal(t, gather_1d(edges, add(i, 1))), not_equal(i, n - 1));
  return {add(i, inc.astype(it)), keep};
}

Array scatter_add_into(int64_t n, DType t, const Array& idx, const Operand& value, const Array& keep) {
  Array out = zeros(Shape{n}, t);
  if (idx.size() == 0 || n == 0) return out;
  scatter(out, {idx.node()}, {0}, idx.shape(), value, ScatterModeArg::Add, keep.defined() ? keep.node() : nullptr);
  return out;
}

}  // namespace cufuse::detail
