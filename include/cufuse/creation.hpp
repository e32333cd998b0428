// cufuse/creation.hpp: making arrays: filled, ranges, from host data, placeholders.
// Filled arrays and ranges are lazy generators: they fuse into what consumes them.
#pragma once
#include <optional>
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
Array array(std::initializer_list<T> values) { return from_host(std::vector<T>(values)); }

// An array with a dtype and shape and no data: for planning, tracing and dumping kernels.
// Evaluating something that reads a placeholder is an error.
Array placeholder(DType dtype, const Shape& shape);

}  // namespace cufuse
