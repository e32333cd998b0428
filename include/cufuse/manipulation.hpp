// cufuse/manipulation.hpp: joining, splitting and rearranging arrays, by NumPy's names and
// with NumPy's semantics, dtype promotion and errors.
//
// All lazy, and all index arithmetic inside the kernels that produce and consume them:
//   - concatenate / stack / *stack select, by the output coordinate, which part an element
//     reads, each part's expression inlined: concatenate({a * 2, exp(b)}) * 3 is one kernel.
//     (Past 16 parts, each part is written into its place by a kernel of its own.)
//   - tile, repeat, roll, pad are index maps (src/graph/index_map.hpp) pushed down to the
//     leaves, so they fuse with what feeds them and what reads them.
//   - flip, fliplr, flipud, rot90 are strided views (negative strides), split and
//     array_split views (slices): no copy, no kernel of their own.
// Axes out of range are IndexError ("axis 2 is out of bounds for array of dimension 2", as
// NumPy's AxisError); shape mismatches ValueError naming the shapes.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "cufuse/array.hpp"
#include "cufuse/reduce.hpp"  // AxisArg

namespace cufuse {

// ------------------------------------------------------------------ joining
// axis = nullopt: the arrays are flattened first. dtype: the result's (NumPy's dtype=, with its
// default casting "same_kind": TypeError otherwise); by default the promotion of the inputs'.
Array concatenate(const std::vector<Array>& arrays, std::optional<int> axis = 0,
                  std::optional<DType> dtype = std::nullopt);
// Joins along a new axis (the arrays must have one shape).
Array stack(const std::vector<Array>& arrays, int axis = 0, std::optional<DType> dtype = std::nullopt);
Array vstack(const std::vector<Array>& arrays);         // along axis 0, 1-D arrays as rows
Array hstack(const std::vector<Array>& arrays);         // along axis 1 (axis 0 for 1-D arrays)
Array dstack(const std::vector<Array>& arrays);         // along axis 2, after atleast_3d
Array column_stack(const std::vector<Array>& arrays);   // 1-D arrays as columns, then hstack

// ------------------------------------------------------------------ splitting (views)
// Into `sections` equal parts (ValueError "array split does not result in an equal
// division" otherwise), or at the given indices.
std::vector<Array> split(const Array& a, int64_t sections, int axis = 0);
std::vector<Array> split(const Array& a, const std::vector<int64_t>& indices, int axis = 0);
// As split, but the first len % sections parts get one element more.
std::vector<Array> array_split(const Array& a, int64_t sections, int axis = 0);
std::vector<Array> array_split(const Array& a, const std::vector<int64_t>& indices, int axis = 0);
std::vector<Array> hsplit(const Array& a, int64_t sections);  // axis 1 (axis 0 for 1-D arrays)
std::vector<Array> hsplit(const Array& a, const std::vector<int64_t>& indices);
std::vector<Array> vsplit(const Array& a, int64_t sections);  // axis 0, at least 2-D
std::vector<Array> vsplit(const Array& a, const std::vector<int64_t>& indices);
std::vector<Array> dsplit(const Array& a, int64_t sections);  // axis 2, at least 3-D
std::vector<Array> dsplit(const Array& a, const std::vector<int64_t>& indices);

// ------------------------------------------------------------------ tiling and repeating
Array tile(const Array& a, const std::vector<int64_t>& reps);
// Each element `repeats` times, along `axis` (nullopt: of the flattened array).
Array repeat(const Array& a, int64_t repeats, std::optional<int> axis = std::nullopt);
// Element i repeats[i] times (repeats of length 1 broadcast).
Array repeat(const Array& a, const std::vector<int64_t>& repeats, std::optional<int> axis = std::nullopt);

// ------------------------------------------------------------------ rearranging
Array flip(const Array& a, AxisArg axis = {});  // all axes by default
Array fliplr(const Array& a);                   // axis 1
Array flipud(const Array& a);                   // axis 0
// Elements shifted by `shift` along `axis` (nullopt: of the flattened array, then reshaped).
Array roll(const Array& a, int64_t shift, std::optional<int> axis = std::nullopt);
// Several axes at once; a single shift or axis broadcasts against the other list.
Array roll(const Array& a, const std::vector<int64_t>& shift, const std::vector<int>& axis);
Array rot90(const Array& a, int k = 1, std::pair<int, int> axes = {0, 1});

// NumPy's pad: modes "constant", "edge", "reflect", "symmetric", "wrap". pad_width per axis
// as (before, after); one pair for every axis; one number for both sides of every axis.
Array pad(const Array& a, const std::vector<std::pair<int64_t, int64_t>>& pad_width,
          std::string_view mode = "constant", const Scalar& constant_value = 0);
Array pad(const Array& a, std::pair<int64_t, int64_t> pad_width, std::string_view mode = "constant",
          const Scalar& constant_value = 0);
Array pad(const Array& a, int64_t pad_width, std::string_view mode = "constant", const Scalar& constant_value = 0);

// ------------------------------------------------------------------ shapes
// Each array broadcast to the arrays' common shape (views).
std::vector<Array> broadcast_arrays(const std::vector<Array>& arrays);
Array atleast_1d(const Array& a);
Array atleast_2d(const Array& a);  // 1-D (n,) -> (1, n)
Array atleast_3d(const Array& a);  // (n,) -> (1, n, 1); (m, n) -> (m, n, 1)
std::vector<Array> atleast_1d(const std::vector<Array>& arrays);
std::vector<Array> atleast_2d(const std::vector<Array>& arrays);
std::vector<Array> atleast_3d(const std::vector<Array>& arrays);
// NumPy's free functions for Array's members.
inline Array moveaxis(const Array& a, int source, int destination) { return a.moveaxis(source, destination); }
inline Array swapaxes(const Array& a, int axis1, int axis2) { return a.swapaxes(axis1, axis2); }
inline Array expand_dims(const Array& a, int axis) { return a.expand_dims(axis); }
inline Array squeeze(const Array& a) { return a.squeeze(); }
inline Array squeeze(const Array& a, const Axes& axes) { return a.squeeze(axes); }

}  // namespace cufuse
