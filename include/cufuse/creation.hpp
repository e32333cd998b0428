// cufuse/creation.hpp: making arrays: filled, ranges, from host data, placeholders.
// Filled arrays and ranges are lazy generators: they fuse into what consumes them.
#pragma once
#include <initializer_list>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cufuse/array.hpp"

namespace cufuse {

Array empty(const Shape& shape, DType dtype = f64);  // memory now, contents undefined
Array zeros(const Shape& shape, DType dtype = f64);
Array ones(const Shape& shape, DType dtype = f64);
// dtype defaults to the value's own: bool, int64, float64 (NumPy's choice for a Python scalar).
Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt);
Array empty_like(const Array& a, std::optional<DType> dtype = std::nullopt);
Array zeros_like(const Array& a, std::optional<DType> dtype = std::nullopt);
Array ones_like(const Array& a, std::optional<DType> dtype = std::nullopt);
Array full_like(const Array& a, const Scalar& value, std::optional<DType> dtype = std::nullopt);

// NumPy's arange: dtype int64 when all arguments are integers, else float64.
Array arange(const Scalar& stop);
Array arange(const Scalar& start, const Scalar& stop, const Scalar& step = 1,
             std::optional<DType> dtype = std::nullopt);
Array linspace(double start, double stop, int64_t num = 50, bool endpoint = true, DType dtype = f64);

// Host data in, copied to the current device (or host memory under the reference backend).
Array from_host(const void* data, DType dtype, const Shape& shape);
template <class T>
Array from_host(const std::vector<T>& v, std::optional<Shape> shape = std::nullopt) {
  Shape s = shape ? *shape : Shape{static_cast<int64_t>(v.size())};
  if (numel(s) != static_cast<int64_t>(v.size()))
    throw ValueError("from_host: " + std::to_string(v.size()) + " values cannot fill shape " + to_string(s));
  return from_host(v.data(), dtype_of<T>(), s);
}
template <class T>
Array from_host(const T* data, const Shape& shape) { return from_host(data, dtype_of<T>(), shape); }
template <class T>
Array array(std::initializer_list<T> values);  // cf::array({1.f, 2.f}): float32 (2,)
// Nested lists give an N-D array: cf::array({{1.f, 2.f}, {3.f, 4.f}}) is float32 (2, 2).
// Ragged nesting is a ValueError, as NumPy's "inhomogeneous shape".
template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows);
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes);
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> blocks);

// Matrices and grids (src/graph/creation_matrix.cpp): lazy index arithmetic over iota-like
// generators, so they fuse with what they feed (triu(a * 2) is one kernel).
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, DType dtype = f64);
Array identity(int64_t n, DType dtype = f64);
Array tri(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0, DType dtype = f64);
Array triu(const Array& a, int64_t k = 0);  // zero below the k-th diagonal (of the last two axes)
Array tril(const Array& a, int64_t k = 0);  // zero above it
// 1-D v: a 2-D array with v on the k-th diagonal; 2-D v: a view of its k-th diagonal.
Array diag(const Array& v, int64_t k = 0);
// Coordinate matrices; indexing "xy" (Cartesian, the first two axes swapped) or "ij".
std::vector<Array> meshgrid(const std::vector<Array>& xs, std::string_view indexing = "xy", bool sparse = false,
                            bool copy = true);
// base ** linspace(start, stop, num, endpoint), computed in float64 and cast to dtype.
Array logspace(double start, double stop, int64_t num = 50, bool endpoint = true, double base = 10.0,
               DType dtype = f64);

// An array with a dtype and shape and no data: for planning, tracing and dumping kernels.
// Evaluating something that reads a placeholder is an error.
Array placeholder(DType dtype, const Shape& shape);

namespace detail {
// Flattens nested initializer lists into `out`, recording the shape the first time each depth is
// seen and throwing ValueError (NumPy's inhomogeneous-shape message) on ragged nesting.
inline void nested_check(size_t n, int depth, Shape& shape) {
  if (depth == shape.ndim()) shape.push_back(static_cast<int64_t>(n));
  else if (shape[depth] != static_cast<int64_t>(n))
    throw ValueError("array: setting an array element with a sequence. The requested array has an inhomogeneous "
                     "shape after " + std::to_string(depth) + " dimensions (a list of " + std::to_string(n) +
                     " where the first had " + std::to_string(shape[depth]) + ")");
}
template <class H, class T>
void nested_flatten(std::initializer_list<T> l, int depth, Shape& shape, std::vector<H>& out) {
  nested_check(l.size(), depth, shape);
  out.insert(out.end(), l.begin(), l.end());
}
template <class H, class U>
void nested_flatten(std::initializer_list<std::initializer_list<U>> l, int depth, Shape& shape, std::vector<H>& out) {
  nested_check(l.size(), depth, shape);
  for (const auto& sub : l) nested_flatten<H>(sub, depth + 1, shape, out);
}
// An empty list fixes no depth below it: the shape stops there, as NumPy's does.
template <class T, class L>
Array nested_array(L l) {
  using H = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;  // no std::vector<bool>::data()
  Shape shape;
  std::vector<H> flat;
  nested_flatten<H>(l, 0, shape, flat);
  if (numel(shape) != static_cast<int64_t>(flat.size()))
    throw ValueError("array: the nested lists have an inhomogeneous shape (" + to_string(shape) + " from the first "
                     "elements, " + std::to_string(flat.size()) + " values)");
  return from_host(flat.data(), dtype_of<T>(), shape);
}
}  // namespace detail

template <class T>
Array array(std::initializer_list<T> values) { return detail::nested_array<T>(values); }
template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows) { return detail::nested_array<T>(rows); }
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> planes) {
  return detail::nested_array<T>(planes);
}
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<std::initializer_list<T>>>> blocks) {
  return detail::nested_array<T>(blocks);
}

}  // namespace cufuse
