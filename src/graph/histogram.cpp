// src/graph/histogram.cpp: bincount, histogram, histogram_bin_edges and histogram2d
// (cufuse/statistics.hpp) as scatter-adds: the bin of each element (histogram_bins.cpp) and
// the input's producer are computed inside the one kernel that adds into the counters. What
// NumPy reads off the data before counting (bincount's length and its check for negative
// entries, an autodetected range) is one reduction kernel and one value read back.
#include <fmt/format.h>

#include "cufuse/creation.hpp"
#include "cufuse/ops.hpp"
#include "cufuse/statistics.hpp"
#include "graph/histogram_bins.hpp"

namespace cufuse {

using detail::BinEdges;

Array bincount(const Array& x, const std::optional<Array>& weights, int64_t minlength) {
  if (!x.defined() || (weights && !weights->defined())) throw ValueError("bincount: an Array handle is empty");
  if (minlength < 0) throw ValueError("'minlength' must not be negative");
  detail::require_values(x, "bincount");
  if (x.ndim() == 0) throw ValueError("object of too small depth for desired array");
  if (x.ndim() > 1) throw ValueError("object too deep for desired array");
  const DType t = x.dtype();
  if (!is_integer(t) && !is_bool(t))
    throw TypeError(fmt::format("Cannot cast array data from dtype('{}') to dtype('int64') according to the rule 'safe'",
                                name(t)));
  const DType rt = weights ? DType::Float64 : DType::Int64;
  const int64_t len = x.size();
  if (len == 0) return zeros(Shape{minlength}, rt);
  // NumPy casts to intp (uint64 wraps). The cast is made again after the read-back: an Array
  // holding it then would be written out by the evaluation of min and max.
  Array mn = min(x.astype(DType::Int64)), mx = max(x.astype(DType::Int64));
  eval_all({mn, mx});
  const Array xi = x.astype(DType::Int64);
  if (mn.item<int64_t>() < 0) throw ValueError("'list' argument must have no negative elements");
  if (weights && weights->size() != len) throw ValueError("The weights and list don't have the same length.");
  const int64_t n = std::max(mx.item<int64_t>() + 1, minlength);
  if (weights) return detail::scatter_add_into(n, rt, xi, weights->ravel().astype(DType::Float64), Array());
  return detail::scatter_add_into(n, rt, xi, Operand(int64_t(1)), Array());
}

namespace {

// np.histogram's _ravel_and_check_weights: bool data as uint8, weights of a's shape, raveled.
std::pair<Array, std::optional<Array>> ravel_checked(const Array& a_in, const std::optional<Array>& w) {
  if (!a_in.defined() || (w && !w->defined())) throw ValueError("histogram: an Array handle is empty");
  Array a = a_in.dtype() == DType::Bool ? a_in.astype(DType::UInt8) : a_in;
  std::optional<Array> wr;
  if (w) {
    if (!(w->shape() == a.shape())) throw ValueError("weights should have the same shape as a.");
    wr = w->ravel();
  }
  return {a.ravel(), wr};
}

// The sums of `weights` (or counts) per bin, in NumPy's result dtype: int64 counts; integer
// weights summed in 64 bits, float weights in float64 (NumPy's bincount), cast to theirs.
Array count_bins(int64_t nbins, const detail::BinIndex& bi, const std::optional<Array>& w) {
  if (!w) return detail::scatter_add_into(nbins, DType::Int64, bi.bin, Operand(int64_t(1)), bi.keep);
  const DType wt = w->dtype();
  const DType acc = is_float(wt) ? DType::Float64 : is_unsigned_int(wt) ? DType::UInt64 : DType::Int64;
  Array h = detail::scatter_add_into(nbins, acc, bi.bin, w->astype(acc), bi.keep);
  return h.astype(wt);
}

}  // namespace

Histogram histogram(const Array& a_in, const Bins& bins, std::optional<Range> range, const std::optional<Array>& weights,
                    bool density) {
  auto [a, w] = ravel_checked(a_in, weights);
  detail::require_values(a, "histogram");
  const BinEdges e = detail::bin_edges(a, bins, range);
  Array hist = e.nbins == 0 ? zeros(Shape{0}, w ? w->dtype() : DType::Int64)
                            : count_bins(e.nbins, detail::bin_index(a, e), w);
  if (density) {
    const Array db = subtract(e.edges.index({slice(1, none)}), e.edges.index({slice(none, -1)}));
    hist = true_divide(true_divide(hist, db), sum(hist));
  }
  return {hist, e.edges};
}

Array histogram_bin_edges(const Array& a_in, const Bins& bins, std::optional<Range> range,
                          const std::optional<Array>& weights) {
  auto [a, w] = ravel_checked(a_in, weights);
  return detail::bin_edges(a, bins, range).edges;
}

namespace {

// histogramdd's edges of one sample column: a linspace (no dtype: its computing dtype) over
// the outer edges, or the given array, checked.
Array dd_edges(const Array& col, const Bins& b, const std::optional<Range>& range, int i) {
  if (b.is_count() || b.edges().ndim() == 0) {
    const int64_t n = b.is_count() ? b.count() : b.edges().item_scalar().to_int64();
    if (n < 1) throw ValueError(fmt::format("`bins[{}]` must be positive, when an integer", i));
    auto [first, last] = detail::outer_edges(col, range);
    return detail::linspace_like_numpy(first, last, n + 1, std::nullopt);
  }
  const Array& e = b.edges();
  if (!e.defined()) throw ValueError("histogram2d: the bins' Array handle is empty");
  detail::check_edges(e, fmt::format("`bins[{}]` must be a scalar or 1d array", i),
                      fmt::format("`bins[{}]` must be monotonically increasing, when an array", i));
  return e;
}

// histogramdd's bin of each value along one dimension: searchsorted(edges, v, "right"), less
// one on the last edge; 0 and len(edges) are the outlier bins.
Array dd_count(const Array& edges, const Array& col) {
  const Array c = detail::count_le(edges, col);
  return subtract(c, equal(col, edges.index({Index(edges.size() - 1)})).astype(DType::Int64));
}

}  // namespace

Histogram2d histogram2d(const Array& x, const Array& y, const Bins& xbins, std::optional<Bins> ybins,
                        std::optional<std::pair<Range, Range>> range, const std::optional<Array>& weights,
                        bool density) {
  if (!x.defined() || !y.defined() || (weights && !weights->defined()))
    throw ValueError("histogram2d: an Array handle is empty");
  detail::require_values(x, "histogram2d");
  detail::require_values(y, "histogram2d");
  if (x.ndim() != 1 || y.ndim() != 1) throw ValueError("histogram2d: x and y must be 1-D");
  if (x.size() != y.size()) throw ValueError("x and y must have the same length.");
  const DType st = promote_types(x.dtype(), y.dtype());  // np.array([x, y])'s dtype
  const Array xs = x.astype(st), ys = y.astype(st);
  const Bins& yb = ybins ? *ybins : xbins;
  std::optional<Range> rx, ry;
  if (range) {
    rx = range->first;
    ry = range->second;
  }
  const Array ex = dd_edges(xs, xbins, rx, 0), ey = dd_edges(ys, yb, ry, 1);
  const int64_t nx = ex.size() - 1, ny = ey.size() - 1;
  if (weights && weights->size() != x.size()) throw ValueError("The weights and list don't have the same length.");
  Array hist;
  if (nx <= 0 || ny <= 0) {
    hist = zeros(Shape{std::max<int64_t>(nx, 0), std::max<int64_t>(ny, 0)}, DType::Float64);
  } else {
    const Array cx = dd_count(ex, xs), cy = dd_count(ey, ys);
    const Array keep = logical_and(logical_and(greater_equal(cx, 1), less_equal(cx, nx)),
                                   logical_and(greater_equal(cy, 1), less_equal(cy, ny)));
    const Array bin = clip(add(multiply(subtract(cx, 1), ny), subtract(cy, 1)), 0, nx * ny - 1);
    const Array flat = weights ? detail::scatter_add_into(nx * ny, DType::Float64, bin, weights->ravel().astype(DType::Float64), keep)
                               : detail::scatter_add_into(nx * ny, DType::Int64, bin, Operand(int64_t(1)), keep);
    hist = flat.astype(DType::Float64).reshape(Shape{nx, ny});
  }
  if (density) {
    const Array s = sum(hist);
    const Array dx = subtract(ex.index({slice(1, none)}), ex.index({slice(none, -1)}));
    const Array dy = subtract(ey.index({slice(1, none)}), ey.index({slice(none, -1)}));
    hist = true_divide(true_divide(true_divide(hist, dx.reshape(Shape{nx, 1})), dy.reshape(Shape{1, ny})), s);
  }
  return {hist, ex, ey};
}

}  // namespace cufuse
