// cufuse/indexing.hpp: advanced indexing, masks and scatters, with NumPy's names, semantics,
// dtypes and errors.
//
// How they run:
//   - Gathers by index (take, take_along_axis, x[idx], x[{idx, _, 0}]) are index arithmetic
//     inside the generated kernels: lazy, and fused with what produces the array, the indices
//     and what consumes the result (take(exp(x), idx) * 2 is one kernel).
//   - Selections by mask (x[mask], nonzero, where(cond), argwhere, flatnonzero, extract,
//     compress) have a shape that depends on the data: one scan kernel (the mask's producer
//     fused into it) counts on the device, ONE integer is read back, and one more kernel
//     compacts (the selected values' producer fused into it), as CuPy does.
//   - Scatters (put, add_at, maximum_at, minimum_at, x[idx] = v) are one kernel over the
//     updates, writing the array in place, with the values' producers fused into it. They are
//     carried out when called (not lazily). add_at accumulates duplicates with atomics, so a
//     floating-point sum's rounding depends on the order the GPU adds them in (as
//     cupyx.scatter_add's); integer sums are exact. Plain assignment with duplicate indices
//     keeps one of the values (on the host backend the last, as NumPy).
//   - x[mask] = v and x[mask] += v are a fused where into x: no read-back.
//   - Negative indices count from the end. An index out of bounds is an IndexError naming it
//     and the axis ("index 7 is out of bounds for axis 0 with size 5"): on the host backend at
//     once; on the device the kernel records it and the error is thrown at the next
//     synchronization point (to_host, item, copy_to_host), before the result is read.
#pragma once
#include <optional>
#include <string_view>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

// ---- gathers (lazy, fused)
// The elements of a (flattened when axis is none) at `indices` along axis: the result's shape
// is a.shape[:axis] + indices.shape + a.shape[axis+1:]. indices: any integer dtype.
// mode (NumPy's): "raise" (an index out of bounds is an IndexError), "clip" (clipped into
// [0, n - 1], so negative indices give the first element) or "wrap" (taken modulo n); the
// indices are taken as int64 first, as NumPy's intp. Clip and wrap are elementwise ops on the
// indices, fused into the gather.
Array take(const Array& a, const Array& indices, std::optional<int> axis = std::nullopt, std::string_view mode = "raise");
// NumPy's take_along_axis: indices has a's ndim; along the other axes it broadcasts with a.
Array take_along_axis(const Array& a, const Array& indices, int axis);

// ---- selections by mask (count on the device, one integer read back, one compaction kernel)
// The indices of a's nonzero elements, one int64 array per dim (a 0-d a as a 1-d one).
std::vector<Array> nonzero(const Array& a);
// where(condition) with one argument: nonzero(condition).
std::vector<Array> where(const Array& condition);
// The indices of the nonzero elements as an int64 (count, ndim) array.
Array argwhere(const Array& a);
// The indices of the nonzero elements of a.ravel() (int64).
Array flatnonzero(const Array& a);
// The elements of a.ravel() where condition.ravel() is nonzero (a 1-D array of a's dtype).
Array extract(const Array& condition, const Array& a);
// The slices of a along axis (flattened when none) where the 1-D condition holds.
Array compress(const Array& condition, const Array& a, std::optional<int> axis = std::nullopt);
// x[mask]: the elements (or, for a mask over x's leading dims, the rows) where mask is True.
// A mask's shape must match x's leading dims (IndexError as NumPy's otherwise).
Array masked_select(const Array& x, const Array& mask);

// ---- scatters (one kernel, carried out now)
// a.flat[indices] = values (values broadcast / repeated to the indices' shape, cast to a's
// dtype as NumPy's unsafe put). mode: "raise", "clip" or "wrap" over a.size, as take's.
void put(Array& a, const Array& indices, const Operand& values, std::string_view mode = "raise");
// np.add.at(a, indices, values) along axis 0 (indices into a's first dim; values broadcast to
// indices.shape + a.shape[1:]): duplicates accumulate. Also maximum and minimum.
void add_at(Array& a, const Array& indices, const Operand& values);
void maximum_at(Array& a, const Array& indices, const Operand& values);
void minimum_at(Array& a, const Array& indices, const Operand& values);

}  // namespace cufuse
