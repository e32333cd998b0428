// src/graph/histogram_bins.hpp: NumPy's bin edges and each value's bin, as lazy expressions
// (src/graph/histogram_bins.cpp), shared by histogram, histogram_bin_edges and histogram2d
// (src/graph/histogram.cpp).
#pragma once
#include <optional>

#include "cufuse/array.hpp"
#include "cufuse/statistics.hpp"

namespace cufuse::detail {

// The edges of a histogram of the 1-D array `a` and what NumPy's index formula needs.
struct BinEdges {
  Array edges;            // nbins + 1, NumPy's dtype (a linspace's or the given array's)
  int64_t nbins = 0;
  bool uniform = false;   // equal bins from a count: NumPy's closed-form index, corrected by the edges
  DType bin_type = DType::Float64;
  // uniform only: (t - first) / denom * nbins, t = a as bin_type; NumPy's weak (range given)
  // or strong (read from the data) scalars, so the arithmetic runs in NumPy's dtypes.
  Scalar first, last, denom;
  bool range_given = false;  // values outside [first, last] are dropped (else none are)
};

// ValueError where `a` is (or reads) a placeholder: counting needs the values (what = the
// function's name).
void require_values(const Array& a, const char* what);
// np.histogram's _get_outer_edges: the given range checked, or the data's min and max (one
// read-back; ValueError where not finite), widened by 0.5 each way where equal. As NumPy
// returns them: weak C++ numbers for a range or an empty a, strong scalars of a's dtype else.
std::pair<Scalar, Scalar> outer_edges(const Array& a, const std::optional<Range>& range);
// NumPy's np.linspace(first, last, num) in its computing dtype (float64 for weak or integer
// ends, else theirs), cast to `out` (nullopt: that dtype).
Array linspace_like_numpy(const Scalar& first, const Scalar& last, int64_t num, std::optional<DType> out);
// np.histogram's _get_bin_edges for the 1-D a (bool already made uint8): the count's linspace
// over the outer edges, or the given edges checked.
BinEdges bin_edges(const Array& a, const Bins& bins, const std::optional<Range>& range);
// Edges given as an array: checked 1-D and non-decreasing (one bool read back).
void check_edges(const Array& edges, const std::string& what_1d, const std::string& what_monotonic);
// The bin of each element of a (1-D, as the histogram reads it) and whether it is counted:
// `bin` int64 in [0, nbins), `keep` bool (null Array where every element counts).
struct BinIndex {
  Array bin, keep;
};
BinIndex bin_index(const Array& a, const BinEdges& e);
// searchsorted(edges, t, side="right") (1-D sorted edges, any t), as fused binary-search steps.
Array count_le(const Array& edges, const Array& t);
// edges[idx] with idx in range by construction (no bounds check).
Array gather_1d(const Array& v, const Array& idx);
// zeros(n, t) with `value` (broadcast over idx) added at idx where keep holds: one scatter-add
// kernel (counters privatized in shared memory where they fit).
Array scatter_add_into(int64_t n, DType t, const Array& idx, const Operand& value, const Array& keep);

}  // namespace cufuse::detail
