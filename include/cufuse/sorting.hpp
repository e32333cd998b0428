// cufuse/sorting.hpp: sorting, searching, sets and order statistics, NumPy's names, semantics,
// dtypes and errors (every real dtype, bool, float16 and bfloat16 included).
//
// Order: NumPy's. NaNs sort after +inf (any sign, any payload; a sorted NaN comes back as the
// dtype's default quiet NaN); argsort is always stable (radix sort), so equal keys, -0.0 and
// 0.0 included, keep their order. sort() of values alone puts -0.0 just before 0.0 (NumPy's
// default sort is not stable, so either order is one of its answers). complex64/complex128 sort
// in NumPy's complex order: by real part, then imaginary part; values with a NaN imaginary
// part next (by real part), then a NaN real part (by imaginary part), then NaN in both; on the
// device three stable sorts of real keys and a gather (library_build/sorting.cpp).
//
// On the device, sort/argsort are one library node (CUB's radix sort, segmented along the
// axis, between generated key-loading and store kernels); the functions built on it (partition,
// lexsort, unique and the sets, median, percentile, quantile) add fused elementwise work, and
// those whose output shape depends on the data (unique, the sets, digitize's check) read back
// one number, as x[mask] does.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/reduce.hpp"

namespace cufuse {

// --------------------------------------------------------------------------- sorting
// axis = std::nullopt sorts the flattened array (NumPy's axis=None).
Array sort(const Array& a, std::optional<int> axis = -1);
// `stable` is accepted for NumPy's signature; every argsort here is stable.
Array argsort(const Array& a, std::optional<int> axis = -1, bool stable = true);
// Any kth (negative ones count from the end) is in its sorted place, smaller elements before,
// larger after: here the whole axis is sorted, which is one such answer.
Array partition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis = -1);
Array argpartition(const Array& a, const std::vector<int64_t>& kth, std::optional<int> axis = -1);
inline Array partition(const Array& a, int64_t kth, std::optional<int> axis = -1) {
  return partition(a, std::vector<int64_t>{kth}, axis);
}
inline Array argpartition(const Array& a, int64_t kth, std::optional<int> axis = -1) {
  return argpartition(a, std::vector<int64_t>{kth}, axis);
}
// Indirect stable sort on several keys, the LAST key primary (NumPy's lexsort); keys of one shape.
Array lexsort(const std::vector<Array>& keys, int axis = -1);
// keys as the rows of one array (keys[i] along its first axis).
Array lexsort(const Array& keys, int axis = -1);
// sort(a, axis=0) (NumPy removed msort in 2.0; kept under its old name).
Array msort(const Array& a);

// ------------------------------------------------------------------------- searching
// Insertion points of v into the sorted 1-D a (or a sorted by `sorter`): int64 of v's shape.
Array searchsorted(const Array& a, const Array& v, std::string_view side = "left",
                   const std::optional<Array>& sorter = std::nullopt);
// The bin of each x: bins monotonically increasing or decreasing (read back and checked).
Array digitize(const Array& x, const Array& bins, bool right = false);

// ------------------------------------------------------------------------------ sets
// NumPy 2: NaNs are one unique value (equal_nan=True). The arrays not asked for stay empty
// (undefined handles). indices: the first occurrence of each value; inverse: a's shape (the
// flattened shape with axis=None), so values[inverse] rebuilds a; counts: int64.
struct UniqueResult {
  Array values, indices, inverse, counts;
};
UniqueResult unique(const Array& a, bool return_index = false, bool return_inverse = false, bool return_counts = false,
                    std::optional<int> axis = std::nullopt);
// The sorted unique values (NumPy 2's unique_values).
Array unique_values(const Array& a);
Array isin(const Array& element, const Array& test_elements, bool assume_unique = false, bool invert = false);
Array intersect1d(const Array& a, const Array& b, bool assume_unique = false);
Array union1d(const Array& a, const Array& b);
Array setdiff1d(const Array& a, const Array& b, bool assume_unique = false);
Array setxor1d(const Array& a, const Array& b, bool assume_unique = false);

// ------------------------------------------------------------------- order statistics
// method: "linear" (default), "lower", "higher", "midpoint", "nearest", "inverted_cdf",
// "averaged_inverted_cdf", "closest_observation", "interpolated_inverted_cdf", "hazen",
// "weibull", "median_unbiased", "normal_unbiased". q in [0, 1] (quantile) or [0, 100]
// (percentile); a vector q puts its axis first in the result. Results are float64 for
// integer and bool input, else the input's float dtype (methods that pick an element keep
// the input's dtype, as NumPy's). A NaN in a reduced row makes that result NaN; the nan*
// forms skip NaNs (an all-NaN row gives NaN).
Array median(const Array& a, AxisArg axis = {}, bool keepdims = false);
Array quantile(const Array& a, double q, AxisArg axis = {}, std::string_view method = "linear", bool keepdims = false);
Array quantile(const Array& a, const std::vector<double>& q, AxisArg axis = {}, std::string_view method = "linear",
               bool keepdims = false);
Array percentile(const Array& a, double q, AxisArg axis = {}, std::string_view method = "linear", bool keepdims = false);
Array percentile(const Array& a, const std::vector<double>& q, AxisArg axis = {}, std::string_view method = "linear",
                 bool keepdims = false);
Array nanmedian(const Array& a, AxisArg axis = {}, bool keepdims = false);
Array nanquantile(const Array& a, double q, AxisArg axis = {}, std::string_view method = "linear",
                  bool keepdims = false);
Array nanquantile(const Array& a, const std::vector<double>& q, AxisArg axis = {}, std::string_view method = "linear",
                  bool keepdims = false);
Array nanpercentile(const Array& a, double q, AxisArg axis = {}, std::string_view method = "linear",
                    bool keepdims = false);
Array nanpercentile(const Array& a, const std::vector<double>& q, AxisArg axis = {},
                    std::string_view method = "linear", bool keepdims = false);

}  // namespace cufuse
