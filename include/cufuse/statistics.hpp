// cufuse/statistics.hpp: NumPy 2's statistics and calculus helpers: counts and histograms
// (bincount, histogram, histogram_bin_edges, histogram2d), weighted and NaN-ignoring moments
// (average, cov, corrcoef, nanvar, nanstd, nanprod, nanargmax, nanargmin), differences and
// integrals (diff, ediff1d, gradient, trapezoid, cumulative_sum), with NumPy's names,
// semantics, result dtypes and errors.
//
// How they run:
//   - diff, ediff1d, gradient, trapezoid, cumulative_sum, average, nanvar, ... are composites
//     of the lazy ops (slices, concatenate, reductions): they fuse with what feeds them and
//     what reads them (diff(a * 2 + b) is one kernel; trapezoid(y) one reduction kernel).
//   - cov and corrcoef center the rows (one fused kernel) and take X @ X.T on cuBLAS; the
//     product's summation order is cuBLAS's, not NumPy's BLAS's (float results agree to
//     rounding).
//   - bincount and histogram are scatter-adds (cufuse/indexing.hpp's add_at): one kernel over
//     the input computing each element's bin (NumPy's edge rule: bins half-open [e_i, e_i+1),
//     the last one closed, values outside the range and NaN ignored) with the input's
//     producer fused into it. Where the counters fit in shared memory (48 KB) each block
//     counts privately and merges into global memory once at the end. Integer counts are exact
//     and deterministic. A float weights' sum (bincount and histogram weights accumulate in
//     float64, as NumPy's bincount) is rounded in the order the GPU adds them in: it can
//     differ from run to run in its last bits.
//   - Shapes that depend on the data read ONE value back: bincount's length (max(x) + 1,
//     with the check for negative entries in the same reduction), histogram's range when none
//     is given (min and max), the monotonicity check of explicit bin edges.
// Errors as NumPy's: ValueError for negative bincount entries, bins < 1, edges that decrease,
// a range whose min exceeds its max or that is not finite; TypeError for a non-integer
// bincount input. Where NumPy raises ZeroDivisionError (average's weights summing to zero)
// cufuse raises ValueError with NumPy's message.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse {

// ------------------------------------------------------------------ counting
// Counts of each value of a non-negative 1-D integer array x (length max(x) + 1, at least
// minlength): int64, or float64 sums of `weights` (x's shape) when given.
Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt, int64_t minlength = 0);

// Histogram bins: a count of equal-width bins over the range, or the bin edges (1-D,
// non-decreasing).
class Bins {
 public:
  Bins(int64_t count = 10) : count_(count) {}  // NOLINT
  Bins(int count) : count_(count) {}           // NOLINT
  Bins(const Array& edges) : edges_(edges) {}  // NOLINT
  bool is_count() const { return !edges_.has_value(); }
  int64_t count() const { return count_; }
  const Array& edges() const { return *edges_; }

 private:
  int64_t count_ = 10;
  std::optional<Array> edges_;
};
using Range = std::pair<double, double>;

struct Histogram {
  Array hist;       // int64 counts, or weights' dtype sums, or float64 densities
  Array bin_edges;  // bins + 1 edges
};
// np.histogram of a.ravel(). density: hist / (bin width * total) (float).
Histogram histogram(const Array& a, const Bins& bins = 10, std::optional<Range> range = std::nullopt,
                    const std::optional<Array>& weights = std::nullopt, bool density = false);
Array histogram_bin_edges(const Array& a, const Bins& bins = 10, std::optional<Range> range = std::nullopt,
                          const std::optional<Array>& weights = std::nullopt);

struct Histogram2d {
  Array hist;  // float64 (nx, ny)
  Array xedges, yedges;
};
// np.histogram2d of two 1-D arrays of one length: bins for x and for y (one Bins: both).
Histogram2d histogram2d(const Array& x, const Array& y, const Bins& xbins = 10, std::optional<Bins> ybins = std::nullopt,
                        std::optional<std::pair<Range, Range>> range = std::nullopt,
                        const std::optional<Array>& weights = std::nullopt, bool density = false);

// ------------------------------------------------------------------ moments
// The weighted mean along axis (weights: a's shape, or 1-D along a single axis).
Array average(const Array& a, AxisArg axis = {}, const std::optional<Array>& weights = std::nullopt,
              bool keepdims = false);
// average(..., returned=True): {average, the sum of the weights} (broadcast to the average's shape).
std::pair<Array, Array> average_returned(const Array& a, AxisArg axis = {}, const std::optional<Array>& weights = std::nullopt,
                                         bool keepdims = false);
// Covariance of the variables (rows when rowvar) of m (and y, stacked below); ddof defaults
// to 1 (0 when bias). float64 unless given a dtype (NumPy: result_type(m, float64)).
Array cov(const Array& m, const std::optional<Array>& y = std::nullopt, bool rowvar = true, bool bias = false,
          std::optional<int64_t> ddof = std::nullopt, std::optional<DType> dtype = std::nullopt);
// Pearson correlation coefficients, clipped to [-1, 1].
Array corrcoef(const Array& x, const std::optional<Array>& y = std::nullopt, bool rowvar = true,
               std::optional<DType> dtype = std::nullopt);
// Variance / standard deviation ignoring NaNs (a slice of only NaNs, or with count <= ddof: NaN).
Array nanvar(const Array& a, AxisArg axis = {}, int ddof = 0, bool keepdims = false,
             std::optional<DType> dtype = std::nullopt);
Array nanstd(const Array& a, AxisArg axis = {}, int ddof = 0, bool keepdims = false,
             std::optional<DType> dtype = std::nullopt);
// Product treating NaN as 1.
Array nanprod(const Array& a, AxisArg axis = {}, bool keepdims = false, std::optional<DType> dtype = std::nullopt);
// argmax / argmin ignoring NaNs; ValueError "All-NaN slice encountered" (one value read back).
Array nanargmax(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array nanargmin(const Array& a, std::optional<int> axis = std::nullopt, bool keepdims = false);

// ------------------------------------------------------------------ differences and integrals
// The n-th discrete difference along axis (bool: not_equal), after joining prepend / append
// (scalars or arrays, broadcast to a's shape with 1 along axis).
Array diff(const Array& a, int n = 1, int axis = -1, const std::optional<Operand>& prepend = std::nullopt,
           const std::optional<Operand>& append = std::nullopt);
// Differences of a.ravel(), with to_begin / to_end (cast same_kind to a's dtype) joined.
Array ediff1d(const Array& ary, const std::optional<Operand>& to_end = std::nullopt,
              const std::optional<Operand>& to_begin = std::nullopt);
// Second-order central differences inside, one-sided (edge_order 1 or 2) at the ends, along
// each axis (all when none): one array per axis. spacing: none (1), one value for every axis,
// or one per axis, each a scalar or a 1-D array of coordinates.
std::vector<Array> gradient(const Array& f, const std::vector<Operand>& spacing = {}, AxisArg axis = {},
                            int edge_order = 1);
// Trapezoid rule along axis, with sample points x (1-D along axis, or y's shape) or spacing dx.
Array trapezoid(const Array& y, const std::optional<Array>& x = std::nullopt, double dx = 1.0, int axis = -1);
// NumPy 2's cumulative_sum: axis required past 1-D; include_initial prepends a zero.
Array cumulative_sum(const Array& x, std::optional<int> axis = std::nullopt, std::optional<DType> dtype = std::nullopt,
                     bool include_initial = false);

}  // namespace cufuse
